"""The events outbox: append an event in the caller's transaction, read a list's events in order.

Every change that moves a contact into or out of an audience (and the lifecycle of contacts and
audiences) appends its events in the same transaction as the change: the event exists exactly
when the change was committed, and a rolled-back change leaves none.

**Commit order.** A feed read "after cursor c" must never later find an event before c that
committed late. An autoincrement id does not give that on PostgreSQL: two transactions take ids
5 and 6, 6 commits first, a reader passes 6, then 5 appears behind it. So a list's events are
numbered by `event_heads`, one counter row per list. Appending updates that row
(`position = position + n`), which takes its row lock until the transaction ends: a second
transaction appending to the same list waits, and reads the counter only after the first has
committed (or rolled back, which also rolls the counter back). Positions therefore follow commit
order and have no gaps, and a reader that sees position n sees every position below it.
Writers of one list are serialised from their first event to their commit; writes of different
lists never wait for each other. On SQLite all writers are serialised anyway (`BEGIN IMMEDIATE`).

`lock_list` takes the list's lock at the start of a write, before anything is read that the
write evaluates: membership changes computed under it cannot interleave with another writer's
of the same list (`membership/store.py`).

**Shared turns (PostgreSQL).** The list's lock is a transaction-level advisory lock on the list
(`pg_advisory_xact_lock`), taken in exclusive mode by `lock_list` and by any append of a
transaction that holds none. An import turn that only updates contacts already in the list
takes it in shared mode instead (`share_list`), locks its contacts' rows in the order of their
ids, and appends its events last (`appended_last`): such turns run side by side, each owning
its contacts (their rows, memberships and next instants), and wait for each other only from
their first event to their commit, on the counter's row. Every other writer (a new contact,
an audience, a field, the clock, a deletion) excludes them and is excluded by them, as before.
Positions keep their promise: they are still taken on the counter's row, held to the commit.

The cursor is opaque to clients: the list id and the position, base64url, so a cursor of one
list is refused for another.

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

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from typing import cast as typed

import orjson
from sqlalchemy import (
    Integer,
    String,
    Table,
    Text,
    bindparam,
    cast,
    delete,
    insert,
    literal,
    select,
    type_coerce,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..db import dialects
from ..db.bulk import insert_rows
from ..db.models import Event, EventHead, new_id
from ..ground import clock
from ..ground.digits import ascii_number
from ..ground.errors import not_found

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

_CURSOR_PREFIX = "ev1."
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


def _bump(session: Session, list_id: str, by: int) -> int | None:
    """Adds `by` to the list's counter (taking its row lock); the new value, or None if the
    list has no counter yet."""
    value = session.execute(_BUMP, {"bump_list": list_id, "bump_by": by}).scalar_one_or_none()
    return None if value is None else int(value)


_BUMP = (
    update(EventHead)
    .where(EventHead.listId == bindparam("bump_list"))
    .values(position=EventHead.position + bindparam("bump_by", type_=EventHead.position.type))
    .returning(EventHead.position)
    .execution_options(synchronize_session=False)
)
"""`_bump`'s statement, built once: every write of a list runs it (its lock) once or twice."""


def _advance(session: Session, list_id: str, by: int) -> int:
    _hold(session, list_id)
    value = _bump(session, list_id, by)
    if value is None:
        # Lists created before the counter existed (or by code that does not make one).
        try:
            with session.begin_nested():
                session.execute(insert(EventHead).values(listId=list_id, position=0))
        except IntegrityError:
            pass  # a concurrent writer made it first: its lock is now awaited below
        value = _bump(session, list_id, by)
        if value is None:
            raise not_found("List")  # deleted meanwhile
    return value


def lock_list(session: Session, list_id: str) -> None:
    """Serialises this transaction with every other writer of the list, until it ends."""
    _advance(session, list_id, 0)


