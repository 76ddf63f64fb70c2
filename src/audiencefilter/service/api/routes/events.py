"""`GET /v4/events`: a list's events in commit order, after a cursor (`domain/event_feed.py`).

A consumer keeps the `next` cursor of each answer and asks again with `after=` it: it gets
every committed event exactly once and in commit order, also after downtime (events stay in the
outbox), and never one of a change that rolled back. Events are the list's: the list must be
the caller's, like every other route, and a cursor of another list is a 400
(`domain/use_cases/events.py`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ...domain.use_cases import events
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.events import EventQuery, EventsResponse

router = APIRouter(prefix="/events", tags=["events"])


@router.get("", response_model=EventsResponse, summary="Read a list's events after a cursor")
def list_events(
    query: Annotated[EventQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = events.read(database, principal.account_id, query.listId, query.after, query.limit)
    return data(
        {
            "events": found.events,
            "next": found.next,
            "hasMore": found.more,
        }
    )
