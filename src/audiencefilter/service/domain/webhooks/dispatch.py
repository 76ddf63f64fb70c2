"""Deliveries in the database: made from the outbox, claimed by workers, settled by attempts.

**Fan-out.** Each endpoint remembers how far it has read its list's outbox (`webhooks.position`).
`fan_out` locks the endpoint's row, reads the events after that position (commit order, so none
is ever skipped, `events.py`), inserts one delivery per event of a type it receives, with the
body frozen (every retry signs and sends the same bytes), and moves the position, in one
transaction: an event becomes exactly one delivery per endpoint, whatever the number of
workers (a second one skips the locked row, `FOR UPDATE SKIP LOCKED`, or on SQLite waits).

**Claims.** `claim` takes due deliveries (pending, next attempt reached, no live lease, endpoint
enabled) with `FOR UPDATE SKIP LOCKED`, so concurrent workers take different ones, and writes a
lease (a token and an expiry) before committing. The HTTP attempt runs outside any transaction;
a worker killed during it leaves a lease that expires (`webhook_lease_seconds`), and the
delivery is claimed again: at least once. A delivery is not claimable while an earlier delivery
(by outbox position) of the same endpoint and the same contact is pending: **in order per
contact**. Events without a contact are ordered by their audience. Accounts take turns for the
free slots, and none passes its limit of runs in flight (`turns.py`): one account's backlog
neither fills a worker nor delays another account's delivery past the next free slot. A slot
takes a run of one account's deliveries (`claim_runs`), which its thread sends in turn.

**Results.** `settle` records the attempt (status code, duration, error) and moves the delivery
on: delivered, or its next attempt after the backoff (`schedule.py`), or failed after the last
attempt. An endpoint counts its failed attempts since its last success; when it has failed for
`webhook_disable_after_seconds` (5 days) with at least `webhook_disable_min_failures` (20)
failed attempts and no success, it is disabled, with the reason visible on the endpoint. Its
pending deliveries wait; enabling it again sends them, and the events that came meanwhile.
"""

from __future__ import annotations

import itertools
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, func, insert, or_, select, update
from sqlalchemy.orm import Session, aliased

from .... import as_utc
from ...db.engine import Database
from ...db.models import (
    Event,
    EventHead,
    List,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
    new_id,
)
from ...ground import clock
from ...ground.json import dumps
from .. import event_feed
from .schedule import backoff
from .sender import Outcome
from .turns import Turns

ENABLED = "enabled"
DISABLED = "disabled"
PENDING = "pending"
DELIVERED = "delivered"
FAILED = "failed"
FAN_OUT_BATCH = 500


@dataclass(frozen=True)
class Policy:
    """The retry, lease and disabling rules. No defaults here: the settings' fields are the
    one place they are written (`webhook_retry_base_seconds`...), and the worker builds the
    policy from them."""

    retry_base: float
    retry_cap: float
    max_attempts: int
    lease: float
    disable_after: float
    disable_min_failures: int


@dataclass(frozen=True)
class Claimed:
    """A delivery this worker holds: what to send, where, signed with which secrets."""

    id: str
    token: str
    webhook_id: str
    url: str
    secrets: tuple[str, ...]
    body: bytes
    account_id: str = ""
    """Whose delivery it is: a worker counts its attempts in flight per account."""


def body_of(event: Event) -> bytes:
    """The Standard Webhooks payload: `type`, `timestamp` and the event as the feed shows it."""
    return dumps(
        {"type": event.type, "timestamp": event.occurredAt, "data": event_feed.event_view(event)}
    )


def order_key(event: Event) -> str | None:
    return event.contactId or event.audienceId


def any_webhook(database: Database) -> bool:
    with database.reading() as session:
        return session.scalar(select(Webhook.id).limit(1)) is not None


def behind(session: Session) -> list[str]:
    """Enabled endpoints whose list has events after their position."""
    statement = (
        select(Webhook.id)
        .join(EventHead, EventHead.listId == Webhook.listId)
        .where(Webhook.status == ENABLED, Webhook.position < EventHead.position)
    )
    return list(session.scalars(statement))


