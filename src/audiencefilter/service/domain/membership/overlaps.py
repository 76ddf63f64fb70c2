"""The contacts each pair of a list's audiences shares (`audience_overlaps`), kept by every
write of `memberships` in its own transaction, so `GET /v4/lists/{id}/overlap` reads at most
1,275 rows for 50 audiences rather than every member of each (docs/service-audiences.md).

A row holds the pair `(a, b)` with `a <= b` by id; `(a, a)` is the audience's size. Each write
adds what it moved, never recounts, and the two shapes of `store.py` move it differently:

- **per contact** (`shift_of`): the write knows each contact's audiences before and after
  (its stored rows, read before the write). The difference of one contact's pairs is counted
  by the database from its entered, stayed and left audiences (`OneContact`, three
  parameters); many contacts' pairs are counted in Python and sent summed as one parameter.
  Either is added by one upsert (`INSERT ... SELECT ... ON CONFLICT DO UPDATE SET contacts =
  contacts + ...`, `add`; on PostgreSQL carried in the `WITH` of the statement that writes
  the memberships, `carried`).
- **per audience** (`audience_moved`): one audience's entering and leaving contacts are sets
  of any size, so what they share with every other audience is counted in SQL (the ids joined
  with `memberships` by contact, grouped by audience), then added by the same upsert. The
  other audiences' rows do not move in that write, so the count is the same before or after
  the audience's own rows are written.

Every writer holds the list's lock (`list_lock.py`), so two writes never add to one row at once
from stale counts; the upsert itself adds, so the rows need no read before. Import turns that
share the list's lock take its counts lock first (`list_lock.hold_counts`, from
`store._move_pairs`): their upserts would otherwise take the same pairs' rows in different
orders and deadlock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    CompoundSelect,
    Integer,
    Select,
    String,
    Table,
    Text,
    bindparam,
    case,
    delete,
    func,
    literal,
    or_,
    select,
    true,
    union_all,
)
from sqlalchemy import cast as converted
from sqlalchemy.orm import Session

from ...db import dialects, driver_path
from ...db.models import AudienceOverlap, Membership, OverlapNoted
from .judge import chunks

OVERLAPS = cast(Table, AudienceOverlap.__table__)
MEMBERSHIPS = cast(Table, Membership.__table__)
_KEYS = ("audience_a", "audience_b")
Pair = tuple[str, str]


@dataclass(frozen=True)
class OneContact:
    """One contact's move, whose pairs the database counts (`_one_contact_rows`): a contact
    moving across 100 audiences moves 5,050 pairs, which Python counted, sorted and sent in
    more time than the rest of its write. Where the list's pairs are settled later
    (`defers`), the write notes the contact instead (`_noted`)."""

    contact_id: str
    into: tuple[str, ...]
    stayed: tuple[str, ...]
    out_of: tuple[str, ...]


Shift = Counter[Pair] | OneContact
"""What a write adds to each pair's count: counted in Python, or one contact's move."""

# One contact's pairs counted by the database (`OneContact`); off, by `_count` in Python as
# for many contacts. tests/service/test_overlap_kept.py runs both and compares them.
ONE_CONTACT_IN_SQL = True

# One contact's move noted (`overlap_noted`) and its pairs counted when the list settles
# (`settle`, and `kept_counts` adds what is noted); off, counted in its own write.
# tests/service/test_overlap_kept.py runs both and compares them.
NOTE_ONE_CONTACT = True

# The noted contacts' pairs counted from the audiences each moved across (entered or left),
# with the others of the same side (`_moved_pairs`); off, from all its pairs now less all
# its pairs then, which cancel for every two audiences it stayed in (`_pairs_now`,
# `_pairs_then`). tests/service/test_overlap_kept.py runs both and compares them.
SETTLE_MOVED_ONLY = True

# A service process settles a list's noted contacts every this many notes of its own, so a
# read adds at most about this many contacts' pairs (per process writing the list).
SETTLE_EVERY = 64


def pair(a: str, b: str) -> Pair:
    """The row of two audiences: the smaller id first."""
    return (a, b) if a <= b else (b, a)


def shift_of(
    before: Mapping[str, Iterable[str]],
    entered: Mapping[str, Sequence[str]],
    left: Mapping[str, Sequence[str]],
) -> Shift:
    """What the pairs move by as contacts enter and leave audiences, for `add` (or `carried`):
    `before[c]` the audiences contact `c` was stored in before the write, `entered[c]` /
    `left[c]` those it entered and left."""
    moving = entered.keys() | left.keys()
    if len(moving) == 1 and ONE_CONTACT_IN_SQL:
        (one,) = moving
        gone = tuple(left.get(one, ()))
        kept = tuple(sorted(set(before.get(one, ())).difference(gone)))
        return OneContact(one, tuple(entered.get(one, ())), kept, gone)
    shift: Counter[Pair] = Counter()
    for contact_id in moving:
        into, out_of = entered.get(contact_id, ()), left.get(contact_id, ())
        stayed = set(before.get(contact_id, ())).difference(out_of)
        _count(shift, into, stayed, 1)
        _count(shift, out_of, stayed, -1)
    return shift


def counted(shift: Shift) -> Counter[Pair]:
    """`shift` as counts of pairs, counted in Python."""
    if not isinstance(shift, OneContact):
        return shift
    found: Counter[Pair] = Counter()
    _count(found, shift.into, set(shift.stayed), 1)
    _count(found, shift.out_of, set(shift.stayed), -1)
    return found


def _count(shift: Counter[Pair], moved: Sequence[str], stayed: set[str], sign: int) -> None:
    """The pairs of `moved` with the audiences that stayed and with each other (itself too)."""
    for at, audience_id in enumerate(moved):
        for other in stayed:
            shift[pair(audience_id, other)] += sign
        for other in moved[at:]:
            shift[pair(audience_id, other)] += sign


def audience_moved(
    session: Session,
    list_id: str,
    audience_id: str,
    entering: Sequence[str],
    leaving: Sequence[str],
) -> None:
    """Adds the pairs of one audience's entering and leaving contacts: its size moves by their
    difference, its pair with each other audience by what they share with it."""
    shift: Counter[Pair] = Counter()
    shift[(audience_id, audience_id)] += len(entering) - len(leaving)
    for ids, sign in ((entering, 1), (leaving, -1)):
        for other, shared in _shared(session, audience_id, ids).items():
            shift[pair(audience_id, other)] += sign * shared
    add(session, list_id, shift)


def _shared(session: Session, audience_id: str, contact_ids: Sequence[str]) -> Counter[str]:
    """Of these contacts, how many each other audience holds: the ids as one parameter
    (`dialects.unpacked`) joined with `memberships` on its contact index, else by chunks."""
    found: Counter[str] = Counter()
    if not contact_ids:
        return found
    dialect = dialects.dialect_of(session)
    others = select(Membership.audienceId, func.count()).where(Membership.audienceId != audience_id)
    if dialects.unpacks(dialect):
        ids = dialects.unpacked(dialect, contact_ids)
        statement = others.join(ids, ids.c.value == Membership.contactId)
        found.update(
            {a: int(n) for a, n in session.execute(statement.group_by(Membership.audienceId))}
        )
        return found
    for chunk in chunks(contact_ids):
        statement = others.where(Membership.contactId.in_(chunk))
        found.update(
            {a: int(n) for a, n in session.execute(statement.group_by(Membership.audienceId))}
        )
    return found


def add(session: Session, list_id: str, shift: Shift) -> None:
    """Adds these counts to their rows (created at the count when absent): one upsert
    (`carried`), none when nothing moved; where the database unpacks no parameter (MariaDB),
    the counted pairs as parameter sets of `dialects.adding_upsert`."""
    if not moved(shift):
        return
    dialect = dialects.dialect_of(session)
    unpacked, statement = _unpacked_by(shift), carried(dialect, shape_of(dialect, shift))
    if statement is not None and dialects.unpacks(dialect):
        parameters = carried_parameters(dialect, list_id, shift)
        driver_path.run(session, statement, parameters, unpacked_rows=unpacked)
        return
    upsert = dialects.adding_upsert(dialect, OVERLAPS, _KEYS, "contacts")
    names = ("audience_a", "audience_b", "contacts")
    pairs = [(a, b, n) for (a, b), n in sorted(counted(shift).items()) if n]
    rows = [{**dict(zip(names, row, strict=True)), "list_id": list_id} for row in pairs]
    session.connection().execute(upsert, rows)


def moved(shift: Shift) -> bool:
    """Whether any pair's count moves."""
    if isinstance(shift, OneContact):
        return bool(shift.into or shift.out_of)
    return any(shift.values())


