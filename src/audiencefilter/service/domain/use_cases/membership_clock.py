"""Moving membership with the clock, the scheduler's use case: audiences whose filters hold
relative date-times change with time.

`{"createdAt": {"gte": {"ago": "P1D"}}}` loses a contact when its sign-up turns one day old,
and no write happens then. `membership/due.py` keeps when each such change can happen; a
thread of the service (`Sweeper`) wakes at the earliest of those instants, or every
`MEMBERSHIP_SWEEP_SECONDS` (1 by default) to see instants other processes wrote, and
`bring_due` brings only what is due up to the clock, writing the `audience.entered` /
`audience.left` events with the cause `clock`, each dated at its contact's instant (not when
the thread got to it). Background builds run on a thread of their own (`membership_builds`),
so a chunk of a costly build never holds a change the clock makes:

- a contact due in an audience is judged again in that audience (and the audiences that read
  it), under its list's lock, like any write of it; its next instant is written as it is;
- an audience due as a whole (a calendar boundary, or instants to work out after it was
  created or changed) is evaluated in a set statement (`snapshot.py`) when its filter
  has calendar values only, and otherwise judged contact by contact, a chunk of the list per
  transaction, which writes each contact's next instant at once.

Several processes may run it at once: the list lock serialises them and the second finds
nothing left to change, so no event is written twice. `sweep` evaluates every time-dependent
audience whatever is due: a repair after instants were lost, and the oracle of the tests.

The scheduler runs on the application's clock (`create_app(clock=...)`), which is how the
tests move time and run it (`Sweeper.run_once`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import select

from ...db.engine import Database
from ...db.models import Audience, Contact
from ...ground import clock
from .. import events, list_lock
from ..audience_filters import SMART, StoredAudience, filter_of, time_dependent
from ..membership import build, due, plan, snapshot, store
from . import membership_builds, membership_turns
from .background import Background

logger = logging.getLogger("audiencefilter.service.sweep")
CONTACTS_PER_TURN = 2000
"""Due pairs read at a time; they are judged in turns (`membership_turns.PAIRS_PER_TURN`)."""
GATHER_SECONDS = 0.1
"""How long after the earliest instant the thread wakes: the changes due within it are judged
together (a transaction each per audience, not per contact), for as much lag."""


def run_due(
    database: Database,
    build_chunk: int = membership_builds.BUILD_CHUNK,
    stopping: Callable[[], bool] = lambda: False,
) -> int:
    """Runs the audiences building in the background to their end (`membership_builds`),
    then brings what is due by now up to the clock (`bring_due`): a run of the command line,
    where no thread does either; the number of events written (those of the builds included)."""
    written = membership_builds.run_builds(database, build_chunk, stopping)
    return written + bring_due(database)


def bring_due(database: Database) -> int:
    """Brings what is due by now up to the clock; the number of events written."""
    now = clock.now()
    with database.reading() as session:
        audience_ids = due.audiences_due(session, now)
        # With no audience due (the usual run), the pairs due are read in the same look.
        found = None if audience_ids else due.contacts_due(session, now, CONTACTS_PER_TURN)
    written = sum(_bring_audience(database, audience_id) for audience_id in audience_ids)
    while True:
        if found is None:
            with database.reading() as session:
                found = due.contacts_due(session, now, CONTACTS_PER_TURN)
        pending, full = found
        for list_id, pairs in pending.items():
            written += _bring_contacts(database, list_id, pairs, now)
        # A read short of the limit found every pair due by `now`: a judgement writes only
        # later instants, so reading again would find none (instants another process writes
        # meanwhile wait for the next run).
        if not full:
            return written
        found = None


def _bring_contacts(database: Database, list_id: str, pending: due.Due, now: datetime) -> int:
    """Judges the contacts due again in the audiences due and those reading them, in turns of
        at most `membership_turns.PAIRS_PER_TURN` pairs, a transaction each for the list; their
        next instants are written by the judgement. A turn forgets only its own contacts' due
        rows, so a stop between turns leaves the others due. The audiences judged come from the
        list's plan, read once per turn (a stamp read when it is known). Each change is dated at
    its pair's instant, not when this got to it (`store.refresh_contacts(dated=)`)."""
    contact_ids = sorted(pending.contact_ids)
    written = start = 0
    while start < len(contact_ids):
        with database.transaction() as session:
            list_lock.take(session, list_id)
            judged = plan.plan_of(session, list_id).with_readers(pending.audience_ids)
            if not judged:  # deleted or made manual meanwhile
                due.forget_due(session, pending.audience_ids, contact_ids[start:], now)
                return written
            turn = contact_ids[start : start + membership_turns.turn_size(len(judged) - 1)]
            due.forget_due(session, pending.audience_ids, turn, now)
            written += store.refresh_contacts(
                session, list_id, turn, events.CAUSE_CLOCK, judged, dated=pending.instants
            )
        start += len(turn)
    return written


