"""Actions: point events of a contact. Creating one adds its increase, deleting takes it back.

Both are single SQL updates (`points = points + :n`) in the same transaction as the action row,
so concurrent requests never lose an update. A delete subtracts only if its own `DELETE` removed
the row, so of two racing deletes of one action one takes the points back and the other gets 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from sqlalchemy import Update, delete, select, update
from sqlalchemy.orm import Session

from ...db.models import Action, Contact
from ...db.queries import count, owned_action, owned_contact, page_of
from ...domain import changes, events
from ...ground.errors import not_found
from ...ground.fields import MAX_SAFE_INTEGER
from ...http.errors import ApiError, ValidationIssue
from ...http.idempotency import RetryDep, once
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.resources import ActionCreate, ActionQuery, ActionResponse, ActionsResponse
from ..schemas.views import action_view, pagination

router = APIRouter(prefix="/actions", tags=["actions"])


POINTS_OUT_OF_RANGE = (
    "This action would take the contact's points beyond ±(2^53-1), the range every client reads "
    "exactly; the contact's points are unchanged"
)


def _add_points(contact_id: str, amount: int) -> Update:
    """Add `amount` unless the sum would leave ±(2^53-1): the guard is in the statement itself,
    so two concurrent actions cannot cross the bound between a check and the write."""
    total = Contact.points + amount
    return (
        update(Contact)
        .where(Contact.id == contact_id, total <= MAX_SAFE_INTEGER, total >= -MAX_SAFE_INTEGER)
        .values(points=total)
        .execution_options(synchronize_session=False)
    )


def _change_points(session: Session, contact_id: str, amount: int) -> None:
    changed = session.execute(_add_points(contact_id, amount))
    if getattr(changed, "rowcount", 0) != 1:
        raise ApiError(
            422,
            POINTS_OUT_OF_RANGE,
            errors=[ValidationIssue(pointer="/body/increase", detail="would overflow points")],
        )


@router.post("", status_code=201, response_model=ActionResponse, summary="Create an action")
def create_action(
    body: ActionCreate, principal: PrivateKey, database: DatabaseDep, retry: RetryDep
) -> Response:
    def create(session: Session) -> Response:
        _, lst = changes.locked_contact(session, principal.account_id, body.subId)
        action = Action(**body.model_dump(exclude_unset=True))  # createdAt: now unless sent
        session.add(action)
        _change_points(session, body.subId, body.increase)
        session.flush()
        changes.contacts_changed(session, lst.id, [body.subId], events.CAUSE_ACTION_CREATED)
        return data({"action": action_view(action)}, 201)

    return once(database, retry.claim(principal.account_id, body), create)


@router.get("", response_model=ActionsResponse, summary="List the actions of a contact")
def list_actions(
    query: Annotated[ActionQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    with database.reading() as session:
        owned_contact(session, principal.account_id, query.subId)
        statement = (
            select(Action)
            .where(Action.subId == query.subId)
            .order_by(Action.createdAt.desc(), Action.id.desc())
        )
        actions = session.scalars(page_of(statement, query.page, query.limit)).all()
        total = count(session, Action, Action.subId == query.subId)
    return data(
        {
            "actions": [action_view(action) for action in actions],
            "pagination": pagination(total, query.page, query.limit),
        }
    )


@router.get("/{id}", response_model=ActionResponse, summary="Retrieve an action")
def get_action(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    with database.reading() as session:
        action = owned_action(session, principal.account_id, id)
    return data({"action": action_view(action)})


@router.delete("/{id}", response_model=ActionResponse, summary="Delete an action")
def delete_action(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    with database.transaction() as session:
        action = owned_action(session, principal.account_id, id)
        list_id = session.scalar(select(Contact.listId).where(Contact.id == action.subId))
        if list_id is not None:
            events.lock_list(session, list_id)
        removed = session.execute(
            delete(Action).where(Action.id == id).execution_options(synchronize_session=False)
        )
        if getattr(removed, "rowcount", 0) != 1:
            raise not_found("Action")  # a concurrent delete got there first
        _change_points(session, action.subId, -action.increase)
        if list_id is not None:
            changes.contacts_changed(session, list_id, [action.subId], events.CAUSE_ACTION_DELETED)
    return data({"action": action_view(action)})
