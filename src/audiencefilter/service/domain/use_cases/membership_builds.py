"""Building audiences in the background, the builds' use case, on a thread of its own.

A large list's new or changed audience is built a chunk at a time (`membership/build.py`).
The chunks run on this module's thread (`Builder`), not on the clock's (`membership_clock
.Sweeper`): a chunk of a costly filter takes seconds, and a clock-driven change queued behind
it came seconds late (and was dated late). Each step takes the build whose turn it is
(`build.Turns`): accounts in turn, then each account's builds, so one account's
queue of builds adds a step at a time to another's, not the whole queue.

The thread wakes when a build starts in this process, and at least every `interval` seconds
(builds other processes started, or left behind when they stopped). An application given a
clock of its own has no thread: whoever moves the clock runs the builds (`run_once`, `step`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...db.engine import Database
from ...ground import clock
from ...settings import Settings
from ..membership import build
from . import membership_turns
from .background import Background

logger = logging.getLogger("audiencefilter.service.builds")
BUILD_CHUNK: int = Settings.model_fields["audience_build_chunk"].default
"""Contacts a background build judges per step when no setting is given."""


def run_builds(
    database: Database,
    chunk: int = BUILD_CHUNK,
    stopping: Callable[[], bool] = lambda: False,
    turns: build.Turns | None = None,
) -> int:
    """Runs every background build to its end, in turns, or until `stopping()` says the
    process stops (between two chunks: a build resumes from its cursor); the number of events
    written."""
    turns = turns or build.Turns()
    written = 0
    while not stopping() and (found := build_step(database, chunk, turns)) is not None:
        written += found
    return written


def build_step(database: Database, chunk: int, turns: build.Turns | None = None) -> int | None:
    """One step of the build whose turn it is (`build.step`); the members of a
    build that ended are stored in turns (`membership_turns`), as a changed filter's are. The
    number of events written, None when no build runs."""
    found = build.step(database, chunk, turns)
    if not isinstance(found, build.Built):
        return found
    written = membership_turns.store(database, found.audience_id, found.snapshot, found.cause)
    membership_turns.finish(database, found.audience_id, found.snapshot)
    with database.transaction() as session:
        build.stored(session, found.audience_id, found.token)
    return written


class Builder(Background):
    """Runs the background builds in a daemon thread of their own, taking turns across
    accounts (one `Turns` for the process's application); `step` and `run_once` run them on
    the caller's thread (tests, an application on a clock of its own)."""

    def __init__(
        self,
        database: Database,
        app_clock: clock.Clock,
        interval: float,
        *,
        threaded: bool = True,
        chunk: int = BUILD_CHUNK,
    ) -> None:
        super().__init__("audience-builds", build.WAKE, interval, threaded)
        self.database = database
        self.chunk = chunk
        self.clock = app_clock
        self.turns = build.Turns()

    def step(self) -> int | None:
        """One step of the build whose turn it is; None when none runs."""
        with self._running, clock.using(self.clock):
            return build_step(self.database, self.chunk, self.turns)

    def run_once(self) -> int:
        """Runs every build to its end (or until the application stops); the events written."""
        with self._running, clock.using(self.clock):
            return run_builds(self.database, self.chunk, self._stop.is_set, self.turns)

    def _loop(self) -> None:
        while not self._stop.is_set():
            build.WAKE.clear()
            try:
                self.run_once()
            except Exception:  # a database outage must not end the thread
                logger.exception("background builds failed; trying again next interval")
            build.WAKE.wait(self.interval)
