"""Pure ASGI middleware: body size limit, rate-limit headers, CORS for the public endpoint.

The body limit reads the whole body (at most the limit plus one chunk) before the application
sees it: a `Content-Length` over the limit is refused without reading, a chunked body is counted
as it streams. Either way the answer is a 413 in the error shape, and no handler runs. The one
exception is a CSV import (`POST /v4/contacts/import`, `text/csv`): its body streams on to the
route, which spools it to a temporary file, counted against its own, larger limit.

Rate-limit headers are decided by the authentication dependency, which stores them in the
request's `state`; the header middleware copies them onto whatever response goes out, success or
error, so a client sees its remaining quota on every authenticated answer.

Only `POST /v4/contacts` (the one operation public keys may call from a browser) answers CORS,
for the origins of the settings and of the target list (`http/origins.py`).
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..db.fair_gate import SHARE, Share
from ..ground.digits import ascii_number
from . import json_guard
from .errors import ApiError, error_response
from .origins import OriginDirectory

RATE_LIMIT_STATE = "rate_limit_headers"
CORS_ORIGIN_STATE = "cors_allowed_origin"
PUBLIC_PATH = "/v4/contacts"
CSV_IMPORT_PATH = "/v4/contacts/import"
# What a sign-up form may read: its quota, when to retry, whether a retry was a replay, and the
# request id to quote in a support request.
EXPOSED_HEADERS = "RateLimit, RateLimit-Policy, Retry-After, Idempotent-Replayed, X-Request-Id"


def _is_csv_import(scope: Scope) -> bool:
    """`POST /v4/contacts/import` with a CSV body: the one body that streams (`_stream`)."""
    return (
        scope.get("method") == "POST"
        and scope.get("path") == CSV_IMPORT_PATH
        and json_guard.media_type(_content_type(scope)) == "text/csv"
    )


def _content_type(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return str(value.decode("latin-1"))
    return ""


class BodyLimitMiddleware:
    """Bounds a request's body and refuses JSON no route could keep (`json_guard`)."""

    def __init__(self, app: ASGIApp, max_bytes: int, max_csv_bytes: int | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_csv_bytes = max_bytes if max_csv_bytes is None else max_csv_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _is_csv_import(scope):
            await self._stream(scope, receive, send)
            return
        if self._declared_too_large(scope, self.max_bytes):
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client went away; let the app see the disconnect
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        found = json_guard.problems(body, _content_type(scope))
        if found:
            where = ", ".join(issue.pointer for issue in found[:3])
            refusal = error_response(400, f"Invalid request: {where}", found[:20])
            await refusal(scope, replayed(body, receive), send)
            return
        await self.app(scope, replayed(body, receive), send)

    def _declared_too_large(self, scope: Scope, limit: int | None = None) -> bool:
        """Whether the declared Content-Length (ASCII digits only) passes `limit`, by default
        the body limit of every request but a CSV import."""
        limit = self.max_bytes if limit is None else limit
        for name, value in scope["headers"]:
            if name == b"content-length":
                declared = ascii_number(value, max_digits=20)
                return declared is not None and declared > limit
        return False

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, limit: int | None = None
    ) -> None:
        message = f"Request body larger than {limit or self.max_bytes} bytes"
        await error_response(413, message, headers={"Connection": "close"})(scope, receive, send)

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A CSV import's body streams to its route (which spools it), counted on the way: past
        `max_csv_bytes` reading it raises a 413 in the route."""
        limit = self.max_csv_bytes
        if self._declared_too_large(scope, limit):
            await self._refuse(scope, receive, send, limit)
            return
        size = 0

        async def counted() -> Message:
            nonlocal size
            message = await receive()
            size += len(message.get("body", b""))
            if size > limit:
                message_ = f"Request body larger than {limit} bytes"
                raise ApiError(413, message_, headers={"Connection": "close"})
            return message

        await self.app(scope, counted, send)


def replayed(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the body already read, whole, then what the client sends next
    (its disconnect)."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class RateLimitHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = state.get(RATE_LIMIT_STATE)
                if extra:
                    headers = MutableHeaders(scope=message)
                    for name, value in extra.items():
                        if name not in headers:
                            headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


class PublicCORSMiddleware:
    """CORS for the public sign-up endpoint only; every other path passes straight through.

    The preflight is starlette's, asked whether the origin is allowed on any list (it cannot know
    which). The real request gets `Access-Control-Allow-Origin` only when the origin is allowed
    on the settings or on its own list: the key check, which reads the list, says so in the
    request's `state`, and refuses the request outright when it is not.
    """

    def __init__(self, app: ASGIApp, directory: OriginDirectory) -> None:
        self.app = app
        self.directory = directory
        self.preflight = _AnyListCORS(
            app,
            directory,
            allow_methods=["POST"],
            allow_headers=["apiKey", "Content-Type", "Idempotency-Key"],
            max_age=600,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PUBLIC_PATH:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is None:
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            if not self.directory.allowed_globally(origin):
                await self.directory.refresh()
            await self.preflight.preflight_response(request_headers=headers)(scope, receive, send)
            return
        state = scope.setdefault("state", {})

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                response_headers = MutableHeaders(scope=message)
                allowed = self.directory.allowed_globally(origin) or (
                    state.get(CORS_ORIGIN_STATE) == origin
                )
                if allowed:
                    response_headers["Access-Control-Allow-Origin"] = origin
                    response_headers["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
                response_headers.add_vary_header("Origin")
            await send(message)

        await self.app(scope, receive, send_with_cors)


class _AnyListCORS(CORSMiddleware):
    """Starlette's preflight answer, with the origin check of the list directory."""

    def __init__(self, app: ASGIApp, directory: OriginDirectory, **options: Any) -> None:
        super().__init__(app, **options)
        self.directory = directory

    def is_allowed_origin(self, origin: str) -> bool:
        return self.directory.allowed_anywhere(origin)


class WriteShareMiddleware:
    """Gives each request an empty `Share` of the write gate (`db/fair_gate.py`), which the
    key's check names with its account: the threads that run the request see the same object,
    so its write transactions queue as that account's."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = SHARE.set(Share())
        try:
            await self.app(scope, receive, send)
        finally:
            SHARE.reset(token)
