"""The webhook worker: fan out new events, claim due deliveries, send them, settle them.

It runs as a thread of the service (`webhook_worker`, on by default) and as its own process
(`python -m audiencefilter.service worker`); any number of both may run against one PostgreSQL
database, since fan-out and claims are made safe in the database (`dispatch.py`). On SQLite
every write transaction takes the database's write lock, so they are serialised.

The loop keeps `webhook_concurrency` sending threads busy (so at most that many connections per
worker): it claims as many due deliveries as threads are free, each attempt within
`webhook_timeout_seconds`; an attempt that ends frees its thread and wakes the loop at once,
which records the attempts ended since its last turn in one transaction (fewer writes for
SQLite's one write lock) before it claims again. So a silent receiver holds only its own
threads for its time limit, never a round of everyone's. Accounts take turns for the free
threads (`turns.py`): the account with the fewest attempts in flight first, round robin among
equals; an account holds at most `webhook_account_share` threads while others have deliveries
due, and alone all threads but that share, which stay free for the next account. An
idle loop waits `webhook_poll_seconds`. While the database has no webhook at all, it looks again
only every `DISCOVERY_SECONDS` (or at once when this process creates one): a service without
webhooks does no work for them. `run_once` (tests, drills) is one synchronous round: claim four
per thread, send them all, record them together. The lease (60 s by default) outlasts an attempt
(10 s at most).
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
from .turns import Turns

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
        concurrency, share = settings.webhook_concurrency, settings.webhook_account_share
        self.turns = Turns(concurrency, share)  # the loop's attempts in flight, per account
        self._round_turns = Turns(concurrency * CLAIM_ROUNDS, share * CLAIM_ROUNDS)
        self._flight = threading.Lock()
        self._ended: list[dispatch.Result] = []  # attempts ended, not recorded yet

    def run_once(self) -> int:
        """One round: fan out, claim, send, settle. The number of attempts made."""
        if self.clock is None:
            return self._round()
        with clock.using(self.clock):
            return self._round()

    def _round(self) -> int:
        dispatch.fan_out(self.database)
        turns = self._round_turns
        claimed = dispatch.claim(self.database, self.policy, turns.free(), turns)
        for item in claimed:
            turns.begin(item.account_id)
        try:
            if claimed:
                self._send_all(claimed)
        finally:
            for item in claimed:
                turns.end(item.account_id)
        return len(claimed)

    def dispatch_free(self) -> int:
        """Fan out, then claim what fits the free sending threads and start each attempt; the
        number started. The attempts ended since the last turn are recorded first."""
        self.record_ended()
        dispatch.fan_out(self.database)
        free = self.turns.free()
        if free <= 0:
            return 0
        claimed = dispatch.claim(self.database, self.policy, free, self.turns)
        app_clock = self.clock or system_clock
        for item in claimed:
            self.turns.begin(item.account_id)
            self._pool.submit(self._attempt_and_hand_back, item, app_clock)
        return len(claimed)

    def _attempt_and_hand_back(self, item: dispatch.Claimed, app_clock: clock.Clock) -> None:
        try:
            result = self._attempt(item, app_clock)
            with self._flight:
                self._ended.append(result)
        except Exception:  # the lease runs out and the delivery is tried again
            logger.exception("the attempt of delivery %s failed to run", item.id)
        finally:
            self.turns.end(item.account_id)
            self._wake.set()

    def record_ended(self) -> None:
        """Records the attempts that ended since the last call, in one transaction."""
        with self._flight:
            ended, self._ended = self._ended, []
        if not ended:
            return
        try:
            dispatch.settle(self.database, self.policy, ended)
        except Exception:  # the leases run out and the deliveries are tried again
            logger.exception("could not record the attempts of %d deliveries", len(ended))

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

    def _dispatch_on_clock(self) -> int:
        if self.clock is None:
            return self.dispatch_free()
        with clock.using(self.clock):
            return self.dispatch_free()

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
        if self.clock is None:
            self.record_ended()
        else:
            with clock.using(self.clock):
                self.record_ended()

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
                made = self._dispatch_on_clock()
            except Exception:  # a database outage must not end the worker
                logger.exception("webhook round failed; trying again after the poll interval")
                made = 0
            if made == 0 and not self._stop.is_set():
                self._pause(self.settings.webhook_poll_seconds)