def fan_out_one(session: Session, webhook_id: str, batch: int = FAN_OUT_BATCH) -> int:
    """Turns the endpoint's next events into deliveries (in the caller's transaction)."""
    hook = session.scalars(
        select(Webhook)
        .where(Webhook.id == webhook_id, Webhook.status == ENABLED)
        .with_for_update(skip_locked=True)
    ).first()
    if hook is None:
        return 0  # another worker holds it, or it was disabled or deleted meanwhile
    rows = event_feed.after(session, hook.listId, hook.position, batch)
    if not rows:
        return 0
    wanted = set(hook.eventTypes)
    now = clock.now()
    values: list[dict[str, Any]] = [
        {
            "id": new_id("msg"),
            "webhookId": hook.id,
            "eventId": row.id,
            "eventType": row.type,
            "eventPosition": row.position,
            "orderKey": order_key(row),
            "body": body_of(row).decode(),
            "status": PENDING,
            "attempts": 0,
            "nextAttemptAt": now,
            "createdAt": now,
        }
        for row in rows
        if row.type in wanted
    ]
    if values:
        session.execute(insert(WebhookDelivery), values)
    session.execute(
        update(Webhook)
        .where(Webhook.id == hook.id)
        .values(position=rows[-1].position, updatedAt=Webhook.updatedAt)
        .execution_options(synchronize_session=False)
    )
    return len(values)


def fan_out(database: Database, batch: int = FAN_OUT_BATCH) -> int:
    """Deliveries for every endpoint that is behind; the number made."""
    with database.reading() as session:
        ids = behind(session)
    made = 0
    for webhook_id in ids:
        with database.transaction() as session:
            made += fan_out_one(session, webhook_id, batch)
    return made


def _signing_secrets(hook: Webhook, now: datetime) -> tuple[str, ...]:
    if (
        hook.previousSecret is not None
        and hook.previousSecretUntil is not None
        and as_utc(hook.previousSecretUntil) > now
    ):
        return (hook.secret, hook.previousSecret)
    return (hook.secret,)


def claim(
    database: Database, policy: Policy, slots: int, turns: Turns | None = None
) -> list[Claimed]:
    """Takes up to `slots` due deliveries for this worker, under a lease, by the accounts'
    turns (`claim_runs` with runs of one)."""
    runs = claim_runs(database, policy, slots, turns or Turns(slots), 1)
    return [item for run in runs for item in run]


def claim_runs(
    database: Database, policy: Policy, slots: int, turns: Turns, run: int
) -> list[list[Claimed]]:
    """Up to `slots` runs of at most `run` due deliveries each, one account's per run, under a
    lease, in a transaction of its own (`_claim_runs`)."""
    with database.transaction() as session:
        return _claim_runs(session, policy, slots, turns, run)


def _claim_runs(
    session: Session, policy: Policy, slots: int, turns: Turns, run: int
) -> list[list[Claimed]]:
    """The claim, in the caller's transaction. The accounts with deliveries due are ranked by their
    next turn (`turns.py`; those at their limit left out), a few due rows of each of the first
    are read, and the free slots go to them in turn. Nothing is begun: the caller begins what
    it starts (`Turns.begin`), one slot per run.

    A run is what one sending thread sends one after another (`worker.py`): an account's
    deliveries go out `run` per thread and round, not one, so a healthy account held to its
    share of threads is not also held to its share of deliveries per round."""
    now = clock.now()
    endpoints = _endpoints_due(session, now)
    if not endpoints:
        return []
    contested = len(endpoints) > 1
    limit, in_flight = turns.limit(contested), turns.in_flight()
    oldest = {account: due[0][1] for account, due in endpoints.items()}
    rows: dict[str, list[WebhookDelivery]] = {}
    for account in turns.order(oldest)[:slots]:
        threads = min(slots, limit - in_flight.get(account, 0))
        hooks = [hook for hook, _ in endpoints[account]]
        rows[account] = _due_of(session, now, hooks, threads * run)
    threads_of = {account: list(range(min(len(due), slots))) for account, due in rows.items()}
    chosen = turns.choose(threads_of, slots, contested)
    if not chosen:
        return []
    runs = _deal(rows, [account for account, _ in chosen], run)
    hooks_by_id = _hooks_of(session, [row for _, due in runs for row in due])
    until = now + timedelta(seconds=policy.lease)
    return [
        [_lease(row, hooks_by_id[row.webhookId], account, now, until) for row in due]
        for account, due in runs
    ]


