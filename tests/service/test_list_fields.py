"""`GET /v4/lists/{listId}/fields`: the field catalogue an audience builder renders."""

from __future__ import annotations

from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.language.fields import ListOp
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
        "operators": ["equals", "gt", "gte", "in", "lt", "lte", "notIn"],
        "insensitive": False,
    }
    assert fields["createdAt"]["type"] == "datetime"
    assert fields["isGDPR"] == {
        "key": "isGDPR",
        "type": "boolean",
        "label": "GDPR consent",
        "custom": False,
        "operators": ["equals"],
        "insensitive": False,
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
    assert set(field["properties"]) == {
        "key",
        "type",
        "label",
        "custom",
        "operators",
        "insensitive",
    }


# The operators of each field: the library's, for the builder to offer and no others.

_SAMPLES: dict[str, Any] = {
    "string": "x",
    "number": 1,
    "boolean": True,
    "datetime": "2025-01-31T09:30:00Z",
    "date": "2025-01-31",
    "json": "x",
}
_VOCABULARY = sorted(
    {str(op) for op in af.Op} | {str(op) for op in ListOp} | {"blank"},
)
"""Every operator key the where clause knows, for whichever field."""


def _condition(field: dict[str, Any], op: str) -> dict[str, Any]:
    """`{key: {op: operand}}` with an operand of the field's type that `op` takes."""
    element = field["type"].removesuffix("[]")
    one = _SAMPLES[element]
    if op in ("in", "notIn", "hasSome", "hasEvery") or (
        op == "equals" and element != field["type"]
    ):
        operand: Any = [one]
    elif op in ("isEmpty", "blank"):
        operand = True
    elif op in ("within", "anniversary"):
        operand = {"last": 7, "unit": "day"}
    else:
        operand = one
    body = {op: operand}
    return {field["key"]: {"path": ["k"], **body} if field["type"] == "json" else body}


def _fields_of(catalogue: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each field with the relation holding it ("" for the contact's)."""
    found = [("", field) for field in catalogue["fields"]]
    for relation in catalogue["relations"]:
        found += [(relation["key"], field) for field in relation["fields"]]
    return found


def _where(relation: str, condition: dict[str, Any]) -> dict[str, Any]:
    if not relation:
        return condition
    return {relation: {"some": condition}}


def test_the_catalogue_offers_the_operators_the_library_takes_and_no_other(
    tenant: Tenant,
) -> None:
    lst = tenant.new_list()["id"]
    for key, kind in (("tags", "string[]"), ("scores", "number[]"), ("plan", "string")):
        tenant.ok("POST", f"/v4/lists/{lst}/fields", 201, json={"key": key, "type": kind})
    catalogue = tenant.ok("GET", f"/v4/lists/{lst}/fields")
    by_key = {field["key"]: field for field in catalogue["fields"]}
    # A list kept inside `data` takes the item tests and isEmpty, case-sensitive: no equals.
    assert by_key["tags"]["operators"] == ["has", "hasEvery", "hasSome", "isEmpty"]
    assert by_key["tags"]["insensitive"] is False
    assert by_key["plan"]["insensitive"] is True and "blank" in by_key["plan"]["operators"]
    schema = SCHEMA.with_fields(
        tags=("string[]", ("data", "tags")),
        scores=("number[]", ("data", "scores")),
        plan=("string", ("data", "plan")),
    )
    for relation, field in _fields_of(catalogue):
        for op in _VOCABULARY:
            where = _where(relation, _condition(field, op))
            if op in field["operators"]:
                af.parse(where, schema)  # every operator offered parses
            else:
                with pytest.raises(af.FilterError):
                    af.parse(where, schema)
        if field["insensitive"]:  # a string comparison ignoring case
            condition = _condition(field, "equals")
            condition[field["key"]]["mode"] = "insensitive"
            af.parse(_where(relation, condition), schema)


def test_the_catalogue_names_the_time_zones_filters_take(tenant: Tenant) -> None:
    # The builder's zone picker offers these: the IANA names the library checks against, so
    # `America/New_York` is offered whole and a zone the service would refuse is not.
    lst = tenant.new_list()
    catalogue = tenant.ok("GET", f"/v4/lists/{lst['id']}/fields")
    zones = catalogue["timeZones"]
    assert zones == sorted(af.zone_names())
    assert {"America/New_York", "Europe/Paris", "UTC"} <= set(zones)
    assert catalogue["defaultTimeZone"] == SCHEMA.time_zone
    for zone in ("America/New_York", zones[0], zones[-1]):
        af.parse({"createdAt": {"within": {"this": "day", "timeZone": zone}}}, SCHEMA)
