"""`GET /builder`: the audience builder page; `GET /signup`: an example sign-up form; and their
files under `/builder/assets`.

The page is plain HTML with ES modules and one style sheet, shipped in the package
(`service/static/builder/`) and served by the service itself: no build step, no external URL,
so it works offline like `/docs`. Everything it does goes through the public `/v4` API with the
private key the user enters (docs/builder.md).

The sign-up form holds a public key and shows the fields the list opens to sign-ups
(`GET /v4/lists/{listId}/signup-form`), then posts the sign-up (docs/signup.md).

Both pages' Content-Security-Policy allows scripts, styles and requests from this origin only, no
inline script or style, and no framing: the page holds a private key in the tab's session
storage, so nothing injected or framing it should be able to run or read it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

PAGE_PATH = "/builder"
SIGNUP_PATH = "/signup"
ASSETS_PATH = "/builder/assets"
STATIC_DIRECTORY = Path(__file__).resolve().parents[2] / "static" / "builder"

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


@cache
def page_html(name: str = "index.html") -> str:
    """A page, read once from the package (on first request, not at import)."""
    return (STATIC_DIRECTORY / name).read_text(encoding="utf-8")


@router.get(PAGE_PATH)
async def builder_page() -> HTMLResponse:
    return HTMLResponse(page_html(), headers=SECURITY_HEADERS)


@router.get(SIGNUP_PATH)
async def signup_page() -> HTMLResponse:
    return HTMLResponse(page_html("signup.html"), headers=SECURITY_HEADERS)


def install(app: FastAPI) -> None:
    """The page and the static mount of its scripts and style sheet."""
    app.include_router(router)
    app.mount(ASSETS_PATH, StaticFiles(directory=STATIC_DIRECTORY), name="builder-assets")