def _deal(
    rows: dict[str, list[WebhookDelivery]], accounts: Sequence[str], run: int
) -> list[tuple[str, list[WebhookDelivery]]]:
    """One run per thread chosen (`accounts`, one entry per thread), an account's oldest rows
    dealt out over its threads in turn: a backlog goes out on every thread it was given, in
    parallel, each run at most `run` long."""
    taken = Counter(accounts)
    seen: Counter[str] = Counter()
    runs = []
    for account in accounts:
        threads, index = taken[account], seen[account]
        seen[account] += 1
        runs.append((account, rows[account][: threads * run][index::threads]))
    return runs


def _endpoints_due(session: Session, now: datetime) -> dict[str, list[tuple[str, datetime]]]:
    """Each account's endpoints with deliveries due, with their oldest, oldest first."""
    statement = (
        select(List.accountId, WebhookDelivery.webhookId, func.min(WebhookDelivery.nextAttemptAt))
        .join(Webhook, Webhook.id == WebhookDelivery.webhookId)
        .join(List, List.id == Webhook.listId)
        .where(*_due_conditions(now))
        .group_by(List.accountId, WebhookDelivery.webhookId)
        .order_by(func.min(WebhookDelivery.nextAttemptAt), WebhookDelivery.webhookId)
    )
    found: dict[str, list[tuple[str, datetime]]] = {}
    for account_id, webhook_id, oldest in session.execute(statement):
        found.setdefault(account_id, []).append((webhook_id, oldest))
    return found


def _due_of(
    session: Session, now: datetime, webhook_ids: Sequence[str], wanted: int
) -> list[WebhookDelivery]:
    """Up to `wanted` due rows of one account, its endpoints in turn (the first row of each,
    then the second...): within an account too, one endpoint's backlog does not hide another's
    delivery."""
    per_endpoint = [list(session.scalars(_due(now, wanted, hook))) for hook in webhook_ids[:wanted]]
    turns = itertools.zip_longest(*per_endpoint)
    return [row for turn in turns for row in turn if row is not None][:wanted]


def _due(now: datetime, limit: int, webhook_id: str) -> Select[WebhookDelivery]:
    """An endpoint's due deliveries (`_due_conditions`), soonest first, skipping rows others
    hold."""
    return (
        select(WebhookDelivery)
        .join(Webhook, Webhook.id == WebhookDelivery.webhookId)
        .where(WebhookDelivery.webhookId == webhook_id, *_due_conditions(now))
        .order_by(WebhookDelivery.nextAttemptAt, WebhookDelivery.eventPosition)
        .limit(limit)
        .with_for_update(of=WebhookDelivery, skip_locked=True)
    )


def _due_conditions(now: datetime) -> tuple[ColumnElement[bool], ...]:
    """Pending, next attempt reached, no live lease, endpoint enabled, and no earlier delivery
    of the same endpoint and contact pending (in order per contact)."""
    earlier = aliased(WebhookDelivery)
    waits_for_earlier = (
        select(earlier.id)
        .where(
            earlier.webhookId == WebhookDelivery.webhookId,
            earlier.orderKey == WebhookDelivery.orderKey,
            earlier.status == PENDING,
            earlier.eventPosition < WebhookDelivery.eventPosition,
        )
        .exists()
    )
    return (
        WebhookDelivery.status == PENDING,
        WebhookDelivery.nextAttemptAt <= now,
        or_(WebhookDelivery.leaseUntil.is_(None), WebhookDelivery.leaseUntil <= now),
        Webhook.status == ENABLED,
        ~waits_for_earlier,
    )


def _hooks_of(session: Session, rows: Sequence[WebhookDelivery]) -> dict[str, Webhook]:
    statement = select(Webhook).where(Webhook.id.in_({row.webhookId for row in rows}))
    return {hook.id: hook for hook in session.scalars(statement)}


def _lease(
    row: WebhookDelivery, hook: Webhook, account_id: str, now: datetime, until: datetime
) -> Claimed:
    """Writes this worker's lease on the delivery; what to send, where, signed how."""
    token = secrets.token_hex(8)
    row.leaseToken = token
    row.leaseUntil = until
    signing = _signing_secrets(hook, now)
    body = row.body.encode()
    return Claimed(row.id, token, hook.id, hook.url, signing, body, account_id)


@dataclass(frozen=True)
class Result:
    """One attempt of a claimed delivery, to record."""

    claimed: Claimed
    attempted_at: datetime
    outcome: Outcome


