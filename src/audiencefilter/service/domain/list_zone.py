"""A list's time zone: the IANA zone its calendar rules are read in when they name none.

Decisions (docs/service-fields.md, *A list's time zone*):

- A zone is an IANA name this Python's `zoneinfo` database knows, spelled exactly
  (`Europe/Paris`, not `europe/paris`): the names the library checks a rule's own zone against,
  and the builder's zone picker offers. A new list is in UTC, the zone rules were always read
  in, so nothing changes for a list that never sets one.
- The zone is stored with each of the list's filters (`audience_filters.ZONE_KEY`), so a
  stored filter reads back as it was read when stored. Changing the list's zone rewrites that
  of every audience with a filter, and each smart one is judged again as after a change of its
  filter: members enter and leave now, under the list's lock, or in a background build on a
  large list; the `audience.updated` events and the membership events carry the cause
  `list.time_zone_changed`. A rule naming its own zone (`in "Asia/Tokyo"`) keeps it.
"""

from __future__ import annotations

from difflib import get_close_matches
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select
from sqlalchemy.orm import Session

from ... import zone_names
from ..db.models import Audience, Contact, List
from ..db.queries import count
from . import events, write_effects
from .audience_filters import SMART, in_zone

ZONE_RULE = 'an IANA time zone name such as "Europe/Paris" or "America/New_York"'


def accepted() -> list[str]:
    """Every name `check` takes, sorted: the OpenAPI document lists them, so a client (and a
    schema-driven test) knows the valid values without trying."""
    found = []
    for name in sorted(zone_names()):
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
        found.append(name)
    return found


def check(name: str) -> str:
    """`name` if it is an IANA zone known here, spelled exactly; else a ValueError saying what
    is expected and naming the closest names (a request body's validation turns it into a 400
    naming `timeZone`)."""
    if name in zone_names():
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
        else:
            return name
    raise ValueError(f"{ZONE_RULE}, spelled exactly{_suggestion(name)}")


def _suggestion(name: str) -> str:
    """The names closest to `name` (its exact spelling first), as `; did you mean ...?`."""
    by_lower = {zone.lower(): zone for zone in zone_names()}
    if name.lower() in by_lower:
        return f'; did you mean "{by_lower[name.lower()]}"?'
    close = get_close_matches(name.lower(), list(by_lower), 3, 0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(f'"{by_lower[z]}"' for z in close) + "?"


def change(session: Session, lst: List, zone: str, background_above: int) -> None:
    """Sets the list's zone, under its lock (taken by the caller), and judges its smart
    audiences again in it; nothing when the zone is the same. A list holding more contacts
    than `background_above` (0: never) has them built in the background."""
    if zone == lst.timeZone:
        return
    lst.timeZone = zone
    statement = select(Audience).where(Audience.listId == lst.id, Audience.filters.is_not(None))
    audiences = list(session.scalars(statement.order_by(Audience.createdAt, Audience.id)))
    for audience in audiences:
        audience.fields = in_zone(audience.fields, zone)
    session.flush()
    background = bool(background_above) and _size(session, lst.id) > background_above
    for audience in audiences:
        if audience.mode == SMART:
            write_effects.audience_updated(
                session,
                audience,
                membership=True,
                background=background,
                cause=events.CAUSE_LIST_TIME_ZONE,
            )


def _size(session: Session, list_id: str) -> int:
    return count(session, Contact, Contact.listId == list_id)
