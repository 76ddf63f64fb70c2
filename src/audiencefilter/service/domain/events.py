"""The events outbox: append an event in the caller's transaction.

Every change that moves a contact into or out of an audience (and the lifecycle of contacts and
audiences) appends its events in the same transaction as the change: the event exists exactly
when the change was committed, and a rolled-back change leaves none.

**Commit order.** A feed read "after cursor c" must never later find an event before c that
committed late. An autoincrement id does not give that on PostgreSQL: two transactions take ids
5 and 6, 6 commits first, a reader passes 6, then 5 appears behind it. So a list's events are
numbered by the list's counter, which the door of its write path owns (`list_lock.advance`):
positions follow commit order and have no gaps. The feed (`event_feed.py`) reads them; it
never imports this module, and this module reads no event back. A single write's events
(`together`) number themselves in their insert, with no advance statement before it
(`list_lock.numbers_itself`): where the database raises the counter itself (SQLite), or where
the insert advances it in its own `WITH` (PostgreSQL).

**A write carried.** The last write of a single write's membership (its pairs leaving and
entering, and the note of its pair counts) may ride in the `WITH` of that statement where the
database runs writes there (PostgreSQL): `carry` hands it over, its statements as common table
expressions built once, its parameters and what must run after it. Nothing reads what it writes
before the events' statement (the memberships written are read again only after the block), so
one round trip goes.

**Held back.** A shared import turn (`list_lock.share`) appends its events last
(`appended_last`): it takes the counter's row, which its peers wait for, only for its last
statements.

**Alike events in one statement.** The events of one audience's difference (thousands of
`audience.entered` of a new audience over a big list) differ only in their contact: `append_alike`
writes each such group with one `INSERT ... SELECT` over the contact ids, passed as one
parameter (`dialects.unpacked`), numbering them in the order given. The ids of the events are
drawn by the database (80 random bits, as `new_id` draws), the payload is encoded once. Rows,
positions, payloads and the counter are those `append` would write for the same events.
`append_each` does the same for events of many audiences in one order (an import's contacts
entering their audiences), each row naming its type, contact and audience.

**One instant per membership change.** Both take the instant the difference was judged at
(`at`), which the membership rows record as `enteredAt`, and date its events with it rather
than with the instant they are appended (later by the write's work, or a build's turns): a
member's `enteredAt` is its entry's date, so the history at that instant lists it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache
from typing import Any
from typing import cast as typed

from sqlalchemy import (
    String,
    Table,
    bindparam,
    delete,
    insert,
    literal,
    select,
    true,
    type_coerce,
)
from sqlalchemy.orm import Session

from ..db import dialects, driver_path
from ..db.bulk import insert_rows
from ..db.models import Event, new_id
from ..ground import clock
from . import list_lock

ENTERED = "audience.entered"
LEFT = "audience.left"
CONTACT_CREATED = "contact.created"
CONTACT_UPDATED = "contact.updated"
CONTACT_DELETED = "contact.deleted"
CONTACT_ERASED = "contact.erased"
AUDIENCE_CREATED = "audience.created"
AUDIENCE_UPDATED = "audience.updated"
AUDIENCE_DELETED = "audience.deleted"
TYPES = (
    ENTERED,
    LEFT,
    CONTACT_CREATED,
    CONTACT_UPDATED,
    CONTACT_DELETED,
    CONTACT_ERASED,
    AUDIENCE_CREATED,
    AUDIENCE_UPDATED,
    AUDIENCE_DELETED,
)

# Causes of `audience.entered` / `audience.left`.
CAUSE_CONTACT_CREATED = "contact.created"
CAUSE_CONTACT_UPDATED = "contact.updated"
CAUSE_CONTACT_DELETED = "contact.deleted"
CAUSE_CONTACT_IMPORTED = "contact.imported"
CAUSE_ACTION_CREATED = "action.created"
CAUSE_ACTION_DELETED = "action.deleted"
CAUSE_AUDIENCE_CREATED = "audience.created"
CAUSE_AUDIENCE_UPDATED = "audience.updated"
CAUSE_AUDIENCE_DELETED = "audience.deleted"
CAUSE_MEMBERS_ADDED = "members.added"
CAUSE_MEMBERS_REMOVED = "members.removed"
CAUSE_CLOCK = "clock"
CAUSE_LIST_TIME_ZONE = "list.time_zone_changed"

EVENTS = typed(Table, Event.__table__)
_EVENT_COLUMNS = [
    "id", "list_id", "position", "type", "contact_id", "audience_id", "cause", "occurred_at",
    "payload",
]  # fmt: skip


@dataclass(frozen=True)
class NewEvent:
    """An event to append; `occurred_at` defaults to the service clock's now."""

    type: str
    contact_id: str | None = None
    audience_id: str | None = None
    cause: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    occurred_at: datetime | None = None


