"""Request rate limits per account, moving window, with the `limits` library.

Counting per account (not per key or address) means an account cannot multiply its allowance by
creating keys. The moving window has no burst at window edges. `memory://` counters live in one
process; `redis://` shares them between processes, which is why the command line refuses several
workers on memory storage.

Each decision becomes IETF `RateLimit-Policy` / `RateLimit` headers (draft structured-field form,
the plan as policy name): `RateLimit-Policy: "free";q=100;w=60` and `RateLimit: "free";r=42;t=17`,
where `r` is the remaining quota and `t` the seconds until it grows back. A refusal adds
`Retry-After`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from .settings import PLANS, Plan, Settings


@dataclass(frozen=True)
class Decision:
    """The outcome of counting one request."""

    allowed: bool
    policy: str
    quota: int
    window: int
    remaining: int
    reset_after: int

    def headers(self) -> dict[str, str]:
        headers = {
            "RateLimit-Policy": f'"{self.policy}";q={self.quota};w={self.window}',
            "RateLimit": f'"{self.policy}";r={self.remaining};t={self.reset_after}',
        }
        if not self.allowed:
            headers["Retry-After"] = str(max(1, self.reset_after))
        return headers


class RateLimiter:
    """Counts requests per account against the account's plan."""

    def __init__(self, settings: Settings) -> None:
        options: dict[str, float | str | bool] = {}
        if settings.rate_limit_storage.startswith(("redis://", "rediss://")):
            options["socket_timeout"] = 2.0
        self._storage = storage_from_string(settings.rate_limit_storage, **options)
        self._strategy = MovingWindowRateLimiter(self._storage)
        self._items: dict[str, RateLimitItem] = {
            plan: parse(settings.rate_limit_for(plan)) for plan in PLANS
        }

    def hit(self, account_id: str, plan: Plan) -> Decision:
        item = self._items.get(plan, self._items["free"])
        allowed = self._strategy.hit(item, "account", account_id)
        stats = self._strategy.get_window_stats(item, "account", account_id)
        return Decision(
            allowed=allowed,
            policy=plan,
            quota=item.amount,
            window=item.get_expiry(),
            remaining=max(0, stats.remaining),
            reset_after=max(0, math.ceil(stats.reset_time - time.time())),
        )

    def reset(self) -> None:
        self._storage.reset()
