"""First come, first served for SQLite's one write lock, within a process.

SQLite grants its write lock to whoever asks when it is free: a writer that finds it taken
sleeps in its busy handler (1, 2, 5, 10 ... 100 ms) and asks again. Work cut into short turns
(`use_cases/membership_turns.py`) releases the lock between turns, but its next turn asks at
once, while another account's write is still asleep: the turns could follow each other and the
other write wait for all of them. So every write transaction of a process first takes its turn
at a `FairGate`, in the order the writers arrived, and only then asks SQLite: another account's
write that arrives during a turn goes before the next turn.

A writer that waited `timeout` seconds (the busy timeout) goes on without the gate and lets
SQLite decide, as before; so does one that opens a second write transaction while holding the
gate in the same thread (which would wait for SQLite's lock anyway). Processes still share the
lock through SQLite's busy handler.
"""

from __future__ import annotations

import threading
from collections import deque


class FairGate:
    """A lock handed over in arrival order; `enter` answers whether the gate was taken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[threading.Event] = deque()
        self._held = False
        self.handed_over = 0
        """Times the gate went straight from one writer to the next one waiting."""

    @property
    def waiting(self) -> int:
        """Writers queued for the gate now."""
        with self._lock:
            return len(self._queue)

    def enter(self, timeout: float) -> bool:
        with self._lock:
            if not self._held:
                self._held = True
                return True
            turn = threading.Event()
            self._queue.append(turn)
        if turn.wait(timeout):
            return True
        with self._lock:
            if turn.is_set():  # handed over just as the wait ended
                return True
            self._queue.remove(turn)
            return False

    def leave(self) -> None:
        with self._lock:
            if self._queue:
                self.handed_over += 1
                self._queue.popleft().set()  # still held: by the next writer now
            else:
                self._held = False
