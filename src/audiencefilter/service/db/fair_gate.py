"""Turns for SQLite's one write lock, within a process: by account, then in arrival order.

SQLite grants its write lock to whoever asks when it is free: a writer that finds it taken
sleeps in its busy handler (1, 2, 5, 10 ... 100 ms) and asks again. Work cut into short turns
(`use_cases/membership_turns.py`) releases the lock between turns, but its next turn asks at
once, while another account's write is still asleep: the turns could follow each other and the
other write wait for all of them. So every write transaction of a process first takes its turn
at a `FairGate`, and only then asks SQLite.

The gate hands itself over by *share*, the account a write is for (`Share`, filled in when a
request's key is read; the service's own threads share one): the next holder is the first
writer of the share that has waited longest, other than the share that just held the gate, if
any other waits. Arrival order alone let three imports of one account, each queueing its next
turn, put three turns before another account's single write; by shares, that write waits for
the turn under way and no more, however many writers one account keeps queued.

A writer that waited `timeout` seconds (the busy timeout) goes on without the gate and lets
SQLite decide, as before; so does one that opens a second write transaction while holding the
gate in the same thread (which would wait for SQLite's lock anyway). Processes still share the
lock through SQLite's busy handler.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Share:
    """Whose writes a request's transactions are: set empty when the request starts (the
    context is copied into the threads that run it, the object is not) and named once its key
    is read, before any write."""

    key: str | None = None


SHARE: ContextVar[Share | None] = ContextVar("audiencefilter_write_share", default=None)


def current_key() -> str | None:
    """The share of the writes made now: the request's account, or None (the service's own)."""
    share = SHARE.get()
    return None if share is None else share.key


class FairGate:
    """A lock handed over by share, then in arrival order; `enter` answers whether the gate
    was taken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: OrderedDict[str | None, deque[threading.Event]] = OrderedDict()
        self._held = False
        self._holder: str | None = None
        self.handed_over = 0
        """Times the gate went straight from one writer to the next one waiting."""

    @property
    def waiting(self) -> int:
        """Writers queued for the gate now."""
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())

    def enter(self, timeout: float, key: str | None = None) -> bool:
        with self._lock:
            if not self._held:
                self._held, self._holder = True, key
                return True
            turn = threading.Event()
            self._queues.setdefault(key, deque()).append(turn)
        if turn.wait(timeout):
            return True
        with self._lock:
            if turn.is_set():  # handed over just as the wait ended
                return True
            self._forget(key, turn)
            return False

    def leave(self) -> None:
        with self._lock:
            found, key = self._next_share()
            if not found:
                self._held, self._holder = False, None
                return
            queue = self._queues[key]
            turn = queue.popleft()
            if queue:
                self._queues.move_to_end(key)  # its next writer waits for the other shares
            else:
                del self._queues[key]
            self.handed_over += 1
            self._holder = key
            turn.set()  # still held: by the next writer now

    def _next_share(self) -> tuple[bool, str | None]:
        """Whether a writer waits, and the share the gate goes to: the longest waiting but
        the holder's, else the holder's."""
        for key in self._queues:
            if key != self._holder:
                return True, key
        return self._holder in self._queues, self._holder

    def _forget(self, key: str | None, turn: threading.Event) -> None:
        queue = self._queues[key]
        queue.remove(turn)
        if not queue:
            del self._queues[key]
