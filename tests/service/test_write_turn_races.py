"""A filter stored in turns meets a newer change between two of its turns (issue 36).

`use_cases/membership_turns.py` stores a changed filter's members a turn at a time, and checks
before each turn that the audience still uses the filter it evaluated. These tests step the
turns deterministically, running the other change just before a chosen turn's transaction opens
(`_between_turns`, in the same thread: no sleeps, no race left to chance), and check what the
feed and the stored rows say afterwards:

- the audience deleted: its turns stop, and no membership row or event of it is written after
  its `audience.deleted`; an audience reading the one whose turns run, deleted, the same;
- its filter changed again: the newer change owns the members, which end equal to a full
  evaluation of the newest filter;
- in every case, replaying the feed from the members before the first change gives the stored
  members: no pair enters twice or leaves twice in a row (no event twice), and none moved without
  its event.

On SQLite and on PostgreSQL (the `api` fixture of `test_write_turns.py`).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from audiencefilter.service.db.models import Membership
from audiencefilter.service.domain.membership import snapshot

from .conftest import ApiClient, Tenant, make_tenant
from .test_write_turns import _between_turns, _chain, _feed, _members, api, small_turns

__all__ = ["api", "small_turns"]  # fixtures of test_write_turns.py, used by name here

MOVES = ("audience.entered", "audience.left")
CONTACTS = 60
SECOND_TURN = 3
"""Write transactions of a PATCH stored in turns: its own, the first turn, then the second."""


def _setup(api: ApiClient, links: int) -> tuple[Tenant, str, list[str], list[str]]:
    """A list of 60 contacts (points 0 to 59) and a chain of audiences on `points >= 30`."""
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    ids = [tenant.new_contact(list_id, f"r{i}@race.test", points=i)["id"] for i in range(CONTACTS)]
    return tenant, list_id, ids, _chain(tenant, list_id, links, "points >= 30")


def _replayed(
    start: dict[str, set[str]], feed: list[dict[str, Any]]
) -> tuple[dict[str, set[str]], list[str]]:
    """The members the feed's moves lead to from `start`, and every move that did not change
    anything (an entry of a member, a departure of a non-member): an event twice."""
    members = {audience: set(contacts) for audience, contacts in start.items()}
    doubled: list[str] = []
    for event in feed:
        if event["type"] not in MOVES:
            continue
        held = members.setdefault(event["audienceId"], set())
        entering = event["type"] == "audience.entered"
        if (event["contactId"] in held) == entering:
            doubled.append(f"{event['type']} {event['audienceId']} {event['contactId']}")
        (held.add if entering else held.discard)(event["contactId"])
    return members, doubled


def _stored(api: ApiClient, audience_id: str) -> int:
    with api.app.state.db.reading() as session:
        count = select(func.count()).where(Membership.audienceId == audience_id)
        return int(session.scalar(count) or 0)


@pytest.fixture
def turns(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The audience and the stored filter of every turn stored (cleared by the test before the
    change it steps)."""
    real = snapshot.apply
    stored: list[tuple[str, str]] = []

    def apply(session: Any, snapshot: Any, audience: Any, *args: Any, **kwargs: Any) -> int:
        stored.append((audience.id, snapshot.filters))
        return int(real(session, snapshot, audience, *args, **kwargs))

    monkeypatch.setattr(snapshot, "apply", apply)
    return stored


