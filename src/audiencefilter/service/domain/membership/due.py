"""The instants at which time alone moves membership, kept beside the memberships.

"Signed up in the last 30 days" loses a contact the microsecond its sign-up turns 30 days
old, and no write happens then. Sweeping every such audience every minute costs contacts x
audiences per minute and is late by up to the minute; instead two tables say when to look:

- `membership_due`: per time-dependent audience and contact, the next instant at which that
  contact's answer changes (`FilterClock.next_change`), for filters whose instants move with the
  clock (`ago`). Written by every judgement of the contact (`contacts_judged`, called by
  `store.refresh_contacts` in the write's transaction), so it follows each write.
- `audience_due`: per time-dependent audience, when to bring it up to the clock as a whole:
  its filter's next calendar boundary (`FilterClock.next_step`: the start of a day, a week, a
  month, in its zone), where every contact may change at once and one set statement is
  cheaper than a row per contact; or now, when its contacts' instants are still to be worked
  out (the audience was created or changed, `audience_changed`).

The scheduler (`use_cases/membership_clock.py`) wakes at the earliest of them and touches only
those rows.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, select
from sqlalchemy.orm import Session

from .... import Filter, as_utc
from ...db.bulk import insert_rows
from ...db.models import Audience, AudienceDue, MembershipDue
from .. import relations
from ..audience_filters import StoredAudience
from . import records

CHUNK = 500
DUE = cast(Table, MembershipDue.__table__)
AUDIENCE_DUE = cast(Table, AudienceDue.__table__)
WAKE = threading.Event()
"""Set when an instant was written before the scheduler's next look (`wake_for`): the
scheduler of this process looks again at once."""
RESUME_AFTER = timedelta(minutes=1)
"""When an audience left unfinished by its writer becomes due: long after that writer's own
turns would have ended, so the scheduler finishes a crashed writer's work rather than doing a
live one's a second time."""
_NEXT_LOOKS: dict[int, datetime | None] = {}  # per scheduler of this process


def plan_look(scheduler: object, at: datetime | None) -> None:
    """This scheduler of the process will look at `at` anyway (None: it is looking, or its
    next look is not known yet; `forget_look` when it stops): instants from then on need not
    wake it."""
    _NEXT_LOOKS[id(scheduler)] = at


def forget_look(scheduler: object) -> None:
    _NEXT_LOOKS.pop(id(scheduler), None)


def wake_for(instant: datetime) -> None:
    """Wakes the schedulers for an instant just written, unless each looks by then anyway: a
    write of a contact in a time audience writes its next instants every time, and waking a
    scheduler for each (two queries and a scan of what is due) would double the CPU a write
    costs for nothing. One event wakes them all, so the latest planned look decides."""
    planned = list(_NEXT_LOOKS.values())
    if not planned or None in planned or instant < max(p for p in planned if p is not None):
        WAKE.set()


def moving(audiences: Sequence[StoredAudience]) -> list[StoredAudience]:
    """The audiences whose filters hold an instant moving with the clock: those with rows of
    their own per contact."""
    return [a for a in audiences if a.flt is not None and a.flt.clock.moves_with_clock]


def contacts_judged(
    session: Session,
    audiences: Sequence[StoredAudience],
    contact_ids: Sequence[str],
    at: datetime,
    judged: Sequence[dict[str, Any]] | None = None,
) -> None:
    """After these contacts were judged at `at` against these audiences: their next instants.
    `judged`: the contacts as the judgement read them, when it judged in memory every
    audience here that is not decided in SQL (they hold what those filters read)."""
    timed = moving(audiences)
    if not timed or not contact_ids:
        return
    rows = next_instants(session, timed, contact_ids, at, judged)
    _forget(session, [a.id for a in timed], contact_ids)
    insert_rows(session, DUE, rows)
    if rows:
        wake_for(min(row["due_at"] for row in rows))


