"""An audience's members now and at an instant of the past, page by page in contact id order.

**Now** is the stored membership (`memberships`): each row with when its member entered and
the group it drew. **At an instant T** is the replay of the audience's `audience.entered` /
`audience.left` events dated up to T, in the feed's order (positions): a contact is a member
when its last such event is an entry. The answer is computed, not replayed event by event: per
contact, the greatest position up to T (one grouped read on `ix_events_audience_time`), kept
when that event is an entry. Its `enteredAt` is that entry's instant and its group the one the
entry announced (`data.group`, `data.holdout`), so history shows the draw as it was sent.

Pages are keyed by the last contact id (`after`), so a page never repeats or skips a member
whatever was written between two pages of the same instant: the past does not change, and the
future is refused (`use_cases/history.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, and_, func, select
from sqlalchemy.orm import Session

from ...db.models import Event, Membership
from .. import events
from ..experiments import Draw

# Rows read per statement when a page keeps only some members (`group`, `holdout` at T).
BATCH = 1000


@dataclass(frozen=True)
class Member:
    """One member of a page: its contact, its latest entry and its draw."""

    contact_id: str
    entered_at: datetime
    draw: Draw

    def view(self) -> dict[str, Any]:
        return {"contactId": self.contact_id, "enteredAt": self.entered_at, **self.draw.view()}


@dataclass(frozen=True)
class Wanted:
    """Which members a page keeps: those of one group, and in or out of the holdout."""

    group: str | None = None
    holdout: bool | None = None

    def keeps(self, draw: Draw) -> bool:
        if self.group is not None and draw.group != self.group:
            return False
        return self.holdout is None or draw.holdout == self.holdout


def now(
    session: Session, audience_id: str, after: str | None, limit: int, wanted: Wanted
) -> list[Member]:
    """Up to `limit` stored members after contact id `after`, filtered in SQL."""
    statement = select(
        Membership.contactId, Membership.enteredAt, Membership.groupName, Membership.holdout
    ).where(Membership.audienceId == audience_id)
    if after is not None:
        statement = statement.where(Membership.contactId > after)
    if wanted.group is not None:
        statement = statement.where(Membership.groupName == wanted.group)
    if wanted.holdout is not None:
        statement = statement.where(Membership.holdout.is_(wanted.holdout))
    rows = session.execute(statement.order_by(Membership.contactId).limit(limit))
    return [Member(c, _aware(at), Draw(group, bool(held))) for c, at, group, held in rows]


def at(
    session: Session,
    list_id: str,
    audience_id: str,
    moment: datetime,
    after: str | None,
    limit: int,
    wanted: Wanted,
) -> list[Member]:
    """Up to `limit` members at `moment` after contact id `after` (the replay of the feed)."""
    found: list[Member] = []
    for member in _replayed(session, list_id, audience_id, moment, after):
        if wanted.keeps(member.draw):
            found.append(member)
            if len(found) == limit:
                break
    return found


def _replayed(
    session: Session, list_id: str, audience_id: str, moment: datetime, after: str | None
) -> Iterator[Member]:
    """Every member at `moment` after contact id `after`, in id order, read `BATCH` at a time."""
    while True:
        rows = session.execute(_entries(list_id, audience_id, moment, after).limit(BATCH)).all()
        for contact_id, occurred_at, payload in rows:
            yield Member(contact_id, _aware(occurred_at), _draw_of(payload))
        if len(rows) < BATCH:
            return
        after = rows[-1][0]


def _entries(list_id: str, audience_id: str, moment: datetime, after: str | None) -> Select[Any]:
    """Per contact after `after`, its last entry or exit up to `moment`, kept when an entry."""
    where = [
        Event.listId == list_id,
        Event.audienceId == audience_id,
        Event.type.in_((events.ENTERED, events.LEFT)),
        Event.occurredAt <= moment,
    ]
    if after is not None:
        where.append(Event.contactId > after)
    last = (
        select(Event.contactId.label("contact_id"), func.max(Event.position).label("position"))
        .where(*where)
        .group_by(Event.contactId)
        .subquery()
    )
    joined = and_(Event.listId == list_id, Event.position == last.c.position)
    return (
        select(Event.contactId, Event.occurredAt, Event.payload)
        .join(last, joined)
        .where(Event.type == events.ENTERED)
        .order_by(Event.contactId)
    )


def _draw_of(payload: dict[str, Any] | None) -> Draw:
    """The draw an entry announced; none for an audience without an experiment."""
    if not payload or "holdout" not in payload:
        return Draw(None, False)
    return Draw(payload.get("group"), bool(payload["holdout"]))


def kept_since(session: Session, list_id: str) -> datetime | None:
    """The instant the list's kept history starts from, when its first events were removed
    (retention); None when its feed is whole from its first event."""
    first = session.scalar(select(func.min(Event.position)).where(Event.listId == list_id))
    if first is None or first <= 1:
        return None
    statement = select(Event.occurredAt).where(Event.listId == list_id, Event.position == first)
    found = session.scalar(statement)
    return None if found is None else _aware(found)


def _aware(moment: datetime) -> datetime:
    """An instant read back in UTC (SQLite returns stored instants without their zone)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