def test_an_audience_deleted_between_two_turns_stops_them(
    api: ApiClient, small_turns: None, turns: list[tuple[str, str]]
) -> None:
    """The audience whose new filter is being stored is deleted before the second turn: the
    turns stop, and nothing of it is written after its deletion."""
    tenant, list_id, _, (audience_id,) = _setup(api, 0)
    before = len(_feed(tenant, list_id))
    start = {audience_id: _members(tenant, audience_id)}

    def delete() -> None:
        tenant.ok("DELETE", f"/v4/audiences/{audience_id}")

    turns.clear()
    with _between_turns(api, SECOND_TURN, delete):
        path, change = f"/v4/audiences/{audience_id}", {"filtersText": "points < 30"}
        gone = tenant.call("PATCH", path, json=change)
    assert gone.status_code == 404, gone.text  # the PATCH answers with the audience as it is
    assert [audience for audience, _ in turns] == [audience_id]  # the next turn never ran
    feed = _feed(tenant, list_id)[before:]
    deleted = [e["type"] for e in feed].index("audience.deleted")
    assert [e for e in feed[deleted:] if e.get("audienceId") == audience_id][1:] == []
    assert _stored(api, audience_id) == 0
    # The deletion's own departures follow the one turn's moves: every member leaves once.
    replayed, doubled = _replayed(start, feed[: deleted + 1])
    assert doubled == [] and replayed[audience_id] == set()


def test_a_reader_deleted_between_two_turns_gets_nothing_more(
    api: ApiClient, small_turns: None, turns: list[tuple[str, str]]
) -> None:
    """The last audience of a chain, which the turns of the root refresh, is deleted before
    the root's second turn: the turns go on for the rest of the chain, exact, and write nothing
    for the deleted audience."""
    tenant, list_id, ids, chain = _setup(api, 3)
    before = len(_feed(tenant, list_id))
    start = {audience_id: _members(tenant, audience_id) for audience_id in chain}
    last = chain[-1]

    def delete() -> None:
        tenant.ok("DELETE", f"/v4/audiences/{last}")

    turns.clear()
    with _between_turns(api, SECOND_TURN, delete):
        tenant.ok("PATCH", f"/v4/audiences/{chain[0]}", json={"filtersText": "points < 30"})
    assert len(turns) > 2 and {a for a, _ in turns} == {chain[0]}  # they went on after it
    feed = _feed(tenant, list_id)[before:]
    deleted = [e["type"] for e in feed].index("audience.deleted")
    assert [e for e in feed[deleted:] if e.get("audienceId") == last][1:] == []
    assert _stored(api, last) == 0
    replayed, doubled = _replayed(start, feed)
    assert doubled == []
    expected = set(ids[:30])
    for audience_id in chain[:-1]:
        assert _members(tenant, audience_id) == replayed[audience_id] == expected


def test_a_filter_changed_again_between_two_turns_owns_the_members(
    api: ApiClient, small_turns: None, turns: list[tuple[str, str]]
) -> None:
    """The root of a chain is patched again before the first patch's second turn: the first
    patch's turns stop, the second's store its members, and every audience of the chain ends
    as a full evaluation of the newest filter says, with one event per move in the feed."""
    tenant, list_id, ids, chain = _setup(api, 3)
    before = len(_feed(tenant, list_id))
    start = {audience_id: _members(tenant, audience_id) for audience_id in chain}

    def change_again() -> None:
        tenant.ok("PATCH", f"/v4/audiences/{chain[0]}", json={"filtersText": "points >= 45"})

    turns.clear()
    with _between_turns(api, SECOND_TURN, change_again):
        tenant.ok("PATCH", f"/v4/audiences/{chain[0]}", json={"filtersText": "points < 30"})
    # The first turn of the first change, then the second change's own turns to their end;
    # the first change's turns stopped (its next turn would come last).
    filters = [stored for _, stored in turns]
    assert len(filters) > 2 and filters[0] not in filters[1:] and len(set(filters[1:])) == 1
    newest = set(ids[45:])
    preview = {"listId": list_id, "filtersText": "points >= 45"}
    evaluated = tenant.ok("POST", "/v4/audiences/preview?limit=1000", json=preview)
    assert {contact["id"] for contact in evaluated["contacts"]} == newest
    replayed, doubled = _replayed(start, _feed(tenant, list_id)[before:])
    assert doubled == []
    for audience_id in chain:
        assert _members(tenant, audience_id) == replayed[audience_id] == newest