def next_instants(
    session: Session,
    audiences: Sequence[StoredAudience],
    contact_ids: Sequence[str],
    at: datetime,
    judged: Sequence[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The `membership_due` rows of these contacts in these audiences, from their answers at
    `at` and their rows as this transaction reads them (or as given)."""
    in_memory = [a for a in audiences if not a.in_sql]
    in_sql = [a for a in audiences if a.in_sql]
    found = _exact(session, in_memory, contact_ids, at, judged)
    return found + _early(session, in_sql, contact_ids, at, judged)


def merge(session: Session, audience_id: str, rows: Sequence[dict[str, Any]]) -> None:
    """Writes instants worked out outside the list's lock: where a write of the contact wrote
    one meanwhile, the earlier of the two stays. Never later than the first change, at worst
    an early look: a write's instant is exact for what it wrote, and one from a record read
    before that write was exact for the record then."""
    if not rows:
        return
    contact_ids = [row["contact_id"] for row in rows]
    kept: dict[str, datetime] = {}
    for start in range(0, len(contact_ids), CHUNK):
        chunk = contact_ids[start : start + CHUNK]
        statement = select(MembershipDue.contactId, MembershipDue.dueAt).where(
            MembershipDue.audienceId == audience_id, MembershipDue.contactId.in_(chunk)
        )
        kept.update((c, as_utc(d)) for c, d in session.execute(statement))
    merged = [
        row | {"due_at": min(row["due_at"], kept.get(row["contact_id"], row["due_at"]))}
        for row in rows
    ]
    _forget(session, [audience_id], contact_ids)
    insert_rows(session, DUE, merged)
    wake_for(min(row["due_at"] for row in merged))


def _exact(
    session: Session,
    audiences: Sequence[StoredAudience],
    contact_ids: Sequence[str],
    at: datetime,
    judged: Sequence[dict[str, Any]] | None,
) -> list[dict[str, Any]]:
    """Instants of change found on each record (`FilterClock.next_change`)."""
    if not audiences:
        return []
    filters = [cast(Filter, a.flt) for a in audiences]
    if judged is None:
        judged, _ = records.audience_records(session, contact_ids, audiences)
    rows: list[dict[str, Any]] = []
    for audience, flt in zip(audiences, filters, strict=True):
        until = flt.clock.next_step(at)  # the whole audience is brought up to the clock then
        for record in judged:
            rows.extend(
                _row(audience, record["id"], flt.clock.next_change(record, at, until=until))
            )
    return rows


def _early(
    session: Session,
    audiences: Sequence[StoredAudience],
    contact_ids: Sequence[str],
    at: datetime,
    judged: Sequence[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """For filters the database decides (over actions, whose history is never loaded): the
    first instant a duration meets one of the contact's date-times or its recent actions'
    (`FilterClock.next_crossing`), where the database decides again. `judged`: the contacts'
    rows as the write's judgement read them (else read here)."""
    rows: list[dict[str, Any]] = []
    if not audiences:
        return rows
    if judged is None:
        judged = records.rows(session, contact_ids, decode=True)
    filters = [cast(Filter, audience.flt) for audience in audiences]
    horizons = [flt.clock.crossing_horizon(at) or at for flt in filters]
    # One read of the recent actions for every audience, from the earliest horizon; each
    # audience then keeps those within its own reach.
    actions = relations.action_instants(session, contact_ids, min(horizons))
    own = [(record["id"], _row_instants(record)) for record in judged]  # once, not per audience
    for audience, flt, since in zip(audiences, filters, horizons, strict=True):
        until = flt.clock.next_step(at)
        for contact_id, instants in own:
            recent = [moment for moment in actions.get(contact_id, ()) if moment >= since]
            values = [*instants, *recent]
            rows.extend(
                _row(audience, contact_id, flt.clock.next_crossing(values, at, until=until))
            )
    return rows


def _row(audience: StoredAudience, contact_id: str, due: datetime | None) -> list[dict[str, Any]]:
    if due is None:
        return []
    return [{"audience_id": audience.id, "contact_id": contact_id, "due_at": due}]


def _row_instants(record: dict[str, Any]) -> list[datetime]:
    """The date-times of a contact's own row (`_instants_of`): its `data` decoded if it is
    still JSON text, and no related rows (a relation's recent rows are read apart)."""
    found: list[datetime] = []
    for key, value in record.items():
        if key in relations.RELATIONS:
            continue
        if key == "data" and isinstance(value, str):
            value = json.loads(value)
        found.extend(_instants_of(value))
    return found


def _instants_of(value: Any) -> list[datetime]:
    """Every date-time a contact's row holds, its `data` included (ISO 8601 text there): more
    than a filter compares is harmless, an early wake at most."""
    if isinstance(value, datetime):
        return [as_utc(value)]
    if isinstance(value, dict):
        return [found for item in value.values() for found in _instants_of(item)]
    if isinstance(value, list):
        return [found for item in value for found in _instants_of(item)]
    if isinstance(value, str) and len(value) >= 16 and value[4:5] == "-" and "T" in value:
        try:
            return [as_utc(datetime.fromisoformat(value))]
        except ValueError:
            return []
    return []


def _forget(session: Session, audience_ids: Sequence[str], contact_ids: Sequence[str]) -> None:
    """Drops the instants of these pairs: one statement per chunk of contacts (the audiences
    of one list are few enough to bind; the list's budget bounds them)."""
    audiences = list(audience_ids)
    for start in range(0, len(contact_ids), CHUNK):
        chunk = list(contact_ids[start : start + CHUNK])
        values = {"forget_audiences": audiences, "forget_contacts": chunk}
        session.connection().execute(_FORGET, values)


_FORGET = (
    delete(MembershipDue)
    .where(
        MembershipDue.audienceId.in_(bindparam("forget_audiences", expanding=True)),
        MembershipDue.contactId.in_(bindparam("forget_contacts", expanding=True)),
    )
    .execution_options(synchronize_session=False)
)
"""`_forget`'s statement, built once (every write of a contact in a time audience runs it)."""


def audience_changed(
    session: Session, audience: StoredAudience, at: datetime, evaluated_at: datetime | None = None
) -> None:
    """After an audience was created, or its filter or mode changed (its members stored, as
    evaluated at `evaluated_at`, default `at`): its contacts' instants are worked out again
    from `at`, by the scheduler, outside this transaction (a scan of the list); an audience
    time does not move forgets its rows. A filter of calendar values only has no instants per
    contact: it is due at its next step after the evaluation, not now, since evaluating a
    large list again at once (after a background build, seconds of a costly filter) held the
    scheduler, and every account's clock-driven changes, for nothing."""
    session.execute(
        delete(MembershipDue)
        .where(MembershipDue.audienceId == audience.id)
        .execution_options(synchronize_session=False)
    )
    flt = audience.flt
    due = None
    if flt is not None and flt.clock.is_relative:
        due = at if flt.clock.moves_with_clock else flt.clock.next_step(evaluated_at or at)
    # No wake: the members are exact already, so the scheduler's next look is soon enough.
    set_audience_due(session, audience.id, due, wake=False)


def mark_unfinished(session: Session, audience_id: str, at: datetime) -> None:
    """The audience's members are being stored in turns (`use_cases/membership_turns.py`):
    should the writer stop before its last turn, the scheduler brings the audience up to date
    as a whole `RESUME_AFTER` after `at`. The last turn replaces the mark."""
    set_audience_due(session, audience_id, at + RESUME_AFTER, wake=False)


def set_audience_due(
    session: Session, audience_id: str, due: datetime | None, *, wake: bool = True
) -> None:
    """When to bring the audience up to the clock as a whole (None: never)."""
    session.execute(
        delete(AudienceDue)
        .where(AudienceDue.audienceId == audience_id)
        .execution_options(synchronize_session=False)
    )
    if due is not None:
        insert_rows(session, AUDIENCE_DUE, [{"audience_id": audience_id, "due_at": due}])
        if wake:
            wake_for(due)


def audiences_due(session: Session, now: datetime) -> list[str]:
    """The audiences to bring up to the clock as a whole, earliest first."""
    return list(session.scalars(_AUDIENCES_DUE, {"due_by": now}))


_AUDIENCES_DUE = (
    select(AudienceDue.audienceId)
    .where(AudienceDue.dueAt <= bindparam("due_by"))
    .order_by(AudienceDue.dueAt, AudienceDue.audienceId)
)
"""`audiences_due`' statement, built once (every run of the scheduler reads it)."""


def contacts_due(session: Session, now: datetime, limit: int) -> tuple[dict[str, Due], bool]:
    """Up to `limit` (audience, contact) pairs due by `now`, earliest first, by list; and
    whether the limit was reached (more may be due)."""
    grouped: dict[str, Due] = {}
    pairs = 0
    rows = session.execute(_CONTACTS_DUE, {"due_by": now, "due_limit": limit})
    for audience_id, contact_id, list_id, due_at in rows:
        pairs += 1
        due = grouped.setdefault(list_id, Due(set(), {}, {}))
        due.audience_ids.add(audience_id)
        due.contact_ids.setdefault(contact_id, None)
        due.instants[(audience_id, contact_id)] = as_utc(due_at)
    return grouped, pairs >= limit


_CONTACTS_DUE = (
    select(MembershipDue.audienceId, MembershipDue.contactId, Audience.listId, MembershipDue.dueAt)
    .join(Audience, Audience.id == MembershipDue.audienceId)
    .where(MembershipDue.dueAt <= bindparam("due_by"))
    .order_by(MembershipDue.dueAt, MembershipDue.audienceId, MembershipDue.contactId)
    .limit(bindparam("due_limit"))
)
"""`contacts_due`' statement, built once (every run of the scheduler reads it)."""


@dataclass(frozen=True)
class Due:
    """What is due in one list: the audiences, the contacts (in order of their instants), and
    each pair's instant: its change is dated then, however late the scheduler judges it."""

    audience_ids: set[str]
    contact_ids: dict[str, None]
    instants: dict[tuple[str, str], datetime]


def forget_due(
    session: Session, audience_ids: Collection[str], contact_ids: Sequence[str], now: datetime
) -> None:
    """Drops these pairs' instants due by `now` before they are judged again (which writes
    the next)."""
    audiences = list(audience_ids)
    connection = session.connection()
    for start in range(0, len(contact_ids), CHUNK):
        chunk = list(contact_ids[start : start + CHUNK])
        values = {"forget_audiences": audiences, "forget_contacts": chunk, "due_by": now}
        connection.execute(_FORGET_DUE, values)


_FORGET_DUE = _FORGET.where(MembershipDue.dueAt <= bindparam("due_by"))
"""`forget_due`'s statement, built once (every turn of the scheduler runs it)."""


def earliest(session: Session) -> datetime | None:
    """The earliest instant either table holds: when the scheduler must look next."""
    found = [
        session.scalar(select(func.min(AudienceDue.dueAt))),
        session.scalar(select(func.min(MembershipDue.dueAt))),
    ]
    instants = [as_utc(value) for value in found if value is not None]
    return min(instants, default=None)
