"""Whose delivery a free sending thread takes next: accounts take turns.

A worker has `concurrency` sending threads and counts each account's attempts in flight on
them (`begin`, `end`). When threads are free, `choose` hands them out one at a time:

1. to the account with the fewest attempts in flight;
2. among equals, to the one whose last turn is oldest (an account never served first): round
   robin, so accounts with nothing in flight share the free threads in turn;
3. among those, to the one whose oldest due delivery is oldest.

No account may pass its limit: `share` threads while another account has deliveries due, and
`alone` (`concurrency - share`, at least one) while it is the only one, so that `share` threads
stay free for the next account's delivery. So one account holds at most
`max(share, alone)` threads (`held_at_most`), each for one run (`worker.py`: attempts started
for at most `RUN_SECONDS`, each within its time limit); and a delivery of an account with
nothing in flight goes out at the first free thread, before any delivery of an account with
runs in flight: at once, or when the earliest run under way ends, within one time limit and
`RUN_SECONDS`, whatever the others' backlogs.

The order of turns is this worker's: several workers each take turns among the accounts, and
each holds its own limits.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")

# Accounts whose last turn is remembered; past it the oldest turns are forgotten, which only
# moves those accounts to the front, where their old turns placed them already.
REMEMBERED = 10_000


class Turns:
    """One worker's accounts in flight and the order of their turns (thread-safe)."""

    def __init__(self, concurrency: int, share: int | None = None) -> None:
        """`share` None: no account has a limit but the threads (one claim made by hand)."""
        self.concurrency = concurrency
        if share is None:
            self.share = self.alone = concurrency
        else:
            self.share = max(1, min(share, concurrency))
            self.alone = max(1, concurrency - share)
        self._lock = threading.Lock()
        self._in_flight: dict[str, int] = {}
        self._last_turn: dict[str, int] = {}
        self._turn = 0

    @property
    def held_at_most(self) -> int:
        """The most threads one account can hold at once (the documented bound)."""
        return max(self.share, self.alone)

    def limit(self, contested: bool) -> int:
        """An account's limit: `share` while others have deliveries due, else `alone`."""
        return self.share if contested else self.alone

    def free(self) -> int:
        with self._lock:
            return self.concurrency - sum(self._in_flight.values())

    def in_flight(self) -> dict[str, int]:
        with self._lock:
            return dict(self._in_flight)

    def begin(self, account: str) -> None:
        """An attempt of the account starts: it counts, and this was the account's turn."""
        with self._lock:
            self._in_flight[account] = self._in_flight.get(account, 0) + 1
            self._turn += 1
            self._last_turn[account] = self._turn
            if len(self._last_turn) > REMEMBERED:
                oldest = sorted(self._last_turn, key=self._last_turn.__getitem__)
                for forgotten in oldest[: REMEMBERED // 2]:
                    del self._last_turn[forgotten]

    def end(self, account: str) -> None:
        with self._lock:
            left = self._in_flight.get(account, 0) - 1
            if left > 0:
                self._in_flight[account] = left
            else:
                self._in_flight.pop(account, None)

    def order(self, oldest_due: Mapping[str, object]) -> list[str]:
        """The accounts with deliveries due, in the order of their next turn, those at their
        limit left out."""
        with self._lock:
            in_flight, last = dict(self._in_flight), dict(self._last_turn)
        limit = self.limit(len(oldest_due) > 1)
        waiting = [account for account in oldest_due if in_flight.get(account, 0) < limit]
        return sorted(
            waiting,
            key=lambda a: (in_flight.get(a, 0), last.get(a, -1), oldest_due[a], a),
        )

    def choose(
        self, queues: Mapping[str, Sequence[T]], slots: int, contested: bool | None = None
    ) -> list[tuple[str, T]]:
        """Up to `slots` items of the accounts' queues (each in due order; the accounts in
        `order`), a free thread at a time to the account whose turn it is. Nothing is begun:
        the caller begins what it actually claimed."""
        with self._lock:
            in_flight, last, turn = dict(self._in_flight), dict(self._last_turn), self._turn
        limit = self.limit(len(queues) > 1 if contested is None else contested)
        rank = {account: index for index, account in enumerate(queues)}
        next_item = dict.fromkeys(queues, 0)
        chosen: list[tuple[str, T]] = []
        while len(chosen) < slots:
            ready = [
                account
                for account, queue in queues.items()
                if next_item[account] < len(queue) and in_flight.get(account, 0) < limit
            ]
            if not ready:
                break
            account = min(ready, key=lambda a: (in_flight.get(a, 0), last.get(a, -1), rank[a]))
            chosen.append((account, queues[account][next_item[account]]))
            next_item[account] += 1
            in_flight[account] = in_flight.get(account, 0) + 1
            turn += 1
            last[account] = turn
        return chosen
