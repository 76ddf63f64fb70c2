"""`GET /v4/lists/{listId}/fields`: the field catalogue an audience builder renders."""

from __future__ import annotations

import audiencefilter as af
from audiencefilter.service.domain import field_catalogue
from audiencefilter.service.domain.audience_filters import SCHEMA

from .conftest import Tenant


def test_the_catalogue_holds_every_filterable_field_with_its_type(tenant: Tenant) -> None:
    lst = tenant.new_list()
    catalogue = tenant.ok("GET", f"/v4/lists/{lst['id']}/fields")
    fields = {field["key"]: field for field in catalogue["fields"]}
    assert list(fields) == list(SCHEMA.names)
    assert fields["points"] == {
        "key": "points",
        "type": "number",
        "label": "Points",
        "custom": False,
    }
    assert fields["createdAt"]["type"] == "datetime"
    assert fields["isGDPR"] == {
        "key": "isGDPR",
        "type": "boolean",
        "label": "GDPR consent",
        "custom": False,
    }
    assert fields["firstName"]["label"] == "First name"
    assert fields["data"]["type"] == "json"
    for field in catalogue["fields"]:  # every key is one the library's filters accept
        assert field["type"] in {t.value for t in af.FieldType}
        value = {"path": ["plan"], "equals": None} if field["type"] == "json" else None
        af.parse({field["key"]: value}, SCHEMA)


def test_the_catalogue_names_the_relations_and_their_fields(tenant: Tenant) -> None:
    lst = tenant.new_list()
    relations = tenant.ok("GET", f"/v4/lists/{lst['id']}/fields")["relations"]
    by_key = {relation["key"]: relation for relation in relations}
    assert set(by_key) == {"actions", "audiences"}
    actions = {field["key"]: field["type"] for field in by_key["actions"]["fields"]}
    assert actions == {
        "id": "string",
        "name": "string",
        "increase": "number",
        "createdAt": "datetime",
    }
    created = next(f for f in by_key["actions"]["fields"] if f["key"] == "createdAt")
    assert created["label"] == "Created at"  # not the contact's "Signed up at"


def test_a_custom_field_inside_data_is_flagged_custom() -> None:
    schema = SCHEMA.with_fields(plan=("string", ("data", "plan")), renewal=("date", ("data", "r")))
    fields = {f.key: f for f in field_catalogue.of_schema(schema).fields}
    assert fields["plan"].custom and fields["plan"].type == "string"
    assert fields["renewal"].type == "date"
    assert not fields["points"].custom


def test_another_accounts_list_is_not_found(tenant: Tenant, other_tenant: Tenant) -> None:
    lst = other_tenant.new_list()
    response = tenant.call("GET", f"/v4/lists/{lst['id']}/fields")
    assert response.status_code == 404
    assert response.json() == {
        "error": 404,
        "message": "List not found",
        "status": 404,
        "detail": "List not found",
    }


def test_a_public_key_may_not_read_the_catalogue(tenant: Tenant) -> None:
    lst = tenant.new_list()
    response = tenant.call(
        "GET", f"/v4/lists/{lst['id']}/fields", headers={"apiKey": tenant.public_key}
    )
    assert response.status_code == 403


def test_the_openapi_document_describes_the_catalogue(tenant: Tenant) -> None:
    document = tenant.client.get("/openapi.json").json()
    operation = document["paths"]["/v4/lists/{listId}/fields"]["get"]
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/ListFieldsResponse"}
    field = document["components"]["schemas"]["FilterField"]
    assert set(field["properties"]) == {"key", "type", "label", "custom"}