def forget_list(session: Session, list_id: str) -> None:
    """Deletes the list's events, its feed with them: call under the list's lock before
    deleting the list (`events` has no foreign key to cascade from, migration 0012)."""
    session.execute(
        delete(Event).where(Event.listId == list_id).execution_options(synchronize_session=False)
    )


def share_list(session: Session, list_id: str) -> bool:
    """Takes the list's lock shared with other shared turns, until the transaction ends (see
    the module's *Shared turns*); False where the database has no such lock (SQLite, whose
    writers take turns anyway), the caller then taking `lock_list`. A shared turn must lock
    the rows it writes, in the order of their ids, and append its events `appended_last`."""
    statement = dialects.advisory_lock(dialects.dialect_of(session), shared=True)
    if statement is None:
        return False
    session.execute(statement, {"lock_key": _list_key(list_id)})
    _held(session).add(list_id)
    return True


def unshare_list(session: Session, list_id: str) -> None:
    """Forgets the shared lock after the savepoint that took it was rolled back (PostgreSQL
    released it then)."""
    _held(session).discard(list_id)


_HELD = "events_list_locks"


def _list_key(list_id: str) -> int:
    """The advisory lock's key of a list: 64 bits of a hash of its id (two lists sharing a key
    only wait for each other)."""
    digest = hashlib.blake2b(list_id.encode(), digest_size=8, person=b"af-list-lock").digest()
    return int.from_bytes(digest, "big", signed=True)


def _held(session: Session) -> set[str]:
    """The lists whose lock this transaction took, shared or alone (a session is one
    transaction of the service's units of work): a shared turn's appends take no other."""
    found: set[str] = session.info.setdefault(_HELD, set())
    return found


def _hold(session: Session, list_id: str) -> None:
    """The list's lock, exclusive, unless this transaction holds it already. Taken again after
    a savepoint (a rolled-back savepoint releases what it took), so only a lock taken outside
    one is remembered."""
    statement = dialects.advisory_lock(dialects.dialect_of(session), shared=False)
    if statement is None:
        return  # SQLite: the write transaction's own lock (`BEGIN IMMEDIATE`)
    held = _held(session)
    if list_id in held:
        return
    session.execute(statement, {"lock_key": _list_key(list_id)})
    if not session.in_nested_transaction():
        held.add(list_id)


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


def append(session: Session, list_id: str, events: Sequence[NewEvent]) -> list[int]:
    """Appends `events` to the list's outbox in this transaction; their positions, in order
    (none yet while appends are held back, `appended_last`)."""
    if not events:
        return []
    now = clock.now()
    if _later(session, lambda: _append(session, list_id, events, now)):
        return []
    return _append(session, list_id, events, now)


def _append(session: Session, list_id: str, events: Sequence[NewEvent], now: datetime) -> list[int]:
    last = _advance(session, list_id, len(events))
    first = last - len(events) + 1
    # Core inserts by column name: ORM bulk inserts cost several times the Python per row.
    rows: list[dict[str, Any]] = [
        {
            "id": new_id("evt"),
            "list_id": list_id,
            "position": first + index,
            "type": event.type,
            "contact_id": event.contact_id,
            "audience_id": event.audience_id,
            "cause": event.cause,
            "occurred_at": event.occurred_at or now,
            "payload": event.payload,
        }
        for index, event in enumerate(events)
    ]
    insert_rows(session, EVENTS, rows)
    return [first + index for index in range(len(rows))]


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
    position = _advance(session, list_id, total) - total
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
    if not dialects.unpacks(dialect):
        changes = [
            NewEvent(t, c, a, cause, payloads[key], now)
            for (t, c, a), key in zip(rows, chosen, strict=True)
        ]
        append(session, list_id, changes)
        return len(rows)
    parameters = _each_parameters(session, dialect, rows, chosen, payloads)
    parameters.update(each_list=list_id, each_cause=cause, each_now=now)

    def numbered() -> None:
        parameters["each_before"] = _advance(session, list_id, len(rows)) - len(rows)
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
    encode = getattr(session.get_bind().dialect, "_json_serializer", None) or json.dumps
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


