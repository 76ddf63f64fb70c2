"""Error bodies and the handlers that produce them: the one place where refusals become HTTP.

The domain raises `DomainError`s that name no status (`NotFound`, `Conflict`, `Invalid`...);
`STATUSES` maps each kind to its status. The HTTP floor's own refusals (a key, a body, a rate
limit) are `ApiError`s, which carry theirs.

Every error body is one envelope (`ground/errors.Envelope`): `status`, `detail` (the
message) and, when the request has problems, `errors`, a list of `{pointer, detail}` where
`pointer` is a JSON pointer into the request seen as one document: `/body/email`,
`/query/limit`, `/path/id`; a problem of a filter adds where in the filter (`path`, `line`,
`column`). Beside them stand the specification's fields: `{"error": <HTTP status>, "message":
"..."}`, or for the audience rules the interface names (`STRING_FORM`: `Name and listId are
required`, the smart-mode filters rules, the invalid-filters message) its other form, a 400
whose `error` is the message itself (`{"error": "Name and listId are required"}`) with no
`message`. Where a convenience and the interface disagree, the interface wins. An invalid
filter also adds the library's problems as `details`, deprecated for `errors`.

FastAPI's 422 never leaves the service: validation failures are 400. Unknown routes are 404; a
known path with the wrong method is 405 with an `Allow` header that lists the methods of every
route on that path (Starlette's own lists only the first route it tried). Unexpected exceptions
are logged and answered with a bare 500.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Route, compile_path
from starlette.types import Scope

from ..ground import validation
from ..ground.errors import (
    AudienceRuleError,
    Conflict,
    DomainError,
    Forbidden,
    Invalid,
    Location,
    NotFound,
    RequestProblem,
    Unprocessable,
    ValidationIssue,
    pointer,
)
from .responses import ErrorJSONResponse, JSONResponse

logger = logging.getLogger("audiencefilter.service")

METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
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


STATUSES: dict[type[DomainError], int] = {
    Invalid: 400,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    Unprocessable: 422,
}
"""The HTTP status of each kind of refusal the domain raises: the one place that maps them."""


class ApiError(Exception):
    """An error answered on purpose by the HTTP floor itself (a key, a body, a rate limit),
    with its status; the domain's refusals are `DomainError`s, mapped by `STATUSES`."""

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


def error_body(
    status: int, message: str, errors: Iterable[ValidationIssue] = (), *, string_form: bool = False
) -> dict[str, Any]:
    """The one envelope (`Envelope`): `status`, `detail` and `errors` in every body, beside the
    specification's `error` (the status) and `message`; `string_form`: the interface's form of
    its audience rules, whose `error` is the message and which has no `message`."""
    body: dict[str, Any] = (
        {"error": message} if string_form else {"error": status, "message": message}
    )
    body["status"] = status
    body["detail"] = message
    issues = [issue.model_dump(exclude_none=True) for issue in errors]
    if issues:
        body["errors"] = issues
    return body