PAIRS, ONE, NOTED = "pairs", "one", "noted"
"""The shapes of `carried`: pairs counted in Python, one contact's counted by the database,
one contact noted."""


def defers(dialect: str) -> bool:
    """Whether one contact's move is noted and its pairs counted when the list settles: where
    the database unpacks a parameter (`dialects.unpacks`), which the settling needs."""
    return NOTE_ONE_CONTACT and dialects.unpacks(dialect)


def shape_of(dialect: str, shift: Shift) -> str:
    """The shape of `carried` that adds `shift`."""
    if not isinstance(shift, OneContact):
        return PAIRS
    return NOTED if defers(dialect) else ONE


def _unpacked_by(shift: Shift) -> int:
    """The rows `add` unpacks for `driver_path.run`: a batch's pairs; none counted for one
    contact's move (its ids, at most one an audience of its list, always planned once)."""
    return 0 if isinstance(shift, OneContact) else len(shift)


@cache
def carried(dialect: str, shape: str) -> Any:
    """`add` as one `INSERT ... SELECT ... ON CONFLICT`, for a membership write to carry in its
    `WITH` (`store._pairs_written`, PostgreSQL) or alone (SQLite): the pairs as one parameter
    per column (`dialects.unpacked_rows_named`), one contact's three lists of audiences
    (`_one_contact_rows`), or one contact noted (`_noted`). Built once per dialect and shape
    (`shape_of`); its parameters are `carried_parameters`'. None where the database has no
    such upsert (MariaDB)."""
    if shape == NOTED:
        return _noted(dialect)
    if shape == ONE:
        rows = _one_contact_rows(dialect)
    else:
        table = dialects.unpacked_rows_named(dialect, _CARRIED, _CARRIED_KEY)
        rows = select(
            table.c.audience_a,
            table.c.audience_b,
            bindparam(_CARRIED_LIST, type_=String),
            converted(table.c.contacts, BigInteger),
        ).where(true())  # SQLite's: else `ON CONFLICT` after `FROM` reads as a join's `ON`
    names = [*_KEYS, "list_id", "contacts"]
    return dialects.adding_upsert_from(dialect, OVERLAPS, _KEYS, "contacts", names, rows)


