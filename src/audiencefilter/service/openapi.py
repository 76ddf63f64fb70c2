"""The OpenAPI document: FastAPI's, with our error responses in place of its 422.

Every `/v4` operation documents the shared `Error` body for each status it can answer (400, 401,
403, 404, 429, 500, plus 409 and 413 where a body is sent); 429 documents `Retry-After`. FastAPI's
`HTTPValidationError` schemas are removed: the service never answers 422. Operations that read a
filter declare `RULE_ERROR_RESPONSES`: their 400 is either body, `Error` or `RuleError`.

Where clauses are described by the filter library's own JSON Schema (`json_schema()`), whose
definitions become the components `WhereClause` and `Where*`; the `filters` query parameter of
the contacts listing is declared as JSON content of that schema, as OpenAPI allows.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from .. import CONTACT, json_schema
from .errors import REASONS, Error, RuleError

BODY_METHODS = frozenset({"post", "patch", "put"})
ERROR_REF = {"$ref": "#/components/schemas/Error"}
RATE_HEADERS = {
    "Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}},
    "RateLimit": {"description": "Remaining quota (IETF draft)", "schema": {"type": "string"}},
    "RateLimit-Policy": {"description": "Quota and window", "schema": {"type": "string"}},
}


RULE_REF = {"$ref": "#/components/schemas/RuleError"}
WHERE_PREFIX = "Where"
RULE_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {
        "description": "Bad request: an `Error`, or for the audience rules and invalid filters a "
        "`RuleError` whose `error` is the message",
        "content": {"application/json": {"schema": {"anyOf": [ERROR_REF, RULE_REF]}}},
    }
}
_DEFS_REF = re.compile(r"^#/\$defs/(.+)$")


def _component_name(definition: str) -> str:
    if definition == "where":
        return "WhereClause"
    return WHERE_PREFIX + definition[:1].upper() + definition[1:]


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        rewritten = {key: _rewrite_refs(value) for key, value in node.items()}
        found = _DEFS_REF.match(str(rewritten.get("$ref", "")))
        if found:
            rewritten["$ref"] = f"#/components/schemas/{_component_name(found.group(1))}"
        return rewritten
    if isinstance(node, list):
        return [_rewrite_refs(item) for item in node]
    return node


def where_components() -> dict[str, Any]:
    """The library's where-clause schema as OpenAPI components (`WhereClause`, `Where*`)."""
    definitions = json_schema(CONTACT)["$defs"]
    return {_component_name(name): _rewrite_refs(schema) for name, schema in definitions.items()}


def _filters_as_json_content(document: dict[str, Any]) -> None:
    operation = document.get("paths", {}).get("/v4/contacts", {}).get("get", {})
    for parameter in operation.get("parameters", []):
        if parameter.get("name") == "filters" and parameter.get("in") == "query":
            description = parameter.pop("schema", {}).get("description")
            parameter["description"] = description or "A where clause."
            parameter["content"] = {
                "application/json": {"schema": {"$ref": "#/components/schemas/WhereClause"}}
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
    for model in (Error, RuleError):
        model_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(model_schema.pop("$defs", {}))
        schemas[model.__name__] = model_schema
    schemas.update(where_components())
    _filters_as_json_content(document)
    return document


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
