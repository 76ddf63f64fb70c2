"""The contacts each pair of a list's audiences shares (`audience_overlaps`), kept by every
write of `memberships` in its own transaction, so `GET /v4/lists/{id}/overlap` reads at most
1,275 rows for 50 audiences rather than every member of each (docs/service-audiences.md).

A row holds the pair `(a, b)` with `a <= b` by id; `(a, a)` is the audience's size. Each write
adds what it moved, never recounts, and the two shapes of `store.py` move it differently:

- **per contact** (`shift_of`): the write knows each contact's audiences before and after
  (its stored rows, read before the write), so the difference of its pairs is counted in Python
  and added by one upsert (`INSERT ... ON CONFLICT DO UPDATE SET contacts = contacts + ...`,
  executed over the moved pairs, `add`; on PostgreSQL carried in the `WITH` of the statement
  that writes the memberships, `carried`).
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

from sqlalchemy import BigInteger, String, Table, bindparam, delete, func, or_, select
from sqlalchemy import cast as converted
from sqlalchemy.orm import Session

from ...db import dialects
from ...db.models import AudienceOverlap, Membership
from .judge import chunks

OVERLAPS = cast(Table, AudienceOverlap.__table__)
_KEYS = ("audience_a", "audience_b")
Pair = tuple[str, str]
Shift = Counter[Pair]
"""What a write adds to each pair's count."""


def pair(a: str, b: str) -> Pair:
    """The row of two audiences: the smaller id first."""
    return (a, b) if a <= b else (b, a)


def shift_of(
    before: Mapping[str, Iterable[str]],
    entered: Mapping[str, Sequence[str]],
    left: Mapping[str, Sequence[str]],
) -> Counter[Pair]:
    """What the pairs move by as contacts enter and leave audiences, counted in Python, for
    `add` (or `carried`): `before[c]` the audiences contact `c` was stored in before the write,
    `entered[c]` / `left[c]` those it entered and left."""
    shift: Counter[Pair] = Counter()
    for contact_id in entered.keys() | left.keys():
        into, out_of = entered.get(contact_id, ()), left.get(contact_id, ())
        stayed = set(before.get(contact_id, ())).difference(out_of)
        _count(shift, into, stayed, 1)
        _count(shift, out_of, stayed, -1)
    return shift


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
    """Adds these counts to their rows (created at the count when absent): one upsert, run
    over the rows that moved (`dialects.adding_upsert`), none when nothing moved."""
    rows = [
        {"audience_a": a, "audience_b": b, "list_id": list_id, "contacts": n}
        for (a, b), n in sorted(shift.items())
        if n
    ]
    if rows:
        upsert = dialects.adding_upsert(dialects.dialect_of(session), OVERLAPS, _KEYS, "contacts")
        session.connection().execute(upsert, rows)


def moved(shift: Mapping[Pair, int]) -> bool:
    """Whether any pair's count moves."""
    return any(shift.values())


@dialects.per_dialect
def carried(dialect: str) -> Any:
    """`add` as one `INSERT ... SELECT ... ON CONFLICT` over the pairs as one parameter per
    column (`dialects.unpacked_rows_named`), for a membership write to carry in its `WITH`
    (`store._pairs_written`, PostgreSQL): the pair counts and the rows they count in one round
    trip. Built once per dialect; its parameters are `carried_parameters`'. None where the
    database has no such upsert."""
    table = dialects.unpacked_rows_named(dialect, _CARRIED, _CARRIED_KEY)
    rows = select(
        table.c.audience_a,
        table.c.audience_b,
        bindparam(_CARRIED_LIST, type_=String),
        converted(table.c.contacts, BigInteger),
    )
    names = [*_KEYS, "list_id", "contacts"]
    return dialects.adding_upsert_from(dialect, OVERLAPS, _KEYS, "contacts", names, rows)


def carried_parameters(dialect: str, list_id: str, shift: Mapping[Pair, int]) -> dict[str, Any]:
    """The parameters of `carried(dialect)` adding `shift` to the list's pairs."""
    rows = [(a, b, str(n)) for (a, b), n in sorted(shift.items()) if n]
    parameters = dialects.rows_parameters(dialect, _CARRIED, rows, _CARRIED_KEY)
    parameters[_CARRIED_LIST] = list_id
    return parameters


_CARRIED = ("audience_a", "audience_b", "contacts")
_CARRIED_KEY = "kept"
_CARRIED_LIST = "kept_list"


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
