"""A list's events in commit order, after a cursor (`events.py`, the outbox).

A consumer keeps the `next` cursor of each answer and asks again after it: it gets every
committed event exactly once and in commit order. Events are the list's: the list must be the
caller's, and a cursor of another list is `Invalid`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...db.engine import Database
from ...db.queries import owned_list
from ...ground.errors import Invalid, RequestProblem
from .. import event_feed

BAD_CURSOR = "after: expected a cursor of this list from an earlier answer"


@dataclass(frozen=True)
class Events:
    """A batch of events as the feed shows them, the cursor to ask after it, and whether more
    were there already."""

    events: list[dict[str, Any]]
    next: str
    more: bool


def _position(after: str | None, list_id: str) -> int:
    if after is None:
        return 0
    found = event_feed.position_of(after, list_id)
    if found is None:
        raise Invalid(
            "Invalid request",
            errors=[RequestProblem(("after",), BAD_CURSOR, part="query")],
            cited=True,
        )
    return found


def read(
    database: Database, account_id: str, list_id: str, after: str | None, limit: int
) -> Events:
    """At most `limit` events of the list after the cursor `after` (None: from the start)."""
    with database.reading() as session:
        lst = owned_list(session, account_id, list_id)
        position = _position(after, lst.id)
        rows = event_feed.views_after(session, lst.id, position, limit + 1)
    batch = rows[:limit]
    last = batch[-1][0] if batch else position
    views = [view for _, view in batch]
    return Events(views, event_feed.cursor(lst.id, last), len(rows) > limit)