def settle(
    database: Database,
    policy: Policy,
    results: Sequence[Result],
    released: Sequence[Claimed] = (),
) -> None:
    """Records the attempts of a round, in one transaction (one commit for the lot), and
    releases the deliveries claimed and not attempted.

    Core statements, not ORM objects: the attempts in one multi-row insert, the deliveries in
    one update by primary key. Endpoints are updated in the order of their ids, so concurrent
    workers take their rows (failure counters) in the same order and cannot deadlock on them.
    """
    if not results and not released:
        return
    with database.transaction() as session:
        if results:
            _settle(session, policy, results)
        release(session, released)


def release(session: Session, released: Sequence[Claimed]) -> None:
    """Gives back deliveries claimed and never attempted (a run cut short): due again at once,
    attempts unchanged. Only where this worker's lease still holds them (tokens are random, so
    an id and a token of the same claim find the row)."""
    if not released:
        return
    session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id.in_([item.id for item in released]),
            WebhookDelivery.leaseToken.in_([item.token for item in released]),
            WebhookDelivery.status == PENDING,
        )
        .values(leaseToken=None, leaseUntil=None)
        .execution_options(synchronize_session=False)
    )


def _settle(session: Session, policy: Policy, results: Sequence[Result]) -> None:
    current = _current_rows(session, sorted(result.claimed.id for result in results))
    tally = _Tally(policy, clock.now())
    for result in results:
        row = current.get(result.claimed.id)
        if row is not None:  # None: the endpoint was deleted meanwhile
            tally.add(result, row)
    tally.write(session)


def _current_rows(session: Session, ids: list[str]) -> dict[str, Any]:
    """The claimed deliveries' lease, status and attempts, locked in the order of their ids."""
    statement = (
        select(
            WebhookDelivery.id,
            WebhookDelivery.leaseToken,
            WebhookDelivery.status,
            WebhookDelivery.attempts,
        )
        .where(WebhookDelivery.id.in_(ids))
        .order_by(WebhookDelivery.id)
        .with_for_update()
    )
    return {row.id: row for row in session.execute(statement)}


def _attempt_row(result: Result) -> dict[str, Any]:
    outcome = result.outcome
    return {
        "id": new_id("att"),
        "deliveryId": result.claimed.id,
        "attemptedAt": result.attempted_at,
        "statusCode": outcome.status_code,
        "durationMs": outcome.duration_ms,
        "error": outcome.error,
        "success": outcome.success,
    }


class _Tally:
    """A round's attempts, the deliveries' changes and each endpoint's successes and failures,
    written together (`write`)."""

    def __init__(self, policy: Policy, now: datetime) -> None:
        self.policy, self.now = policy, now
        self.attempts: list[dict[str, Any]] = []
        self.changes: list[dict[str, Any]] = []
        self.successes: dict[str, datetime] = {}
        self.failures: dict[str, list[Result]] = {}

    def add(self, result: Result, row: Any) -> None:
        self.attempts.append(_attempt_row(result))
        ours = row.leaseToken == result.claimed.token and row.status == PENDING
        change: dict[str, Any] = {
            "id": result.claimed.id,
            "status": row.status,
            "attempts": row.attempts + 1,
            "lastStatusCode": result.outcome.status_code,
            "lastError": result.outcome.error,
        }
        if result.outcome.success:
            self.succeeded(result, row, change, ours)
        elif ours:  # else another worker took it over after our lease ran out: its attempt counts
            self.failed(result, change)

    def succeeded(self, result: Result, row: Any, change: dict[str, Any], ours: bool) -> None:
        if row.status == PENDING:
            change["status"] = DELIVERED
            change["deliveredAt"] = self.now
        if ours:
            change["leaseToken"] = change["leaseUntil"] = None
        self.changes.append(change)
        at, webhook_id = result.attempted_at, result.claimed.webhook_id
        self.successes[webhook_id] = max(self.successes.get(webhook_id) or at, at)

    def failed(self, result: Result, change: dict[str, Any]) -> None:
        policy = self.policy
        change["leaseToken"] = change["leaseUntil"] = None
        if change["attempts"] >= policy.max_attempts:
            change["status"] = FAILED
        else:
            wait = backoff(change["attempts"], policy.retry_base, policy.retry_cap)
            change["nextAttemptAt"] = self.now + wait
        self.changes.append(change)
        self.failures.setdefault(result.claimed.webhook_id, []).append(result)

    def write(self, session: Session) -> None:
        if self.attempts:
            session.execute(insert(WebhookAttempt), self.attempts)
        for group in _by_keys(self.changes).values():
            session.execute(update(WebhookDelivery), group)
        for webhook_id in sorted(set(self.successes) | set(self.failures)):
            self.count(session, webhook_id)

    def count(self, session: Session, webhook_id: str) -> None:
        """An endpoint's failure count: reset by a success, then the failures after it."""
        after = self.successes.get(webhook_id)
        if after is not None:
            _reset_failures(session, webhook_id)
        failed = [
            result
            for result in self.failures.get(webhook_id, [])
            if after is None or result.attempted_at > after
        ]
        if failed:
            outcome = failed[-1].outcome
            _count_failures(session, self.policy, webhook_id, self.now, outcome, len(failed))


