"""The webhook worker: fan out new events, claim due deliveries, send them, settle them.

It runs as a thread of the service (`webhook_worker`, on by default) and as its own process
(`python -m audiencefilter.service worker`); any number of both may run against one PostgreSQL
database, since fan-out and claims are made safe in the database (`dispatch.py`). On SQLite
every write transaction takes the database's write lock, so they are serialised.

A round claims up to four deliveries per sending thread and sends them from a pool of
`webhook_concurrency` threads (so at most that many connections per worker), each attempt within
`webhook_timeout_seconds`, then records every attempt of the round in one transaction. A worker
that found work starts the next round at once; an idle one waits `webhook_poll_seconds`. While
the database has no webhook at all, it looks again only every `DISCOVERY_SECONDS` (or at once
when this process creates one): a service without webhooks does no work for them. The lease
(60 s by default) must outlast a round: four attempts per thread at the time limit (10 s) each.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from .... import system_clock
from ...db.engine import Database
from ...ground import clock
from ...settings import Settings
from . import dispatch, signing, targets
from .sender import Outcome, post

logger = logging.getLogger("audiencefilter.service.webhooks")
# A round claims this many deliveries per sending thread: fewer transactions per delivery, and
# still well within the lease (each attempt is bounded by the timeout).
CLAIM_ROUNDS = 4
DISCOVERY_SECONDS = 60.0


def policy_of(settings: Settings) -> dispatch.Policy:
    return dispatch.Policy(
        retry_base=settings.webhook_retry_base_seconds,
        retry_cap=settings.webhook_retry_cap_seconds,
        max_attempts=settings.webhook_max_attempts,
        lease=settings.webhook_lease_seconds,
        disable_after=settings.webhook_disable_after_seconds,
        disable_min_failures=settings.webhook_disable_min_failures,
    )


class WebhookWorker:
    """Delivers webhooks from one database, on the given clock."""

    def __init__(
        self, database: Database, settings: Settings, app_clock: clock.Clock | None = None
    ) -> None:
        self.database = database
        self.settings = settings
        self.clock = app_clock
        self.policy = policy_of(settings)
        self.allowed = targets.networks(settings.webhook_allowed_networks)
        self._pool = ThreadPoolExecutor(
            max_workers=settings.webhook_concurrency, thread_name_prefix="webhook-send"
        )
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> int:
        """One round: fan out, claim, send, settle. The number of attempts made."""
        if self.clock is None:
            return self._round()
        with clock.using(self.clock):
            return self._round()

    def _round(self) -> int:
        dispatch.fan_out(self.database)
        claimed = dispatch.claim(
            self.database,
            self.policy,
            self.settings.webhook_concurrency * CLAIM_ROUNDS,
            self.settings.webhook_account_share,
        )
        if claimed:
            self._send_all(claimed)
        return len(claimed)

    def _send_all(self, claimed: Sequence[dispatch.Claimed]) -> None:
        app_clock = self.clock or system_clock
        futures = [self._pool.submit(self._attempt, item, app_clock) for item in claimed]
        results = [future.result() for future in futures]
        try:
            dispatch.settle(self.database, self.policy, results)
        except Exception:  # the leases run out and the deliveries are tried again
            logger.exception("could not record the attempts of %d deliveries", len(results))

    def _attempt(self, item: dispatch.Claimed, app_clock: clock.Clock) -> dispatch.Result:
        with clock.using(app_clock):
            attempted_at = clock.now()
            outcome = self._send(item, int(attempted_at.timestamp()))
        return dispatch.Result(item, attempted_at, outcome)

    def _send(self, item: dispatch.Claimed, timestamp: int) -> Outcome:
        try:
            target = targets.resolve(item.url, self.allowed)
        except targets.TargetRefused as exc:
            return Outcome(None, f"refused: {exc}"[:500], 0)
        headers = signing.headers(item.secrets, item.id, timestamp, item.body)
        return post(target, headers, item.body, self.settings.webhook_timeout_seconds)

    def drain(self, rounds: int = 1000) -> int:
        """Rounds until one finds nothing due (tests and drills); the attempts made."""
        total = 0
        for _ in range(rounds):
            made = self.run_once()
            total += made
            if made == 0:
                break
        return total

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="webhook-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.stop_soon()
        if self._thread is not None:
            self._thread.join(timeout=self.settings.webhook_timeout_seconds + 5)
            self._thread = None
        self._pool.shutdown(wait=True, cancel_futures=True)

    def stop_soon(self) -> None:
        """Asks the loop to end after the round under way (safe from a signal handler)."""
        self._stop.set()
        self._wake.set()

    def wake(self) -> None:
        """Starts a round now (a webhook was just created)."""
        self._wake.set()

    def _pause(self, seconds: float) -> None:
        self._wake.wait(seconds)
        self._wake.clear()

    def run_forever(self) -> None:
        """The loop of the `worker` command, until `stop` (or a signal) ends it."""
        self._loop()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                if not dispatch.any_webhook(self.database):
                    self._pause(DISCOVERY_SECONDS)
                    continue
                made = self.run_once()
            except Exception:  # a database outage must not end the worker
                logger.exception("webhook round failed; trying again after the poll interval")
                made = 0
            if made == 0 and not self._stop.is_set():
                self._pause(self.settings.webhook_poll_seconds)