def error_response(
    status: int,
    message: str,
    errors: Iterable[ValidationIssue] = (),
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = error_body(status, message, errors)
    return ErrorJSONResponse(body, status_code=status, headers=headers)


def issue_of(problem: RequestProblem, within: Location | None = None) -> ValidationIssue:
    """A domain's problem as an item of `errors`: its path written as a JSON pointer into the
    request (`("contactIds", 3)` in the body: `/body/contactIds/3`), or into `within` (an
    import row's document: `/data/birthday`)."""
    base = (problem.part,) if within is None else within
    return ValidationIssue(
        pointer=pointer((*base, *problem.at)),
        detail=problem.detail,
        expected=problem.expected,
        found=problem.found,
        suggestion=problem.suggestion,
    )


def refusal(exc: DomainError) -> tuple[str, list[ValidationIssue]]:
    """A domain refusal's message and problems as a response says them: a `cited` message
    goes on with each problem's pointer and detail."""
    issues = [issue_of(problem) for problem in exc.errors]
    if not exc.cited:
        return exc.message, issues
    return exc.message + ": " + "; ".join(f"{i.pointer}: {i.detail}" for i in issues), issues


def _issue(error: dict[str, Any], request: Request | None = None) -> ValidationIssue:
    location = tuple(error.get("loc", ()))
    if error.get("type") == "json_invalid":
        reason = error.get("ctx", {}).get("error", "malformed JSON")
        where = location[1] if len(location) > 1 else "?"
        return ValidationIssue(pointer="/body", detail=f"Invalid JSON: {reason} (at {where})")
    known = _known_fields(request, location) if error.get("type") == "extra_forbidden" else ()
    problem = validation.describe(error, known)
    return ValidationIssue(
        pointer=pointer(location),
        detail=problem.detail,
        expected=problem.expected,
        found=problem.found,
        suggestion=problem.suggestion,
    )


def _known_fields(request: Request | None, location: tuple[Any, ...]) -> tuple[str, ...]:
    """The fields of the request body's object that holds `location`'s last part, or the
    query parameters the route takes (a misspelt `?fromat=` is told `format`)."""
    route = request.scope.get("route") if request is not None else None
    if location[:1] == ("query",):
        return _query_names(route)
    body_field = getattr(route, "body_field", None)
    if location[:1] != ("body",) or body_field is None:
        return ()
    model: Any = body_field.field_info.annotation
    for part in location[1:-1]:
        fields = getattr(model, "model_fields", None)
        if not isinstance(fields, dict) or part not in fields:
            return ()
        model = fields[part].annotation
    fields = getattr(model, "model_fields", None)
    return tuple(fields) if isinstance(fields, dict) else ()


def _query_names(route: Any) -> tuple[str, ...]:
    """The names of the route's query parameters, those of a query model included."""
    names: list[str] = []
    for param in getattr(getattr(route, "dependant", None), "query_params", ()):
        fields = getattr(param.field_info.annotation, "model_fields", None)
        if isinstance(fields, dict):
            names += [field.alias or name for name, field in fields.items()]
        else:
            names.append(param.alias)
    return tuple(names)


def validation_failed(issues: Sequence[ValidationIssue]) -> ApiError:
    summary = "; ".join(f"{issue.pointer}: {issue.detail}" for issue in issues[:5])
    more = f" (and {len(issues) - 5} more)" if len(issues) > 5 else ""
    return ApiError(400, f"Invalid request: {summary}{more}", errors=issues)


RoutePattern = tuple[re.Pattern[str], bool, frozenset[str]]


def route_table(app: FastAPI, mounted: Iterable[tuple[str, APIRouter]]) -> list[RoutePattern]:
    """Every route's path pattern, whether its path is fixed (no parameter), and its methods.

    Read from the routers as mounted (prefix, router) and the application's own routes, so the
    table does not depend on how FastAPI nests included routers.
    """
    routes: list[tuple[str, Any]] = [
        (prefix, r) for prefix, router in mounted for r in router.routes
    ]
    routes += [("", r) for r in app.router.routes if isinstance(r, Route)]
    table = []
    for prefix, route in routes:
        path = prefix + route.path
        table.append((compile_path(path)[0], "{" not in path, frozenset(route.methods or ())))
    return table


def allowed_methods(table: Sequence[RoutePattern], scope: Scope) -> list[str]:
    """The methods the routes matching this request's path accept.

    A fixed path (`/audiences/preview`) names a resource of its own, even where a templated
    path (`/audiences/{id}`) would also match it: then only the fixed paths count.
    """
    path, root = scope["path"], scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    matched = [(fixed, methods) for regex, fixed, methods in table if regex.match(path)]
    if any(fixed for fixed, _ in matched):
        matched = [(fixed, methods) for fixed, methods in matched if fixed]
    accepted = frozenset().union(*(methods for _, methods in matched))
    return [method for method in METHOD_ORDER if method in accepted]


async def _on_api_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message, exc.errors, exc.headers)


def status_of(exc: DomainError) -> int:
    """The status of a refusal: that of the nearest kind it is (a subclass keeps its parent's)."""
    return next(STATUSES[kind] for kind in type(exc).__mro__ if kind in STATUSES)


async def _on_domain_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, DomainError)
    return error_response(status_of(exc), *refusal(exc))


async def _on_rule_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AudienceRuleError)
    place = "query" if exc.field in request.query_params else "body"
    issues = [_filter_issue(f"/{place}/{exc.field}", problem) for problem in exc.details]
    body = error_body(400, exc.message, issues, string_form=exc.string_form)
    if exc.details:
        body["details"] = exc.details  # deprecated: `errors` says the same
    return ErrorJSONResponse(body, status_code=400)


def _filter_issue(where: str, problem: dict[str, Any]) -> ValidationIssue:
    """A problem of the filter library's report as an item of `errors`."""
    return ValidationIssue(
        pointer=where,
        detail=str(problem.get("message", "")),
        suggestion=problem.get("suggestion"),
        path=problem.get("path"),
        line=problem.get("line"),
        column=problem.get("column"),
    )


