"""The contacts each pair of a list's audiences shares (`audience_overlaps`), kept by every
write of `memberships` in its own transaction, so `GET /v4/lists/{id}/overlap` reads at most
1,275 rows for 50 audiences rather than every member of each (docs/service-audiences.md).

A row holds the pair `(a, b)` with `a <= b` by id; `(a, a)` is the audience's size. Each write
adds what it moved, never recounts, and the two shapes of `store.py` move it differently:

- **per contact** (`contacts_moved`): the write knows each contact's audiences before and after
  (its stored rows, read before the write), so the difference of its pairs is counted in Python
  and added by one upsert (`INSERT ... SELECT ... ON CONFLICT DO UPDATE SET contacts =
  contacts + ...` over the moved pairs bound as one parameter).
- **per audience** (`audience_moved`): one audience's entering and leaving contacts are sets
  of any size, so what they share with every other audience is counted in SQL (the ids joined
  with `memberships` by contact, grouped by audience), then added by the same upsert. The
  other audiences' rows do not move in that write, so the count is the same before or after
  the audience's own rows are written.

Every writer holds the list's lock (`list_lock.py`), so two writes never add to one row at once
from stale counts; the upsert itself adds, so the rows need no read before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Select,
    String,
    Table,
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
from sqlalchemy import cast as cast_to
from sqlalchemy.orm import Session

from ...db import dialects
from ...db.models import AudienceOverlap, Membership
from .judge import chunks

OVERLAPS = cast(Table, AudienceOverlap.__table__)
_KEYS = ("audience_a", "audience_b")
Pair = tuple[str, str]


def pair(a: str, b: str) -> Pair:
    """The row of two audiences: the smaller id first."""
    return (a, b) if a <= b else (b, a)


def contacts_moved(
    session: Session,
    list_id: str,
    before: Mapping[str, Iterable[str]],
    entered: Mapping[str, Sequence[str]],
    left: Mapping[str, Sequence[str]],
) -> None:
    """Adds the pairs that contacts entered and left: `before[c]` the audiences contact `c` was
    stored in before the write, `entered[c]` / `left[c]` those it entered and left."""
    moved = entered.keys() | left.keys()
    dialect = dialects.dialect_of(session)
    if len(moved) == 1 and ONE_CONTACT_IN_SQL and dialects.unpacks(dialect):
        (contact_id,) = moved
        out_of = left.get(contact_id, ())
        stayed = set(before.get(contact_id, ())).difference(out_of)
        _one_contact(session, list_id, entered.get(contact_id, ()), stayed, out_of)
        return
    shift: Counter[Pair] = Counter()
    for contact_id in moved:
        into, out_of = entered.get(contact_id, ()), left.get(contact_id, ())
        stayed = set(before.get(contact_id, ())).difference(out_of)
        _count(shift, into, stayed, 1)
        _count(shift, out_of, stayed, -1)
    add(session, list_id, shift)


# The one contact's pairs counted by the database (`_one_contact`); off, by `_count` in Python
# as for many contacts. tests/service/test_overlap_kept.py runs both and compares them.
ONE_CONTACT_IN_SQL = True


def _one_contact(
    session: Session,
    list_id: str,
    into: Sequence[str],
    stayed: set[str],
    out_of: Sequence[str],
) -> None:
    dialect = dialects.dialect_of(session)
    sides = {_INTO: into, _STAYED: sorted(stayed), _OUT_OF: out_of}
    values: dict[str, Any] = {"list_id": list_id}
    for key, ids in sides.items():
        values[key] = dialects.unpacked_parameter(dialect, ids)
    session.connection().execute(_one_contact_upsert(dialect), values)


_INTO, _STAYED, _OUT_OF = "pairs_into", "pairs_stayed", "pairs_out_of"


@dialects.per_dialect
def _one_contact_upsert(dialect: str) -> Any:
    """What `_count` adds for one contact, counted by the database: the pairs of the audiences
    it entered with each other and with those it stayed in (+1), of those it left likewise
    (-1), each audience's ids bound as one parameter; built once per dialect. A contact moving
    across 100 audiences moves 5,050 pairs, which Python counted, sorted and sent as rows in
    more time than the rest of its write. The four sets of pairs are disjoint (an audience is
    entered, stayed in or left), so no row is added to twice in the statement."""
    branches = [
        _pairs_of(dialect, _INTO, _INTO, 1),
        _pairs_of(dialect, _INTO, _STAYED, 1),
        _pairs_of(dialect, _OUT_OF, _OUT_OF, -1),
        _pairs_of(dialect, _OUT_OF, _STAYED, -1),
    ]
    moved = union_all(*branches).subquery()
    rows = select(*moved.c).where(true())
    names = [*_KEYS, "list_id", "contacts"]
    return dialects.adding_upsert_from(dialect, OVERLAPS, _KEYS, "contacts", names, rows)


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
        bindparam("list_id", type_=String).label("list_id"),
        literal(sign, BigInteger).label("contacts"),
    ).select_from(one.join(other, first_is_smaller if first == second else true()))


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


def add(session: Session, list_id: str, shift: Mapping[Pair, int]) -> None:
    """Adds these counts to their rows (created at the count when absent): one upsert, none
    when nothing moved. The rows go as one parameter where the database unpacks it
    (`_unpacked_upsert`), else as parameter sets of `dialects.adding_upsert`: a contact moving
    across 100 audiences moves 5,050 pairs, whose parameter sets cost SQLAlchemy 65 ms to
    process and SQLite's executemany twice the time of one `INSERT ... SELECT` over them."""
    moved = [(a, b, n) for (a, b), n in sorted(shift.items()) if n]
    if not moved:
        return
    dialect = dialects.dialect_of(session)
    if not dialects.unpacks(dialect):
        _add_as_parameter_sets(session, dialect, list_id, moved)
        return
    rows = [(a, b, str(n)) for a, b, n in moved]
    values = dialects.rows_parameters(dialect, _UNPACKED, rows, _UNPACKED_KEY)
    session.connection().execute(_unpacked_upsert(dialect), {**values, "list_id": list_id})