@dataclass(frozen=True)
class Alike:
    """Events that differ only in their contact: one per id of `contact_ids`, in that order."""

    type: str
    contact_ids: Sequence[str]
    audience_id: str | None = None
    cause: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)

    def each(self, occurred_at: datetime) -> list[NewEvent]:
        return [
            NewEvent(self.type, contact_id, self.audience_id, self.cause, self.payload, occurred_at)
            for contact_id in self.contact_ids
        ]


def forget_list(session: Session, list_id: str) -> None:
    """Deletes the list's events, its feed with them: call under the list's lock before
    deleting the list (`events` has no foreign key to cascade from, migration 0012)."""
    session.execute(
        delete(Event).where(Event.listId == list_id).execution_options(synchronize_session=False)
    )


@contextmanager
def appended_last(session: Session) -> Iterator[None]:
    """Holds back every append of the block and runs them, in their order, when it ends
    without an error (none when it raises): a shared turn takes the counter's row, which its
    peers wait for, only for its last statements. Each event keeps the instant of its call."""
    queued: list[Callable[[], object]] = []
    session.info[_LAST] = queued
    try:
        yield
    finally:
        session.info.pop(_LAST, None)
    for run in queued:
        run()


_LAST = "events_appended_last"


def _later(session: Session, run: Callable[[], object]) -> bool:
    """Queues `run` when appends are held back (`appended_last`); whether it was."""
    queued: list[Callable[[], object]] | None = session.info.get(_LAST)
    if queued is None:
        return False
    queued.append(run)
    return True


@dataclass(frozen=True)
class Carried:
    """A write riding in the `WITH` of a single write's events statement (`carry`): its
    statements as common table expressions, built once by its owner (the same objects each
    time: the statement carrying them is built once per set), its parameters (named apart from
    the events' own), and what runs once it is written (`then`)."""

    ctes: tuple[Any, ...]
    parameters: Mapping[str, Any]
    then: Callable[[], object] | None = None


@dataclass
class _Gathered:
    """What a `together` block gathers for its list: the events, and at most one write to
    carry (`carry`)."""

    list_id: str
    events: list[NewEvent] = field(default_factory=list)
    carried: Carried | None = None


@contextmanager
def together(session: Session, list_id: str) -> Iterator[None]:
    """Gathers every append of the block to the list and writes them, in their order, with
    one advance of the counter and one statement, when the block ends without an error (none
    when it raises): a single write (a contact updated) appends its lifecycle event and the
    membership events of its consequences in one round trip, not one per kind, with the
    write `carry` handed over in the same statement. Within `appended_last`, or another
    `together`, the block's appends go as those go."""
    if _LAST in session.info or _TOGETHER in session.info:
        yield
        return
    gathered = _Gathered(list_id)
    session.info[_TOGETHER] = gathered
    try:
        yield
    finally:
        session.info.pop(_TOGETHER, None)
    if gathered.events:
        _append(session, list_id, gathered.events, clock.now(), True, gathered.carried)


def carry(session: Session, list_id: str, carried: Carried) -> bool:
    """Hands `carried` to the events' statement of the list's `together` block, where the
    block holds an event already (so the statement will run) and carries nothing yet, and the
    database runs writes in a `WITH` and numbers the events in the same statement
    (`list_lock.numbers_itself`, PostgreSQL); whether it took it. When it did not, the caller
    writes its own statement. Call with the block's last write only: nothing may read what it
    writes before the events' statement runs."""
    found: _Gathered | None = session.info.get(_TOGETHER)
    if found is None or found.list_id != list_id or found.carried or not found.events:
        return False
    if not dialects.writes_in_with(dialects.dialect_of(session)):
        return False
    if not list_lock.numbers_itself(session, list_id):
        return False
    found.carried = carried
    return True


