"""A single write's memberships carried in the `WITH` of its events' statement, PostgreSQL.

A PATCH's memberships (the pairs leaving and entering, and the note of its pair counts) ride in
the statement that numbers and inserts its events (`events.carry`, switch
`store.CARRY_IN_EVENTS`): one round trip fewer. The same writes made with the switch on and off
must leave the same world: each answer, the feed in its order (types, contacts, audiences,
causes, payloads), the stored members, the kept pair counts as a read adds them up, the notes
left after each write (the settling that follows a note runs after the statement that writes
it), and on the side switched on, fewer statements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import delete, event, func, select
from sqlalchemy.engine import Connection

from audiencefilter.service import create_app
from audiencefilter.service.db.engine import WRITE_OPTION, Database
from audiencefilter.service.db.models import (
    Audience,
    Event,
    EventHead,
    Membership,
    OverlapNoted,
)
from audiencefilter.service.domain.membership import overlaps, store

from .conftest import ApiClient, Tenant, make_tenant, url_settings

pytestmark = pytest.mark.postgres

DRAWN = ("group", "holdout")
SPLIT = {"seed": "carried", "holdoutPercent": 20, "groups": [{"name": "A", "percent": 80}]}


@pytest.fixture(scope="module")
def api(pg_migrated_database: Callable[[], str]) -> Iterator[ApiClient]:
    settings = url_settings(pg_migrated_database(), auto_migrate=True, membership_sweep_seconds=0)
    client = ApiClient(create_app(settings))
    yield client
    client.close()


def _audiences() -> list[dict[str, Any]]:
    """Thresholds of points a contact crosses one or many of at once, a country, both, an
    audience running an experiment (its entries drawn in Python: written on their own, not
    carried) and one reading another's members."""
    bodies: list[dict[str, Any]] = [
        {"name": f"points {n}", "filters": {"points": {"gte": n}}} for n in (10, 20, 40, 80)
    ]
    bodies += [
        {"name": "in FR", "filters": {"country": "FR"}},
        {"name": "FR and 20", "filters": {"country": "FR", "points": {"gte": 20}}},
        {"name": "drawn", "filters": {"points": {"gte": 30}}, "experiment": SPLIT},
    ]
    return bodies


STEPS = [
    (2, {"country": "FR"}),  # into the country alone: carried
    (0, {"points": 50}),  # into three thresholds and the drawn one
    (1, {"points": 90, "country": "FR"}),  # into everything
    (0, {"points": 5}),  # out of all it was in, the drawn one too: carried
    (1, {"points": 15}),  # out of most, one threshold kept: carried
    (2, {"points": 45}),  # across several with its country, into the drawn one
    (0, {"points": 5}),  # no move: the contact's own event alone
    (1, {"country": "US", "points": 100}),
]
CARRIED = [0, 3, 4]
"""The steps whose memberships ride: a move with no entry into the drawn audience (an entry
draws its group in Python and is written on its own, `store._insert_pairs`)."""


class Statements:
    """The statements of the service's write transactions while counted."""

    def __init__(self, database: Database) -> None:
        self.count = 0
        self.engine = database.engine
        event.listen(self.engine, "after_cursor_execute", self._executed)

    def _executed(self, conn: Connection, _cursor: Any, statement: str, *_: Any) -> None:
        if conn.get_execution_options().get(WRITE_OPTION, False):
            self.count += not statement.lstrip().upper().startswith("BEGIN")

    def close(self) -> None:
        event.remove(self.engine, "after_cursor_execute", self._executed)


