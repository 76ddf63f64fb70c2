"""Imports keep history: sign-up instants, dated actions, upserts and imports without events.

Replays of issue 27: an import refused `createdAt` and actions took no date, so after a
migration every contact had signed up today (a "sign-up anniversary this week" audience held
them all) and "no action in 60 days" meant nothing; and an import never updated a contact, so a
second sync of the same export could not correct anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.app import create_app

from .audience_helpers import member_emails, smart
from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings

NOW = datetime(2030, 6, 15, 12, tzinfo=UTC)
NO_ACTION_IN_60_DAYS = {"actions": {"none": {"createdAt": {"gte": {"ago": "P60D"}}}}}
ANNIVERSARY_THIS_WEEK = {"createdAt": {"anniversary": {"next": 7, "unit": "day"}}}
HISTORY = [
    {
        "email": "dormant@example.com",
        "createdAt": "2027-01-10T08:00:00+01:00",
        "actions": [{"name": "share", "increase": 5, "createdAt": "2029-12-01T10:00:00Z"}],
    },
    {
        "email": "active@example.com",
        "createdAt": "2028-06-17T09:00:00-04:00",
        "country": "Spain",
        "actions": [
            {"name": "share", "increase": 5, "createdAt": "2030-01-01T10:00:00Z"},
            {"name": "login", "increase": 1, "createdAt": "2030-06-01T10:00:00Z"},
        ],
    },
    {"email": "quiet@example.com", "createdAt": "2029-03-03T00:00:00Z"},
]


@pytest.fixture
def api(tmp_path: Path) -> Iterator[ApiClient]:
    settings = sqlite_settings(tmp_path / "history.db", membership_sweep_seconds=0)
    client = ApiClient(create_app(settings, clock=lambda: NOW))
    yield client
    client.close()


@pytest.fixture
def tenant(api: ApiClient) -> Tenant:
    return make_tenant(api)


def _import(tenant: Tenant, list_id: str, rows: Any, **params: Any) -> Any:
    return tenant.ok("POST", "/v4/contacts/import", params={"listId": list_id, **params}, json=rows)


def _contact(tenant: Tenant, contact_id: str) -> Any:
    return tenant.ok("GET", f"/v4/contacts/{contact_id}")["contact"]


def _actions(tenant: Tenant, contact_id: str) -> list[tuple[str, str]]:
    found = tenant.ok("GET", "/v4/actions", params={"subId": contact_id})["actions"]
    return sorted((action["name"], action["createdAt"]) for action in found)


def test_imported_history_makes_no_action_in_60_days_mean_something(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    before = smart(tenant, lst, NO_ACTION_IN_60_DAYS, name="Dormant (before)")["id"]
    result = _import(tenant, lst, HISTORY)
    assert [row["status"] for row in result["results"]] == ["created"] * 3
    after = smart(tenant, lst, NO_ACTION_IN_60_DAYS, name="Dormant (after)")["id"]
    expected = ["dormant@example.com", "quiet@example.com"]
    assert sorted(member_emails(tenant, before)) == sorted(member_emails(tenant, after)) == expected
    dormant, active, _ = (row["id"] for row in result["results"])
    assert _contact(tenant, dormant)["createdAt"] == "2027-01-10T07:00:00Z"
    assert (_contact(tenant, active)["points"], _actions(tenant, active)) == (
        6,
        [("login", "2030-06-01T10:00:00Z"), ("share", "2030-01-01T10:00:00Z")],
    )


def test_a_sign_up_anniversary_audience_holds_only_this_weeks_anniversaries(
    tenant: Tenant,
) -> None:
    lst = tenant.new_list()["id"]
    anniversaries = smart(tenant, lst, ANNIVERSARY_THIS_WEEK)["id"]
    _import(tenant, lst, HISTORY)
    assert member_emails(tenant, anniversaries) == ["active@example.com"]  # 17 June 2028


def test_a_second_sync_with_upsert_corrects_a_field_and_reports_the_rest_unchanged(
    tenant: Tenant,
) -> None:
    lst = tenant.new_list()["id"]
    france = smart(tenant, lst, {"country": "France"})["id"]
    first = _import(tenant, lst, HISTORY)["results"]
    corrected = [{**HISTORY[0], "country": "France"}, *HISTORY[1:]]
    again = _import(tenant, lst, corrected)  # the default mode changes nothing
    assert (again["mode"], again["exists"], again["updated"]) == ("create", 3, 0)
    synced = _import(tenant, lst, corrected, mode="upsert")
    ids = [row["id"] for row in first]
    assert synced["results"] == [
        {"row": 1, "status": "updated", "id": ids[0], "fields": ["country"]},
        {"row": 2, "status": "unchanged", "id": ids[1]},
        {"row": 3, "status": "unchanged", "id": ids[2]},
    ]
    assert (synced["updated"], synced["unchanged"], synced["created"]) == (1, 2, 0)
    assert member_emails(tenant, france) == ["dormant@example.com"]
    active = _contact(tenant, ids[1])
    assert (active["points"], len(_actions(tenant, ids[1]))) == (6, 2)  # no action twice


def test_an_upsert_adds_new_actions_and_new_contacts(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    first = _import(tenant, lst, HISTORY[:1])["results"][0]["id"]
    late = {"name": "share", "increase": 3, "createdAt": "2030-06-10T10:00:00Z"}
    rows = [
        {**HISTORY[0], "actions": [*HISTORY[0]["actions"], late]},  # type: ignore[dict-item]
        {"email": "new@example.com", "points": 40, "actions": [late]},
    ]
    synced = _import(tenant, lst, rows, mode="upsert")["results"]
    assert synced[0] == {
        "row": 1,
        "status": "updated",
        "id": first,
        "fields": ["actions", "points"],
    }
    assert synced[1]["status"] == "created"
    assert _contact(tenant, first)["points"] == 8  # 5, then 3 more
    assert _contact(tenant, synced[1]["id"])["points"] == 40  # a row's points are the balance


@pytest.mark.parametrize(
    ("row", "pointer", "detail"),
    [
        ({"createdAt": "2019-05-01"}, "/createdAt", "offset from UTC"),
        ({"createdAt": "2030-06-15T12:10:00Z"}, "/createdAt", "must not be in the future"),
        ({"createdAt": "yesterday"}, "/createdAt", "an ISO 8601 date-time"),
        ({"createdAt": "1969-12-31T23:59:59Z"}, "/createdAt", "before 1970"),
        (
            {"actions": [{"name": "share", "increase": 1, "createdAt": "2031-01-01T00:00:00Z"}]},
            "/actions/0/createdAt",
            "must not be in the future",
        ),
        ({"actions": [{"name": "share", "increase": 1}]}, "/actions/0/createdAt", "required"),
    ],
)
def test_a_row_with_impossible_history_is_invalid_naming_its_field(
    tenant: Tenant, row: dict[str, Any], pointer: str, detail: str
) -> None:
    lst = tenant.new_list()["id"]
    rows = [{"email": "fine@example.com"}, {"email": "odd@example.com", **row}]
    result = _import(tenant, lst, rows)
    assert [r["status"] for r in result["results"]] == ["created", "invalid"]
    errors = result["results"][1]["errors"]
    assert [error["pointer"] for error in errors] == [pointer]
    assert detail in errors[0]["detail"]


def test_a_clock_skew_of_a_few_minutes_is_accepted(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    row = {"email": "ahead@example.com", "createdAt": "2030-06-15T12:04:00Z"}
    assert _import(tenant, lst, [row])["created"] == 1


def _head(tenant: Tenant, list_id: str) -> str:
    return str(tenant.ok("GET", "/v4/events", params={"listId": list_id})["next"])


def test_an_import_without_events_still_moves_membership(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    dormant = smart(tenant, lst, NO_ACTION_IN_60_DAYS)["id"]
    head = _head(tenant, lst)
    _import(tenant, lst, HISTORY, events="false")
    assert _head(tenant, lst) == head
    assert member_emails(tenant, dormant) == ["dormant@example.com", "quiet@example.com"]
    corrected = [{**HISTORY[2], "actions": [HISTORY[1]["actions"][1]]}]  # type: ignore[index]
    _import(tenant, lst, corrected, mode="upsert", events="false")
    assert _head(tenant, lst) == head
    assert member_emails(tenant, dormant) == ["dormant@example.com"]


def test_the_mode_and_events_flag_are_part_of_an_idempotent_request(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    headers = {"Idempotency-Key": "sync-1"}
    path = "/v4/contacts/import"
    first = tenant.call("POST", path, params={"listId": lst}, json=HISTORY, headers=headers)
    assert first.status_code == 200
    other = {"listId": lst, "mode": "upsert"}
    assert tenant.call("POST", path, params=other, json=HISTORY, headers=headers).status_code == 422


def test_an_action_may_be_dated_in_the_past(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    dormant = smart(tenant, lst, NO_ACTION_IN_60_DAYS)["id"]
    ada = tenant.new_contact(lst, "ada@example.com")["id"]
    old = {"name": "share", "increase": 2, "subId": ada, "createdAt": "2030-01-02T03:04:05+02:00"}
    action = tenant.ok("POST", "/v4/actions", 201, json=old)["action"]
    assert action["createdAt"] == "2030-01-02T01:04:05Z"
    assert member_emails(tenant, dormant) == ["ada@example.com"]
    future = {**old, "createdAt": "2030-07-01T00:00:00Z"}
    refused = tenant.call("POST", "/v4/actions", json=future)
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["pointer"] == "/body/createdAt"
    assert member_emails(tenant, dormant) == ["ada@example.com"]


@pytest.mark.postgres
def test_history_and_upserts_hold_on_postgres(pg_migrated_database: Callable[[], str]) -> None:
    """The same scenarios on PostgreSQL, where instants come back aware and `data` as JSON."""
    settings = url_settings(pg_migrated_database(), auto_migrate=True, membership_sweep_seconds=0)
    client = ApiClient(create_app(settings, clock=lambda: NOW))
    try:
        tenant = make_tenant(client)
        test_imported_history_makes_no_action_in_60_days_mean_something(tenant)
        test_a_sign_up_anniversary_audience_holds_only_this_weeks_anniversaries(tenant)
        test_a_second_sync_with_upsert_corrects_a_field_and_reports_the_rest_unchanged(tenant)
        test_an_upsert_adds_new_actions_and_new_contacts(tenant)
        test_an_import_without_events_still_moves_membership(tenant)
    finally:
        client.close()


def test_a_single_contact_takes_its_sign_up_instant_and_a_public_key_may_not(
    tenant: Tenant,
) -> None:
    lst = tenant.new_list()["id"]
    anniversaries = smart(tenant, lst, ANNIVERSARY_THIS_WEEK)["id"]
    created = tenant.new_contact(lst, "old@example.com", createdAt="2028-06-17T09:00:00-04:00")
    assert created["createdAt"] == "2028-06-17T13:00:00Z"
    assert member_emails(tenant, anniversaries) == ["old@example.com"]
    response = tenant.call(
        "POST",
        "/v4/contacts",
        headers=tenant.public_headers,
        json={"email": "new@example.com", "listId": lst, "createdAt": "2020-01-01T00:00:00Z"},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["pointer"] == "/body/createdAt"
