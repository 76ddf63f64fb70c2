"""Request and response schemas of the event feed (`GET /v4/events`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from ...ground.fields import QueryText
from .resources import envelope

FEED_LIMIT = 100
MAX_FEED_LIMIT = 1000


class EventQuery(BaseModel):
    listId: QueryText
    after: QueryText | None = Field(
        default=None,
        description="A cursor from an earlier answer (an event's `cursor`, or `next`): only "
        "the events committed after it. Absent: from the list's first event.",
    )
    limit: int = Field(
        default=FEED_LIMIT,
        ge=1,
        le=MAX_FEED_LIMIT,
        description=f"At most this many events (1 to {MAX_FEED_LIMIT}; default {FEED_LIMIT}).",
    )


class EventOut(BaseModel):
    id: str = Field(description="The event's id (`evt_...`), unique: the key to deduplicate on.")
    cursor: str = Field(description="Opaque: `after=` this cursor reads the events after it.")
    type: str = Field(
        description="`audience.entered`, `audience.left`, `contact.created`, `contact.updated`, "
        "`contact.deleted`, `contact.erased`, `audience.created`, `audience.updated` or "
        "`audience.deleted`."
    )
    listId: str
    contactId: str | None = Field(description="The contact concerned, if any.")
    audienceId: str | None = Field(description="The audience concerned, if any.")
    cause: str | None = Field(
        description="Why a contact entered or left: `contact.created`, `contact.updated`, "
        "`contact.deleted`, `contact.imported`, `action.created`, `action.deleted`, "
        "`audience.created`, `audience.updated`, `audience.deleted`, `members.added`, "
        "`members.removed`, `clock` or `list.time_zone_changed` (the list's time zone "
        "changed; its smart audiences' `audience.updated` events carry it too). A bulk "
        "import's `contact.created` and `contact.updated` carry `contact.imported` too."
    )
    occurredAt: datetime
    data: dict[str, Any] = Field(description="Details of the event, by type.")


class EventsData(BaseModel):
    events: list[EventOut]
    next: str = Field(
        description="The cursor to continue from: the last event's, or `after` when there was none."
    )
    hasMore: bool = Field(description="Whether more events follow (ask again with `next`).")


EventsResponse = envelope("EventsResponse", EventsData)
