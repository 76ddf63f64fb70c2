"""Request rate limits, moving window, with the `limits` library.

Counting per account (not per key or address) means an account cannot multiply its allowance by
creating keys. Each account has two budgets of its plan's size: one its private keys spend, one
its public keys spend. A public key is public: whoever copies it from a web page must not be able
to spend the quota of the account's own back-end (150 forbidden calls with a free account's
public key used to lock its private key out), so public keys never touch the private budget.
The moving window has no burst at window edges. `memory://` counters live in one
process; `redis://` shares them between processes, which is why the command line refuses several
workers on memory storage.

Public keys sit in web pages, where anyone can copy them, so contacts they create are also
counted per key and client address (`PUBLIC_CONTACT_LIMIT`): a script hammering a sign-up form
from one place is stopped without spending the quota of the account's other visitors. IPv6
clients are counted per /64, the block one subscriber usually holds, or the limit would be worth
2^64 times the allowance.

Each decision becomes IETF `RateLimit-Policy` / `RateLimit` headers (draft structured-field form,
the plan as policy name): `RateLimit-Policy: "free";q=100;w=60` and `RateLimit: "free";r=42;t=17`,
where `r` is the remaining quota and `t` the seconds until it grows back. Several policies on one
request are one list each. A refusal adds `Retry-After`.

When the shared storage stops answering, refusing every request would turn a cache outage into a
service outage, so counting goes on per process (a `memory://` limiter) and the shared storage is
tried again once per `RATE_LIMIT_RETRY_SECONDS`: one request per interval pays for the attempt,
the others do not wait on a dead socket, and the log has one line when counting switches and one
when it switches back. Short socket timeouts keep the requests that do try from stalling.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItem, WindowStats, parse
from limits.errors import StorageError
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

from ..settings import PLANS, Plan, Settings
from .memory_counts import InlinePruningMemoryStorage

logger = logging.getLogger("audiencefilter.service.ratelimit")

ADDRESS_POLICY = "address"
REDIS_CONNECT_TIMEOUT = 0.5
REDIS_SOCKET_TIMEOUT = 1.0
STORAGE_FAILURES = (StorageError, OSError)


@dataclass(frozen=True)
class Decision:
    """The outcome of counting one request against one policy."""

    allowed: bool
    policy: str
    quota: int
    window: int
    remaining: int
    reset_after: int


def rate_limit_headers(decisions: Sequence[Decision]) -> dict[str, str]:
    """The headers of one request counted against one or more policies."""
    headers = {
        "RateLimit-Policy": ", ".join(f'"{d.policy}";q={d.quota};w={d.window}' for d in decisions),
        "RateLimit": ", ".join(
            f'"{d.policy}";r={d.remaining};t={d.reset_after}' for d in decisions
        ),
    }
    refused = [d.reset_after for d in decisions if not d.allowed]
    if refused:
        headers["Retry-After"] = str(max(1, *refused))
    return headers


def address_bucket(address: str) -> str:
    """What one client is counted as: its IPv4 address, or its IPv6 /64."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


def _storage(uri: str) -> Storage:
    options: dict[str, Any] = {}
    if uri.startswith(("redis://", "rediss://", "redis+unix://")):
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # One immediate retry reconnects a pooled connection the server closed (a restart); more
        # would multiply the wait of the requests that find the server gone.
        options.update(
            socket_connect_timeout=REDIS_CONNECT_TIMEOUT,
            socket_timeout=REDIS_SOCKET_TIMEOUT,
            retry=Retry(NoBackoff(), 1),
        )
    if uri.startswith("memory://"):
        return InlinePruningMemoryStorage(uri, wrap_exceptions=True)
    storage = storage_from_string(uri, wrap_exceptions=True, **options)
    if not isinstance(storage, Storage):
        raise ValueError(f"RATE_LIMIT_STORAGE: {uri!r} is an asynchronous storage")
    return storage


def _bucket(account_id: str, public: bool) -> tuple[str, ...]:
    return ("account-public", account_id) if public else ("account", account_id)