def _world(
    api: ApiClient,
    tenant: Tenant,
    monkeypatch: pytest.MonkeyPatch,
    carry: bool,
    bare: bool = False,
) -> Any:
    """The writes of `STEPS` in a list of their own, and what they left, by names and emails
    (each side's ids are its own). `bare`: the list's events and counter deleted before them
    (a list of the time before the outbox), so the first PATCH's events find no counter."""
    monkeypatch.setattr(store, "CARRY_IN_EVENTS", carry)
    monkeypatch.setattr(overlaps, "SETTLE_EVERY", 3)  # settled after some writes' notes
    database: Database = api.app.state.db
    list_id = tenant.new_list()["id"]
    names = {}
    for body in _audiences():
        created = tenant.ok("POST", "/v4/audiences", 201, json={**body, "listId": list_id})
        names[created["audience"]["id"]] = body["name"]
    emails = {}
    for n in range(3):
        contact = tenant.new_contact(list_id, f"c{n}@example.com", points=1, country="US")
        emails[contact["id"]] = contact["email"]
    ids = list(emails)
    if bare:  # as a list of the time before the outbox: no event, no counter
        with database.transaction() as session:
            session.execute(delete(Event).where(Event.listId == list_id))
            session.execute(delete(EventHead).where(EventHead.listId == list_id))
    answers, notes = [], []
    statements, counts = Statements(database), []
    try:
        for contact, sent in STEPS:
            before = statements.count
            answer = tenant.ok("PATCH", f"/v4/contacts/{ids[contact]}", json=sent)["contact"]
            counts.append(statements.count - before)
            answers.append(
                (
                    answer["points"],
                    answer["position"],
                    sorted(a["name"] for a in answer["audiences"]),
                )
            )
            with database.reading() as session:
                noted = select(func.count()).where(OverlapNoted.listId == list_id)
                notes.append(session.scalar(noted))
    finally:
        statements.close()
    feed = tenant.ok("GET", f"/v4/events?listId={list_id}&limit=1000")["events"]
    mine = [e for e in feed if e["contactId"] in emails]
    replayed = [
        (e["type"], emails[e["contactId"]], names.get(e["audienceId"]), e["cause"], _named(e))
        for e in mine
    ]
    with database.reading() as session:
        rows = session.execute(
            select(Membership.audienceId, Membership.contactId, Membership.groupName)
            .join(Audience, Audience.id == Membership.audienceId)
            .where(Audience.listId == list_id)
        ).all()
        ordered = sorted(names)
        kept = overlaps.kept_counts(session, list_id, ordered)
        numbered = select(Event.position).where(Event.listId == list_id).order_by(Event.position)
        positions = list(session.scalars(numbered))
    members = sorted((names[a], emails[c]) for a, c, _group in rows)  # groups: drawn by id
    pairs = {
        (names[a], names[b]): kept[i][j]
        for i, a in enumerate(ordered)
        for j, b in enumerate(ordered)
    }
    return {"answers": answers, "notes": notes, "feed": replayed, "members": members,
            "pairs": pairs, "positions": positions}, counts  # fmt: skip


def _named(change: dict[str, Any]) -> Any:
    """An event's data without its side's ids, nor the group drawn (by the contact's id)."""
    data = {k: v for k, v in (change.get("data") or {}).items() if k not in DRAWN}
    audience = data.pop("audience", None)
    if isinstance(audience, dict):
        data["audience"] = {k: v for k, v in audience.items() if k != "id"}
    return data


def test_the_memberships_carried_in_the_events_statement_leave_the_same_world(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant(api)
    carried, fewer = _world(api, tenant, monkeypatch, carry=True)
    alone, more = _world(api, tenant, monkeypatch, carry=False)
    assert carried == alone
    assert carried["positions"] == list(range(1, len(carried["positions"]) + 1))
    assert sum(carried["notes"]) and 0 in carried["notes"]  # noted, and settled between
    saved = [step for step, (one, other) in enumerate(zip(fewer, more, strict=True)) if one < other]
    assert saved == CARRIED, (fewer, more)
    assert all(one == other - 1 for one, other in zip(fewer, more, strict=True) if one < other)


def test_a_carried_write_is_written_once_in_a_list_without_a_counter(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The events' statement numbers no row where the list has no counter yet, and its caller
    then advances and inserts them alone: the write it carried (the first PATCH's) ran with it
    all the same, once (`events._append`)."""
    tenant = make_tenant(api)
    carried, _ = _world(api, tenant, monkeypatch, carry=True, bare=True)
    alone, _ = _world(api, tenant, monkeypatch, carry=False, bare=True)
    assert carried == alone
    assert carried["positions"] == list(range(1, len(carried["positions"]) + 1))
