"""An audience's members: list them (now or at an instant, with their groups), and for
manual audiences add contacts by id or remove one.

The listing (`domain/use_cases/history.py`) pages in contact id order with a cursor, `after`;
`at` answers the replay of the audience's events up to an instant.

Only contacts of the audience's own list can join it. A contact of another list of the same
account is a 400 naming it; an id that is unknown or belongs to another account is a 404 that,
as everywhere, does not tell the two apart. Either refusal adds nothing: the request is applied
whole or not at all. Adding a member again is not an error (it is reported as not added), and
every change touches the audience's `updatedAt`.

Smart audiences have no stored members (their filter decides), so both operations refuse them
(`domain/use_cases/members.py`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from ...domain.membership.history import Wanted
from ...domain.use_cases import history, members
from ...http.idempotency import RetryDep
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.audiences import MembersAdd, MembersResponse
from ..schemas.experiments import MembersPage, MembersQuery

router = APIRouter(prefix="/audiences", tags=["audiences"])
LISTING_DESCRIPTION = (
    "The audience's members in contact id order, each with `enteredAt` (its latest entry) "
    "and its draw in the audience's experiment (`group`, `holdout`). Without `at`: the "
    "members now. With `at`: the members at that instant, exactly the replay of the feed's "
    "`audience.entered` / `audience.left` events of the audience dated up to it. Page with "
    "`after` (the previous page's `next`); `holdout=false` keeps those a sender may mail."
)


@router.get(
    "/{id}/members",
    response_model=MembersPage,
    summary="List an audience's members, now or at an instant",
    description=LISTING_DESCRIPTION,
)
def list_members(
    id: str, query: Annotated[MembersQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    wanted = Wanted(query.group, query.holdout)
    request = history.MembersRequest(query.at, query.after, query.limit, wanted)
    return data(history.members(database, principal.account_id, id, request).view())


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
