"""The event feed: a list's events read in commit order, after a cursor, and how they look.

The outbox (`events.py`) writes events in the writers' transactions; this module only reads
them, for the feed (`GET /v4/lists/{id}/events`) and the webhook deliveries, and never imports
the outbox. Positions follow commit order without gaps (`list_lock.py`, the list's counter), so
a reader that saw position n has seen every position below it.

The cursor is opaque to clients: the list id and the position, base64url, so a cursor of one
list is refused for another.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from typing import cast as typed

import orjson
from sqlalchemy import Integer, Table, Text, bindparam, cast, select
from sqlalchemy.orm import Session

from ..db.models import Event
from ..ground.digits import ascii_number

_CURSOR_PREFIX = "ev1."
EVENTS = typed(Table, Event.__table__)


def after(
    session: Session, list_id: str, position: int, limit: int, types: Sequence[str] = ()
) -> list[Event]:
    """The list's events after `position`, in commit order, at most `limit`."""
    statement = select(Event).where(Event.listId == list_id, Event.position > position)
    if types:
        statement = statement.where(Event.type.in_(types))
    return list(session.scalars(statement.order_by(Event.position).limit(limit)))


def views_after(
    session: Session, list_id: str, position: int, limit: int
) -> list[tuple[int, dict[str, Any]]]:
    """The list's events after `position`, in commit order, at most `limit`, each with its
    position and as the feed shows it (`event_view`), read by one Core statement: the
    payload is the stored JSON text, passed on as it is (an `orjson.Fragment`). An ORM object
    and a parse of its payload an event cost the feed's reader, about 13 events an updated
    contact in a busy list, as much CPU as the write of the contact."""
    rows = session.connection().execute(
        _VIEWS, {"views_list": list_id, "views_after": position, "views_limit": limit}
    )
    return [(row[1], _view(list_id, row)) for row in rows]


def _view(list_id: str, row: Any) -> dict[str, Any]:
    """One row of `_VIEWS` as the feed shows it."""
    event_id, at, kind, contact_id, audience_id, cause, occurred_at, payload = row
    shown = (event_id, list_id, at, kind, contact_id, audience_id, cause, occurred_at)
    return _shown(*shown, orjson.Fragment(payload))


_VIEWS = (
    select(
        EVENTS.c.id,
        EVENTS.c.position,
        EVENTS.c.type,
        EVENTS.c.contact_id,
        EVENTS.c.audience_id,
        EVENTS.c.cause,
        EVENTS.c.occurred_at,
        cast(EVENTS.c.payload, Text),
    )
    .where(
        EVENTS.c.list_id == bindparam("views_list"),
        EVENTS.c.position > bindparam("views_after", type_=EVENTS.c.position.type),
    )
    .order_by(EVENTS.c.position)
    .limit(bindparam("views_limit", type_=Integer))
)


def cursor(list_id: str, position: int) -> str:
    raw = f"{list_id}:{position}".encode()
    encoded = binascii.b2a_base64(raw, newline=False).translate(_URL_SAFE)
    return _CURSOR_PREFIX + encoded.decode().rstrip("=")


_URL_SAFE = bytes.maketrans(b"+/", b"-_")


def position_of(value: str, list_id: str) -> int | None:
    """The position a cursor stands for, or None when it is not a cursor of this list."""
    if not value.startswith(_CURSOR_PREFIX):
        return None
    text = value[len(_CURSOR_PREFIX) :]
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    owner, _, number = raw.rpartition(":")
    return ascii_number(number) if owner == list_id else None


def event_view(event: Event) -> dict[str, Any]:
    """An event as the feed (and webhook deliveries) show it."""
    shown = (event.id, event.listId, event.position, event.type, event.contactId)
    return _shown(*shown, event.audienceId, event.cause, event.occurredAt, event.payload)


def _shown(
    event_id: str,
    list_id: str,
    position: int,
    kind: str,
    contact_id: str | None,
    audience_id: str | None,
    cause: str | None,
    occurred_at: datetime,
    data: Any,
) -> dict[str, Any]:
    """The one shape of an event in the feed and in webhook deliveries."""
    return {
        "id": event_id,
        "cursor": cursor(list_id, position),
        "type": kind,
        "listId": list_id,
        "contactId": contact_id,
        "audienceId": audience_id,
        "cause": cause,
        "occurredAt": occurred_at,
        "data": data,
    }