_TOGETHER = "events_together"


def _gathering(session: Session, list_id: str) -> list[NewEvent] | None:
    """The events `together` gathers for this list, or None when no block gathers them."""
    found: _Gathered | None = session.info.get(_TOGETHER)
    return found.events if found is not None and found.list_id == list_id else None


def append(session: Session, list_id: str, events: Sequence[NewEvent]) -> list[int]:
    """Appends `events` to the list's outbox in this transaction; their positions, in order
    (none yet while appends are held back, `appended_last`, or gathered, `together`)."""
    if not events:
        return []
    now = clock.now()
    gathered = _gathering(session, list_id)
    if gathered is not None:
        gathered.extend(
            event if event.occurred_at else replace(event, occurred_at=now) for event in events
        )
        return []
    if _later(session, lambda: _append(session, list_id, events, now)):
        return []
    return _append(session, list_id, events, now)


def unannounced(session: Session, list_id: str) -> None:
    """Records, instead of events, that this transaction wrote contacts of the list without
    any (`list_lock.unannounced`): an audience's snapshot then judges every contact again.
    Held back with the appends (`appended_last`): a shared turn takes the counter's row last."""
    if not _later(session, lambda: list_lock.unannounced(session, list_id)):
        list_lock.unannounced(session, list_id)


def _append(
    session: Session,
    list_id: str,
    events: Sequence[NewEvent],
    now: datetime,
    numbered: bool = False,
    carried: Carried | None = None,
) -> list[int]:
    """Inserts the events after the list's last; their positions. `numbered`: a single
    write's events (`together`), which number themselves where the database lets them
    (`list_lock.numbers_itself`): no advance before, one statement, and no positions known to
    return; `carried` rides in its `WITH` (`carry` took it only where the statement runs so).
    Bulk appends keep the advance: their rows are many, and a row numbering itself also raises
    the counter, once each."""
    if numbered and list_lock.numbers_itself(session, list_id):
        parameters = _numbered_parameters(session, list_id, events, now)
        dialect = dialects.dialect_of(session)
        if carried is None:
            statement = _numbered_rows(dialect)
        else:
            statement = _numbered_carrying(dialect, carried.ctes)
            parameters.update(carried.parameters)
        unpacked = len(events)
        written = driver_path.run(session, statement, parameters, unpacked_rows=unpacked).rowcount
        if carried is not None and carried.then is not None:
            carried.then()  # its write ran, whatever the events' rows: a `WITH` always runs
        if written == len(events):
            return []
        # PostgreSQL, a list without a counter yet: nothing was written; `advance` makes one.
    last = list_lock.advance(session, list_id, len(events))
    first = last - len(events) + 1
    # Core inserts by column name: ORM bulk inserts cost several times the Python per row.
    rows: list[dict[str, Any]] = [
        {**_event_row(list_id, event, now), "position": first + index}
        for index, event in enumerate(events)
    ]
    insert_rows(session, EVENTS, rows)
    return [first + index for index in range(len(rows))]


_NUMBERED = ("type", "contact_id", "audience_id", "cause", "occurred_at", "payload_at")
_NUMBERED_KEY = "numbered"
_NUMBERED_PAYLOADS = "numbered_payloads"


@dialects.per_dialect
def _numbered_rows(dialect: str) -> Any:
    """`INSERT INTO events SELECT ...` of a single write's events, which number themselves
    after the list's counter (`list_lock.POSITIONS_BEFORE`: read once by the statement, or
    advanced by its `WITH`), by their place. Each row carries its own type, contact, audience
    (NULL for a contact's own event), cause and instant, stored as the column stores it; the
    payloads are JSON texts picked by place, as `append_each`'s. (Inserted row by row by the
    driver's `executemany`, each row reading the counter the row before raised, the 101 events
    of a contact moving across 100 audiences had cost a third of the update; on PostgreSQL an
    advance and a `COPY` of the rows, a fifth of a PATCH's own CPU:
    docs/performance-history-writes.md.)"""
    table = dialects.unpacked_rows_named(dialect, _NUMBERED, _NUMBERED_KEY)
    text = dialects.picked_text(dialect, _NUMBERED_PAYLOADS, table.c.payload_at)
    before, advanced = list_lock.POSITIONS_BEFORE[dialect]
    selected = select(
        dialects.random_id("evt_", dialect),
        bindparam(list_lock.HEAD_LIST, type_=String),
        before + table.c.ordinal,
        *(table.c[name] for name in _NUMBERED[:4]),
        dialects.instant_from_text(table.c.occurred_at, dialect),
        type_coerce(dialects.json_from_text(text, dialect), EVENTS.c.payload.type),
    )
    if advanced is not None:
        selected = selected.select_from(table.join(advanced, true()))
    # Its count of rows tells its caller whether the counter existed (kept only on request).
    return (
        insert(EVENTS)
        .from_select(_EVENT_COLUMNS, selected)
        .execution_options(preserve_rowcount=True)
    )


