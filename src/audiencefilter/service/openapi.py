"""The OpenAPI document: FastAPI's, with our error responses in place of its 422.

Every `/v4` operation documents the shared `Error` body for each status it can answer (400, 401,
403, 404, 429, 500, plus 409 and 413 where a body is sent); 429 documents `Retry-After`. FastAPI's
`HTTPValidationError` schemas are removed: the service never answers 422.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from .errors import REASONS, Error

BODY_METHODS = frozenset({"post", "patch", "put"})
ERROR_REF = {"$ref": "#/components/schemas/Error"}
RATE_HEADERS = {
    "Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}},
    "RateLimit": {"description": "Remaining quota (IETF draft)", "schema": {"type": "string"}},
    "RateLimit-Policy": {"description": "Quota and window", "schema": {"type": "string"}},
}


def _error_response(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": REASONS[status],
        "content": {"application/json": {"schema": ERROR_REF}},
    }
    if status == 429:
        response["headers"] = RATE_HEADERS
    return response


def _statuses(path: str, method: str) -> list[int]:
    if path.startswith("/health"):
        return [503, 500] if path.endswith("ready") else [500]
    statuses = [400, 401, 403, 404, 429, 500]
    if method in BODY_METHODS:
        statuses += [409, 413]
    return sorted(statuses)


def build(app: FastAPI) -> dict[str, Any]:
    document = get_openapi(
        title=app.title,
        version=app.version,
        summary=app.summary,
        description=app.description,
        routes=app.routes,
        license_info=app.license_info,
    )
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            for status in _statuses(path, method):
                responses.setdefault(str(status), _error_response(status))
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    error_schema = Error.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error_schema.pop("$defs", {}))
    schemas["Error"] = error_schema
    return document


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
