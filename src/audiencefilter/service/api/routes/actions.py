"""Actions: point events of a contact. Creating one adds its increase, deleting takes it back.

Both are single SQL updates (`points = points + :n`) in the same transaction as the action row,
so concurrent requests never lose an update (`domain/use_cases/actions.py`). A delete subtracts
only if its own `DELETE` removed the row, so of two racing deletes of one action one takes the
points back and the other gets 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from ...db.models import Action
from ...domain.contact_pages import pagination
from ...domain.use_cases import actions
from ...http.idempotency import RetryDep
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.resources import ActionCreate, ActionQuery, ActionResponse, ActionsResponse
from ..schemas.views import action_view

router = APIRouter(prefix="/actions", tags=["actions"])


def _created(action: Action) -> Response:
    return data({"action": action_view(action)}, 201)


@router.post("", status_code=201, response_model=ActionResponse, summary="Create an action")
def create_action(body: ActionCreate, principal: PrivateKey, retry: RetryDep) -> Response:
    values = body.model_dump(exclude_unset=True)
    return actions.create(
        principal.account_id, values, retry.once(principal.account_id, body, _created)
    )


@router.get("", response_model=ActionsResponse, summary="List the actions of a contact")
def list_actions(
    query: Annotated[ActionQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = actions.page(database, principal.account_id, query.subId, query.page, query.limit)
    return data(
        {
            "actions": [action_view(action) for action in found.items],
            "pagination": pagination(found.total, query.page, query.limit),
        }
    )


@router.get("/{id}", response_model=ActionResponse, summary="Retrieve an action")
def get_action(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    return data({"action": action_view(actions.get(database, principal.account_id, id))})


@router.delete("/{id}", response_model=ActionResponse, summary="Delete an action")
def delete_action(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    return data({"action": action_view(actions.remove(database, principal.account_id, id))})
