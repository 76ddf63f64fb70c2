"""The clock sweep: audiences whose filters hold relative date-times change with time alone.

`{"createdAt": {"gte": {"ago": "P1D"}}}` loses a contact when its sign-up turns one day old,
and no write happens then. Every `MEMBERSHIP_SWEEP_SECONDS` (60 by default) a thread of the
service evaluates each such audience in a read transaction and stores the answer in its own
short transaction under its list's lock (`membership_snapshot`), and writes the
`audience.entered` / `audience.left` events with the cause `clock`, stamped with the sweep's
instant. So a stored row, and its event, is at most one interval plus one sweep's duration
behind the clock; reads of those audiences never are (they are judged live, see
`membership.py`). Several processes may sweep at once: the list lock serialises them and the
second finds nothing left to change, so no event is written twice.

The sweep runs on the application's clock (`create_app(clock=...)`), which is how the tests move
time and sweep (`Sweeper.run_once`).
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import select

from ..db.engine import Database
from ..db.models import Audience
from ..ground import clock
from . import events, membership_snapshot
from .audience_filters import SMART, filter_of, time_dependent

logger = logging.getLogger("audiencefilter.service.sweep")


def _time_dependent(mode: str, filters: str | None, fields: str | None) -> bool:
    flt = filter_of(mode, filters, fields)
    return flt is not None and time_dependent(flt)


def sweep(database: Database) -> int:
    """Brings every time-dependent audience up to the clock now; the number of events written."""
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
            evaluated = membership_snapshot.evaluate(database, list_id, flt, filters)
            written += _store(database, audience_id, evaluated)
    return written


def _store(database: Database, audience_id: str, evaluated: membership_snapshot.Snapshot) -> int:
    """Stores one audience's members evaluated outside the lock: the write transaction judges
    again only the contacts written meanwhile (`membership_snapshot`)."""
    with database.transaction() as session:
        audience = session.get(Audience, audience_id)
        if audience is None:
            return 0  # deleted meanwhile
        events.lock_list(session, audience.listId)
        session.refresh(audience)
        if not _time_dependent(audience.mode, audience.filters, audience.fields):
            return 0
        return membership_snapshot.refresh(session, audience, events.CAUSE_CLOCK, evaluated)


class Sweeper:
    """Runs `sweep` every `interval` seconds in a daemon thread, on the application's clock."""

    def __init__(self, database: Database, app_clock: clock.Clock, interval: float) -> None:
        self.database = database
        self.clock = app_clock
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> int:
        with clock.using(self.clock):
            return sweep(self.database)

    def start(self) -> None:
        if self.interval <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="membership-sweep", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.run_once()
            except Exception:  # a database outage must not end the thread
                logger.exception("membership sweep failed; trying again next interval")
