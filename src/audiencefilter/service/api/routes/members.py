"""Members of manual audiences: add contacts by id, remove one.

Only contacts of the audience's own list can join it. A contact of another list of the same
account is a 400 naming it; an id that is unknown or belongs to another account is a 404 that,
as everywhere, does not tell the two apart. Either refusal adds nothing: the request is applied
whole or not at all. Adding a member again is not an error (it is reported as not added), and
every change touches the audience's `updatedAt`.

Smart audiences have no stored members (their filter decides), so both operations refuse them
(`domain/use_cases/members.py`).
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from ...domain.use_cases import members
from ...http.idempotency import RetryDep
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.audiences import MembersAdd, MembersResponse

router = APIRouter(prefix="/audiences", tags=["audiences"])


@router.post(
    "/{id}/members",
    response_model=MembersResponse,
    summary="Add contacts to a manual audience",
)
def add_members(id: str, body: MembersAdd, principal: PrivateKey, retry: RetryDep) -> Response:
    def answer(done: members.Added) -> Response:
        return data({"audienceId": id, "added": done.added, "total": done.total})

    writes = retry.once(principal.account_id, body, answer)
    return members.add(principal.account_id, id, body.contactIds, writes)


@router.delete(
    "/{id}/members/{contactId}",
    response_model=MembersResponse,
    summary="Remove a contact from a manual audience",
)
def remove_member(
    id: str, contactId: str, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    total = members.remove(database, principal.account_id, id, contactId)
    return data({"audienceId": id, "removed": [contactId], "total": total})
