"""The events outbox: appended in the caller's transaction, numbered per list in commit order,
gone with a rollback; cursors are opaque and bound to their list."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from audiencefilter.service.db import migrate
from audiencefilter.service.db.engine import Database, make_engine
from audiencefilter.service.db.models import (
    Account,
    AudienceMember,
    Contact,
    List,
    Membership,
    new_id,
    utcnow,
)
from audiencefilter.service.domain import event_feed, events, list_lock

from .conftest import settings_on, sqlite_settings


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """The outbox on both databases: a single write's events number themselves on each, by a
    trigger-raised counter on SQLite and by an advance in the insert's `WITH` on PostgreSQL."""
    engine = make_engine(settings_on(request, tmp_path / "outbox.db"))
    migrate.upgrade(engine)
    yield Database(engine)
    engine.dispose()


def _list(database: Database) -> str:
    with database.transaction() as session:
        account = Account(name=new_id("outbox"))
        session.add(account)
        session.flush()
        lst = List(accountId=account.id, name="L", url=f"outbox-{account.id[-8:]}")
        session.add(lst)
        session.flush()
        return lst.id


def test_events_are_numbered_per_list_and_rolled_back_with_their_change(
    database: Database,
) -> None:
    one, two = _list(database), _list(database)
    with database.transaction() as session:
        assert events.append(session, one, [events.NewEvent(events.ENTERED, "con_a", "aud_a")]) == [
            1
        ]
        assert events.append(session, two, [events.NewEvent(events.LEFT, "con_b", "aud_b")]) == [1]
    with pytest.raises(RuntimeError), database.transaction() as session:
        events.append(session, one, [events.NewEvent(events.LEFT, "con_a", "aud_a")])
        raise RuntimeError("the change fails")
    with database.transaction() as session:
        positions = events.append(
            session,
            one,
            [events.NewEvent(events.LEFT, "con_a", "aud_a"), events.NewEvent(events.ENTERED)],
        )
        assert positions == [2, 3]  # the rolled-back event left no gap
    with database.reading() as session:
        found = event_feed.after(session, one, 0, 10)
        assert [(e.position, e.type) for e in found] == [
            (1, events.ENTERED),
            (2, events.LEFT),
            (3, events.ENTERED),
        ]
        assert [e.position for e in event_feed.after(session, one, 1, 1)] == [2]
        assert list_lock.head(session, one) == 3


def test_a_single_writes_events_number_themselves_between_the_others(
    database: Database,
) -> None:
    """A single write's events (`events.together`) number themselves from the list's counter,
    which the database raises as they go in (SQLite, migration 0018) or the insert advances in
    its `WITH` (PostgreSQL): they follow the events appended before by an advance, are written
    once (the next advance follows them), a rolled-back write leaves no gap, and a list
    without a counter row gets one."""
    one, bare = _list(database), _list(database)

    def single(session: Session, list_id: str, count: int) -> None:
        with events.together(session, list_id):
            events.append(session, list_id, [events.NewEvent(events.ENTERED)] * count)

    with database.transaction() as session:
        assert events.append(session, one, [events.NewEvent(events.LEFT)] * 2) == [1, 2]
        single(session, one, 3)
        assert events.append(session, one, [events.NewEvent(events.LEFT)]) == [6]
        session.execute(text("DELETE FROM event_heads WHERE list_id = :list"), {"list": bare})
    with pytest.raises(RuntimeError), database.transaction() as session:
        single(session, one, 2)
        raise RuntimeError("the write fails")
    with database.transaction() as session:
        single(session, one, 1)
        single(session, bare, 2)
    with database.reading() as session:
        assert [e.position for e in event_feed.after(session, one, 0, 10)] == list(range(1, 8))
        assert [e.type for e in event_feed.after(session, one, 0, 10)][2:5] == [events.ENTERED] * 3
        assert (list_lock.head(session, one), list_lock.head(session, bare)) == (7, 2)
        assert [e.position for e in event_feed.after(session, bare, 0, 10)] == [1, 2]


def test_cursors_round_trip_and_belong_to_their_list() -> None:
    value = event_feed.cursor("lst_abc", 42)
    assert event_feed.position_of(value, "lst_abc") == 42
    assert event_feed.position_of(value, "lst_other") is None
    for bad in ("", "42", "ev1.!!", "ev1." + "A" * 10):
        assert event_feed.position_of(bad, "lst_abc") is None


def _list_of_revision_0003(session: Session, account_id: str) -> str:
    """A list with the columns revision 0003 knew: the model has more, which that table lacks."""
    list_id = new_id("lst")
    session.execute(
        text(
            "INSERT INTO lists (id, account_id, url, name, mode, branding, referrals, start_from,"
            " columns, allowed_origins, created_at, updated_at) VALUES (:id, :account, :url,"
            " 'L', 'waitlist', 1, 1, 1, '[]', '[]', :now, :now)"
        ),
        {"id": list_id, "account": account_id, "url": list_id.replace("_", "-"), "now": utcnow()},
    )
    return list_id