async def _on_validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    error = validation_failed([_issue(dict(item), request) for item in exc.errors()])
    return error_response(error.status, error.message, error.errors)


async def _on_http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    headers = dict(exc.headers or {})
    if status == 405:
        headers["Allow"] = ", ".join(allowed_methods(request.app.state.route_table, request.scope))
    message = exc.detail if status == 400 and isinstance(exc.detail, str) else None
    if status == 404:
        message = f"No route for {request.method} {request.url.path}"
    return error_response(status, message or REASONS.get(status, "Error"), headers=headers)


async def _on_integrity_error(_request: Request, exc: Exception) -> Response:
    logger.info("integrity error: %s", exc)
    return error_response(409, "The request conflicts with existing data")


def is_outage(exc: BaseException) -> bool:
    """Whether a database exception means "cannot reach the database" rather than a bug.

    Connection failures, a server shutting down or restarting, a connection dropped mid-query
    (SQLAlchemy marks it `connection_invalidated`), an exhausted pool, a lock or serialization
    timeout all say "try again shortly": the request may not have taken effect, and retrying
    (with an Idempotency-Key for POSTs) is safe. Drivers also raise "operational" errors for a
    statement the engine will not run (SQLite's "Expression tree is too large", "too many SQL
    variables", a missing table): those are a property of the request or of the deployment, a
    retry fails alike, and they are not an outage. A 503 means the database is down, nothing else.
    """
    if isinstance(exc, PoolTimeoutError | InterfaceError):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, OperationalError):
        return _operational_outage(exc.orig)
    return False


# Connection-class failures by driver. Anything else an engine raises as "operational" (an
# expression too deep, too many bound variables, a statement timeout) is a property of the
# request, not of the database's health: it is not a 503.
_PG_OUTAGE_STATES = ("08", "57P01", "57P02", "57P03", "53300", "40001", "40P01")
_MYSQL_OUTAGE_CODES = frozenset(
    {1040, 1053, 1205, 1213, 1927, 2002, 2003, 2005, 2006, 2013, 2055, 4031}
)
_SQLITE_OUTAGE_MESSAGES = (
    "database is locked",
    "database table is locked",
    "unable to open database",
    "disk i/o error",
    "database or disk is full",
    "attempt to write a readonly database",
)
_CONNECTION_WORDS = (
    "connect",
    "server closed",
    "shut",
    "terminat",
    "timeout",
    "timed out",
)


def _operational_outage(orig: BaseException | None) -> bool:
    """Whether a driver's "operational" error says the database cannot be reached or used now."""
    if orig is None:
        return True
    message = str(orig).lower()
    if isinstance(orig, sqlite3.Error):
        return any(text in message for text in _SQLITE_OUTAGE_MESSAGES)
    sqlstate = getattr(orig, "sqlstate", None)
    if isinstance(sqlstate, str):
        return sqlstate.startswith(_PG_OUTAGE_STATES)
    code = orig.args[0] if orig.args and isinstance(orig.args[0], int) else None
    if code is not None:
        return code in _MYSQL_OUTAGE_CODES
    return sqlstate is None and any(word in message for word in _CONNECTION_WORDS)


def _unavailable() -> Response:
    return error_response(
        503,
        "The database is unavailable; retry later (the request may not have taken effect)",
        headers={"Retry-After": "1"},
    )


async def _on_database_error(request: Request, exc: Exception) -> Response:
    if is_outage(exc):
        # The driver's message (not the statement or its parameters) says what went wrong.
        logger.error(
            "database unavailable on %s %s: %s",
            request.method,
            request.url.path,
            str(getattr(exc, "orig", None) or exc).splitlines()[0],
        )
        return _unavailable()
    return await _on_unexpected(request, exc)


async def _on_unexpected(request: Request, exc: Exception) -> Response:
    logger.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, REASONS[500])


def install(app: FastAPI, mounted: Iterable[tuple[str, APIRouter]]) -> None:
    """Error handlers, and the route table that `Allow` headers are computed from."""
    app.state.route_table = route_table(app, mounted)
    app.add_exception_handler(ApiError, _on_api_error)
    app.add_exception_handler(DomainError, _on_domain_error)
    app.add_exception_handler(AudienceRuleError, _on_rule_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_exception)
    app.add_exception_handler(IntegrityError, _on_integrity_error)
    app.add_exception_handler(DBAPIError, _on_database_error)
    app.add_exception_handler(PoolTimeoutError, _on_database_error)
    app.add_exception_handler(Exception, _on_unexpected)
