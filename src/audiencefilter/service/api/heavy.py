"""Turns for heavy requests: one account's CPU-heavy requests queue behind each other.

A heavy request (a CSV or JSON import, a compare, an estimate, a preview, an overlap, an export)
costs the server's process seconds of CPU for one request of the rate limits. Three of them at
once from one account took three of the handler threads and most of the GIL, and another
account's read went from 10 ms to 200 ms (a 50 MB CSV dry run: seconds). Each account therefore
runs at most `heavy_requests_per_account` heavy requests at once; the others wait on the event
loop (holding no thread), at most `heavy_queue_per_account` of them, and past that the request
is answered 429 with `Retry-After`. Waiting is first come, first served within an account.

The turn also tells the request's code where pure CPU work goes (`ground/processes.py`): the
application's `CpuLane`, whose worker processes run the algebra of a comparison outside the
server's GIL. Routes declare the turn with `dependencies=[HEAVY]`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from fastapi import Depends, Request

from ..ground.processes import LANE, CpuLane
from ..http.errors import ApiError
from .deps import PrivateKey

RETRY_AFTER = 1
QUEUE_FULL = (
    "Too many heavy requests of this account at once (imports, compares, estimates, previews, "
    "overlaps, exports): at most {running} run and {queued} wait; retry after Retry-After "
    "seconds, or send them one after another"
)


@dataclass
class _Account:
    """An account's turns: the running ones and how many requests wait for one."""

    turns: asyncio.Semaphore
    waiting: int = 0
    holders: int = field(default=0)


class HeavyTurns:
    """Per-account turns for heavy requests, on the application's event loop."""

    def __init__(self, running: int, queued: int, lane: CpuLane) -> None:
        self.running = running
        self.queued = queued
        self.lane = lane
        self._accounts: dict[str, _Account] = {}

    def waiting(self, account_id: str) -> int:
        """How many of the account's heavy requests wait for a turn now."""
        account = self._accounts.get(account_id)
        return account.waiting if account is not None else 0

    @asynccontextmanager
    async def turn(self, account_id: str) -> AsyncIterator[None]:
        """One of the account's turns, waited for; a 429 when too many already wait."""
        account = self._accounts.setdefault(account_id, _Account(asyncio.Semaphore(self.running)))
        if account.turns.locked() and account.waiting >= self.queued:
            message = QUEUE_FULL.format(running=self.running, queued=self.queued)
            raise ApiError(429, message, headers={"Retry-After": str(RETRY_AFTER)})
        account.holders += 1
        try:
            await self._acquire(account)
            try:
                yield
            finally:
                account.turns.release()
        finally:
            account.holders -= 1
            if account.holders == 0:  # nobody holds or waits: forget the account
                self._accounts.pop(account_id, None)

    @staticmethod
    async def _acquire(account: _Account) -> None:
        account.waiting += 1
        try:
            await account.turns.acquire()
        finally:
            account.waiting -= 1


async def heavy_turn(request: Request, principal: PrivateKey) -> AsyncIterator[None]:
    """The dependency of heavy routes: the request runs in one of its account's turns, and its
    pure CPU work on the application's process lane."""
    turns: HeavyTurns = request.app.state.heavy
    async with turns.turn(principal.account_id):
        LANE.set(turns.lane)
        yield


HEAVY = Depends(heavy_turn)