def carried_parameters(dialect: str, list_id: str, shift: Shift) -> dict[str, Any]:
    """The parameters of `carried(dialect, ...)` adding `shift` to the list's pairs."""
    parameters: dict[str, Any] = {_CARRIED_LIST: list_id}
    if isinstance(shift, OneContact) and defers(dialect):
        before = sorted((*shift.stayed, *shift.out_of))
        return parameters | {
            _NOTED_CONTACT: shift.contact_id,
            _NOTED_BEFORE: dialects.packed_ids(dialect, before),
        }
    if isinstance(shift, OneContact):
        sides = {_INTO: shift.into, _STAYED: shift.stayed, _OUT_OF: shift.out_of}
        for key, ids in sides.items():
            parameters[key] = dialects.unpacked_parameter(dialect, ids)
        return parameters
    rows = [(a, b, str(n)) for (a, b), n in sorted(shift.items()) if n]
    return parameters | dialects.rows_parameters(dialect, _CARRIED, rows, _CARRIED_KEY)


_CARRIED = ("audience_a", "audience_b", "contacts")
_CARRIED_KEY = "kept"
_CARRIED_LIST = "kept_list"
_INTO, _STAYED, _OUT_OF = "kept_into", "kept_stayed", "kept_out_of"
_NOTED_CONTACT, _NOTED_BEFORE = "noted_contact", "noted_before"
NOTED_TABLE = cast(Table, OverlapNoted.__table__)


def _noted(dialect: str) -> Any:
    """The note of one contact's move: its list, its id and the audiences it was stored in
    before, unless it is noted already (then what it was in before its first noted move
    stands, which is what the settling subtracts)."""
    keys = ("list_id", "contact_id")
    return dialects.inserting_unless_present(dialect, NOTED_TABLE, keys).values(
        list_id=bindparam(_CARRIED_LIST, type_=String),
        contact_id=bindparam(_NOTED_CONTACT, type_=String),
        audiences=bindparam(_NOTED_BEFORE, type_=Text),
    )


_NOTES: Counter[str] = Counter()
"""The notes this process made of each list since it last settled it (`settle_due`)."""


