"""Waiting in tests: on the real condition, never on a guess of how long something takes.

A loaded machine (a dozen processes on two cores) makes a server start, a delivery arrive or a
log line appear many times later than on a quiet one; a deadline of 10 or 30 seconds then
fails a test whose code is right. So a test waits for the condition itself, and gives up early
only when what it waits on is gone (`alive` says the server process died). `HANG_GUARD` is no
estimate of anything: it only stops a test that would otherwise hang for ever, and its message
says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

HANG_GUARD = 600.0
"""Seconds after which a wait is taken for a hang (ten minutes: no load makes a step that
slow), never a deadline a slow machine could miss."""


class WaitAbandoned(AssertionError):
    """What a test waited for cannot come any more, or the hang guard ran out."""


def wait_until(
    condition: Callable[[], T | None],
    what: str,
    *,
    alive: Callable[[], bool] | None = None,
    pause: float = 0.02,
    step: Callable[[], object] | None = None,
) -> T:
    """The first truthy value of `condition()`, asked again every `pause` seconds (after
    `step()`, when given, which may make progress: a worker's round). Raises WaitAbandoned,
    naming `what`, when `alive()` says the awaited process is gone, or after `HANG_GUARD`."""
    started = time.monotonic()
    while True:
        value = condition()
        if value:
            return value
        if alive is not None and not alive():
            raise WaitAbandoned(f"gave up waiting for {what}: the process it depends on ended")
        if time.monotonic() - started > HANG_GUARD:
            raise WaitAbandoned(
                f"gave up waiting for {what} after {HANG_GUARD:.0f} s: a guard against a hang, "
                "far beyond any slow machine; something is stuck"
            )
        if step is not None:
            step()
        time.sleep(pause)