@cache
def _numbered_carrying(dialect: str, ctes: tuple[Any, ...]) -> Any:
    """`_numbered_rows` carrying a write in its `WITH` (`carry`), built once per dialect and
    write (its owner builds its statements once). The write's rows and the events' are
    disjoint tables, so the order PostgreSQL gives the writes of one statement cannot show."""
    return _numbered_rows(dialect).add_cte(*ctes)


def _encoder(session: Session) -> Callable[[Any], str]:
    """The engine's own JSON encoder: a payload bound as text is stored as the column's type
    would have stored it."""
    found: Callable[[Any], str] | None = getattr(
        session.get_bind().dialect, "_json_serializer", None
    )
    return found or json.dumps


def _numbered_parameters(
    session: Session, list_id: str, events: Sequence[NewEvent], now: datetime
) -> dict[str, Any]:
    """`_numbered_rows`' parameters: the rows (`dialects.rows_parameters`, where a NULL stays
    NULL), each instant as the column's own type writes it, once per instant (a write's events
    share one or two), the list and the number of rows."""
    bound = session.get_bind().dialect
    encode = _encoder(session)
    process = EVENTS.c.occurred_at.type.dialect_impl(bound).bind_processor(bound) or str
    instants = {at: process(at) for at in {e.occurred_at or now for e in events}}
    rows = [
        (e.type, e.contact_id, e.audience_id, e.cause, instants[e.occurred_at or now], str(place))
        for place, e in enumerate(events)
    ]
    dialect = bound.name
    parameters = dialects.rows_parameters(dialect, _NUMBERED, typed(Any, rows), _NUMBERED_KEY)
    texts = [encode(event.payload) for event in events]
    parameters[_NUMBERED_PAYLOADS] = dialects.texts_parameter(dialect, texts)
    parameters[list_lock.HEAD_LIST] = list_id
    parameters[list_lock.HEAD_BY] = len(events)
    return parameters


def _event_row(list_id: str, event: NewEvent, now: datetime) -> dict[str, Any]:
    """An event's columns but its position, which its writer numbers one way or the other."""
    return {
        "id": new_id("evt"),
        "list_id": list_id,
        "type": event.type,
        "contact_id": event.contact_id,
        "audience_id": event.audience_id,
        "cause": event.cause,
        "occurred_at": event.occurred_at or now,
        "payload": event.payload,
    }


def append_alike(
    session: Session, list_id: str, groups: Sequence[Alike], at: datetime | None = None
) -> int:
    """Appends each group's events, group after group, as `append` would; their number. On a
    database without `dialects.unpacked`, through `append`. `at`: their date (the instant the
    membership they report was judged at, which its rows record), else now."""
    total = sum(len(group.contact_ids) for group in groups)
    if not total:
        return 0
    now = at or clock.now()
    if _gathering(session, list_id) is not None:
        append(session, list_id, [event for group in groups for event in group.each(now)])
        return total
    if not _later(session, lambda: _append_alike(session, list_id, groups, total, now)):
        _append_alike(session, list_id, groups, total, now)
    return total


def _append_alike(
    session: Session, list_id: str, groups: Sequence[Alike], total: int, now: datetime
) -> None:
    dialect = dialects.dialect_of(session)
    if not dialects.unpacks(dialect):
        _append(session, list_id, [event for group in groups for event in group.each(now)], now)
        return
    position = list_lock.advance(session, list_id, total) - total
    for group in groups:
        if group.contact_ids:
            session.execute(_alike_rows(dialect, list_id, position, group, now))
            position += len(group.contact_ids)


