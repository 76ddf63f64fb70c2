"""Members of manual audiences: add contacts by id, remove one.

Only contacts of the audience's own list can join it. A contact of another list of the same
account is `Invalid`, naming it; an id that is unknown or belongs to another account is
`NotFound`, which, as everywhere, does not tell the two apart. Either refusal adds nothing: the
request is applied whole or not at all. Adding a member again is not an error (it is reported
as not added), and every change touches the audience's `updatedAt`.

Smart audiences have no stored members (their filter decides), so both refuse them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import Audience, AudienceMember, Contact, List, utcnow
from ...db.queries import count, plausible_id
from ...ground.errors import DomainError, Invalid, NotFound, RequestProblem
from .. import events, list_lock, write_effects
from ..membership.members import MANUAL
from .unit import Writes

R = TypeVar("R")
SMART_HAS_NO_MEMBERS = (
    "Members are added and removed on manual audiences only: a smart audience's filter decides"
)
OTHER_LIST = "Contacts must belong to the audience's list"
NOT_A_MEMBER = "This contact is not a member of this audience"


@dataclass(frozen=True)
class Added:
    """The ids that joined (in the order sent), and the audience's members now."""

    added: list[str]
    total: int


def _manual(session: Session, account_id: str, audience_id: str) -> Audience:
    audience, _ = list_lock.locked_audience(session, account_id, audience_id)
    if audience.mode != MANUAL:
        raise Invalid(SMART_HAS_NO_MEMBERS)
    return audience


def _lists_of(session: Session, account_id: str, contact_ids: list[str]) -> dict[str, str]:
    """`{contact id: list id}` for those of the ids that are the account's contacts."""
    plausible = [contact_id for contact_id in contact_ids if plausible_id(contact_id)]
    statement = (
        select(Contact.id, Contact.listId)
        .join(List, List.id == Contact.listId)
        .where(Contact.id.in_(plausible), List.accountId == account_id)
    )
    return {contact_id: list_id for contact_id, list_id in session.execute(statement)}


def _refuse(
    kind: type[DomainError], message: str, sent: Sequence[str], bad: set[str], detail: str
) -> DomainError:
    issues = [
        RequestProblem(("contactIds", index), f"{contact_id}: {detail}")
        for index, contact_id in enumerate(sent)
        if contact_id in bad
    ]
    return kind(message, errors=issues)


def _check(session: Session, account_id: str, audience: Audience, sent: Sequence[str]) -> None:
    """Refuse ids that are not the account's contacts, then those of another list."""
    wanted = list(dict.fromkeys(sent))
    lists = _lists_of(session, account_id, wanted)
    unknown = {contact_id for contact_id in wanted if contact_id not in lists}
    if unknown:
        raise _refuse(NotFound, "Contact not found", sent, unknown, "no such contact")
    elsewhere = {contact_id for contact_id in wanted if lists[contact_id] != audience.listId}
    if elsewhere:
        raise _refuse(Invalid, OTHER_LIST, sent, elsewhere, "in another list")


def _members_total(session: Session, audience_id: str) -> int:
    return count(session, AudienceMember, AudienceMember.audienceId == audience_id)


def _insert(session: Session, audience: Audience, wanted: list[str]) -> list[str]:
    """The ids of `wanted` not yet members, inserted."""
    present = set(
        session.scalars(
            select(AudienceMember.contactId).where(
                AudienceMember.audienceId == audience.id, AudienceMember.contactId.in_(wanted)
            )
        )
    )
    added = [contact_id for contact_id in wanted if contact_id not in present]
    if added:
        rows = [{"audienceId": audience.id, "contactId": contact_id} for contact_id in added]
        session.execute(insert(AudienceMember), rows)
        audience.updatedAt = utcnow()
        write_effects.members_changed(session, audience, events.CAUSE_MEMBERS_ADDED)
    return added


def add(account_id: str, audience_id: str, sent: Sequence[str], writes: Writes[Added, R]) -> R:
    """Adds the contacts `sent` (repeats allowed) to the manual audience."""

    def work(session: Session) -> Added:
        audience = _manual(session, account_id, audience_id)
        _check(session, account_id, audience, sent)
        added = _insert(session, audience, list(dict.fromkeys(sent)))
        return Added(added, _members_total(session, audience_id))

    return writes(work)


def remove(database: Database, account_id: str, audience_id: str, contact_id: str) -> int:
    """Removes one member of the manual audience; the members left."""
    with database.transaction() as session:
        audience = _manual(session, account_id, audience_id)
        removed = session.execute(
            delete(AudienceMember)
            .where(AudienceMember.audienceId == audience_id, AudienceMember.contactId == contact_id)
            .execution_options(synchronize_session=False)
        )
        if getattr(removed, "rowcount", 0) != 1:
            raise NotFound(NOT_A_MEMBER)
        audience.updatedAt = utcnow()
        write_effects.members_changed(session, audience, events.CAUSE_MEMBERS_REMOVED)
        return _members_total(session, audience_id)
