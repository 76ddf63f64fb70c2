"""`GET /v4/lists/{listId}/action-names`: the names the list's actions carry, for builders.

The builder's behaviour row offers these as a pick-list, so a name is picked rather than typed
(and misspelt); a name not seen yet may still be typed, for an audience of actions to come.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Query

from ...domain.use_cases import action_names
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.action_names import ActionNamesResponse

router = APIRouter(prefix="/lists", tags=["lists"])


@router.get(
    "/{listId}/action-names",
    response_model=ActionNamesResponse,
    summary="The action names a list has seen",
    description="Each distinct `name` of the actions of the list's contacts, with how many "
    "actions carry it, most frequent first (then by name), at most `limit` "
    f"(at most {action_names.MOST_NAMES}): what an audience builder offers for a behaviour's "
    "action name.",
)
def list_action_names(
    listId: str,
    principal: PrivateKey,
    database: DatabaseDep,
    limit: Annotated[int, Query(ge=1, le=action_names.MOST_NAMES)] = action_names.MOST_NAMES,
) -> JSONResponse:
    names = action_names.seen(database, principal.account_id, listId, limit)
    return data({"names": [asdict(name) for name in names]})
