"""The overlap of a list's audiences: how many contacts each pair shares, from stored membership.

One grouped query answers the whole matrix: the `memberships` rows of the audiences asked for,
joined with themselves on the contact (the primary key leads with the audience, and
`ix_memberships_contact` finds a contact's other audiences), counted per pair with the first id
not after the second, so each pair is counted once and the diagonal holds the sizes. The counts
are the stored membership's, which every write keeps exact and the scheduler brings up to the
clock; an audience being built has only part of its members stored, and is named as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session, aliased

from ...db.engine import Database
from ...db.models import Audience, Membership
from ...db.queries import owned_list
from ...ground.errors import Invalid, ValidationIssue
from ..membership import build as membership_build

MAX_AUDIENCES = 50
POINTER = "/query/audiences"


@dataclass(frozen=True)
class Overlap:
    """The audiences in the order asked, and `matrix[i][j]`: the contacts in both i and j."""

    list_id: str
    audiences: list[str]
    matrix: list[list[int]]
    building: list[str]


def overlap(database: Database, account_id: str, list_id: str, audiences: str) -> Overlap:
    """The shared counts of these audiences (comma-separated ids) of the caller's list."""
    ids = audience_ids(audiences)
    with database.reading() as session:
        lst = owned_list(session, account_id, list_id)
        _check_of_list(session, lst.id, ids)
        shared = shared_counts(session, ids)
        building = membership_build.progress(session, ids)
    matrix = [[shared.get((min(a, b), max(a, b)), 0) for b in ids] for a in ids]
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
    issue = ValidationIssue(
        pointer=POINTER,
        detail=detail,
        expected=expected or f"up to {MAX_AUDIENCES} ids of audiences of the list, by commas",
        found=found,
    )
    return Invalid(f"Invalid request: {detail}", errors=[issue])


def shared_counts(session: Session, ids: Sequence[str]) -> dict[tuple[str, str], int]:
    """`{(a, b): contacts in both}` for a <= b among `ids`, pairs sharing none left out."""
    first, second = aliased(Membership), aliased(Membership)
    statement = (
        select(first.audienceId, second.audienceId, func.count())
        .join(second, second.contactId == first.contactId)
        .where(
            first.audienceId.in_(ids),
            second.audienceId.in_(ids),
            first.audienceId <= second.audienceId,
        )
        .group_by(first.audienceId, second.audienceId)
    )
    return {(a, b): int(n) for a, b, n in session.execute(statement)}
