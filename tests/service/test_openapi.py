"""The OpenAPI document: metadata, security, documented errors, and responses that match it."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

import audiencefilter as af

from .conftest import ApiClient, Tenant


@pytest.fixture(scope="module")
def document(client: ApiClient) -> dict[str, Any]:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


ERROR = {"$ref": "#/components/schemas/Error"}
ERROR_OR_RULE = {"anyOf": [ERROR, {"$ref": "#/components/schemas/RuleError"}]}
# Operations that read a filter or apply the audience rules answer either form of the interface.
RULE_OPERATIONS = {
    ("/v4/contacts", "get"),
    ("/v4/audiences", "post"),
    ("/v4/audiences/preview", "post"),
    ("/v4/audiences/{id}", "patch"),
    ("/v4/audiences/{id}/versions/{number}/restore", "post"),
    ("/v4/audiences/estimate", "post"),
    ("/v4/audiences/compare", "post"),
}


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    ]


def test_info_license_and_security_scheme(document: dict[str, Any]) -> None:
    assert document["info"]["version"] == "1.0.0"
    assert document["info"]["license"]["name"] == "MIT"
    assert document["components"]["securitySchemes"]["apiKey"] == {
        "type": "apiKey",
        "in": "header",
        "name": "apiKey",
        "description": "An API key: `afk_priv_...` (private) or `afk_pub_...` (public).",
    }


def _takes_idempotency_key(operation: dict[str, Any]) -> bool:
    return any(
        (p["in"], p["name"]) == ("header", "Idempotency-Key")
        for p in operation.get("parameters", [])
    )


def test_every_operation_documents_its_errors_and_422_only_for_key_reuse(
    document: dict[str, Any],
) -> None:
    paths = {path for path, _, _ in _operations(document)}
    assert {"/v4/contacts", "/v4/contacts/{id}", "/v4/lists", "/v4/lists/{id}"} <= paths
    assert {"/v4/projects", "/v4/actions", "/v4/actions/{id}", "/health/ready"} <= paths
    for path, method, operation in _operations(document):
        responses = operation["responses"]
        # FastAPI's validation 422 never leaves the service; a reused Idempotency-Key is one.
        assert ("422" in responses) == _takes_idempotency_key(operation), (path, method)
        if path.startswith("/v4"):
            assert operation["security"] == [{"apiKey": []}]
            statuses = ("400", "401", "403", "404", "429", "500", "503")
            for status in statuses + (("422",) if "422" in responses else ()):
                schema = responses[status]["content"]["application/json"]["schema"]
                rules = status == "400" and (path, method) in RULE_OPERATIONS
                assert schema == (ERROR_OR_RULE if rules else ERROR), (path, method, status)
            assert "Retry-After" in responses["429"]["headers"]
            assert "Retry-After" in responses["503"]["headers"]
        else:
            assert "security" not in operation
    assert "HTTPValidationError" not in document["components"]["schemas"]
    assert document["components"]["schemas"]["Error"]["required"] == ["error", "message"]


def _validate(document: dict[str, Any], path: str, method: str, response: Any) -> None:
    operation = document["paths"][path][method]
    schema = operation["responses"][str(response.status_code)]["content"]["application/json"]
    resolver_document = {**schema["schema"], "components": document["components"]}
    jsonschema.validate(response.json(), resolver_document)


def test_real_responses_match_the_document(document: dict[str, Any], tenant: Tenant) -> None:
    lst = tenant.call("POST", "/v4/lists", json={"name": "Doc"})
    _validate(document, "/v4/lists", "post", lst)
    list_id = lst.json()["data"]["list"]["id"]
    contact = tenant.call(
        "POST", "/v4/contacts", json={"email": "doc@example.com", "listId": list_id}
    )
    _validate(document, "/v4/contacts", "post", contact)
    contact_id = contact.json()["data"]["contact"]["id"]
    action = tenant.call(
        "POST", "/v4/actions", json={"name": "a", "increase": 1, "subId": contact_id}
    )
    _validate(document, "/v4/actions", "post", action)
    checks = [
        ("/v4/contacts", "get", tenant.call("GET", "/v4/contacts", params={"listId": list_id})),
        ("/v4/contacts/{id}", "get", tenant.call("GET", f"/v4/contacts/{contact_id}")),
        ("/v4/lists", "get", tenant.call("GET", "/v4/lists")),
        ("/v4/projects", "get", tenant.call("GET", "/v4/projects")),
        ("/v4/actions", "get", tenant.call("GET", "/v4/actions", params={"subId": contact_id})),
        ("/v4/contacts", "get", tenant.call("GET", "/v4/contacts")),  # 400
        ("/v4/lists/{id}", "get", tenant.call("GET", "/v4/lists/nope")),  # 404
        ("/v4/lists", "get", tenant.client.get("/v4/lists")),  # 401
        ("/health/ready", "get", tenant.client.get("/health/ready")),
    ]
    for path, method, response in checks:
        _validate(document, path, method, response)


def test_docs_page_is_served(client: ApiClient) -> None:
    response = client.get("/docs")
    assert response.status_code == 200 and "swagger" in response.text.lower()


AUDIENCE_OPERATIONS = {
    ("/v4/audiences", "post"),
    ("/v4/audiences", "get"),
    ("/v4/audiences/preview", "post"),
    ("/v4/audiences/{id}", "get"),
    ("/v4/audiences/{id}", "patch"),
    ("/v4/audiences/{id}", "delete"),
    ("/v4/audiences/{id}/members", "post"),
    ("/v4/audiences/{id}/members/{contactId}", "delete"),
}


def _where(document: dict[str, Any]) -> dict[str, Any]:
    return {"$ref": "#/components/schemas/WhereClause", "components": document["components"]}


def test_where_clauses_are_described_by_the_library_schema(document: dict[str, Any]) -> None:
    assert AUDIENCE_OPERATIONS <= {(path, method) for path, method, _ in _operations(document)}
    schemas = document["components"]["schemas"]
    service_fields = af.CONTACT.with_fields(phoneNumber="string", isGDPR="boolean")
    library = af.json_schema(service_fields)["$defs"]
    assert schemas["WhereClause"]["properties"].keys() == library["where"]["properties"].keys()
    assert schemas["WhereClause"]["properties"]["points"] == {
        "$ref": "#/components/schemas/WhereNumberFilter"
    }
    assert {name for name in schemas if name.startswith("Where")} == {"WhereClause"} | {
        "Where" + name[0].upper() + name[1:] for name in library if name != "where"
    }
    jsonschema.validate(
        {"OR": [{"points": {"gte": 1}}, {"email": {"contains": "a"}}]}, _where(document)
    )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"points": {"gtee": 1}}, _where(document))
    for body in ("AudienceCreate", "AudienceUpdate", "AudiencePreview"):
        filters = schemas[body]["properties"]["filters"]
        assert {"$ref": "#/components/schemas/WhereClause"} in filters["anyOf"]
        assert {"string", "null"} <= {option.get("type") for option in filters["anyOf"]}
    assert schemas["AudienceCreate"]["required"] == ["name", "listId"]
    parameters = document["paths"]["/v4/contacts"]["get"]["parameters"]
    (filters_parameter,) = [p for p in parameters if p["name"] == "filters"]
    assert filters_parameter["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/WhereClause"
    }


def test_audience_responses_and_rule_errors_match_the_document(
    document: dict[str, Any], tenant: Tenant
) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "doc@example.com", points=3)
    created = tenant.call(
        "POST", "/v4/audiences", json={"name": "d", "listId": lst["id"], "filters": {"points": 3}}
    )
    _validate(document, "/v4/audiences", "post", created)
    smart_id = created.json()["data"]["audience"]["id"]
    hand = tenant.call("POST", "/v4/audiences", json={"name": "h", "listId": lst["id"]})
    hand_id = hand.json()["data"]["audience"]["id"]
    members = f"/v4/audiences/{hand_id}/members"
    checks = [
        ("/v4/audiences", "get", tenant.call("GET", "/v4/audiences", params={"listId": lst["id"]})),
        ("/v4/audiences/{id}", "get", tenant.call("GET", f"/v4/audiences/{smart_id}")),
        (
            "/v4/audiences/{id}",
            "patch",
            tenant.call("PATCH", f"/v4/audiences/{smart_id}", json={"name": "e"}),
        ),
        (
            "/v4/audiences/{id}",
            "patch",
            tenant.call("PATCH", f"/v4/audiences/{smart_id}", json={"filters": ""}),
        ),
        (
            "/v4/audiences/preview",
            "post",
            tenant.call(
                "POST", "/v4/audiences/preview", json={"listId": lst["id"], "filters": "x"}
            ),
        ),
        (
            "/v4/audiences/{id}/members",
            "post",
            tenant.call("POST", members, json={"contactIds": [contact["id"]]}),
        ),
        (
            "/v4/audiences/{id}/members/{contactId}",
            "delete",
            tenant.call("DELETE", f"{members}/{contact['id']}"),
        ),
        ("/v4/audiences", "post", tenant.call("POST", "/v4/audiences", json={})),
        ("/v4/audiences/{id}", "delete", tenant.call("DELETE", f"/v4/audiences/{smart_id}")),
        ("/v4/audiences/{id}", "get", tenant.call("GET", f"/v4/audiences/{smart_id}")),
    ]
    statuses = [response.status_code for _, _, response in checks]
    assert statuses == [200, 200, 200, 400, 400, 200, 200, 400, 200, 404]
    for path, method, response in checks:
        _validate(document, path, method, response)


def test_a_fixed_path_allows_only_its_own_methods(tenant: Tenant) -> None:
    response = tenant.call("PUT", "/v4/audiences/preview")
    assert (response.status_code, response.headers["allow"]) == (405, "POST")
    response = tenant.call("PUT", "/v4/audiences/aud_x")
    assert (response.status_code, response.headers["allow"]) == (405, "GET, PATCH, DELETE")


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        schema = document["components"]["schemas"][name]
    return schema


def _schema_at(document: dict[str, Any], schema: dict[str, Any], pointer: str) -> dict[str, Any]:
    """The schema of the value at a JSON pointer (object properties and array items only).

    In an `anyOf` (a contact created with a private key, or a public key's sign-up), the first
    alternative holding the pointer: a link applies to the answers that carry its value.
    """
    parts = [part for part in pointer.split("/") if part]
    schema = _resolve(document, schema)
    if not parts:
        return schema
    if "anyOf" in schema:
        for alternative in schema["anyOf"]:
            try:
                return _schema_at(document, alternative, pointer)
            except KeyError:
                continue
        raise KeyError(pointer)
    part, rest = parts[0], "/" + "/".join(parts[1:])
    inner = schema["items"] if part.isdigit() else schema["properties"][part]
    return _schema_at(document, inner, rest)


def _operation_by_id(document: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    return {
        operation["operationId"]: (path, method, operation)
        for path, method, operation in _operations(document)
    }


def _links(document: dict[str, Any]) -> list[tuple[str, str, str, str, dict[str, Any]]]:
    return [
        (path, method, status, name, link)
        for path, method, operation in _operations(document)
        for status, response in operation["responses"].items()
        for name, link in response.get("links", {}).items()
    ]


def _check_expression(
    document: dict[str, Any], source: dict[str, Any], status: str, expression: str
) -> None:
    """A runtime expression names a string in the source's response or request."""
    if expression.startswith("$response.body#"):
        content = source["responses"][status]["content"]["application/json"]
        pointer = expression.removeprefix("$response.body#")
    elif expression.startswith("$request.body#"):
        content = source["requestBody"]["content"]["application/json"]
        pointer = expression.removeprefix("$request.body#")
    else:
        location, _, name = expression.removeprefix("$request.").partition(".")
        assert (location, name) in {(p["in"], p["name"]) for p in source["parameters"]}
        return
    assert _schema_at(document, content["schema"], pointer)["type"] == "string", expression


def test_links_name_real_operations_parameters_and_fields(document: dict[str, Any]) -> None:
    operations = _operation_by_id(document)
    links = _links(document)
    assert len(links) >= 20
    for path, method, status, name, link in links:
        where = f"{method.upper()} {path} {status} {name}"
        source = document["paths"][path][method]
        assert link["operationId"] in operations, where
        target_path, target_method, target = operations[link["operationId"]]
        declared = {(p["in"], p["name"]) for p in target.get("parameters", [])}
        for qualified, expression in link.get("parameters", {}).items():
            location, _, parameter = qualified.partition(".")
            assert (location, parameter) in declared, where
            _check_expression(document, source, status, expression)
        if "requestBody" in link:
            body = target["requestBody"]["content"]["application/json"]["schema"]
            fields = _resolve(document, body)["properties"]
            for field_name, expression in link["requestBody"].items():
                assert field_name in fields, where
                _check_expression(document, source, status, expression)
        required = {(p["in"], p["name"]) for p in target.get("parameters", []) if p["required"]}
        supplied = {tuple(q.partition(".")[::2]) for q in link.get("parameters", {})}
        assert {p for p in required if p[0] == "path"} <= supplied, where
        assert target_method != "get" or "requestBody" not in link, (where, target_path)


def test_links_chain_what_a_creation_makes(document: dict[str, Any]) -> None:
    operations = _operation_by_id(document)
    chained: dict[str, set[str]] = {}
    for path, method, _, _, link in _links(document):
        target_path, target_method, _ = operations[link["operationId"]]
        source = f"{method.upper()} {path}"
        chained.setdefault(source, set()).add(f"{target_method.upper()} {target_path}")
    assert {
        "GET /v4/lists/{id}",
        "PATCH /v4/lists/{id}",
        "POST /v4/contacts",
        "GET /v4/contacts",
        "POST /v4/audiences",
        "GET /v4/audiences",
    } <= chained["POST /v4/lists"]
    assert {
        "GET /v4/contacts/{id}",
        "PATCH /v4/contacts/{id}",
        "POST /v4/actions",
        "GET /v4/actions",
    } <= chained["POST /v4/contacts"]
    assert {
        "GET /v4/audiences/{id}",
        "PATCH /v4/audiences/{id}",
        "DELETE /v4/audiences/{id}",
        "POST /v4/audiences/{id}/members",
    } <= chained["POST /v4/audiences"]
    assert {"GET /v4/actions/{id}", "DELETE /v4/actions/{id}"} <= chained["POST /v4/actions"]
    # Deletions that cascade are not linked (see `openapi.ITEM_METHODS`).
    assert "DELETE /v4/lists/{id}" not in chained["POST /v4/lists"]
    assert "DELETE /v4/contacts/{id}" not in chained["POST /v4/contacts"]


def test_both_error_forms_document_the_one_envelope(document: dict[str, Any]) -> None:
    """`Error` keeps the specification's two required fields (`error` a number) and
    `RuleError` the interface's string form (`error` the message, no `message`); both describe
    `status`, `detail` and `errors`, and `details` is deprecated."""
    schemas = document["components"]["schemas"]
    error, rule = schemas["Error"], schemas["RuleError"]
    assert error["required"] == ["error", "message"] and rule["required"] == ["error"]
    assert error["properties"]["error"]["type"] == "integer"
    assert rule["properties"]["error"]["type"] == "string" and "message" not in rule["properties"]
    for schema in (error, rule):
        assert {"status", "detail", "errors"} <= set(schema["properties"])
    assert rule["properties"]["details"]["deprecated"] is True
    assert {"path", "line", "column"} <= set(schemas["ValidationIssue"]["properties"])


FILTER_EXAMPLES = (
    ("/v4/audiences", "post", 201),
    ("/v4/audiences/preview", "post", 200),
    ("/v4/audiences/estimate", "post", 200),
    ("/v4/audiences/compare", "post", 200),
    ("/v4/audiences/{id}", "patch", 200),
)
"""The operations that take a where clause in their body. The schemathesis run leaves their
examples to this test (`tests/service/test_schemathesis.py`): its examples phase drew them
through the filter's recursive schema for a minute and accepted a 400 for them."""


def _with_ids(value: Any, ids: dict[str, str]) -> Any:
    """The documented example with its list and audience ids replaced by real ones."""
    if isinstance(value, dict):
        return {key: ids.get(key, _with_ids(item, ids)) for key, item in value.items()}
    return value


def test_the_filter_operations_documented_examples_are_answered(
    document: dict[str, Any], tenant: Tenant
) -> None:
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "top@example.com", points=300, country="FR")
    tenant.new_contact(lst["id"], "low@example.com", points=3, country="DE")
    smart = {"name": "a", "listId": lst["id"], "filtersText": "points > 0"}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=smart)["audience"]
    ids = {"listId": lst["id"], "audienceId": audience["id"]}
    for path, method, status in FILTER_EXAMPLES:
        example = document["paths"][path][method]["requestBody"]["content"]["application/json"]
        url = path.replace("{id}", audience["id"])
        response = tenant.call(method.upper(), url, json=_with_ids(example["example"], ids))
        assert response.status_code == status, (path, response.text)
        _validate(document, path, method, response)
    parameters = document["paths"]["/v4/contacts"]["get"]["parameters"]
    (text,) = [p["example"] for p in parameters if p["name"] == "filtersText"]
    found = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"], "filtersText": text})
    assert [c["email"] for c in found["contacts"]] == ["top@example.com"]