def _add_as_parameter_sets(
    session: Session, dialect: str, list_id: str, moved: Sequence[tuple[str, str, int]]
) -> None:
    """`add` where the database unpacks no parameter (MariaDB): the driver's executemany."""
    upsert = dialects.adding_upsert(dialect, OVERLAPS, _KEYS, "contacts")
    names = ("audience_a", "audience_b", "contacts")
    rows = [{**dict(zip(names, row, strict=True)), "list_id": list_id} for row in moved]
    session.connection().execute(upsert, rows)


_UNPACKED = ("audience_a", "audience_b", "contacts")
_UNPACKED_KEY = "pairs_moved"


@dialects.per_dialect
def _unpacked_upsert(dialect: str) -> Any:
    """`INSERT INTO audience_overlaps SELECT` of the moved pairs bound as one parameter
    (`dialects.unpacked_rows_named`), adding to the rows that exist; built once per dialect.
    The `WHERE` is SQLite's: without it, `ON CONFLICT` after a `SELECT ... FROM` would be read
    as the join's `ON`."""
    pairs = dialects.unpacked_rows_named(dialect, _UNPACKED, _UNPACKED_KEY)
    rows = select(
        pairs.c.audience_a,
        pairs.c.audience_b,
        bindparam("list_id", type_=String),
        cast_to(pairs.c.contacts, BigInteger),
    ).where(true())
    return dialects.adding_upsert_from(
        dialect, OVERLAPS, _KEYS, "contacts", [*_KEYS, "list_id", "contacts"], rows
    )


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
    """Deletes the pairs of every audience of the list; call when its memberships go."""
    session.execute(
        delete(AudienceOverlap)
        .where(AudienceOverlap.listId == list_id)
        .execution_options(synchronize_session=False)
    )


def kept_counts(session: Session, ids: Sequence[str]) -> list[list[int]]:
    """`matrix[i][j]`: the contacts in both the i-th and the j-th audience of `ids`, read from
    the kept pairs (a pair without a row shares none)."""
    statement = select(
        AudienceOverlap.audienceA, AudienceOverlap.audienceB, AudienceOverlap.contacts
    ).where(AudienceOverlap.audienceA.in_(ids), AudienceOverlap.audienceB.in_(ids))
    counts = {(a, b): int(n) for a, b, n in session.execute(statement)}
    return [[counts.get(pair(a, b), 0) for b in ids] for a in ids]