def settle_due(session: Session, list_id: str) -> None:
    """Settles the list when this process noted `SETTLE_EVERY` contacts of it since it last
    did: what bounds the pairs a read adds (`kept_counts`). Call in a write holding the list's
    lock, after its note (each note once)."""
    _settled_in(session).discard(list_id)  # noted since, in this transaction
    _NOTES[list_id] += 1
    if _NOTES[list_id] >= SETTLE_EVERY:
        settle(session, list_id)


def settle(session: Session, list_id: str) -> None:
    """Adds the noted contacts' moves (pairs now less pairs when noted, `_noted_pairs`) to the
    list's pairs and forgets the notes. Call holding the list's lock, before a write of
    `memberships` that counts pairs itself, which would count a noted move twice. Once a
    transaction (the lock keeps others from noting; its own notes undo it, `settle_due`)."""
    settled = _settled_in(session)
    if list_id in settled:
        return
    dialect = dialects.dialect_of(session)
    if not dialects.unpacks(dialect):
        return  # nothing is noted where nothing defers (`defers`)
    _NOTES.pop(list_id, None)
    parameters = {_CARRIED_LIST: list_id}
    connection = session.connection()
    if connection.execute(_ANY_NOTED, parameters).first() is not None:
        connection.execute(_settling(dialect, SETTLE_MOVED_ONLY), parameters)
        connection.execute(_FORGOTTEN, parameters)
    settled.add(list_id)


def _settled_in(session: Session) -> set[str]:
    """The lists settled in the session's current transaction (none in a new one)."""
    transaction = session.get_transaction()
    found: tuple[object, set[str]] | None = session.info.get(_SETTLED)
    if found is None or found[0] is not transaction:
        found = (transaction, set())
        session.info[_SETTLED] = found
    return found[1]


_SETTLED = "overlaps_settled"
_ANY_NOTED = (
    select(literal(1))
    .select_from(NOTED_TABLE)
    .where(NOTED_TABLE.c.list_id == bindparam(_CARRIED_LIST, type_=String))
    .limit(1)
)
_FORGOTTEN = delete(NOTED_TABLE).where(
    NOTED_TABLE.c.list_id == bindparam(_CARRIED_LIST, type_=String)
)


@cache
def _settling(dialect: str, moved_only: bool) -> Any:
    moved = _noted_pairs(dialect, moved_only).subquery()
    rows = select(
        moved.c.audience_a, moved.c.audience_b, bindparam(_CARRIED_LIST, type_=String),
        moved.c.contacts,
    ).where(moved.c.contacts != 0)  # fmt: skip
    names = [*_KEYS, "list_id", "contacts"]
    return dialects.adding_upsert_from(dialect, OVERLAPS, _KEYS, "contacts", names, rows)


@cache
def _noted_pairs(dialect: str, moved_only: bool) -> Select[Any]:
    """What the list's noted contacts move each pair by, summed by pair: the pairs of the
    audiences each moved across (`_moved_pairs`), or of those it is stored in now (+1) and
    of those it was in when noted (-1)."""
    noted = NOTED_TABLE.alias("noted")
    if moved_only:
        both = _moved_pairs(dialect, noted).subquery()
    else:
        both = union_all(_pairs_now(dialect, noted), _pairs_then(dialect, noted)).subquery()
    return select(
        both.c.a.label("audience_a"), both.c.b.label("audience_b"),
        func.sum(both.c.n).label("contacts"),
    ).group_by(both.c.a, both.c.b)  # fmt: skip


def _moved_pairs(dialect: str, noted: Any) -> CompoundSelect[Any]:
    """Each pair a noted contact of the list moved, counted +1 or -1: an audience it entered
    with each other it entered and each it stayed in, one it left likewise (`_moves`). Its
    pairs now less its pairs then, without the pairs of two audiences it stayed in, which
    cancel: a contact in 33 audiences moving across one makes 33 rows, not 1,156. Paired as
    `_one_contact_rows` pairs one write's move: by unpacking lists, never by looking an
    audience up in a list (the square of its length where a list is a JSON text, SQLite) or
    joining a contact's audiences with themselves (too few rows foreseen: PostgreSQL then
    sorted 100,000 pairs to sum them, where it hashes them so)."""
    moves = _moves(dialect, noted).cte("moves")
    return union_all(
        _moved_with(dialect, moves, "entered", "entered", 1),
        _moved_with(dialect, moves, "entered", "stayed", 1),
        _moved_with(dialect, moves, "left", "left", -1),
        _moved_with(dialect, moves, "left", "stayed", -1),
    )


