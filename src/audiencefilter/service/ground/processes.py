"""Pure-Python CPU work of a request run in worker processes, out of the server's GIL.

Request handlers run in threads of one process, which share one GIL: a thread deciding a
comparison of two filters for seconds makes every other thread wait up to the switch interval
(5 ms) each time it wants the GIL back, and a read of another account that wants it a hundred
times takes hundreds of milliseconds. A thread pool cannot help with that; processes can. What
the service sends here is work of pure functions whose arguments and results pickle (filters,
witnesses): the request's thread waits for the answer without holding the GIL.

`CpuLane` owns a `ProcessPoolExecutor` of `workers` processes, started when first needed (most
applications never compare anything) with the `spawn` method (a server's threads hold locks a
forked child would inherit held). Its queue is first come, first served; with the per-account
turns of `http/heavy.py`, each account has at most its turns' worth in it, so one account's
loop cannot fill it. `LANE` holds the lane of the request being served (set by those turns); out
of a request, or with `workers=0`, `run` calls the function in the calling thread.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class CpuLane:
    """A pool of `workers` processes for pure CPU work, started at its first use."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        """Whether its processes are running (they start at the first `run`)."""
        return self._pool is not None

    def run(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`function(*args)` in a worker process (in this thread without workers). A pool whose
        worker died (killed for memory, say) is replaced and the call made once more."""
        if self.workers == 0:
            return function(*args, **kwargs)
        try:
            return self._executor().submit(function, *args, **kwargs).result()
        except BrokenProcessPool:
            self._replace()
            return self._executor().submit(function, *args, **kwargs).result()

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                context = multiprocessing.get_context("spawn")
                self._pool = ProcessPoolExecutor(self.workers, mp_context=context)
            return self._pool

    def _replace(self) -> None:
        with self._lock:
            broken, self._pool = self._pool, None
        if broken is not None:
            broken.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the processes (the application's shutdown); a later `run` starts new ones."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


INLINE = CpuLane(0)
LANE: ContextVar[CpuLane] = ContextVar("cpu_lane", default=INLINE)
"""The lane of the request being served; in this thread when none was set."""


def run(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`function(*args)` on the current request's lane: in a worker process when it has any."""
    return LANE.get().run(function, *args, **kwargs)
