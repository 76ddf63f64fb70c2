"""The overlap of a list's audiences: how many contacts each pair shares, from stored membership.

The counts are kept on write (`membership/overlaps.py`): every write of `memberships` adds
what it moved to the pairs' rows in its own transaction, so the matrix of 50 audiences is at
most 1,275 rows read by their key, whatever the list's size (docs/service-audiences.md).

`shared_counts` is the plain count beside it, from `memberships` alone: each contact of the
audiences asked for gets a bit mask of the audiences it is in (bit i for the i-th audience: the
sum of its rows' bits, each row an audience once), and the contacts are counted per mask; a
pair's count is the sum over the masks holding both bits. It reads every membership row of the
audiences asked (4.6 s for 10 audiences of a million contacts on SQLite); `overlap(kept=False)`
answers from it, and the tests hold the kept counts to it. The counts are the stored
membership's, which every write keeps exact and the scheduler brings up to the clock; an
audience being built has only part of its members stored, and is named as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import BigInteger, case, func, literal, select
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import Audience, Membership
from ...db.queries import owned_list
from ...ground.errors import Invalid, RequestProblem
from ..membership import build
from ..membership.overlaps import kept_counts

MAX_AUDIENCES = 50


@dataclass(frozen=True)
class Overlap:
    """The audiences in the order asked, and `matrix[i][j]`: the contacts in both i and j."""

    list_id: str
    audiences: list[str]
    matrix: list[list[int]]
    building: list[str]


def overlap(
    database: Database, account_id: str, list_id: str, audiences: str, kept: bool = True
) -> Overlap:
    """The shared counts of these audiences (comma-separated ids) of the caller's list: the
    kept counts, or counted from `memberships` when `kept` is False (`shared_counts`)."""
    with database.reading() as session:
        lst = owned_list(session, account_id, list_id)  # another's list: 404 before all else
        ids = audience_ids(audiences)
        _check_of_list(session, lst.id, ids)
        matrix = kept_counts(session, lst.id, ids) if kept else shared_counts(session, ids)
        building = build.progress(session, ids)
    return Overlap(lst.id, ids, matrix, [id_ for id_ in ids if id_ in building])


def audience_ids(audiences: str) -> list[str]:
    """The ids of the query parameter, each once, in their order; refused when none or too
    many are given."""
    ids = list(dict.fromkeys(part.strip() for part in audiences.split(",") if part.strip()))
    if not ids:
        raise _invalid("`audiences` names no audience", "one audience id or more")
    if len(ids) > MAX_AUDIENCES:
        found = f"{len(ids)} audiences"
        raise _invalid(f"`audiences` names more than {MAX_AUDIENCES} audiences", found=found)
    return ids


def _check_of_list(session: Session, list_id: str, ids: Sequence[str]) -> None:
    statement = select(Audience.id).where(Audience.id.in_(ids), Audience.listId == list_id)
    found = set(session.scalars(statement))
    strangers = [id_ for id_ in ids if id_ not in found]
    if strangers:
        named = ", ".join(strangers[:5])
        raise _invalid(f"Not audiences of this list: {named}", found=named)


def _invalid(detail: str, expected: str | None = None, found: str | None = None) -> Invalid:
    issue = RequestProblem(
        ("audiences",),
        detail,
        expected=expected or f"up to {MAX_AUDIENCES} ids of audiences of the list, by commas",
        found=found,
        part="query",
    )
    return Invalid(f"Invalid request: {detail}", errors=[issue])


def shared_counts(session: Session, ids: Sequence[str]) -> list[list[int]]:
    """`matrix[i][j]`: the contacts in both the i-th and the j-th audience of `ids` (at most
    `MAX_AUDIENCES`, so a mask fits in 64 bits)."""
    bits = case(
        {id_: literal(1 << i, BigInteger) for i, id_ in enumerate(ids)},
        value=Membership.audienceId,
    )
    masks = (
        select(func.sum(bits).label("mask"))
        .where(Membership.audienceId.in_(ids))
        .group_by(Membership.contactId)
        .subquery("masks")
    )
    statement = select(masks.c.mask, func.count()).group_by(masks.c.mask)
    return _tally(len(ids), [(int(mask), int(n)) for mask, n in session.execute(statement)])


def _tally(size: int, masks: Sequence[tuple[int, int]]) -> list[list[int]]:
    """The pair counts of contacts counted by mask, the matrix made symmetric."""
    matrix = [[0] * size for _ in range(size)]
    for mask, contacts in masks:
        held = [i for i in range(size) if mask >> i & 1]
        for at, i in enumerate(held):
            for j in held[at:]:
                matrix[i][j] += contacts
    for i in range(size):
        for j in range(i):
            matrix[i][j] = matrix[j][i]
    return matrix