def _moves(dialect: str, noted: Any) -> Select[Any]:
    """Each noted contact of the list with the audiences it entered, left and stayed in, each
    packed (`dialects.packed_aggregate`; none packs to NULL on PostgreSQL)."""
    sides = _sides(dialect, noted).subquery("sides")
    packed = {
        name: dialects.packed_aggregate(dialect, sides.c.audience_id)
        .filter(sides.c.side == side)
        .label(name)
        for name, side in (("entered", 1), ("left", -1), ("stayed", 0))
    }
    return select(sides.c.contact_id, *packed.values()).group_by(sides.c.contact_id)


def _moved_with(dialect: str, moves: Any, first: str, second: str, sign: int) -> Select[Any]:
    """The pairs of the audiences of column `first` of `moves` with those of `second`, the
    smaller id first (bytewise, as `pair` orders), each counted `sign`; within one column,
    each pair once and each audience with itself."""
    one = dialects.unpacked_column(dialect, moves.c[first], f"{first}_one")
    other = dialects.unpacked_column(dialect, moves.c[second], f"{second}_other")
    a, b = one.c.value, other.c.value
    a_is_smaller = dialects.bytewise(dialect, a) <= dialects.bytewise(dialect, b)
    return (
        select(
            case((a_is_smaller, a), else_=b).label("a"),
            case((a_is_smaller, b), else_=a).label("b"),
            literal(sign, Integer).label("n"),
        )
        .select_from(moves)
        .join(one, true())
        .join(other, a_is_smaller if first == second else true())
    )


def _sides(dialect: str, noted: Any) -> Select[Any]:
    """Each audience of each noted contact of the list then or now, with its side: 1 entered
    (in it now, not when noted), -1 left, 0 stayed; the sum of -1 for each audience of the
    note and 1 for each it is stored in now."""
    mine = noted.c.list_id == bindparam(_CARRIED_LIST, type_=String)
    then = dialects.unpacked_column(dialect, noted.c.audiences, "then")
    member = MEMBERSHIPS.alias("member")
    was = (
        select(
            noted.c.contact_id.label("contact_id"),
            then.c.value.label("audience_id"),
            literal(-1, Integer).label("n"),
        )
        .select_from(noted)
        .join(then, true())
    )
    now = select(member.c.contact_id, member.c.audience_id, literal(1, Integer)).select_from(
        noted.join(member, member.c.contact_id == noted.c.contact_id)
    )
    held = union_all(was.where(mine), now.where(mine)).subquery("held")
    return select(held.c.contact_id, held.c.audience_id, func.sum(held.c.n).label("side")).group_by(
        held.c.contact_id, held.c.audience_id
    )


def _pairs_now(dialect: str, noted: Any) -> Select[Any]:
    """Each pair of the audiences a noted contact of the list is stored in now, counted 1 (with
    `_pairs_then`, the settling's whole pairs: `SETTLE_MOVED_ONLY` off).
    Each contact's memberships are read once and packed, then paired as a note's audiences
    are: a join of the memberships with themselves read a contact's memberships again for
    each of them (52,780 of the 72,949 pages a settle of 54 contacts in some 32 audiences
    read)."""
    member = MEMBERSHIPS.alias("member")
    packed = dialects.packed_aggregate(dialect, member.c.audience_id).label("audiences")
    now = (
        select(packed)
        .select_from(noted)
        .join(member, member.c.contact_id == noted.c.contact_id)
        .where(noted.c.list_id == bindparam(_CARRIED_LIST, type_=String))
        .group_by(noted.c.contact_id)
        .subquery("now")
    )
    return _packed_pairs(dialect, now, 1)


def _pairs_then(dialect: str, noted: Any) -> Select[Any]:
    """Each pair of the audiences a noted contact of the list was in when noted, counted -1."""
    mine = noted.c.list_id == bindparam(_CARRIED_LIST, type_=String)
    return _packed_pairs(dialect, noted, -1).where(mine)


def _packed_pairs(dialect: str, packed: Any, sign: int) -> Select[Any]:
    """Each pair of the audiences of each row's packed `audiences`, the smaller id first and
    each audience with itself, counted `sign`."""
    first = dialects.unpacked_column(dialect, packed.c.audiences, "first")
    second = dialects.unpacked_column(dialect, packed.c.audiences, "second")
    x, y = dialects.bytewise(dialect, first.c.value), dialects.bytewise(dialect, second.c.value)
    selected = select(
        first.c.value.label("a"), second.c.value.label("b"), literal(sign, BigInteger).label("n")
    )
    return selected.select_from(packed).join(first, true()).join(second, x <= y)


