"""Webhook drills: a killed service loses no event, a failing receiver gets everything after,
two workers deliver each event once.

Every drill runs a real receiver on 127.0.0.1 (`drills/receiver.py`) and compares what it got
with the list's outbox, read straight from the database: an event of a subscribed type that
committed but never reached the receiver is *lost* (the drill fails); one received more than
once is a *duplicate* (allowed: delivery is at least once, and a SIGKILL between the POST and
the record of its answer sends it again; the drills count and report them). Signatures are
checked on every request with the Standard Webhooks rule.

- `webhook-crash`: clients PATCH contacts as fast as they can; half-way the service's process
  group (with its worker thread) gets SIGKILL; it restarts on the same SQLite file and the
  burst finishes. Every committed event must be delivered, at least once.
- `webhook-outage`: the receiver answers 500 for 20 seconds while contacts are created; it
  must get every event afterwards (retries with backoff and jitter; the drill caps the backoff
  at 5 s so the wait after the outage stays short).
- `webhook-two-workers`: on PostgreSQL, the service's thread off and two `worker` processes;
  every event delivered once, duplicates counted.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
import time
from collections import Counter

import httpx
from sqlalchemy import create_engine, text

from . import backends
from .common import Context, Row, rate, row
from .receiver import Received, Receiver
from .service import (
    UNLIMITED,
    client,
    create_key,
    create_list,
    expect,
    migrate,
    running,
    workers,
)

LOCAL = '["127.0.0.1/32"]'
DELIVERY_TIMEOUT = 120.0


def signed(secret: str, item: Received) -> bool:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{item.headers['webhook-id']}.{item.headers['webhook-timestamp']}.".encode()
    digest = hmac.new(key, content + item.body, hashlib.sha256).digest()
    expected = "v1," + base64.b64encode(digest).decode()
    return any(
        hmac.compare_digest(part, expected) for part in item.headers["webhook-signature"].split()
    )


def outbox(database_url: str, list_id: str, types: tuple[str, ...]) -> set[str]:
    """The ids of the list's committed events of these types."""
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                text("SELECT id, type FROM events WHERE list_id = :list_id"), {"list_id": list_id}
            )
            return {str(id_) for id_, type_ in rows if type_ in types}
    finally:
        engine.dispose()


def failed_deliveries(database_url: str) -> int:
    """Deliveries whose attempts ran out (`failed`): each is also counted as lost."""
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            query = text("SELECT count(*) FROM webhook_deliveries WHERE status = 'failed'")
            return int(connection.execute(query).scalar_one())
    finally:
        engine.dispose()


class Tally:
    """What the receiver got, by event: deliveries, duplicates, bad signatures."""

    def __init__(self, receiver: Receiver, secret: str) -> None:
        got = receiver.succeeded()
        self.events = Counter(item.payload()["data"]["id"] for item in got)
        self.bad_signatures = sum(not signed(secret, item) for item in receiver.snapshot())
        self.requests = len(receiver.snapshot())

    @property
    def duplicates(self) -> int:
        return sum(count - 1 for count in self.events.values())


def wait_for_all(receiver: Receiver, expected: set[str], timeout: float) -> float:
    """Seconds until every expected event reached the receiver (or the timeout)."""
    started = time.monotonic()
    receiver.wait_for(
        lambda got: expected <= {item.payload()["data"]["id"] for item in got if item.status < 300},
        timeout,
    )
    return time.monotonic() - started


def new_webhook(api: httpx.Client, list_id: str, url: str, types: tuple[str, ...]) -> str:
    body = {"listId": list_id, "url": url, "eventTypes": list(types)}
    return str(expect(api.post("/v4/webhooks", json=body), 201)["webhook"]["secret"])


def _settings(**extra: str) -> dict[str, str]:
    return {
        "RATE_LIMIT_FREE": UNLIMITED,
        "WEBHOOK_ALLOWED_NETWORKS": LOCAL,
        "WEBHOOK_POLL_SECONDS": "0.2",
        **extra,
    }