def after(
    session: Session, list_id: str, position: int, limit: int, types: Sequence[str] = ()
) -> list[Event]:
    """The list's events after `position`, in commit order, at most `limit`."""
    statement = select(Event).where(Event.listId == list_id, Event.position > position)
    if types:
        statement = statement.where(Event.type.in_(types))
    return list(session.scalars(statement.order_by(Event.position).limit(limit)))


def views_after(
    session: Session, list_id: str, position: int, limit: int
) -> list[tuple[int, dict[str, Any]]]:
    """The list's events after `position`, in commit order, at most `limit`, each with its
    position and as the feed shows it (`event_view`), read by one Core statement: the
    payload is the stored JSON text, passed on as it is (an `orjson.Fragment`). An ORM object
    and a parse of its payload an event cost the feed's reader, about 13 events an updated
    contact in a busy list, as much CPU as the write of the contact."""
    rows = session.connection().execute(
        _VIEWS, {"views_list": list_id, "views_after": position, "views_limit": limit}
    )
    return [(row[1], _view(list_id, row)) for row in rows]


def _view(list_id: str, row: Any) -> dict[str, Any]:
    """One row of `_VIEWS` as the feed shows it."""
    event_id, at, kind, contact_id, audience_id, cause, occurred_at, payload = row
    shown = (event_id, list_id, at, kind, contact_id, audience_id, cause, occurred_at)
    return _shown(*shown, orjson.Fragment(payload))


_VIEWS = (
    select(
        EVENTS.c.id,
        EVENTS.c.position,
        EVENTS.c.type,
        EVENTS.c.contact_id,
        EVENTS.c.audience_id,
        EVENTS.c.cause,
        EVENTS.c.occurred_at,
        cast(EVENTS.c.payload, Text),
    )
    .where(
        EVENTS.c.list_id == bindparam("views_list"),
        EVENTS.c.position > bindparam("views_after", type_=EVENTS.c.position.type),
    )
    .order_by(EVENTS.c.position)
    .limit(bindparam("views_limit", type_=Integer))
)


def head(session: Session, list_id: str) -> int:
    """The position of the list's last committed event (0 when it has none)."""
    value = session.scalar(select(EventHead.position).where(EventHead.listId == list_id))
    return int(value or 0)


def cursor(list_id: str, position: int) -> str:
    raw = f"{list_id}:{position}".encode()
    encoded = binascii.b2a_base64(raw, newline=False).translate(_URL_SAFE)
    return _CURSOR_PREFIX + encoded.decode().rstrip("=")


_URL_SAFE = bytes.maketrans(b"+/", b"-_")


def position_of(value: str, list_id: str) -> int | None:
    """The position a cursor stands for, or None when it is not a cursor of this list."""
    if not value.startswith(_CURSOR_PREFIX):
        return None
    text = value[len(_CURSOR_PREFIX) :]
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    owner, _, number = raw.rpartition(":")
    return ascii_number(number) if owner == list_id else None


def event_view(event: Event) -> dict[str, Any]:
    """An event as the feed (and webhook deliveries) show it."""
    shown = (event.id, event.listId, event.position, event.type, event.contactId)
    return _shown(*shown, event.audienceId, event.cause, event.occurredAt, event.payload)


def _shown(
    event_id: str,
    list_id: str,
    position: int,
    kind: str,
    contact_id: str | None,
    audience_id: str | None,
    cause: str | None,
    occurred_at: datetime,
    data: Any,
) -> dict[str, Any]:
    """The one shape of an event in the feed and in webhook deliveries."""
    return {
        "id": event_id,
        "cursor": cursor(list_id, position),
        "type": kind,
        "listId": list_id,
        "contactId": contact_id,
        "audienceId": audience_id,
        "cause": cause,
        "occurredAt": occurred_at,
        "data": data,
    }
