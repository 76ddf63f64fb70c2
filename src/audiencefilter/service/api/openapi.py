"""The OpenAPI document: FastAPI's, with our error responses in place of its 422.

Every `/v4` operation documents the shared `Error` body for each status it can answer (400, 401,
403, 404, 429, 500, 503 when the database is out of reach, plus 409 and 413 where a body is sent,
and 422 where an `Idempotency-Key` may be reused for another request); 429 and 503 document
`Retry-After`. FastAPI's 422 and its `HTTPValidationError` schemas are removed: validation
failures are 400s. Operations that read a filter declare `RULE_ERROR_RESPONSES`: their 400 is
either form of the interface, both in the one envelope (`status`, `detail`, `errors`): an
`Error` (`error` the status, `message`), or for the audience rules the interface names and an
invalid filter a `RuleError`, whose `error` is the message and which has no `message`.

Where clauses are described by the filter library's own JSON Schema (`json_schema()`), whose
definitions become the components `WhereClause` and `Where*`; the `filters` query parameter of
the contacts listing is declared as JSON content of that schema, as OpenAPI allows.

The responses of the POSTs that create something carry OpenAPI `links` (`LINKS`): how the new
id feeds the operations that read, change, delete or extend it. Clients and tools such as
schemathesis follow them to chain requests (create a list, then a contact in it, then an action
on that contact) instead of guessing ids. Only creations have links: a tool may start a chain at
any operation with links, and one that needs an existing id would start it with a made-up one.
The table names operations by method and path, which say what they are better than FastAPI's
generated `operationId`s, and is resolved to those ids when the document is built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from ... import json_schema
from ..domain.audience_filters import SCHEMA
from ..ground.bodies import ContactImportRow
from ..ground.errors import Error, RuleError
from ..http.errors import REASONS
from . import openapi_docs

BODY_METHODS = frozenset({"post", "patch", "put"})
ERROR_REF = {"$ref": "#/components/schemas/Error"}
RULE_REF = {"$ref": "#/components/schemas/RuleError"}
RATE_HEADERS = {
    "Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}},
    "RateLimit": {"description": "Remaining quota (IETF draft)", "schema": {"type": "string"}},
    "RateLimit-Policy": {"description": "Quota and window", "schema": {"type": "string"}},
}


DESCRIPTIONS = {
    **REASONS,
    422: "The `Idempotency-Key` was already used with a different request",
    503: "The database is unavailable; retry after `Retry-After` seconds",
}
IDEMPOTENCY_KEY = "idempotency-key"


WHERE_PREFIX = "Where"
RULE_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {
        "description": "Bad request: an `Error`, or for the audience rules and invalid filters "
        "a `RuleError` whose `error` is the message (and which has no `message`)",
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
    definitions = json_schema(SCHEMA)["$defs"]
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


@dataclass(frozen=True)
class Link:
    """One OpenAPI link: a response of `source` supplies values for a request to `target`.

    Operations are `"METHOD /path"`. `parameters` maps `location.name` of the target to a runtime
    expression; `body` maps fields of the target's request body to expressions.
    """

    source: str
    status: int
    name: str
    target: str
    parameters: Mapping[str, str] = field(default_factory=dict)
    body: Mapping[str, str] = field(default_factory=dict)


LIST_ID = "$response.body#/data/list/id"
CONTACT_ID = "$response.body#/data/contact/id"
CONTACT_LIST_ID = "$response.body#/data/contact/listId"
AUDIENCE_ID = "$response.body#/data/audience/id"
AUDIENCE_LIST_ID = "$response.body#/data/audience/listId"
ACTION_ID = "$response.body#/data/action/id"
ACTION_CONTACT_ID = "$response.body#/data/action/subId"

LIST_PATH = "/v4/lists/{id}"
CONTACT_PATH = "/v4/contacts/{id}"
AUDIENCE_PATH = "/v4/audiences/{id}"
ACTION_PATH = "/v4/actions/{id}"
MEMBERS_PATH = "/v4/audiences/{id}/members"


# Item operations linked from a creation. Actions are never changed: no PATCH. Deleting a list or
# a contact cascades (its contacts and audiences; its actions), and a tool that follows links
# cannot know that: it would take the 404 of a contact whose list was deleted in the same chain
# for a lost resource. Those two deletions are left out of the links and tested directly.
ITEM_METHODS = {
    LIST_PATH: ("GET", "PATCH"),
    CONTACT_PATH: ("GET", "PATCH"),
    ACTION_PATH: ("GET", "DELETE"),
    AUDIENCE_PATH: ("GET", "PATCH", "DELETE"),
}


def _item_links(source: str, status: int, kind: str, path: str, id_from: str) -> list[Link]:
    """Links to the item operations of a new resource (`ITEM_METHODS`)."""
    methods = ITEM_METHODS[path]
    verbs = {"GET": "Get", "PATCH": "Update", "DELETE": "Delete"}
    return [
        Link(source, status, verbs[method] + kind, f"{method} {path}", {"path.id": id_from})
        for method in methods
    ]


LINKS: tuple[Link, ...] = (
    *_item_links("POST /v4/lists", 201, "List", LIST_PATH, LIST_ID),
    Link("POST /v4/lists", 201, "ListContacts", "GET /v4/contacts", {"query.listId": LIST_ID}),
    Link("POST /v4/lists", 201, "CreateContact", "POST /v4/contacts", body={"listId": LIST_ID}),
    Link("POST /v4/lists", 201, "ListAudiences", "GET /v4/audiences", {"query.listId": LIST_ID}),
    Link("POST /v4/lists", 201, "CreateAudience", "POST /v4/audiences", body={"listId": LIST_ID}),
    Link(
        "POST /v4/lists",
        201,
        "PreviewAudience",
        "POST /v4/audiences/preview",
        body={"listId": LIST_ID},
    ),
    *_item_links("POST /v4/contacts", 201, "Contact", CONTACT_PATH, CONTACT_ID),
    Link(
        "POST /v4/contacts",
        201,
        "ListContacts",
        "GET /v4/contacts",
        {"query.listId": CONTACT_LIST_ID},
    ),
    Link("POST /v4/contacts", 201, "CreateAction", "POST /v4/actions", body={"subId": CONTACT_ID}),
    Link("POST /v4/contacts", 201, "ListActions", "GET /v4/actions", {"query.subId": CONTACT_ID}),
    *_item_links("POST /v4/actions", 201, "Action", ACTION_PATH, ACTION_ID),
    Link(
        "POST /v4/actions", 201, "GetContact", f"GET {CONTACT_PATH}", {"path.id": ACTION_CONTACT_ID}
    ),
    Link(
        "POST /v4/actions",
        201,
        "ListActions",
        "GET /v4/actions",
        {"query.subId": ACTION_CONTACT_ID},
    ),
    *_item_links("POST /v4/audiences", 201, "Audience", AUDIENCE_PATH, AUDIENCE_ID),
    Link("POST /v4/audiences", 201, "AddMembers", f"POST {MEMBERS_PATH}", {"path.id": AUDIENCE_ID}),
    Link(
        "POST /v4/audiences",
        201,
        "ListAudiences",
        "GET /v4/audiences",
        {"query.listId": AUDIENCE_LIST_ID},
    ),
)


def _operation_ids(document: dict[str, Any]) -> dict[str, str]:
    return {
        f"{method.upper()} {path}": operation["operationId"]
        for path, operations in document.get("paths", {}).items()
        for method, operation in operations.items()
        if "operationId" in operation
    }


def _add_links(document: dict[str, Any], links: tuple[Link, ...] = LINKS) -> None:
    """Attach `links` to their source responses; a link to an unknown operation is a bug here.

    Raises:
        KeyError: a source or target operation, or a source response, is not in the document.
    """
    operation_ids = _operation_ids(document)
    for link in links:
        method, path = link.source.split(" ", 1)
        response = document["paths"][path][method.lower()]["responses"][str(link.status)]
        definition: dict[str, Any] = {"operationId": operation_ids[link.target]}
        if link.parameters:
            definition["parameters"] = dict(link.parameters)
        if link.body:
            definition["requestBody"] = dict(link.body)
        response.setdefault("links", {})[link.name] = definition


def _error_response(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": DESCRIPTIONS[status],
        "content": {
            "application/json": {
                "schema": ERROR_REF,
                "example": openapi_docs.ERROR_EXAMPLES[status],
            }
        },
    }
    if status == 429:
        response["headers"] = RATE_HEADERS
    elif status == 503:
        response["headers"] = {"Retry-After": RATE_HEADERS["Retry-After"]}
    return response


def _takes_idempotency_key(operation: dict[str, Any]) -> bool:
    return any(
        parameter.get("in") == "header" and parameter.get("name", "").lower() == IDEMPOTENCY_KEY
        for parameter in operation.get("parameters", [])
    )


AUDIENCE_PATH = "/v4/audiences/{id}"


def _statuses(path: str, method: str, operation: dict[str, Any]) -> list[int]:
    if path.startswith("/health"):
        return [503, 500] if path.endswith("ready") else [500]
    statuses = [400, 401, 403, 404, 429, 500, 503]
    if method in BODY_METHODS:
        statuses += [409, 413]
    elif (method, path) == ("delete", AUDIENCE_PATH):  # named by other audiences' filters
        statuses.append(409)
    if _takes_idempotency_key(operation):
        statuses.append(422)
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
            for status in _statuses(path, method, operation):
                responses.setdefault(str(status), _error_response(status))
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    for model in (Error, RuleError, ContactImportRow):
        model_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(model_schema.pop("$defs", {}))
        schemas[model.__name__] = model_schema
    schemas.update(where_components())
    _filters_as_json_content(document)
    _add_links(document)
    _describe(document)
    return document


def _describe(document: dict[str, Any]) -> None:
    """Descriptions and examples from `openapi_docs` wherever the routes left none."""
    components = document["components"]["schemas"]
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            key = f"{method.upper()} {path}"
            if not operation.get("description") and key in openapi_docs.OPERATIONS:
                operation["description"] = openapi_docs.OPERATIONS[key]
            for parameter in operation.get("parameters", []):
                _describe_parameter(path, parameter)
            body = operation.get("requestBody")
            if body is not None:
                body.setdefault("description", "The request, as JSON.")
                for media in body.get("content", {}).values():
                    if "example" not in media and key in openapi_docs.REQUEST_EXAMPLES:
                        media["example"] = openapi_docs.REQUEST_EXAMPLES[key]
            for status, response in operation.get("responses", {}).items():
                if response.get("description") == "Successful Response":
                    response["description"] = "The answer, in its `data` envelope."
                for media in response.get("content", {}).values():
                    if "example" in media or "examples" in media:
                        continue
                    if status == "400":
                        media["example"] = openapi_docs.RULE_ERROR_EXAMPLE
                    elif "schema" in media:
                        media["example"] = openapi_docs.example_of(media["schema"], components)


def _describe_parameter(path: str, parameter: dict[str, Any]) -> None:
    name = parameter.get("name", "")
    if parameter.get("in") == "path" and name == "id":
        resource = path.split("/")[2] if path.count("/") >= 2 else ""
        description, example = openapi_docs.PATH_IDS.get(resource, ("The id.", None))
    else:
        shared = openapi_docs.PARAMETERS.get(name, ("", None))
        description, example = openapi_docs.PATH_PARAMETERS.get((path, name), shared)
    schema = parameter.get("schema", {})
    if not parameter.get("description"):
        parameter["description"] = schema.get("description") or description
    if example is None:
        return
    if "content" in parameter:  # JSON content: the example is the decoded value
        for media in parameter["content"].values():
            media.setdefault("example", json.loads(example))
    else:
        parameter.setdefault("example", example)


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