def _one_contact_rows(dialect: str) -> Select[Any]:
    """What `_count` adds for one contact, made by the database: the pairs of the audiences it
    entered with each other and with those it stayed in (+1), of those it left likewise (-1).
    The four sets of pairs are disjoint (an audience is entered, stayed in or left), so no row
    is added to twice by the statement."""
    branches = [
        _pairs_of(dialect, _INTO, _INTO, 1),
        _pairs_of(dialect, _INTO, _STAYED, 1),
        _pairs_of(dialect, _OUT_OF, _OUT_OF, -1),
        _pairs_of(dialect, _OUT_OF, _STAYED, -1),
    ]
    moving = union_all(*branches).subquery()
    return select(*moving.c).where(true())


def _pairs_of(dialect: str, first: str, second: str, sign: int) -> Select[Any]:
    """The pairs of the audiences of parameter `first` with those of `second`, smaller id
    first (compared bytewise, as `pair` does), each counted `sign`; within one parameter,
    each pair once and each audience with itself."""
    one = dialects.unpacked_named(dialect, first).alias()
    other = dialects.unpacked_named(dialect, second).alias()
    a, b = one.c.value, other.c.value
    first_is_smaller = dialects.bytewise(dialect, a) <= dialects.bytewise(dialect, b)
    return select(
        case((first_is_smaller, a), else_=b).label("audience_a"),
        case((first_is_smaller, b), else_=a).label("audience_b"),
        bindparam(_CARRIED_LIST, type_=String).label("list_id"),
        literal(sign, BigInteger).label("contacts"),
    ).select_from(one.join(other, first_is_smaller if first == second else true()))


def forget_audience(session: Session, audience_id: str) -> None:
    """Deletes the audience's pairs; call when its memberships go with it."""
    session.execute(
        delete(AudienceOverlap)
        .where(
            or_(AudienceOverlap.audienceA == audience_id, AudienceOverlap.audienceB == audience_id)
        )
        .execution_options(synchronize_session=False)
    )


def forget_list(session: Session, list_id: str) -> None:
    """Deletes the pairs of every audience of the list and its notes; call when its
    memberships go."""
    _NOTES.pop(list_id, None)
    session.connection().execute(_FORGOTTEN, {_CARRIED_LIST: list_id})
    session.execute(
        delete(AudienceOverlap)
        .where(AudienceOverlap.listId == list_id)
        .execution_options(synchronize_session=False)
    )


def _noted_among(dialect: str, ids: Sequence[str]) -> Select[Any]:
    """What the list's noted contacts move the pairs of these audiences by."""
    noted = _noted_pairs(dialect, SETTLE_MOVED_ONLY).subquery()
    return select(noted.c.audience_a, noted.c.audience_b, noted.c.contacts).where(
        noted.c.audience_a.in_(ids), noted.c.audience_b.in_(ids)
    )


def kept_counts(session: Session, list_id: str, ids: Sequence[str]) -> list[list[int]]:
    """`matrix[i][j]`: the contacts in both the i-th and the j-th audience of `ids`, read from
    the kept pairs (a pair without a row shares none) and what the list's noted contacts move
    them by, in one statement (no settling between the two: a read takes no lock)."""
    kept = select(
        AudienceOverlap.audienceA.label("audience_a"),
        AudienceOverlap.audienceB.label("audience_b"),
        AudienceOverlap.contacts.label("contacts"),
    ).where(AudienceOverlap.audienceA.in_(ids), AudienceOverlap.audienceB.in_(ids))
    parts: list[Select[Any]] = [cast(Select[Any], kept)]
    dialect = dialects.dialect_of(session)
    if dialects.unpacks(dialect):
        parts.append(_noted_among(dialect, ids))
    both = union_all(*parts).subquery()
    statement = select(both.c.audience_a, both.c.audience_b, func.sum(both.c.contacts)).group_by(
        both.c.audience_a, both.c.audience_b
    )
    counts = {(a, b): int(n) for a, b, n in session.execute(statement, {_CARRIED_LIST: list_id})}
    return [[counts.get(pair(a, b), 0) for b in ids] for a in ids]
