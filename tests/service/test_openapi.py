"""The OpenAPI document: metadata, security, documented errors, and responses that match it."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from .conftest import ApiClient, Tenant


@pytest.fixture(scope="module")
def document(client: ApiClient) -> dict[str, Any]:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


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


def test_every_operation_documents_its_errors_and_never_422(document: dict[str, Any]) -> None:
    paths = {path for path, _, _ in _operations(document)}
    assert {"/v4/contacts", "/v4/contacts/{id}", "/v4/lists", "/v4/lists/{id}"} <= paths
    assert {"/v4/projects", "/v4/actions", "/v4/actions/{id}", "/health/ready"} <= paths
    for path, method, operation in _operations(document):
        responses = operation["responses"]
        assert "422" not in responses
        if path.startswith("/v4"):
            assert operation["security"] == [{"apiKey": []}]
            for status in ("400", "401", "403", "404", "429", "500"):
                schema = responses[status]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/Error"}, (path, method, status)
            assert "Retry-After" in responses["429"]["headers"]
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
