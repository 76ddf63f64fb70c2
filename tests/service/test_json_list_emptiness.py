"""A custom list field kept inside `data` takes "has no items" (`isEmpty`), as
docs/semantics-json.md ("Typed fields inside JSON") reads it: TRUE for `[]`, FALSE for an array with
items, UNKNOWN for a missing key, JSON null or another JSON type. Preview and the audience's
members agree on SQLite and PostgreSQL, and the refusal of what such a list does not take
(`equals`) no longer tells a service user to keep the list in a column, which they cannot do."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import ApiClient, Tenant, make_tenant, settings_on

DATA: dict[str, Any] = {
    "empty@example.com": {"tags": []},
    "vip@example.com": {"tags": ["vip"]},
    "null-item@example.com": {"tags": [None]},
    "missing@example.com": {},
    "null@example.com": {"tags": None},
}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def tenant_on(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> Tenant:
    api = app_factory(settings_on(request, tmp_path / "lists.db", membership_sweep_seconds=0))
    return make_tenant(api)


def _list_with_tags(tenant: Tenant) -> str:
    lst: str = tenant.new_list()["id"]
    tenant.ok("POST", f"/v4/lists/{lst}/fields", 201, json={"key": "tags", "type": "string[]"})
    for email, data in DATA.items():
        tenant.new_contact(lst, email, data=data)
    return lst


def _previewed(tenant: Tenant, lst: str, body: dict[str, Any]) -> set[str]:
    found = tenant.ok("POST", "/v4/audiences/preview", json={"listId": lst, **body})
    return {row["email"] for row in found["contacts"]}


def test_has_no_items_reads_an_empty_array_only(tenant_on: Tenant) -> None:
    lst = _list_with_tags(tenant_on)
    for body in ({"filtersText": "tags is empty"}, {"filters": {"tags": {"isEmpty": True}}}):
        assert _previewed(tenant_on, lst, body) == {"empty@example.com"}
    has_items = {"vip@example.com", "null-item@example.com"}
    assert _previewed(tenant_on, lst, {"filtersText": "tags is not empty"}) == has_items
    none_at_all = {"empty@example.com", "missing@example.com", "null@example.com"}
    text = "tags is null or tags is empty"
    assert _previewed(tenant_on, lst, {"filtersText": text}) == none_at_all
    created = tenant_on.ok(
        "POST", "/v4/audiences", 201, json={"listId": lst, "name": "no tags", "filtersText": text}
    )
    assert {row["email"] for row in created["audience"]["subs"]} == none_at_all


def test_the_catalogue_offers_is_empty_for_a_list_inside_data(tenant_on: Tenant) -> None:
    lst = _list_with_tags(tenant_on)
    fields = tenant_on.ok("GET", f"/v4/lists/{lst}/fields")["fields"]
    tags = next(field for field in fields if field["key"] == "tags")
    assert "isEmpty" in tags["operators"] and "equals" not in tags["operators"]


def test_the_refusal_of_equals_names_what_a_service_user_can_write(tenant_on: Tenant) -> None:
    lst = _list_with_tags(tenant_on)
    for body in ({"filtersText": 'tags = ["vip"]'}, {"filters": {"tags": ["vip"]}}):
        response = tenant_on.call("POST", "/v4/audiences/preview", json={"listId": lst, **body})
        assert response.status_code == 400, response.json()
        said = str(response.json())
        assert "kept inside JSON" in said and "in a column" not in said
        assert "is empty" in said or "isEmpty" in said