def _audience_of_revision_0003(
    session: Session, list_id: str, name: str, filters: str | None
) -> str:
    """An audience with the columns revision 0003 knew (the model's `fields` came later)."""
    audience_id = new_id("aud")
    session.execute(
        text(
            "INSERT INTO audiences (id, list_id, name, mode, filters, created_at, updated_at)"
            " VALUES (:id, :list, :name, :mode, :filters, :now, :now)"
        ),
        {
            "id": audience_id,
            "list": list_id,
            "name": name,
            "mode": "manual" if filters is None else "smart",
            "filters": filters,
            "now": utcnow(),
        },
    )
    return audience_id


def test_the_migration_stores_the_members_of_existing_audiences(tmp_path: Path) -> None:
    engine = make_engine(sqlite_settings(tmp_path / "old.db"))
    migrate.upgrade(engine, "0003")
    database = Database(engine)
    with database.transaction() as session:
        account = Account(name=new_id("old"))
        session.add(account)
        session.flush()
        list_id = _list_of_revision_0003(session, account.id)
        rich = Contact(listId=list_id, email="rich@example.com", emailKey="rich@example.com")
        poor = Contact(listId=list_id, email="poor@example.com", emailKey="poor@example.com")
        rich.points, poor.points = 500, 1
        rich.data, poor.data = {"plan": "pro"}, {"plan": "free"}
        top = _audience_of_revision_0003(session, list_id, "Top", '{"points":{"gte":100}}')
        hand = _audience_of_revision_0003(session, list_id, "Hand", None)
        pro = _audience_of_revision_0003(
            session,
            list_id,
            "Pro",
            '{"data":{"path":["plan"],"equals":"pro"},"createdAt":{"lte":{"ago":"P0D"}}}',
        )
        session.add_all([rich, poor])
        session.flush()
        session.add(AudienceMember(audienceId=hand, contactId=poor.id))
        ids = {"rich": rich.id, "poor": poor.id, "top": top, "hand": hand, "list": list_id}
        ids["pro"] = pro
    migrate.upgrade(engine)
    with database.reading() as session:
        rows = session.execute(select(Membership.audienceId, Membership.contactId))
        assert {(a, c) for a, c in rows} == {
            (ids["top"], ids["rich"]),
            (ids["hand"], ids["poor"]),
            (ids["pro"], ids["rich"]),
        }
        assert list_lock.head(session, ids["list"]) == 0  # no events for what was already so
    with database.transaction() as session:
        assert events.append(session, ids["list"], [events.NewEvent(events.ENTERED)]) == [1]


def test_a_single_writes_events_store_what_an_advance_stores(database: Database) -> None:
    """The events a single write numbers itself (one `INSERT ... SELECT` of rows packed in one
    parameter) and the same events appended after an advance are the same rows, but for their
    id: each row's own type, contact, audience (none for the contact's own event), cause,
    instant and payload, in order, numbered without a gap; and the raw views the feed sends
    are alike too (the instant as the column writes it, the payload's JSON text)."""
    gathered, advanced = _list(database), _list(database)
    judged = utcnow().replace(microsecond=123456)
    later = judged.replace(microsecond=987654)
    changes = [
        events.NewEvent(events.CONTACT_UPDATED, "con_a", None, None, {"changed": ["p"]}, judged),
        events.NewEvent(events.ENTERED, "con_a", "aud_a", "contact.updated", {"n": "é\"'"}, judged),
        events.NewEvent(events.LEFT, "con_a", "aud_b", "contact.updated", {}, later),
        events.NewEvent(events.ENTERED, "con_a", "aud_c", "contact.updated", {"n": 1.5}, judged),
    ]
    with database.transaction() as session:
        with events.together(session, gathered):
            events.append(session, gathered, changes[:1])
            events.append(session, gathered, changes[1:])
        events.append(session, advanced, changes)

    def stored(list_id: str) -> list[tuple[object, ...]]:
        with database.reading() as session:
            found = event_feed.after(session, list_id, 0, 10)
            views = [view for _, view in event_feed.views_after(session, list_id, 0, 10)]
        rows = [
            (e.position, e.type, e.contactId, e.audienceId, e.cause, e.occurredAt, e.payload)
            for e in found
        ]
        assert len({e.id for e in found}) == len(found)
        assert all(e.id.startswith("evt_") and len(e.id) == 24 for e in found)
        shown = [
            {k: v for k, v in view.items() if k not in ("id", "cursor", "listId")} for view in views
        ]
        return [*rows, *(orjson.dumps(view) for view in shown)]

    assert stored(gathered) == stored(advanced)
    assert [row[0] for row in stored(gathered)[:4]] == [1, 2, 3, 4]
