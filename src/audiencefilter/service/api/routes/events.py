"""`GET /v4/events`: a list's events in commit order, after a cursor (`domain/events.py`).

A consumer keeps the `next` cursor of each answer and asks again with `after=` it: it gets
every committed event exactly once and in commit order, also after downtime (events stay in the
outbox), and never one of a change that rolled back. Events are the list's: the list must be
the caller's, like every other route, and a cursor of another list is a 400.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ...db.queries import owned_list
from ...domain import events
from ...http.errors import ApiError, ValidationIssue
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.events import EventQuery, EventsResponse

router = APIRouter(prefix="/events", tags=["events"])

BAD_CURSOR = "after: expected a cursor of this list from an earlier answer"


@router.get("", response_model=EventsResponse, summary="Read a list's events after a cursor")
def list_events(
    query: Annotated[EventQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    with database.reading() as session:
        lst = owned_list(session, principal.account_id, query.listId)
        position = 0
        if query.after is not None:
            found = events.position_of(query.after, lst.id)
            if found is None:
                raise ApiError(
                    400,
                    f"Invalid request: /query/after: {BAD_CURSOR}",
                    errors=[ValidationIssue(pointer="/query/after", detail=BAD_CURSOR)],
                )
            position = found
        rows = events.after(session, lst.id, position, query.limit + 1)
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    last = rows[-1].position if rows else position
    return data(
        {
            "events": [events.event_view(row) for row in rows],
            "next": events.cursor(lst.id, last),
            "hasMore": more,
        }
    )
