"""A daemon thread of the service's own: started with the application, woken early by an
event, stopped between two rounds.

The background builds (`membership_builds.Builder`) and the clock's sweeps
(`membership_clock.Sweeper`) each run on such a thread. They share how the thread starts and
stops, so that stopping always wakes the thread before joining it (a thread asleep on its
wake event for a whole interval would hold the application's shutdown that long), and an
application on a clock of its own never gets one: its owner moves time and runs the rounds.
"""

from __future__ import annotations

import threading

STOP_WAIT_SECONDS = 10.0
"""How long `stop` waits for a round in progress to end before leaving the thread behind."""


class Background:
    """The thread's life; a subclass says what a round is in `_loop`, which runs until
    `_stop` is set and sleeps on `wake` between rounds."""

    def __init__(self, name: str, wake: threading.Event, interval: float, threaded: bool) -> None:
        self.interval = interval if threaded else 0.0
        self._name = name
        self._wake = wake
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._running = threading.Lock()  # one round at a time, the thread's or a caller's

    def start(self) -> None:
        if self.interval <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT_SECONDS)
            self._thread = None

    def _loop(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} says what a round of its thread is")
