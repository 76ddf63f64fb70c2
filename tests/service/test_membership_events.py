"""Stored membership and its events: every write that moves a contact into or out of an
audience writes `audience.entered` / `audience.left` with its cause, in the same transaction;
the feed gives them in commit order after a cursor; the clock sweep moves relative audiences."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.app import create_app

from .audience_helpers import contact_audiences, manual, member_emails, smart
from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings
from .hands import Hands

START = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def hands() -> Hands:
    return Hands(START)


@pytest.fixture
def api(tmp_path: Path, hands: Hands) -> Iterator[ApiClient]:
    settings = sqlite_settings(tmp_path / "events.db", membership_sweep_seconds=0)
    client = ApiClient(create_app(settings, clock=hands))
    yield client
    client.close()


@pytest.fixture
def tenant(api: ApiClient) -> Tenant:
    return make_tenant(api)


def feed(tenant: Tenant, list_id: str, after: str | None = None, **params: Any) -> Any:
    query = {"listId": list_id, **params}
    if after is not None:
        query["after"] = after
    return tenant.ok("GET", "/v4/events", params=query)


def changes(tenant: Tenant, list_id: str, after: str | None = None) -> tuple[list[Any], str]:
    """The membership events after `after` as (type, contact, audience, cause); the next cursor."""
    page = feed(tenant, list_id, after, limit=1000)
    found = [
        (e["type"].split(".")[1], e["contactId"], e["audienceId"], e["cause"])
        for e in page["events"]
        if e["type"] in ("audience.entered", "audience.left")
    ]
    return found, page["next"]


def test_every_kind_of_write_enters_and_leaves_with_its_cause(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    vip = smart(tenant, lst, {"points": {"gte": 100}}, "VIP")["id"]
    _, cursor = changes(tenant, lst)
    ada = tenant.new_contact(lst, "ada@example.com", points=150)["id"]
    bob = tenant.new_contact(lst, "bob@example.com", points=5)["id"]
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("entered", ada, vip, "contact.created")]

    tenant.ok("PATCH", f"/v4/contacts/{ada}", json={"points": 10})
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("left", ada, vip, "contact.updated")]
    tenant.ok("PATCH", f"/v4/contacts/{ada}", json={"city": "Paris"})  # no change: no event
    assert changes(tenant, lst, cursor)[0] == []

    action = tenant.ok("POST", "/v4/actions", 201, json={"name": "a", "increase": 95, "subId": bob})
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("entered", bob, vip, "action.created")]
    tenant.ok("DELETE", f"/v4/actions/{action['action']['id']}")
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("left", bob, vip, "action.deleted")]

    tenant.ok("PATCH", f"/v4/audiences/{vip}", json={"filters": {"points": {"lte": 10}}})
    found, cursor = changes(tenant, lst, cursor)
    assert sorted(found) == sorted(
        [("entered", ada, vip, "audience.updated"), ("entered", bob, vip, "audience.updated")]
    )
    assert sorted(member_emails(tenant, vip)) == ["ada@example.com", "bob@example.com"]

    tenant.ok("DELETE", f"/v4/contacts/{bob}")
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("left", bob, vip, "contact.deleted")]

    tenant.ok("DELETE", f"/v4/audiences/{vip}")
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("left", ada, vip, "audience.deleted")]


def test_audience_create_mode_changes_and_manual_members(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    ada = tenant.new_contact(lst, "ada@example.com", points=150)["id"]
    bob = tenant.new_contact(lst, "bob@example.com", points=5)["id"]
    _, cursor = changes(tenant, lst)
    top = smart(tenant, lst, {"points": {"gte": 100}})["id"]
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("entered", ada, top, "audience.created")]

    hand = manual(tenant, lst)["id"]
    tenant.ok("POST", f"/v4/audiences/{hand}/members", json={"contactIds": [bob]})
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("entered", bob, hand, "members.added")]
    assert contact_audiences(tenant, bob) == [hand]

    # Manual to smart: the filter's members replace the hand-picked ones; and back again.
    tenant.ok("PATCH", f"/v4/audiences/{hand}", json={"mode": "smart", "filters": {"points": 150}})
    found, cursor = changes(tenant, lst, cursor)
    assert found == [
        ("left", bob, hand, "audience.updated"),
        ("entered", ada, hand, "audience.updated"),
    ]
    tenant.ok("PATCH", f"/v4/audiences/{hand}", json={"mode": "manual"})
    found, cursor = changes(tenant, lst, cursor)
    assert found == [
        ("left", ada, hand, "audience.updated"),
        ("entered", bob, hand, "audience.updated"),
    ]
    tenant.ok("DELETE", f"/v4/audiences/{hand}/members/{bob}")
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("left", bob, hand, "members.removed")]
    listing = tenant.ok("GET", "/v4/audiences", params={"listId": lst})["audiences"]
    assert {a["id"]: a["subsCount"] for a in listing} == {top: 1, hand: 0}


def test_bulk_import_enters_each_created_contact(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    pro = smart(tenant, lst, {"data": {"path": ["plan"], "equals": "pro"}})["id"]
    _, cursor = changes(tenant, lst)
    rows = [
        {"email": f"c{i}@example.com", "data": {"plan": "pro" if i % 2 else "free"}}
        for i in range(6)
    ]
    result = tenant.ok("POST", "/v4/contacts/import", params={"listId": lst}, json=rows)
    ids = [r["id"] for r in result["results"]]
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("entered", ids[i], pro, "contact.imported") for i in (1, 3, 5)]
    created = [e for e in feed(tenant, lst)["events"] if e["type"] == "contact.created"]
    assert [e["contactId"] for e in created] == ids
    assert {e["cause"] for e in created} == {"contact.imported"}


def test_a_write_that_fails_writes_no_event(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    smart(tenant, lst, {"email": {"contains": "x"}})
    tenant.new_contact(lst, "taken@example.com")
    ada = tenant.new_contact(lst, "ada@example.com")["id"]
    before = feed(tenant, lst)["next"]
    response = tenant.call("PATCH", f"/v4/contacts/{ada}", json={"email": "taken@example.com"})
    assert response.status_code == 409
    page = feed(tenant, lst, before)
    assert page["events"] == [] and page["next"] == before


def test_the_feed_pages_in_commit_order_with_a_stable_cursor(
    tenant: Tenant, api: ApiClient
) -> None:
    lst = tenant.new_list()["id"]
    smart(tenant, lst, {"points": {"gte": 1}})
    for i in range(5):
        tenant.new_contact(lst, f"c{i}@example.com", points=i)
    everything = feed(tenant, lst)["events"]
    assert len(everything) == 1 + 5 + 4  # audience.created, five contacts, four entered
    seen, cursor = [], None
    while True:
        page = feed(tenant, lst, cursor, limit=3)
        seen.extend(page["events"])
        cursor = page["next"]
        if not page["hasMore"]:
            break
    assert seen == everything
    assert len({e["id"] for e in seen}) == len(seen)
    again = feed(tenant, lst, everything[3]["cursor"])["events"]
    assert again == everything[4:]

    other_list = tenant.new_list()["id"]
    bad = tenant.call("GET", "/v4/events", params={"listId": other_list, "after": cursor})
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["pointer"] == "/query/after"
    stranger = make_tenant(api)
    assert stranger.call("GET", "/v4/events", params={"listId": lst}).status_code == 404
    public = tenant.call("GET", "/v4/events", params={"listId": lst}, headers=tenant.public_headers)
    assert public.status_code == 403


def test_the_clock_sweep_moves_relative_audiences(
    tenant: Tenant, api: ApiClient, hands: Hands
) -> None:
    lst = tenant.new_list()["id"]
    recent = smart(tenant, lst, {"createdAt": {"gte": {"ago": "P1D"}}})["id"]
    ada = tenant.new_contact(lst, "ada@example.com")["id"]
    found, cursor = changes(tenant, lst)
    assert found == [("entered", ada, recent, "contact.created")]
    hands.at += timedelta(days=2)
    assert contact_audiences(tenant, ada) == []  # reads are judged at the request's moment
    assert changes(tenant, lst, cursor)[0] == []  # the stored row waits for the sweep
    assert api.app.state.sweeper.run_once() == 1
    found, cursor = changes(tenant, lst, cursor)
    assert found == [("left", ada, recent, "clock")]
    event = feed(tenant, lst)["events"][-1]
    assert event["occurredAt"] == "2030-01-03T00:00:00Z"
    assert api.app.state.sweeper.run_once() == 0  # nothing left to change


def test_the_sweep_command_sweeps_once_on_the_system_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from audiencefilter.service.commands.main import main

    path = tmp_path / "sweep.db"
    hands = Hands(START)
    hands.at = datetime(2020, 1, 1, tzinfo=UTC)  # long before the system clock's now
    api = ApiClient(create_app(sqlite_settings(path, membership_sweep_seconds=0), clock=hands))
    try:
        tenant = make_tenant(api)
        lst = tenant.new_list()["id"]
        recent = smart(tenant, lst, {"createdAt": {"gte": {"ago": "P1D"}}})["id"]
        ada = tenant.new_contact(lst, "ada@example.com")["id"]
        _, cursor = changes(tenant, lst)
        assert main(["--database-url", f"sqlite:///{path}", "sweep"]) == 0
        assert capsys.readouterr().out.strip() == "1 membership events written"
        assert changes(tenant, lst, cursor)[0] == [("left", ada, recent, "clock")]
    finally:
        api.close()
