"""Error bodies and the handlers that produce them.

Every error is `{"error": <HTTP status>, "message": "..."}`; problems with the request add
`errors`, a list of `{pointer, detail}` where `pointer` is a JSON pointer into the request seen as
one document: `/body/email`, `/query/limit`, `/path/id`. FastAPI's 422 never leaves the service:
validation failures are 400. Unknown routes are 404; a known path with the wrong method is 405 with
an `Allow` header that lists the methods of every route on that path (Starlette's own lists only
the first route it tried). Unexpected exceptions are logged and answered with a bare 500.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from sqlalchemy.exc import IntegrityError, OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import Scope

from .responses import JSONResponse

logger = logging.getLogger("audiencefilter.service")

PROBED_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
REASONS = {
    400: "Bad request",
    401: "Invalid or missing API key",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    429: "Rate limit exceeded",
    500: "Internal server error",
    503: "Service unavailable",
}


class ValidationIssue(BaseModel):
    """One problem found in the request."""

    pointer: str
    detail: str


class Error(BaseModel):
    """The body of every error response."""

    error: int
    message: str
    errors: list[ValidationIssue] | None = None


class ApiError(Exception):
    """An error the service answers on purpose, with its status and message."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: Sequence[ValidationIssue] = (),
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = list(errors)
        self.headers = headers or {}


def not_found(what: str) -> ApiError:
    return ApiError(404, f"{what} not found")


def error_response(
    status: int,
    message: str,
    errors: Iterable[ValidationIssue] = (),
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"error": status, "message": message}
    issues = [issue.model_dump() for issue in errors]
    if issues:
        body["errors"] = issues
    return JSONResponse(body, status_code=status, headers=headers)


def pointer(location: Iterable[str | int]) -> str:
    """A JSON pointer (RFC 6901) for a pydantic error location."""
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in location]
    return "/" + "/".join(parts) if parts else ""


def _issue(error: dict[str, Any]) -> ValidationIssue:
    location = tuple(error.get("loc", ()))
    if error.get("type") == "json_invalid":
        reason = error.get("ctx", {}).get("error", "malformed JSON")
        where = location[1] if len(location) > 1 else "?"
        return ValidationIssue(pointer="/body", detail=f"Invalid JSON: {reason} (at {where})")
    detail = str(error.get("msg", "invalid value"))
    if detail.startswith("Value error, "):
        detail = detail[len("Value error, ") :]
    return ValidationIssue(pointer=pointer(location), detail=detail)


def validation_failed(issues: Sequence[ValidationIssue]) -> ApiError:
    summary = "; ".join(f"{issue.pointer}: {issue.detail}" for issue in issues[:5])
    more = f" (and {len(issues) - 5} more)" if len(issues) > 5 else ""
    return ApiError(400, f"Invalid request: {summary}{more}", errors=issues)


def allowed_methods(app: FastAPI, scope: Scope) -> list[str]:
    """The methods some route accepts on this request's path, found by asking every route."""
    allowed = []
    for method in PROBED_METHODS:
        probe = {**scope, "method": method}
        if any(route.matches(probe)[0] == Match.FULL for route in app.router.routes):
            allowed.append(method)
    return allowed


async def _on_api_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message, exc.errors, exc.headers)


async def _on_validation_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    error = validation_failed([_issue(dict(item)) for item in exc.errors()])
    return error_response(error.status, error.message, error.errors)


async def _on_http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    headers = dict(exc.headers or {})
    if status == 405:
        assert isinstance(request.app, FastAPI)
        headers["Allow"] = ", ".join(allowed_methods(request.app, request.scope))
    message = exc.detail if status == 400 and isinstance(exc.detail, str) else None
    if status == 404:
        message = f"No route for {request.method} {request.url.path}"
    return error_response(status, message or REASONS.get(status, "Error"), headers=headers)


async def _on_integrity_error(_request: Request, exc: Exception) -> Response:
    logger.info("integrity error: %s", exc)
    return error_response(409, "The request conflicts with existing data")


async def _on_operational_error(_request: Request, exc: Exception) -> Response:
    logger.error("database error: %s", exc)
    return error_response(
        503, "The database is unavailable; retry later", headers={"Retry-After": "1"}
    )


async def _on_unexpected(request: Request, exc: Exception) -> Response:
    logger.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, REASONS[500])


def install(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _on_api_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_exception)
    app.add_exception_handler(IntegrityError, _on_integrity_error)
    app.add_exception_handler(OperationalError, _on_operational_error)
    app.add_exception_handler(Exception, _on_unexpected)
