"""The webhook worker: fan out new events, claim due deliveries, send them, settle them.

It runs as a thread of the service (`webhook_worker`, on by default) and as its own process
(`python -m audiencefilter.service worker`); any number of both may run against one PostgreSQL
database, since fan-out and claims are made safe in the database (`dispatch.py`). On SQLite
every write transaction takes the database's write lock, so they are serialised.

The loop keeps `webhook_concurrency` sending threads busy (so at most that many connections per
worker). Each turn records the attempts that ended since the last turn (and gives back the
deliveries claimed and not attempted) in one transaction, fans out new events, and claims a run
of up to `RUN` due deliveries of one account for each free thread. A thread sends its run one
attempt after another, each within `webhook_timeout_seconds`, and stops at the first failed
attempt or once the run is `RUN_SECONDS` old. A run that ends frees its thread and wakes the
loop at once. So a silent receiver holds only its own threads, for one attempt's time limit,
never a round of everyone's; and an account held to its share of threads still has up to `RUN`
deliveries per thread and turn sent to a prompt receiver, so its deliveries keep up with its
writes however slowly the turns come (on SQLite each of a turn's writes waits in the fair gate
behind other accounts' turns; measured in docs/drills.md, *The isolation drill*). Accounts
take turns for the free threads (`turns.py`): the account with the fewest runs in flight first,
round robin among equals; an account holds at most `webhook_account_share` threads while others
have deliveries due, and alone all threads but that share, which stay free for the next
account. An idle loop waits `webhook_poll_seconds`.
While the database has no webhook at all, it looks again only every `DISCOVERY_SECONDS` (or at
once when this process creates one): a service without webhooks does no work for them.
`run_once` (tests, drills) is one synchronous round: claim four per thread, send them all,
record them together. The lease (60 s by default) outlasts an attempt (10 s at most), and a run
starts no attempt that could end after it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from .... import system_clock
from ...db.engine import Database
from ...ground import clock
from ...ground.metrics import Metrics
from ...settings import Settings
from . import dispatch, signing, targets
from .sender import REFUSED, Outcome, post
from .turns import Turns

logger = logging.getLogger("audiencefilter.service.webhooks")
# A round claims this many deliveries per sending thread: fewer transactions per delivery, and
# still well within the lease (each attempt is bounded by the timeout).
CLAIM_ROUNDS = 4
DISCOVERY_SECONDS = 60.0
RUN = 16
"""Deliveries one sending thread takes per turn of the loop and sends one after another."""
RUN_SECONDS = 0.5
"""A run starts no attempt after this: another account waits for a thread at most this longer
than one attempt's time limit."""


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
        self,
        database: Database,
        settings: Settings,
        app_clock: clock.Clock | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.database, self.settings, self.clock = database, settings, app_clock
        self.metrics = metrics  # counts each attempt's outcome when given
        self.policy = policy_of(settings)
        self.allowed = targets.networks(settings.webhook_allowed_networks)
        self._pool = ThreadPoolExecutor(
            max_workers=settings.webhook_concurrency, thread_name_prefix="webhook-send"
        )
        self._stop, self._wake = threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None
        concurrency, share = settings.webhook_concurrency, settings.webhook_account_share
        self.turns = Turns(concurrency, share)  # the loop's attempts in flight, per account
        self._round_turns = Turns(concurrency * CLAIM_ROUNDS, share * CLAIM_ROUNDS)
        self._flight = threading.Lock()
        self._ended: list[dispatch.Result] = []  # attempts ended, not recorded yet
        self._released: list[dispatch.Claimed] = []  # claimed, not attempted: to give back

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
        """One turn of the loop: record the attempts ended since the last turn, fan out, claim
        runs for the free sending threads and start each; the number of runs started (threads
        taken)."""
        self.record_ended()
        dispatch.fan_out(self.database)
        free = self.turns.free()
        if free <= 0:
            return 0
        runs = dispatch.claim_runs(self.database, self.policy, free, self.turns, self._run_length())
        app_clock = self.clock or system_clock
        for run in runs:
            self.turns.begin(run[0].account_id)
            self._pool.submit(self._run_and_hand_back, run, app_clock)
        return len(runs)

    def _run_length(self) -> int:
        """Deliveries per run: one when the lease could not outlast a second attempt."""
        return RUN if self._run_seconds() > 0 else 1

    def _run_seconds(self) -> float:
        """How long a run may go on starting attempts: `RUN_SECONDS`, and never so late that
        an attempt would end after the lease written at the claim."""
        return min(RUN_SECONDS, self.policy.lease - self.settings.webhook_timeout_seconds)

    def _run_and_hand_back(self, run: Sequence[dispatch.Claimed], app_clock: clock.Clock) -> None:
        """Sends the run's deliveries one after another while each succeeds and the run is
        young (`_run_seconds`); those not attempted are released at the next turn."""
        results: list[dispatch.Result] = []
        started, begun = time.monotonic(), 0  # begun: attempted, or whose attempt raised
        try:
            for item in run:
                if results and not self._run_goes_on(results[-1], started):
                    break
                begun += 1
                results.append(self._attempt(item, app_clock))
        except Exception:  # its lease runs out and the delivery is tried again
            logger.exception("the attempt of delivery %s failed to run", run[begun - 1].id)
        finally:
            with self._flight:
                self._ended.extend(results)
                self._released.extend(run[begun:])
            self.turns.end(run[0].account_id)
            self._wake.set()

    def _run_goes_on(self, last: dispatch.Result, started: float) -> bool:
        """A run stops at its first failed attempt (a silent or failing receiver holds its
        thread for one attempt, as without runs) and once it has run `_run_seconds`."""
        return last.outcome.success and time.monotonic() - started < self._run_seconds()

    def record_ended(self) -> None:
        """Records the attempts that ended since the last call, and releases the deliveries
        claimed and not attempted, in one transaction."""
        with self._flight:
            ended, self._ended = self._ended, []
            released, self._released = self._released, []
        try:
            dispatch.settle(self.database, self.policy, ended, released)
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
        if self.metrics is not None:
            self.metrics.webhook_attempt(outcome.kind)
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
            return Outcome(None, f"{REFUSED} {exc}"[:500], 0)
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