def _by_keys(changes: list[dict[str, Any]]) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """Groups the updates by the columns they set: a bulk update sets the same columns."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for change in changes:
        groups.setdefault(tuple(sorted(change)), []).append(change)
    return groups


def _reset_failures(session: Session, webhook_id: str) -> None:
    session.execute(
        update(Webhook)
        .where(
            Webhook.id == webhook_id,
            or_(Webhook.failureCount > 0, Webhook.failingSince.is_not(None)),
        )
        .values(failureCount=0, failingSince=None, updatedAt=Webhook.updatedAt)
        .execution_options(synchronize_session=False)
    )


def _count_failures(
    session: Session, policy: Policy, webhook_id: str, now: datetime, last: Outcome, count: int
) -> None:
    session.execute(
        update(Webhook)
        .where(Webhook.id == webhook_id)
        .values(
            failureCount=Webhook.failureCount + count,
            failingSince=func.coalesce(Webhook.failingSince, now),
            updatedAt=Webhook.updatedAt,
        )
        .execution_options(synchronize_session=False)
    )
    hook = session.scalars(
        select(Webhook).where(Webhook.id == webhook_id).execution_options(populate_existing=True)
    ).first()
    if hook is None or hook.status != ENABLED or hook.failingSince is None:
        return
    since = as_utc(hook.failingSince)
    if hook.failureCount >= policy.disable_min_failures and now - since >= timedelta(
        seconds=policy.disable_after
    ):
        # Attempts of one pass are counted together: the endpoint stops at the failure that
        # reached the threshold, and the others of the pass, made at once, come after it.
        hook.failureCount = max(hook.failureCount - count + 1, policy.disable_min_failures)
        hook.status = DISABLED
        hook.disabledAt = now
        hook.disabledReason = (
            f"{hook.failureCount} failed attempts in a row since {since.isoformat()}, "
            f"the last: {last.error}"
        )[:2000]


def enable(session: Session, hook: Webhook) -> None:
    """Enables the endpoint again; its pending deliveries are due at once."""
    now = clock.now()
    hook.status = ENABLED
    hook.disabledAt = None
    hook.disabledReason = None
    hook.failureCount = 0
    hook.failingSince = None
    session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.webhookId == hook.id, WebhookDelivery.status == PENDING)
        .values(nextAttemptAt=now)
        .execution_options(synchronize_session=False)
    )


def disable(hook: Webhook, reason: str) -> None:
    hook.status = DISABLED
    hook.disabledAt = clock.now()
    hook.disabledReason = reason


def redeliver(delivery: WebhookDelivery) -> None:
    """Sends a delivery again: pending, due now, with a fresh run of attempts."""
    delivery.status = PENDING
    delivery.attempts = 0
    delivery.nextAttemptAt = clock.now()
    delivery.leaseToken = None
    delivery.leaseUntil = None


def attempts_of(session: Session, delivery_ids: Sequence[str]) -> dict[str, list[WebhookAttempt]]:
    found: dict[str, list[WebhookAttempt]] = {key: [] for key in delivery_ids}
    if not delivery_ids:
        return found
    rows = session.scalars(
        select(WebhookAttempt)
        .where(WebhookAttempt.deliveryId.in_(delivery_ids))
        .order_by(WebhookAttempt.attemptedAt, WebhookAttempt.id)
    )
    for row in rows:
        found[row.deliveryId].append(row)
    return found
