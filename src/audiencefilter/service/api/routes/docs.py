"""`/docs` (Swagger UI) and `/redoc` (ReDoc), served with their files from this installation.

FastAPI's own pages load their JavaScript and CSS from a CDN, so without a network they stay
blank. Both pages here take their assets from the `fastapi-offline` package (a dependency of the
`service` extra, MIT-licensed, which vendors Swagger UI and ReDoc builds) through a static mount
at `/docs/assets`: the pages name no other host, ReDoc's web fonts included (left out). Only the
asset files of that package are used, not its application factory: the service builds its own
application.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

ASSETS_PATH = "/docs/assets"
ASSETS_DIRECTORY = Path(fastapi_offline.__file__).parent / "static"

router = APIRouter(include_in_schema=False)


def _urls(request: Request) -> tuple[str, str, str]:
    """The OpenAPI document's URL, the assets' base URL and the page title."""
    root = request.scope.get("root_path", "")
    app = request.app
    return f"{root}{app.openapi_url}", f"{root}{ASSETS_PATH}", str(app.title)


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    openapi_url, assets, title = _urls(request)
    return get_swagger_ui_html(
        openapi_url=openapi_url,
        title=f"{title} - Swagger UI",
        swagger_js_url=f"{assets}/swagger-ui-bundle.js",
        swagger_css_url=f"{assets}/swagger-ui.css",
        swagger_favicon_url=f"{assets}/favicon.png",
        # Swagger UI would otherwise fetch a validity badge from validator.swagger.io.
        swagger_ui_parameters={"validatorUrl": None},
    )


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    openapi_url, assets, title = _urls(request)
    return get_redoc_html(
        openapi_url=openapi_url,
        title=f"{title} - ReDoc",
        redoc_js_url=f"{assets}/redoc.standalone.js",
        redoc_favicon_url=f"{assets}/favicon.png",
        with_google_fonts=False,
    )


def install(app: FastAPI) -> None:
    """The two pages and the static mount of their assets."""
    app.include_router(router)
    app.mount(ASSETS_PATH, StaticFiles(directory=ASSETS_DIRECTORY), name="docs-assets")
