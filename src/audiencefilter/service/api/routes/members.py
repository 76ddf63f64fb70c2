"""Members of manual audiences: add contacts by id, remove one.

Only contacts of the audience's own list can join it. A contact of another list of the same
account is a 400 naming it; an id that is unknown or belongs to another account is a 404 that,
as everywhere, does not tell the two apart. Either refusal adds nothing: the request is applied
whole or not at all. Adding a member again is not an error (it is reported as not added), and
every change touches the audience's `updatedAt`.

Smart audiences have no stored members (their filter decides), so both operations refuse them.
"""

from __future__ import annotations

from fastapi import APIRouter, Response
from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from ...db.models import Audience, AudienceMember, Contact, List, utcnow
from ...db.queries import count, plausible_id
from ...domain import changes, events
from ...domain.membership.members import MANUAL
from ...http.errors import ApiError, ValidationIssue
from ...http.idempotency import RetryDep, once
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.audiences import MembersAdd, MembersResponse

router = APIRouter(prefix="/audiences", tags=["audiences"])

SMART_HAS_NO_MEMBERS = (
    "Members are added and removed on manual audiences only: a smart audience's filter decides"
)
OTHER_LIST = "Contacts must belong to the audience's list"
NOT_A_MEMBER = "This contact is not a member of this audience"


def _manual(session: Session, account_id: str, audience_id: str) -> Audience:
    audience, _ = changes.locked_audience(session, account_id, audience_id)
    if audience.mode != MANUAL:
        raise ApiError(400, SMART_HAS_NO_MEMBERS)
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
    status: int, message: str, contact_ids: list[str], bad: set[str], detail: str
) -> ApiError:
    issues = [
        ValidationIssue(pointer=f"/body/contactIds/{index}", detail=f"{contact_id}: {detail}")
        for index, contact_id in enumerate(contact_ids)
        if contact_id in bad
    ]
    return ApiError(status, message, errors=issues)


def _members_total(session: Session, audience_id: str) -> int:
    return count(session, AudienceMember, AudienceMember.audienceId == audience_id)


@router.post(
    "/{id}/members",
    response_model=MembersResponse,
    summary="Add contacts to a manual audience",
)
def add_members(
    id: str, body: MembersAdd, principal: PrivateKey, database: DatabaseDep, retry: RetryDep
) -> Response:
    wanted = list(dict.fromkeys(body.contactIds))

    def add(session: Session) -> Response:
        audience = _manual(session, principal.account_id, id)
        lists = _lists_of(session, principal.account_id, wanted)
        unknown = {contact_id for contact_id in wanted if contact_id not in lists}
        if unknown:
            raise _refuse(404, "Contact not found", body.contactIds, unknown, "no such contact")
        elsewhere = {contact_id for contact_id in wanted if lists[contact_id] != audience.listId}
        if elsewhere:
            raise _refuse(400, OTHER_LIST, body.contactIds, elsewhere, "in another list")
        present = set(
            session.scalars(
                select(AudienceMember.contactId).where(
                    AudienceMember.audienceId == id, AudienceMember.contactId.in_(wanted)
                )
            )
        )
        added = [contact_id for contact_id in wanted if contact_id not in present]
        if added:
            session.execute(
                insert(AudienceMember),
                [{"audienceId": id, "contactId": contact_id} for contact_id in added],
            )
            audience.updatedAt = utcnow()
            changes.members_changed(session, audience, events.CAUSE_MEMBERS_ADDED)
        total = _members_total(session, id)
        return data({"audienceId": id, "added": added, "total": total})

    return once(database, retry.claim(principal.account_id, body), add)


@router.delete(
    "/{id}/members/{contactId}",
    response_model=MembersResponse,
    summary="Remove a contact from a manual audience",
)
def remove_member(
    id: str, contactId: str, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    with database.transaction() as session:
        audience = _manual(session, principal.account_id, id)
        removed = session.execute(
            delete(AudienceMember)
            .where(AudienceMember.audienceId == id, AudienceMember.contactId == contactId)
            .execution_options(synchronize_session=False)
        )
        if getattr(removed, "rowcount", 0) != 1:
            raise ApiError(404, NOT_A_MEMBER)
        audience.updatedAt = utcnow()
        changes.members_changed(session, audience, events.CAUSE_MEMBERS_REMOVED)
        total = _members_total(session, id)
    return data({"audienceId": id, "removed": [contactId], "total": total})
