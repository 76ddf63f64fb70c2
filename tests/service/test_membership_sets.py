"""An audience's difference stored by set statements (`store.write_changes`,
`events.append_alike`) writes what the row by row path writes: the same memberships, and the
same events at the same positions, in the same order, with the same payloads.

Each scenario runs twice on two lists of the same contacts: once as the service runs it, once
with the set statements switched off (`dialects.unpacks` answering no, as for a database it does
not know); the two feeds are compared with every id replaced by what it names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from audiencefilter.service.db import dialects
from audiencefilter.service.domain import event_feed

from .conftest import ApiClient, Tenant, make_tenant, url_settings

EVENT_ID = re.compile(r"^evt_[0-9a-f]{20}$")


def _scenario(tenant: Tenant) -> tuple[list[tuple[Any, ...]], dict[str, set[str]]]:
    """A list of 40 contacts, an audience created, changed (some leave, some enter), a manual
    one, then both deleted: the list's feed and the members seen on the way, ids replaced."""
    list_id = tenant.new_list()["id"]
    rows = [{"email": f"c{i:02d}@example.com", "points": i} for i in range(40)]
    tenant.ok("POST", f"/v4/contacts/import?listId={list_id}", json=rows)
    body = {"name": "high", "listId": list_id, "filters": {"points": {"gte": 10}}}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    members = {"created": _members(tenant, audience["id"])}
    change = {"filters": {"OR": [{"points": {"gte": 30}}, {"points": {"lt": 5}}]}}
    tenant.ok("PATCH", f"/v4/audiences/{audience['id']}", json=change)
    members["changed"] = _members(tenant, audience["id"])
    tenant.ok("PATCH", f"/v4/audiences/{audience['id']}", json={"mode": "manual"})
    members["manual"] = _members(tenant, audience["id"])
    tenant.ok("DELETE", f"/v4/audiences/{audience['id']}")
    feed = tenant.ok("GET", f"/v4/events?listId={list_id}&limit=1000")["events"]
    return _named(feed), members


def _members(tenant: Tenant, audience_id: str) -> set[str]:
    subs = tenant.ok("GET", f"/v4/audiences/{audience_id}")["audience"]["subs"]
    return {contact["email"] for contact in subs}


def _named(feed: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The feed as runs of alike events (type, cause, audience, data) with the emails of their
    contacts, the audience's id replaced by `A`; a run is in the order of its contact ids."""
    emails = {e["contactId"]: e["data"]["email"] for e in feed if e["type"] == "contact.created"}
    positions = [event_feed.position_of(e["cursor"], e["listId"]) for e in feed]
    assert positions == list(range(1, len(feed) + 1))
    runs: list[tuple[Any, ...]] = []
    contacts: list[list[str]] = []
    for event in feed:
        assert EVENT_ID.match(event["id"]), event["id"]
        data = dict(event["data"])
        if "audience" in data:
            data["audience"] = {**data["audience"], "id": "A"}
        shape = (event["type"], event["cause"], event["audienceId"] is not None, data)
        if not runs or runs[-1] != shape:
            runs.append(shape)
            contacts.append([])
        contacts[-1].append(event["contactId"])
    assert all(ids == sorted(ids) for ids in contacts if None not in ids)
    named = zip(runs, contacts, strict=True)
    return [(*shape, {emails[c] for c in ids if c}) for shape, ids in named]


def _both_ways(tenant: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    feed, members = _scenario(tenant)
    with monkeypatch.context() as patched:
        patched.setattr(dialects, "unpacks", lambda dialect: False)
        rows_feed, rows_members = _scenario(tenant)
    assert members == rows_members
    assert members["created"] and members["changed"] - members["created"]
    assert feed == rows_feed
    moved = [len(run[-1]) for run in feed if run[0] in ("audience.entered", "audience.left")]
    assert sum(moved) > 60 and len(moved) >= 4


def test_set_statements_write_what_rows_write(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    _both_ways(tenant, monkeypatch)


@pytest.mark.postgres
def test_set_statements_write_what_rows_write_on_postgres(
    app_factory: Callable[..., ApiClient],
    pg_migrated_database: Callable[[], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = app_factory(url_settings(pg_migrated_database(), auto_migrate=True))
    _both_ways(make_tenant(api), monkeypatch)


def test_one_write_stamps_its_events_alike(tenant: Tenant) -> None:
    """The events of one difference share the instant and are numbered without a gap."""
    list_id = tenant.new_list()["id"]
    rows = [{"email": f"c{i}@example.com", "points": i} for i in range(20)]
    tenant.ok("POST", f"/v4/contacts/import?listId={list_id}&events=false", json=rows)
    body = {"name": "some", "listId": list_id, "filters": {"points": {"gte": 5}}}
    tenant.ok("POST", "/v4/audiences", 201, json=body)
    feed = tenant.ok("GET", f"/v4/events?listId={list_id}&limit=1000")["events"]
    entered = [event for event in feed if event["type"] == "audience.entered"]
    assert len(entered) == 15
    assert len({event["occurredAt"] for event in entered}) == 1
    assert len({event["id"] for event in entered}) == 15
