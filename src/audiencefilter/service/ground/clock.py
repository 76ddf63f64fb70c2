"""The service's clock: what "now" is for timestamps, key expiry, idempotency records and the
relative dates of smart audiences (`{"ago": "P30D"}`).

By default it is the system clock. `create_app(settings, clock=...)` gives an application a clock
of its own, so a test (or a replay of yesterday's traffic) can stand at a chosen instant and move
it: an audience of "signed up in the last day" loses a contact when the clock passes a day,
without waiting one. The application's clock is set for each request in a context variable,
which follows the request into the worker threads that run its handlers; code outside a request
(the command line) reads the system clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

from starlette.types import ASGIApp, Receive, Scope, Send

from ... import as_utc, system_clock

Clock = Callable[[], datetime]

_current: ContextVar[Clock] = ContextVar("audiencefilter_service_clock", default=system_clock)


def now() -> datetime:
    """The current instant on the clock of the request being served, aware and in UTC."""
    return as_utc(_current.get()())


def frozen() -> Clock:
    """A clock stopped at this instant: one request judges every relative date at one moment."""
    moment = now()
    return lambda: moment


@contextmanager
def using(clock: Clock) -> Iterator[None]:
    """Runs the block on `clock`: work outside a request (the membership sweep) on the
    application's clock."""
    token = _current.set(clock)
    try:
        yield
    finally:
        _current.reset(token)


class ClockMiddleware:
    """Serves every request on the application's clock."""

    def __init__(self, app: ASGIApp, clock: Clock) -> None:
        self.app = app
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _current.set(self.clock)
        try:
            await self.app(scope, receive, send)
        finally:
            _current.reset(token)
