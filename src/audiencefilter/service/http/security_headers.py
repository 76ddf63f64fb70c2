"""Headers every answer of the service carries, whatever route, mount or middleware wrote it.

- `X-Content-Type-Options: nosniff` on every response: a browser takes the declared type, so
  a JSON error or a static file is never run as a script or read as a page.
- A document a browser renders (HTML, SVG) that sets no `Content-Security-Policy` of its own
  gets `DOCUMENT_POLICY`, and `X-Frame-Options: DENY`: no other origin may frame `/docs`,
  `/redoc` or an SVG (clickjacking), and an SVG opened by itself runs no script. The builder
  page sets a stricter policy of its own (`api/routes/builder.py`), which is kept.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

NOSNIFF = "nosniff"
DOCUMENT_TYPES = ("text/html", "image/svg+xml")
DOCUMENT_POLICY = "frame-ancestors 'none'; object-src 'none'; base-uri 'none'"
"""For the HTML pages (Swagger UI and ReDoc run an inline script, so no script rule here)."""
SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
"""For an SVG: its own inline style, nothing else."""


class SecurityHeadersMiddleware:
    """Adds `nosniff` to every response, and a framing policy to every HTML or SVG one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                secure(MutableHeaders(scope=message))
            await send(message)

        await self.app(scope, receive, send_with_headers)


def secure(headers: MutableHeaders) -> None:
    """The headers of one response, completed."""
    headers["X-Content-Type-Options"] = NOSNIFF
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in DOCUMENT_TYPES:
        return
    if "content-security-policy" not in headers:
        policy = SVG_POLICY if media == "image/svg+xml" else DOCUMENT_POLICY
        headers["Content-Security-Policy"] = policy
    if "x-frame-options" not in headers:
        headers["X-Frame-Options"] = "DENY"