def _bring_audience(database: Database, audience_id: str) -> int:
    """Brings one audience up to the clock as a whole (evaluated outside the list's lock,
    stored in turns), works out its contacts' next instants if its filter moves with the
    clock, then writes when to do it again: its next calendar boundary. An audience whose
    writer stopped between its turns (`due.mark_unfinished`) is due too, whatever
    its filter, and is finished the same way."""
    start = clock.now()
    with database.reading() as session:
        audience = session.get(Audience, audience_id)
        if audience is None:
            return 0
        building = build.running(session, audience_id)
        list_id, read, stored = audience.listId, _read(audience), StoredAudience.of(audience)
    if building:  # its build's end plans it again (`build.py`)
        with database.transaction() as session:
            due.set_audience_due(session, audience_id, None, wake=False)
        return 0
    flt, filters = stored.flt, read[1]
    written = 0
    if flt is not None and filters is not None:
        evaluated = snapshot.evaluate(database, list_id, flt, filters, read[2])
        written = membership_turns.store(database, audience_id, evaluated, events.CAUSE_CLOCK)
        if flt.clock.moves_with_clock:
            _plan_each(database, list_id, stored, read, start)
    with database.transaction() as session:
        audience = membership_turns.locked(session, audience_id)
        if audience is not None:
            if _read(audience) == read:  # else its change planned its own look
                next_due = flt.clock.next_step(start) if flt is not None else None
                due.set_audience_due(session, audience_id, next_due)
            build.stored(session, audience_id)  # a build stopped while storing
    return written


Read = tuple[str, "str | None", "str | None"]
"""An audience's mode, filters and fields (the custom fields and the list's zone its filter
is read with), as the scheduler read them: what it evaluated and plans from."""


def _read(audience: Audience) -> Read:
    """What the scheduler judges the audience by. A change of any part since (a change of the
    list's zone rewrites the fields alone) was judged, and its next look planned, by its own
    write, under the list's lock: the scheduler's plan, made in the zone the audience left,
    replaced it and missed the boundary of the new zone."""
    return audience.mode, audience.filters, audience.fields


def _plan_each(
    database: Database, list_id: str, audience: StoredAudience, read: Read, start: datetime
) -> None:
    """Every contact's next instant in the audience, from its answer at `start` (before the
    members were evaluated, so a change in between is due at once): a chunk of the list read
    without the lock, then written under it (`due.merge`), while the audience is still as
    `read` (a change of it works the instants out again)."""
    after = ""
    while True:
        with database.reading() as session:
            chunk = list(
                session.scalars(
                    select(Contact.id)
                    .where(Contact.listId == list_id, Contact.id > after)
                    .order_by(Contact.id)
                    .limit(membership_turns.PAIRS_PER_TURN)
                )
            )
            rows = due.next_instants(session, [audience], chunk, start)
        if not chunk:
            return
        with database.transaction() as session:
            list_lock.take(session, list_id)
            found = session.get(Audience, audience.id)
            if found is None or _read(found) != read:
                return
            due.merge(session, audience.id, rows)
        after = chunk[-1]


def sweep(database: Database) -> int:
    """Brings every time-dependent audience up to the clock now, whatever is due; the number
    of events written."""
    with database.reading() as session:
        rows = session.execute(
            select(
                Audience.id, Audience.listId, Audience.mode, Audience.filters, Audience.fields
            ).where(Audience.mode == SMART)
        ).all()
    written = 0
    for audience_id, list_id, mode, filters, fields in rows:
        flt = filter_of(mode, filters, fields)
        if flt is not None and filters is not None and time_dependent(flt):
            evaluated = snapshot.evaluate(database, list_id, flt, filters, fields)
            written += _store(database, audience_id, evaluated)
    return written


def _store(database: Database, audience_id: str, evaluated: snapshot.Snapshot) -> int:
    """Stores one audience's members evaluated outside the lock, in turns: each judges again
    only the contacts written meanwhile; none while the audience builds in the background
    (`membership_turns`)."""
    return membership_turns.store(database, audience_id, evaluated, events.CAUSE_CLOCK)


class Sweeper(Background):
    """Runs `bring_due` in a daemon thread: at the earliest due instant this process knows of,
    when it writes an earlier one, and at least every `interval` seconds (instants other
    processes wrote). The background builds run on a thread of their own (`builds`, started
    and stopped with this one), so no clock-driven change waits behind a build's chunk.

    Only on the system clock: an application given a clock of its own (`create_app(clock=...)`,
    a test standing at chosen instants) has no thread, since its time moves when its owner
    moves it, and whoever moves it calls `run_once` (the builds, then what is due), which is
    then the only runner."""

    def __init__(
        self,
        database: Database,
        app_clock: clock.Clock,
        interval: float,
        *,
        threaded: bool = True,
        build_chunk: int = membership_builds.BUILD_CHUNK,
    ) -> None:
        super().__init__("membership-due", due.WAKE, interval, threaded)
        self.database = database
        self.clock = app_clock
        self.builds = membership_builds.Builder(
            database, app_clock, interval, threaded=threaded, chunk=build_chunk
        )

    def run_once(self) -> int:
        """Runs the builds to their end, then brings what is due up to the clock."""
        return self.builds.run_once() + self._bring_due()

    def _bring_due(self) -> int:
        with self._running, clock.using(self.clock):
            return bring_due(self.database)

    def start(self) -> None:
        self.builds.start()
        super().start()

    def stop(self) -> None:
        super().stop()
        self.builds.stop()

    def _loop(self) -> None:
        while not self._stop.is_set():
            due.plan_look(self, None)  # until the pause is known, all wake it
            due.WAKE.clear()
            try:
                self._bring_due()
                pause = self._pause()
            except Exception:  # a database outage must not end the thread
                logger.exception("membership scheduling failed; trying again next interval")
                pause = self.interval
            with clock.using(self.clock):
                due.plan_look(self, clock.now() + timedelta(seconds=pause))
            due.WAKE.wait(pause)
        due.forget_look(self)

    def _pause(self) -> float:
        """Seconds until the earliest instant due, at most `interval`."""
        with clock.using(self.clock), self.database.reading() as session:
            earliest = due.earliest(session)
            now = clock.now()
        if earliest is None:
            return self.interval
        return max(0.0, min(self.interval, (earliest - now).total_seconds() + GATHER_SECONDS))