def _update_burst(url: str, key: str, ids: list[str], updates: int, clients: int) -> None:
    """`updates` PATCHes spread over the contacts; stops quietly when the service goes away."""
    counter = iter(range(updates))
    lock = threading.Lock()

    def one_client() -> None:
        with httpx.Client(base_url=url, headers={"apiKey": key}, timeout=30) as api:
            while True:
                with lock:
                    index = next(counter, None)
                if index is None:
                    return
                try:
                    api.patch(f"/v4/contacts/{ids[index % len(ids)]}", json={"points": index})
                except httpx.TransportError:
                    return

    threads = [threading.Thread(target=one_client, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)


def webhook_crash(ctx: Context) -> Row:
    path = ctx.workdir / "hooks.db"
    database_url = f"sqlite:///{path}"
    key = create_key(database_url)
    types = ("contact.updated", "audience.entered", "audience.left")
    updates = 600 if ctx.fast else 3000
    receiver = Receiver()
    settings = _settings(WEBHOOK_LEASE_SECONDS="5")
    try:
        with running(database_url, ctx.workdir / "crash.log", settings=settings) as service:
            with client(service, key) as api:
                list_id = create_list(api)
                secret = new_webhook(api, list_id, receiver.url, types)
                smart = {"name": "odd", "listId": list_id, "mode": "smart"}
                smart["filtersText"] = "points > 100"
                expect(api.post("/v4/audiences", json=smart), 201)
                ids = [
                    expect(
                        api.post("/v4/contacts", json={"email": f"c{i}@x.test", "listId": list_id}),
                        201,
                    )["contact"]["id"]
                    for i in range(40)
                ]
            started = time.monotonic()
            first = threading.Thread(
                target=_update_burst, args=(service.url, key, ids, updates // 2, 8)
            )
            first.start()
            time.sleep(0.5)
            receiver.wait_for(lambda got: len(got) >= 50, 30)
            service.kill()
            before_kill = len(receiver.snapshot())
            first.join()
            service.start()
            _update_burst(service.url, key, ids, updates // 2, 8)
            expected = outbox(database_url, list_id, types)
            waited = wait_for_all(receiver, expected, DELIVERY_TIMEOUT)
            elapsed = time.monotonic() - started
    finally:
        receiver.close()
    tally = Tally(receiver, secret)
    lost = len(expected - set(tally.events))
    figures = (
        f"{len(expected):,} events committed, {before_kill} requests before SIGKILL, lost {lost}, "
        f"duplicates {tally.duplicates}, bad signatures {tally.bad_signatures}, all delivered "
        f"{waited:.1f} s after the burst, {rate(len(expected), elapsed)} end to end"
    )
    return row("webhook-crash", lost == 0 and tally.bad_signatures == 0, figures)


def webhook_outage(ctx: Context) -> Row:
    path = ctx.workdir / "outage.db"
    database_url = f"sqlite:///{path}"
    key = create_key(database_url)
    types = ("contact.created",)
    down_seconds = 20.0
    down = threading.Event()
    down.set()
    receiver = Receiver(lambda _headers, _body: 500 if down.is_set() else 200)
    # Full jitter makes a wait as short as zero, so with a 5 s cap the default 15 attempts can
    # run out inside the 20 s outage (the mean of 14 waits is 31 s, one standard deviation 5 s):
    # an early event would then be marked failed, which is the policy working, not a loss. The
    # drill allows 60 attempts (mean of the waits 146 s, 15 standard deviations past 20 s).
    settings = _settings(
        WEBHOOK_RETRY_CAP_SECONDS="5", WEBHOOK_RETRY_BASE_SECONDS="1", WEBHOOK_MAX_ATTEMPTS="60"
    )
    try:
        with running(database_url, ctx.workdir / "outage.log", settings=settings) as service:
            with client(service, key) as api:
                list_id = create_list(api)
                secret = new_webhook(api, list_id, receiver.url, types)
                started = time.monotonic()
                created = 0
                while time.monotonic() - started < down_seconds * 0.75:
                    body = {"email": f"o{created}@x.test", "listId": list_id}
                    expect(api.post("/v4/contacts", json=body), 201)
                    created += 1
                    time.sleep(0.02)
            time.sleep(max(0.0, down_seconds - (time.monotonic() - started)))
            failures = len(receiver.snapshot())
            down.clear()
            expected = outbox(database_url, list_id, types)
            waited = wait_for_all(receiver, expected, DELIVERY_TIMEOUT)
            gave_up = failed_deliveries(database_url)
    finally:
        receiver.close()
    tally = Tally(receiver, secret)
    lost = len(expected - set(tally.events))
    figures = (
        f"{len(expected):,} events during {down_seconds:.0f} s of 500s ({failures:,} failed "
        f"attempts), lost {lost} (attempts run out: {gave_up}), all delivered {waited:.1f} s "
        "after the receiver came back, "
        f"duplicates {tally.duplicates}, bad signatures {tally.bad_signatures}"
    )
    return row("webhook-outage", lost == 0 and tally.bad_signatures == 0, figures)


def append_events(database_url: str, list_id: str, count: int, contacts: int) -> None:
    """`count` contact.updated events straight into the outbox (what the writes would make)."""
    from audiencefilter.service.db.engine import Database
    from audiencefilter.service.domain import events
    from audiencefilter.service.settings import Settings

    database = Database.from_settings(Settings(database_url=database_url))
    try:
        for start in range(0, count, 500):
            batch = [
                events.NewEvent(events.CONTACT_UPDATED, f"con_drill{index % contacts}")
                for index in range(start, min(count, start + 500))
            ]
            with database.transaction() as session:
                events.append(session, list_id, batch)
    finally:
        database.dispose()


def deliver_with_workers(
    database_url: str, count: int, worker_count: int, ctx: Context, name: str
) -> tuple[int, Tally, float, int]:
    """Events appended, then `worker_count` worker processes deliver them; (expected, tally,
    seconds, lost)."""
    key = create_key(database_url)
    receiver = Receiver()
    types = ("contact.updated",)
    settings = _settings(WEBHOOK_WORKER="false", WEBHOOK_POLL_SECONDS="0.05")
    try:
        with running(database_url, ctx.workdir / f"{name}.log", settings=settings) as service:
            with client(service, key) as api:
                list_id = create_list(api)
                secret = new_webhook(api, list_id, receiver.url, types)
        append_events(database_url, list_id, count, contacts=max(1, count // 4))
        expected = outbox(database_url, list_id, types)
        with workers(database_url, worker_count, settings):
            seconds = wait_for_all(receiver, expected, DELIVERY_TIMEOUT)
            time.sleep(1.0)  # late duplicates, if any, arrive now
    finally:
        receiver.close()
    tally = Tally(receiver, secret)
    return len(expected), tally, seconds, len(expected - set(tally.events))


def webhook_two_workers(ctx: Context) -> Row:
    count = 1000 if ctx.fast else 5000
    with backends.postgres() as cluster:
        migrate(cluster.database_url)
        expected, tally, seconds, lost = deliver_with_workers(
            cluster.database_url, count, 2, ctx, "two-workers"
        )
    figures = (
        f"{expected:,} events by 2 worker processes on PostgreSQL in {seconds:.1f} s "
        f"({rate(expected, seconds)}), lost {lost}, duplicates {tally.duplicates}, "
        f"bad signatures {tally.bad_signatures}"
    )
    return row("webhook-two-workers", lost == 0 and tally.bad_signatures == 0, figures)
