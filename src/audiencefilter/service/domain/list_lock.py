"""The door of a list's write path: its lock, and the event counter the lock rides on.

Every writer of a list passes here before it reads what it changes, and nowhere else takes the
list's lock (`tests/test_service_architecture.py` holds that): one module decides how writers of
one list are serialised, so a new writer cannot forget a step or take them in another order. A
write of a list's contacts (a PATCH, a turn of them, an import turn) takes it through the
entrances of its pipeline (`list_write.py`), which stands one floor up: this module stands below
the events and the membership that pipeline's stages call.

**The counter.** A list's events are numbered by `event_heads`, one counter row per list.
Appending events updates that row (`position = position + n`, `advance`), which takes its row
lock until the transaction ends: a second transaction appending to the same list waits, and
reads the counter only after the first has committed (or rolled back, which also rolls the
counter back). Positions therefore follow commit order and have no gaps, and a reader that sees
position n sees every position below it (the outbox, `events.py`, writes the rows; the feed,
`event_feed.py`, reads them). `take` is an advance by 0: the same lock, taken at the start of a
write, before anything is read that the write evaluates, so membership changes computed under
it cannot interleave with another writer's of the same list. Writes of different lists never
wait for each other; on SQLite all writers are serialised anyway (`BEGIN IMMEDIATE`), and
there a single write's few events number themselves instead of advancing first
(`numbers_itself`): each row takes the position one past the counter, which a trigger on
`events` raises as the row goes in (migration 0018), a statement fewer for the write. On
PostgreSQL a single write's insert advances the counter itself, in its `WITH`
(`POSITIONS_BEFORE`): the same row lock, taken by the same statement that numbers the rows.

**Shared turns (PostgreSQL).** The list's lock is also a transaction-level advisory lock on the
list (`pg_advisory_xact_lock`), taken in exclusive mode by `take` and by any advance of a
transaction that holds none. An import turn that only updates contacts already in the list
takes it in shared mode instead (`share`), locks its contacts' rows in the order of their ids,
and appends its events last (`events.appended_last`): such turns run side by side, each owning
its contacts, and wait for each other only from their first event to their commit, on the
counter's row. Every other writer excludes them and is excluded by them.

**The kept counts (PostgreSQL).** Shared turns of one list also add to rows they do not own:
the counts of contacts each pair of the list's audiences shares, and the notes that defer them
(`membership/overlaps.py`). Each upsert takes its pairs' rows in an order PostgreSQL leaves
open, so two turns adding to the same pairs could each hold one the other waits for: a deadlock,
which PostgreSQL ends by failing one of them. A shared turn therefore takes a second lock alone,
the list's counts lock (`hold_counts`), before its first write of those rows: shared turns of
one list write their counts one after another, from that write to their commit (the events
appended last come after it, so the counter's row adds no other order). A writer holding the
list's lock alone needs no such lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import (
    CTE,
    BigInteger,
    ColumnElement,
    Select,
    String,
    bindparam,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, load_only

from ..db import dialects, driver_path, prepared_cache
from ..db.engine import WRITE_OPTION
from ..db.models import Audience, Contact, EventHead, List
from ..db.queries import owned_audience, owned_contact, owned_list, plausible_id
from ..ground.errors import not_found

LIST_LOCK = 1
"""The kind of a list's lock (`dialects.advisory_lock`'s `:lock_kind`)."""
COUNTS_LOCK = 2
"""The kind of a list's counts lock (`hold_counts`), apart from its list's lock."""


def take(session: Session, list_id: str) -> None:
    """Serialises this transaction with every other writer of the list, until it ends."""
    advance(session, list_id, 0)


def advance(session: Session, list_id: str, by: int) -> int:
    """Adds `by` to the list's event counter under the list's lock; the new value (the
    position of the last of `by` events appended now)."""
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


def numbers_itself(session: Session, list_id: str) -> bool:
    """Whether an insert of the list's events may number its rows itself
    (`POSITIONS_BEFORE`), given `HEAD_LIST` (the list's id) and `HEAD_BY` (the number of
    rows), rather than after an `advance` statement of its own:

    - where the database raises the counter as each event is inserted past it
      (`dialects.heads_follow_events`, SQLite's trigger of migration 0018), one `INSERT ...
      SELECT` reads the counter once (a subquery of no row of its own, which SQLite runs once
      a statement) and numbers its rows after it by their place;
    - where a statement may carry a write in its `WITH` (`dialects.writes_in_with`,
      PostgreSQL), the insert's `WITH` advances the counter by its rows (taking the counter's
      row lock, as `advance` does) and numbers them below the new value. Such an insert writes
      no row for a list without a counter yet (`advance` makes one): its caller then advances.

    The list's lock is held either way; where this is False the caller advances."""
    dialect = dialects.dialect_of(session)
    if not (dialects.heads_follow_events(dialect) or dialects.writes_in_with(dialect)):
        return False
    _hold(session, list_id)
    return True


HEAD_LIST = "head_list"
HEAD_BY = "head_by"
NEXT_POSITION = (
    func.coalesce(
        select(EventHead.position)
        .where(EventHead.listId == bindparam(HEAD_LIST, type_=String))
        .scalar_subquery(),
        0,
    )
    + 1
)
"""The position after the list's last event, read by the insert that takes it
(`numbers_itself`); 0 + 1 for a list without a counter yet, which the trigger then creates."""

_ADVANCED = (
    update(EventHead)
    .where(EventHead.listId == bindparam(HEAD_LIST, type_=String))
    .values(position=EventHead.position + bindparam(HEAD_BY, type_=BigInteger))
    .returning(EventHead.position)
    .cte("advanced")
)


def _positions_before(dialect: str) -> tuple[ColumnElement[int], CTE | None]:
    """The position before the first of the rows an insert numbers itself (`numbers_itself`),
    and the `WITH` part that insert joins, if any: on SQLite the counter read by the insert
    (`NEXT_POSITION` - 1), on PostgreSQL the counter advanced by `HEAD_BY` in the insert's
    `WITH`, less `HEAD_BY`."""
    if dialects.heads_follow_events(dialect):
        return NEXT_POSITION - 1, None
    return _ADVANCED.c.position - bindparam(HEAD_BY, type_=BigInteger), _ADVANCED


POSITIONS_BEFORE = {dialect: _positions_before(dialect) for dialect in dialects.STORES}
"""`_positions_before` of each database a list's events are stored in, by dialect name."""


def head(session: Session, list_id: str) -> int:
    """The position of the list's last committed event (0 when it has none)."""
    value = session.scalar(select(EventHead.position).where(EventHead.listId == list_id))
    return int(value or 0)


class Heads(NamedTuple):
    """The list's counter row as one statement read it (all 0 when the list has none yet)."""

    position: int
    """The position of the list's last committed event."""
    unannounced: int
    """Committed writes of its contacts that appended no event (`unannounced`)."""
    acted: int
    """Committed creations and deletions of its contacts' actions (`acted`)."""


def heads(session: Session, list_id: str) -> Heads:
    """The list's counter row: what a snapshot of an audience reads first and compares when it
    is stored (`membership/snapshot.py`)."""
    statement = select(EventHead.position, EventHead.unannounced, EventHead.acted)
    row = session.execute(statement.where(EventHead.listId == list_id)).first()
    return Heads(0, 0, 0) if row is None else Heads(int(row[0]), int(row[1]), int(row[2]))


def unannounced(session: Session, list_id: str) -> None:
    """Counts a write of the list's contacts that appends no event (an import with
    `events=false`) on the list's counter row, under the list's lock: what a snapshot of an
    audience compares, since no event after its position reports such a write
    (`membership/snapshot.py`)."""
    advance(session, list_id, 0)  # the counter's row, made if the list has none yet
    session.execute(_UNANNOUNCED, {"unannounced_list": list_id})


def acted(session: Session, list_id: str) -> None:
    """Counts a creation or deletion of an action of the list's contacts on the list's counter
    row, under the list's lock: an action changes a contact's points and action ids and appends
    no event (unless a membership moves), so a snapshot of an audience reads those again only
    when this count moved since it was taken (`membership/snapshot.py`)."""
    counted = session.execute(_ACTED, {"acted_list": list_id})
    if getattr(counted, "rowcount", 1) == 0:  # a list without a counter row yet
        advance(session, list_id, 0)
        session.execute(_ACTED, {"acted_list": list_id})


def holds(session: Session, list_id: str) -> bool:
    """Whether this transaction holds the list's lock (in either mode, or a write transaction
    where the database serialises them, SQLite): what it read of the list's audiences then
    stays as read until it changes them itself."""
    if dialects.advisory_lock(dialects.dialect_of(session), shared=False) is None:
        options = session.connection().get_execution_options()
        return bool(options.get(WRITE_OPTION, False))
    return list_id in _held(session)


def share(session: Session, list_id: str) -> bool:
    """Takes the list's lock shared with other shared turns, until the transaction ends (see
    *Shared turns*); False where the database has no such lock (SQLite, whose writers take
    turns anyway), the caller then taking `take`. A shared turn must lock the rows it writes,
    in the order of their ids, and append its events `events.appended_last`. Its changes of the
    list's points histogram wait for its commit (migration 0016)."""
    statement = dialects.advisory_lock(dialects.dialect_of(session), shared=True)
    if statement is None:
        return False
    driver_path.run(session, statement, _lock_of(list_id, LIST_LOCK))
    defer = dialects.deferred_points(dialects.dialect_of(session))
    if defer is not None:  # its turn reads no position: the histogram's rows at commit only
        session.execute(defer)
    _held(session).add(list_id)
    _marked(session, _SHARED).add(list_id)
    return True


def unshare(session: Session, list_id: str) -> None:
    """Forgets the shared lock after the savepoint that took it was rolled back (PostgreSQL
    released it then), and what the transaction kept of the list as read under it (`kept`):
    another writer may change it before the lock is taken again."""
    _held(session).discard(list_id)
    _marked(session, _SHARED).discard(list_id)
    for values in session.info.get(_KEPT, {}).values():
        values.pop(list_id, None)


def kept(session: Session, name: str) -> dict[str, str]:
    """`{list id: value}` this transaction read of its lists under their locks and keeps
    (`name`: what, e.g. the audiences stamp of `membership/plan.py`), forgotten with the lock
    (`unshare`). Before, an import turn that undid its try to share kept the stamp it read
    under the shared lock, and judged its rows by audiences changed before it took the lock
    alone (`tests/service/test_derived_counts.py`)."""
    found: dict[str, str] = session.info.setdefault(_KEPT, {}).setdefault(name, {})
    return found


_KEPT = "list_lock_kept"


def hold_counts(session: Session, list_id: str) -> None:
    """Before a write of the list's kept counts (its audiences' pair counts and their notes):
    in a transaction sharing the list's lock, takes the list's counts lock alone, until the
    transaction ends (see *The kept counts*); otherwise nothing, the list's lock being held
    alone. Taken again inside a savepoint, whose rollback would release it."""
    if list_id not in _marked(session, _SHARED):
        return
    counting = _marked(session, _COUNTING)
    if list_id in counting:
        return
    statement = dialects.advisory_lock(dialects.dialect_of(session), shared=False)
    assert statement is not None  # marked shared only where the database has the lock
    driver_path.run(session, statement, _lock_of(list_id, COUNTS_LOCK))
    if not session.in_nested_transaction():
        counting.add(list_id)


def locked_list(session: Session, account_id: str, list_id: str) -> List:
    """The caller's list, with its writers' lock taken, read again once the lock is held (see
    `_fresh`)."""
    lst = owned_list(session, account_id, list_id)
    taken = _hold(session, lst.id)
    take(session, lst.id)
    if not taken:
        return lst
    session.expire(lst)
    return owned_list(session, account_id, list_id)


def shared_list(session: Session, account_id: str, list_id: str) -> List | None:
    """The caller's list with its lock taken shared with other import turns that only update
    contacts (`share`), read again once it is held (see `_fresh`); or None where the database
    has no shared lock."""
    lst = owned_list(session, account_id, list_id)
    if not share(session, lst.id):
        return None
    session.expire(lst)
    return owned_list(session, account_id, list_id)


def locked_contact(session: Session, account_id: str, contact_id: str) -> tuple[Contact, List]:
    """The caller's contact and its list, read again once the list's lock is held: a writer
    that waited for the lock sees what the previous one committed (a 404 if it was deleted).
    The lock alone, not the counter's row: the exclusive lock keeps every other writer of the
    list out (a shared turn included), so the row is the appends' to take. Where the database
    serialises write transactions itself (SQLite), the first read was made inside one, and is
    not made again."""
    contact, lst = owned_contact(session, account_id, contact_id)
    if not _hold(session, lst.id):
        return contact, lst
    _fresh(session, contact, lst)
    return owned_contact(session, account_id, contact_id)


def contacts_to_write(
    session: Session, account_id: str, contact_ids: Sequence[str]
) -> dict[str, List]:
    """The list of each of the caller's contacts found among `contact_ids`, read by one
    statement, each list's lock then held (in the order of the lists' ids, so two turns never
    wait for each other crosswise): the door of a PATCH and of a turn of them
    (`use_cases/contacts.py`), for writers that read each row back with its own write
    (`membership/written.py`; the write's `RETURNING` is the fresh row, its `None` the contact
    deleted meanwhile). Of the contacts only their ids are read (an ORM contact was a tenth of
    a PATCH's CPU). One contact's door takes its lock as it reads (`_contact_list`)."""
    ids = [contact_id for contact_id in contact_ids if plausible_id(contact_id)]
    if len(ids) == 1 and dialects.dialect_of(session) in _CONTACT_LIST:
        return _contact_to_write(session, account_id, ids[0])
    rows = session.execute(_CONTACTS_LISTS, {"write_ids": ids, "write_account": account_id})
    found: dict[str, List] = {str(row[0]): row[1] for row in rows}
    for list_id in sorted({lst.id for lst in found.values()}):
        _hold(session, list_id)
    return found


WRITE_COLUMNS = (
    *(List.id, List.name, List.url, List.mode, List.referrals, List.color, List.title),
    *(List.desc, List.startFrom, List.accountId, List.customFields, List.timeZone),
    *(List.audiencesStamp, List.publicFields, List.publicFieldsPolicy),
)
"""The list's columns a write and its answer read (the summary an answer's contact carries,
`contact_pages.SUMMARY_FIELDS`, its ranking's start, the fields and zone data is checked
against, the audiences' stamp): the door loads these alone. The list has 40, and each column
of a row costs the driver a description and the ORM an attribute: reading all of them was a
fifth of the door's own CPU. Another column, read later, is loaded then by one statement."""

_CONTACTS_LISTS = (
    select(Contact.id, List)
    .join(List, List.id == Contact.listId)
    .where(
        Contact.id.in_(bindparam("write_ids", expanding=True)),
        List.accountId == bindparam("write_account", type_=String),
    )
    .options(load_only(*WRITE_COLUMNS))
)
"""`contacts_to_write`'s statement, built once: building it for each PATCH cost a fifth of the
door's own CPU."""


def _contact_list(dialect: str, *, entity: bool) -> Select[Any]:
    """The door of one contact (see `contacts_to_write`): by an equality, not an `IN` rendered
    at each run, its list's lock taken on the row found where the lock is an advisory lock
    (`dialects.lock_column`; the list read in the statement's snapshot, as a read before a
    lock statement; what the lock protects is read after it). `entity`: the list loaded by the
    ORM; else its columns (`WRITE_COLUMNS`), for the driver path."""
    lock = dialects.lock_column(dialect, List.id, LIST_LOCK)
    locked = [] if lock is None else [lock.label("locked")]
    if entity:
        statement = select(Contact.id, List, *locked).options(load_only(*WRITE_COLUMNS))
    else:
        statement = select(Contact.id, *WRITE_COLUMNS, *locked)
    statement = statement.join(List, List.id == Contact.listId).where(
        Contact.id == bindparam("write_id", type_=String),
        List.accountId == bindparam("write_account", type_=String),
    )
    return prepared_cache.planned_once(statement)  # found by the contact's primary key


_CONTACT_LIST = {dialect: _contact_list(dialect, entity=True) for dialect in dialects.STORES}
_CONTACT_ROW = {dialect: _contact_list(dialect, entity=False) for dialect in dialects.STORES}
_WRITE_KEYS = tuple(column.key for column in WRITE_COLUMNS)


def _contact_to_write(session: Session, account_id: str, contact_id: str) -> dict[str, List]:
    """`contacts_to_write` of one contact, its list made from the row on the driver's cursor
    (the ORM's loading was half the door's CPU), else by the ORM; its lock remembered."""
    dialect = dialects.dialect_of(session)
    parameters = {"write_id": contact_id, "write_account": account_id}
    if driver_path.direct(session):
        row = driver_path.run(session, _CONTACT_ROW[dialect], parameters).first()
        made = None if row is None else dict(zip(_WRITE_KEYS, row[1:], strict=False))
        lst = None if made is None else driver_path.loaded(session, List, made)
        locked = row is not None and len(row) > 1 + len(_WRITE_KEYS)
    else:
        found = session.execute(_CONTACT_LIST[dialect], parameters).first()
        lst, locked = (None, False) if found is None else (found[1], len(found) > 2)
    if lst is None:
        return {}
    if locked and not session.in_nested_transaction():
        _held(session).add(lst.id)
    return {contact_id: lst}


def locked_audience(session: Session, account_id: str, audience_id: str) -> tuple[Audience, List]:
    """The caller's audience and its list, read again once the list's lock is held (see
    `_fresh`)."""
    audience, lst = owned_audience(session, account_id, audience_id)
    take(session, lst.id)
    _fresh(session, audience, lst)
    return owned_audience(session, account_id, audience_id)


def _fresh(session: Session, row: Audience | Contact, lst: List) -> None:
    """Forgets what was read of `row` and its list before the lock, so the read after it
    loads both anew: a query finding a row the session holds keeps the values it holds. The
    list's above all: its time zone (and custom fields) are what a filter read before the lock
    is checked against (`custom_fields.check_unchanged`), and a zone changed in between, kept
    as first read, let a restore store its filter, and its members, in the zone the list had
    left (docs/service-internals-writes.md, *A list's zone and its writers*)."""
    session.expire(row)
    session.expire(lst)


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

_UNANNOUNCED = (
    update(EventHead)
    .where(EventHead.listId == bindparam("unannounced_list"))
    .values(unannounced=EventHead.unannounced + 1)
    .execution_options(synchronize_session=False)
)

_ACTED = (
    update(EventHead)
    .where(EventHead.listId == bindparam("acted_list"))
    .values(acted=EventHead.acted + 1)
    .execution_options(synchronize_session=False)
)

_HELD = "list_lock_held"


def _lock_of(list_id: str, kind: int) -> dict[str, object]:
    """The parameters of `dialects.advisory_lock` locking the list's lock of `kind`."""
    return {dialects.LOCK_NAME: list_id, dialects.LOCK_KIND: kind}


def _marked(session: Session, name: str) -> set[str]:
    """The lists this transaction marked `name` (`_HELD`, `_SHARED`, `_COUNTING`)."""
    found: set[str] = session.info.setdefault(name, set())
    return found


_SHARED = "list_lock_shared"
"""The lists whose lock this transaction holds shared (`share`)."""
_COUNTING = "list_lock_counting"
"""The lists whose counts lock this transaction holds outside any savepoint (`hold_counts`)."""


def _held(session: Session) -> set[str]:
    """The lists whose lock this transaction took, shared or alone (a session is one
    transaction of the service's units of work): a shared turn's appends take no other."""
    return _marked(session, _HELD)


def _hold(session: Session, list_id: str) -> bool:
    """The list's lock, exclusive, unless this transaction holds it already; whether it was
    taken now (what was read before may then be stale). Taken again after a savepoint (a
    rolled-back savepoint releases what it took), so only a lock taken outside one is
    remembered."""
    statement = dialects.advisory_lock(dialects.dialect_of(session), shared=False)
    if statement is None:
        return False  # SQLite: the write transaction's own lock (`BEGIN IMMEDIATE`)
    held = _held(session)
    if list_id in held:
        return False
    driver_path.run(session, statement, _lock_of(list_id, LIST_LOCK))
    if not session.in_nested_transaction():
        held.add(list_id)
    return True
