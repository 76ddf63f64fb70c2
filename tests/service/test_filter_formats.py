"""Audiences in the formats users already hold (issue 28): `filtersFormat` on create, update and
preview, and `filtersAs` to read an audience's filter back in another format."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.app import create_app

from .audience_helpers import member_emails, new_audience
from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings

FRANCE_JSONLOGIC = {"and": [{"==": [{"var": "country"}, "FR"]}, {">=": [{"var": "points"}, 100]}]}
FRANCE_MONGODB = {"country": "FR", "points": {"$gte": 100}}
CANONICAL = '{"country":{"equals":"FR"},"points":{"gte":100}}'


@pytest.fixture
def tenant(tmp_path: Path) -> Iterator[Tenant]:
    client = ApiClient(create_app(sqlite_settings(tmp_path / "formats.db")))
    yield make_tenant(client)
    client.close()


def _seeded(tenant: Tenant) -> str:
    lst: str = tenant.new_list()["id"]
    tenant.new_contact(lst, "rich@example.com", country="FR", points=150)
    tenant.new_contact(lst, "poor@example.com", country="FR", points=5)
    tenant.new_contact(lst, "away@example.com", country="DE", points=500)
    return lst


@pytest.mark.parametrize(
    ("written_in", "rule"),
    [
        ("jsonlogic", FRANCE_JSONLOGIC),
        ("mongodb", FRANCE_MONGODB),
        (
            "jsonlogic",
            '{"and": [{"==": [{"var": "country"}, "FR"]}, {">=": [{"var": "points"}, 100]}]}',
        ),
    ],
)
def test_an_audience_is_created_from_another_format_and_stored_canonical(
    tenant: Tenant, written_in: str, rule: Any
) -> None:
    lst = _seeded(tenant)
    created = new_audience(tenant, lst, "France", filters=rule, filtersFormat=written_in)
    assert created["audience"]["filters"] == CANONICAL
    assert member_emails(tenant, created["audience"]["id"]) == ["rich@example.com"]


def test_an_audience_reads_back_in_the_format_asked(tenant: Tenant) -> None:
    lst = _seeded(tenant)
    audience = new_audience(tenant, lst, "France", filters=FRANCE_MONGODB, filtersFormat="mongodb")
    audience_id = audience["audience"]["id"]
    shown = tenant.ok("GET", f"/v4/audiences/{audience_id}", params={"filtersAs": "jsonlogic"})
    rule = shown["audience"]["filtersAs"]
    again = tenant.ok(
        "POST",
        "/v4/audiences/preview",
        json={"listId": lst, "filters": rule, "filtersFormat": "jsonlogic"},
        params={"filtersAs": "mongodb"},
    )
    assert again["filters"] == CANONICAL
    assert again["count"] == 1
    assert again["filtersAs"] is not None
    assert "filtersAs" not in tenant.ok("GET", f"/v4/audiences/{audience_id}")["audience"]


def test_an_update_takes_a_format_too(tenant: Tenant) -> None:
    lst = _seeded(tenant)
    audience = new_audience(tenant, lst, "Rich", filters={"points": {"gte": 100}})["audience"]
    tenant.ok(
        "PATCH",
        f"/v4/audiences/{audience['id']}",
        json={"filters": {"country": {"$ne": "FR"}}, "filtersFormat": "mongodb"},
    )
    # MongoDB's $ne also matches a missing country: read faithfully, as NOT = OR IS NULL.
    assert member_emails(tenant, audience["id"]) == ["away@example.com"]


def test_a_rule_of_another_format_is_refused_at_its_path(tenant: Tenant) -> None:
    lst = _seeded(tenant)
    body = {"name": "Bad", "listId": lst, "filtersFormat": "jsonlogic"}
    response = tenant.call(
        "POST", "/v4/audiences", json={**body, "filters": {"and": [{"==": [{"var": "nope"}, 1]}]}}
    )
    assert response.status_code == 400
    details = response.json()["details"]
    assert details and "nope" in str(details)
    mixed = tenant.call("POST", "/v4/audiences", json={**body, "filtersText": "points > 1"})
    assert mixed.status_code == 400
    assert "filtersFormat" in mixed.json()["message"]


def test_an_audience_reads_as_a_sentence_for_people(tenant: Tenant) -> None:
    lst = _seeded(tenant)
    audience = new_audience(tenant, lst, "France", filters=FRANCE_MONGODB, filtersFormat="mongodb")
    shown = tenant.ok(
        "GET", f"/v4/audiences/{audience['audience']['id']}", params={"filtersAs": "english"}
    )
    sentence = shown["audience"]["filtersAs"]
    assert isinstance(sentence, str)
    assert "country" in sentence and "100" in sentence


def test_an_audience_is_created_from_cel_and_reads_back_in_it(tenant: Tenant) -> None:
    """CEL, the fifth interop format, reaches the service like the others: a filter written in
    it, stored canonical, and read back in it."""
    lst = _seeded(tenant)
    rule = 'country == "FR" && points >= 100.0'
    created = new_audience(tenant, lst, "France", filters=rule, filtersFormat="cel")["audience"]
    assert member_emails(tenant, created["id"]) == ["rich@example.com"]
    shown = tenant.ok("GET", f"/v4/audiences/{created['id']}", params={"filtersAs": "cel"})
    again = tenant.ok(
        "POST",
        "/v4/audiences/preview",
        json={"listId": lst, "filters": shown["audience"]["filtersAs"], "filtersFormat": "cel"},
    )
    assert again["filters"] == created["filters"] and again["count"] == 1
    refused = tenant.call(
        "POST",
        "/v4/audiences/preview",
        json={"listId": lst, "filters": 'country == "FR" &&', "filtersFormat": "cel"},
    )
    assert refused.status_code == 400
    errors = refused.json()["errors"]
    assert (errors[0]["line"], errors[0]["column"]) == (1, 19)  # CEL's own position