class RateLimiter:
    """Counts requests per account against its plan, and public sign-ups per client address."""

    def __init__(self, settings: Settings) -> None:
        self._shared_storage = _storage(settings.rate_limit_storage)
        self._shared = MovingWindowRateLimiter(self._shared_storage)
        self._local_storage = (
            self._shared_storage
            if isinstance(self._shared_storage, MemoryStorage)
            else InlinePruningMemoryStorage()
        )
        self._local = MovingWindowRateLimiter(self._local_storage)
        self._retry_seconds = settings.rate_limit_retry_seconds
        self.monotonic: Callable[[], float] = time.monotonic
        """The clock the retry interval is measured on; a test moves one of its own instead of
        waiting for the interval to pass."""
        self._lock = threading.Lock()
        self._shared_down = False
        self._next_try = 0.0
        self._items: dict[str, RateLimitItem] = {
            plan: parse(settings.rate_limit_for(plan)) for plan in PLANS
        }
        self._address_item = parse(settings.public_contact_limit)

    @property
    def counting_locally(self) -> bool:
        """True while the shared storage is unreachable and this process counts alone."""
        return self._shared_down

    def hit(self, account_id: str, plan: Plan, *, public: bool = False) -> Decision:
        """Count one request of the account: of its private keys, or of its public keys."""
        item = self._items.get(plan, self._items["free"])
        return self._decide(item, plan, _bucket(account_id, public), consume=True)

    def peek(self, account_id: str, plan: Plan, *, public: bool = False) -> Decision:
        """The standing of the account's private (or public) budget, without counting."""
        item = self._items.get(plan, self._items["free"])
        return self._decide(item, plan, _bucket(account_id, public), consume=False)

    def hit_address(self, key_id: str, address: str) -> Decision:
        """Count one contact created with public key `key_id` from client `address`."""
        identifiers = ("public-contact", key_id, address_bucket(address))
        return self._decide(self._address_item, ADDRESS_POLICY, identifiers, consume=True)

    def reset(self) -> None:
        self._local_storage.reset()
        if self._shared_storage is not self._local_storage:
            self._shared_storage.reset()

    def _decide(
        self, item: RateLimitItem, policy: str, identifiers: tuple[str, ...], *, consume: bool
    ) -> Decision:
        allowed, stats = self._count(item, identifiers, consume)
        return Decision(
            allowed=allowed,
            policy=policy,
            quota=item.amount,
            window=item.get_expiry(),
            remaining=max(0, stats.remaining),
            reset_after=max(0, math.ceil(stats.reset_time - time.time())),
        )

    def _count(
        self, item: RateLimitItem, identifiers: tuple[str, ...], consume: bool
    ) -> tuple[bool, WindowStats]:
        strategy, trial = self._strategy()
        if strategy is self._local:
            return _run(strategy, item, identifiers, consume)
        try:
            result = _run(strategy, item, identifiers, consume)
        except STORAGE_FAILURES as exc:
            self._went_down(exc)
            return _run(self._local, item, identifiers, consume)
        if trial:
            self._came_back()
        return result

    def _strategy(self) -> tuple[MovingWindowRateLimiter, bool]:
        """The limiter to use, and whether this request is the one trying the shared one again.

        Only that trial may declare the shared storage back: a request that set off before an
        outage can still succeed after it began.
        """
        if not self._shared_down:
            return self._shared, False
        with self._lock:
            now = self.monotonic()
            if not self._shared_down:
                return self._shared, False
            if now >= self._next_try:
                self._next_try = now + self._retry_seconds
                return self._shared, True
            return self._local, False

    def _went_down(self, exc: BaseException) -> None:
        with self._lock:
            self._next_try = self.monotonic() + self._retry_seconds
            if self._shared_down:
                return
            self._shared_down = True
        logger.warning(
            "rate-limit storage unreachable, counting per process until it answers again "
            "(next try in %g s): %s",
            self._retry_seconds,
            exc,
        )

    def _came_back(self) -> None:
        with self._lock:
            if not self._shared_down:
                return
            self._shared_down = False
        logger.info("rate-limit storage reachable again, counting shared between processes")


def _run(
    strategy: MovingWindowRateLimiter,
    item: RateLimitItem,
    identifiers: tuple[str, ...],
    consume: bool,
) -> tuple[bool, WindowStats]:
    allowed = strategy.hit(item, *identifiers) if consume else strategy.test(item, *identifiers)
    return allowed, strategy.get_window_stats(item, *identifiers)