def append_each(
    session: Session,
    list_id: str,
    rows: Sequence[tuple[str, str, str]],
    cause: str,
    payloads: Mapping[str, dict[str, Any]],
    keys: Sequence[str] | None = None,
    at: datetime | None = None,
) -> int:
    """Appends one event per row (type, contact id, audience id), in order, each with its
    audience's payload, as `append` would, in one `INSERT ... SELECT`; their number. `keys`:
    the key in `payloads` of each row's payload, where it is not its audience id (an entry
    that says the member's group); `at`: their date, as `append_alike`'s."""
    if not rows:
        return 0
    chosen = keys if keys is not None else [row[2] for row in rows]
    now = at or clock.now()
    dialect = dialects.dialect_of(session)
    if not dialects.unpacks(dialect) or _gathering(session, list_id) is not None:
        changes = [
            NewEvent(t, c, a, cause, payloads[key], now)
            for (t, c, a), key in zip(rows, chosen, strict=True)
        ]
        append(session, list_id, changes)
        return len(rows)
    parameters = _each_parameters(session, dialect, rows, chosen, payloads)
    parameters.update(each_list=list_id, each_cause=cause, each_now=now)

    def numbered() -> None:
        parameters["each_before"] = list_lock.advance(session, list_id, len(rows)) - len(rows)
        session.connection().execute(_each_rows(dialect), parameters)

    if not _later(session, numbered):
        numbered()
    return len(rows)


_EACH = ("type", "contact_id", "audience_id", "payload_at")
_EACH_KEY = "each"
_EACH_PAYLOADS = "each_payloads"


def _each_parameters(
    session: Session,
    dialect: str,
    rows: Sequence[tuple[str, str, str]],
    chosen: Sequence[str],
    payloads: Mapping[str, dict[str, Any]],
) -> dict[str, Any]:
    """`append_each`'s parameters but the list, cause, instant and positions: all made before
    the counter is taken, so a shared turn's held-back append costs its peers only the bump
    and one statement."""
    encode = _encoder(session)
    places = {key: str(place) for place, key in enumerate(payloads)}
    table = [(*row, places[key]) for row, key in zip(rows, chosen, strict=True)]
    parameters = dialects.rows_parameters(dialect, _EACH, table, _EACH_KEY)
    texts = [encode(payload) for payload in payloads.values()]
    parameters[_EACH_PAYLOADS] = dialects.texts_parameter(dialect, texts)
    return parameters


@dialects.per_dialect
def _each_rows(dialect: str) -> Any:
    """`INSERT INTO events SELECT ...` of `append_each`'s rows, numbered after `each_before`;
    the payloads are JSON texts encoded in Python, each bound once and picked by its place
    (`dialects.picked_text`), stored as they are (cast on PostgreSQL).
    Built once per dialect, every value a named parameter: a write that changes memberships
    pays for no statement construction or cache key."""
    table = dialects.unpacked_rows_named(dialect, _EACH, _EACH_KEY)
    text = dialects.picked_text(dialect, _EACH_PAYLOADS, table.c.payload_at)
    payload = dialects.json_from_text(text, dialect)
    selected = select(
        dialects.random_id("evt_", dialect),
        bindparam("each_list", type_=String),
        bindparam("each_before", type_=EVENTS.c.position.type) + table.c.ordinal,
        *(table.c[name] for name in _EACH[:3]),
        bindparam("each_cause", type_=String),
        bindparam("each_now", type_=EVENTS.c.occurred_at.type),
        type_coerce(payload, EVENTS.c.payload.type),
    )
    return insert(EVENTS).from_select(_EVENT_COLUMNS, selected)


def _alike_rows(dialect: str, list_id: str, before: int, group: Alike, now: datetime) -> Any:
    """`INSERT INTO events SELECT ...`: one row per contact id, numbered after `before`."""
    ids = dialects.unpacked(dialect, group.contact_ids)
    rows = select(
        dialects.random_id("evt_", dialect),
        literal(list_id, String),
        literal(before, EVENTS.c.position.type) + ids.c.ordinal,
        literal(group.type, String),
        ids.c.value,
        literal(group.audience_id, String),
        literal(group.cause, String),
        literal(now, EVENTS.c.occurred_at.type),
        literal(group.payload, EVENTS.c.payload.type),
    )
    return insert(EVENTS).from_select(_EVENT_COLUMNS, rows)
