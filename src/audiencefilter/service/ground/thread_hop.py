"""A request's blocking work run on a worker thread and awaited from the event loop, lean.

The hot route (`api/hot_routes.py`) hands each PATCH from the event loop to a thread, as
FastAPI does a sync route. Through Starlette's `run_in_threadpool` (AnyIO's `to_thread`) that
hand-off took about 0.19 ms of the event loop's CPU a PATCH in the application's middle (its
capacity limiter, cancel scope and checkpoints), against a PATCH whose whole work is about
2 ms: 0.50 ms of the loop's CPU a PATCH through AnyIO, 0.31 ms through `ThreadHop`
(docs/performance-history-pipeline.md). The loop serves every request of the process one at a
time, so its CPU is what bounds the rate first.

`ThreadHop` keeps what the hand-off must keep:

- **at most `most` calls run at once** (the service's `request_threads`, AnyIO's 40 by
  default); more wait in order, first come, first served;
- **the caller's context** (`contextvars`: the request's log fields) is the call's;
- **the call's exception is the awaiter's**, the same object;
- **a cancelled awaiter waits for the call to end** before it is cancelled, as AnyIO's default
  does: a write is never left running on its thread after its request is gone (a server
  stopping cancels its requests, then closes the database);
- **threads start when needed and end when idle** for `linger` seconds, so an application
  that is built and dropped (a test's) leaves no thread behind for long; `close` ends the idle
  ones at once.

Each worker takes the next call from one queue. The count of idle workers is kept with the
calls they are promised, so a call never waits for a worker that is about to leave, and a
worker never leaves while a call is promised to it (`_submit`, `_work`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from anyio import to_thread

P = ParamSpec("P")
T = TypeVar("T")

MOST = 40
"""Calls at once when the service sets none: AnyIO's default, as FastAPI's routes get."""

LINGER = 10.0
"""Seconds an idle worker waits for a call before it ends (AnyIO's idle workers' too)."""


@dataclass(frozen=True)
class _Call:
    """One call handed to a worker: its function in the caller's context, and where its
    outcome goes (a future of the caller's loop)."""

    loop: asyncio.AbstractEventLoop
    outcome: asyncio.Future[Any]
    context: contextvars.Context
    function: Callable[[], Any]

    def run(self) -> None:
        try:
            result = self.context.run(self.function)
        except BaseException as error:  # handed to the awaiter, whatever it is
            self._settle(None, error)
        else:
            self._settle(result, None)

    def _settle(self, result: Any, error: BaseException | None) -> None:
        try:
            self.loop.call_soon_threadsafe(_settled, self.outcome, result, error)
        except RuntimeError:  # the loop is closed: nobody awaits the outcome any more
            pass


def _settled(outcome: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if outcome.done():
        return
    if error is None:
        outcome.set_result(result)
    elif isinstance(error, StopIteration):  # a future refuses it, and would never settle
        wrapped = RuntimeError(f"the call raised StopIteration: {error!r}")
        wrapped.__cause__ = error
        outcome.set_exception(wrapped)
    else:
        outcome.set_exception(error)


class ThreadHop:
    """Worker threads for blocking calls awaited from an event loop (`run`)."""

    def __init__(self, most: int = MOST, linger: float = LINGER, name: str = "hop") -> None:
        if most < 1:
            raise ValueError("a thread hop needs at least one thread")
        self.most = most
        self.linger = linger
        self.name = name
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._guard = threading.Lock()
        self._threads = 0  # workers alive
        self._idle = 0  # workers waiting for a call no call is promised to
        self._backlog = 0  # calls queued with no worker promised to them

    @property
    def threads(self) -> int:
        """Workers alive now."""
        with self._guard:
            return self._threads

    async def run(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`function(*args, **kwargs)` on a worker, in the caller's context; its result, or
        its exception raised here. Off asyncio (an application run by AnyIO on trio), on
        AnyIO's threads."""
        bound = functools.partial(function, *args, **kwargs)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return await to_thread.run_sync(bound)
        outcome: asyncio.Future[T] = loop.create_future()
        self._submit(_Call(loop, outcome, contextvars.copy_context(), bound))
        try:
            return await asyncio.shield(outcome)
        except asyncio.CancelledError:
            await _uncancelled(outcome)
            raise

    def close(self) -> None:
        """Ends the idle workers now (the busy ones end idle, after `linger`)."""
        with self._guard:
            leaving, self._idle = self._idle, 0
            self._threads -= leaving
        for _ in range(leaving):
            self._calls.put(None)

    def _submit(self, call: _Call) -> None:
        start = False
        with self._guard:
            if self._idle:
                self._idle -= 1  # promised to a waiting worker
            elif self._threads < self.most:
                self._threads += 1  # promised to the worker started for it
                start = True
            else:
                self._backlog += 1  # the next worker to finish takes it
            self._calls.put(call)
        if start:
            threading.Thread(target=self._work, name=self.name, daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                call = self._calls.get(timeout=self.linger)
            except queue.Empty:
                with self._guard:
                    if not self._idle:
                        continue  # a call is promised to this worker: it is in the queue
                    self._idle -= 1
                    self._threads -= 1
                return
            if call is None:  # `close`: counted out already
                return
            call.run()
            del call  # its result is the awaiter's, not this idle thread's
            with self._guard:
                if self._backlog:
                    self._backlog -= 1
                else:
                    self._idle += 1


async def _uncancelled(outcome: asyncio.Future[Any]) -> None:
    """Waits for `outcome` however often the waiting task is cancelled meanwhile."""
    while not outcome.done():
        try:
            await asyncio.shield(outcome)
        except asyncio.CancelledError:
            continue
        except BaseException:  # the call's own error: the cancellation wins
            return
