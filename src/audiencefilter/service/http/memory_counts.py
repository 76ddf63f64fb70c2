"""The per-process rate-limit counters, without a thread started for each request.

`limits`' `MemoryStorage` drops expired moving-window entries on a `threading.Timer` of 10 ms
that each count starts again once the last one has run: under steady traffic nearly every
request starts a thread, which then walks every counter. On a 2-core server that thread and its
switches cost more than the count itself (a contacts page spent more time in it than in the
limiter's own arithmetic). The moving window's answer never needs that pruning: a count looks at
the entry `limit` places back, not at the list's length; pruning only bounds memory.

So here pruning runs inline, in the count that finds it due, at most once per `PRUNE_EVERY`
seconds and never by two counts at once (the other one goes on without waiting). Memory stays
bounded by the entries of one window plus `PRUNE_EVERY` seconds of traffic.

The storage's own pruning method is reached by its mangled name; `tests/service/test_ratelimit_
memory.py` fails if a release of `limits` renames it, and proves that counts start no thread and
that old entries still go.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from limits.storage import MemoryStorage

PRUNE_EVERY = 1.0
"""Seconds between two prunings of the expired entries."""


class InlinePruningMemoryStorage(MemoryStorage):
    """`memory://` counters whose expired entries a count prunes in passing."""

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: Any):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._pruning = threading.Lock()
        self._next_pruning = 0.0

    def _MemoryStorage__schedule_expiry(self) -> None:  # noqa: N802 (the base's mangled name)
        """Prune now if due and nobody else is pruning; called by every count of the base."""
        now = time.monotonic()
        if now < self._next_pruning or not self._pruning.acquire(blocking=False):
            return
        try:
            self._next_pruning = now + PRUNE_EVERY
            self.prune()
        finally:
            self._pruning.release()

    def prune(self) -> None:
        """Drop the entries and counters whose window has passed."""
        self._MemoryStorage__expire_events()  # type: ignore[attr-defined]
