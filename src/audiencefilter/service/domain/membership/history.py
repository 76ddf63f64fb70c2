"""An audience's members now and at an instant of the past, page by page in contact id order.

**Now** is the stored membership (`memberships`): each row with when its member entered and
the group it drew. **At an instant T** is the replay of the audience's `audience.entered` /
`audience.left` events dated up to T, in the feed's order (positions): a contact is a member
when its last such event is an entry. The answer is computed, not replayed event by event: the
entries up to T that no later entry or exit up to T follows. Its `enteredAt` is that entry's
instant, which is the instant its membership row recorded (`events.py`, *One instant per
membership change*), and its group the one the entry announced (`data.group`,
`data.holdout`), so history shows the draw as it was sent.

**A page is a bounded read.** Both the group and the holdout are filtered in SQL, on the
entry's payload, and the statement is limited to the page: the database walks the audience's
events in contact id order (`ix_events_audience_contact`) and stops at the page's last member,
so a page of one member of a group reads a few rows whatever the audience's size. Before, the
members were replayed in Python a thousand at a time and filtered there: a page of one member
of a 15,000-member audience took a second, and slowed every other writer of the database.

Pages are keyed by the last contact id (`after`), so a page never repeats or skips a member
whatever was written between two pages of the same instant: the past does not change, and the
future is refused (`use_cases/history.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, ScalarSelect, Select, func, or_, select
from sqlalchemy.orm import Session, aliased

from ...db.models import Event, Membership
from .. import events
from ..experiments import Draw


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
    audience_id: str,
    moment: datetime,
    after: str | None,
    limit: int,
    wanted: Wanted,
) -> list[Member]:
    """Up to `limit` members at `moment` after contact id `after` (the replay of the feed),
    of the wanted group: one statement, filtered and limited in SQL."""
    statement = _entries(audience_id, moment, after).where(*_kept(wanted)).limit(limit)
    rows = session.execute(statement)
    return [Member(c, _aware(at), _draw_of(payload)) for c, at, payload in rows]


def _entries(audience_id: str, moment: datetime, after: str | None) -> Select[Any]:
    """Per contact after `after`, its entry up to `moment` when it is the contact's last entry
    or exit up to `moment` (the greatest position), in contact id order. Walked along
    `ix_events_audience_contact`, so a page stops at its last member: the last event of each
    contact met is one range of the same index (a correlated scalar subquery, which the
    planner keeps per row, rather than a join it might run over the whole audience). An
    audience's id names its list too: no condition on the list, which the planner could
    prefer to intersect with the list's whole feed."""
    where = [Event.audienceId == audience_id, Event.type == events.ENTERED]
    if after is not None:
        where.append(Event.contactId > after)
    where += [Event.occurredAt <= moment, Event.position == _last(audience_id, moment)]
    return (
        select(Event.contactId, Event.occurredAt, Event.payload)
        .where(*where)
        .order_by(Event.contactId)
    )


def _last(audience_id: str, moment: datetime) -> ScalarSelect[Any]:
    """The position of the row's contact's last entry or exit up to `moment`."""
    later = aliased(Event)
    return (
        select(func.max(later.position))
        .where(
            later.audienceId == audience_id,
            later.contactId == Event.contactId,
            later.type.in_((events.ENTERED, events.LEFT)),
            later.occurredAt <= moment,
        )
        .scalar_subquery()
    )


def _kept(wanted: Wanted) -> list[ColumnElement[bool]]:
    """The draw an entry announced (`data.group`, `data.holdout`), filtered in SQL: an entry
    without a draw (no experiment) is in no group and out of the holdout."""
    kept: list[ColumnElement[bool]] = []
    if wanted.group is not None:
        kept.append(Event.payload["group"].as_string() == wanted.group)
    if wanted.holdout is not None:
        held = Event.payload["holdout"].as_boolean()
        kept.append(held.is_(True) if wanted.holdout else or_(held.is_(None), held.is_(False)))
    return kept


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
