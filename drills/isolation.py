"""The isolation drill: one account's heavy audience and silent receiver do not stall another's.

On SQLite every write waits for the database's one write lock. Account A has a list of a few
thousand contacts, a webhook whose receiver accepts connections and never answers, and creates
smart audiences whose filter is costly within the budgets (an OR of 280 anniversaries, each in
its own time zone, a few seconds of evaluation). Meanwhile account B creates contacts one after
another, with a receiver of its own that answers at once. The drill measures B's write latency
and the time from each of B's writes to its `contact.created` delivery, first alone (baseline)
then during A's work, and fails past the bounds below (the full drill; `--fast` prints them).

Before issue 26 was fixed, A's evaluation ran inside its write transaction: B's writes waited
for the whole of it (seconds each, 11-12 s measured by the issue on 6,000 contacts). Now A's
filter runs in a read transaction and its write only stores the answer.
"""

from __future__ import annotations

import socket
import statistics
import threading
import time
from typing import Any

import httpx

from .common import Context, Row, row
from .receiver import Receiver
from .service import client, create_key, create_list, expect, running, seed_contacts
from .webhooks import _settings, new_webhook

# The bounds the drill holds B to while A works: its slowest write and its slowest delivery.
MAX_WRITE_SECONDS = 2.0  # before issue 26: 3.98 s on 4,000 contacts, 11-12 s on 6,000
MAX_DELIVERY_SECONDS = 5.0
BASELINE_SECONDS = 3.0
ZONES = ("Europe/Paris", "Asia/Tokyo", "America/New_York", "UTC", "Australia/Sydney")


class SilentReceiver:
    """Accepts every connection on 127.0.0.1 and never reads or answers a byte."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.connections: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.getsockname()[1]}/hooks"

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return  # closed
            self.connections.append(connection)

    def close(self) -> None:
        self.server.close()
        for connection in self.connections:
            connection.close()


def heavy_filter() -> dict[str, Any]:
    """280 zoned anniversaries: within the budget of one filter, seconds over a list. The
    last (today's, after 279 that every contact fails, so none is skipped) selects every
    contact seeded today, so each one enters: thousands of events for the silent receiver."""
    today: dict[str, Any] = {"createdAt": {"anniversary": {"this": "day"}}}
    anniversaries = [
        {
            "createdAt": {
                "anniversary": {"next": 1 + i % 30, "unit": "day", "timeZone": ZONES[i % 5]}
            }
        }
        for i in range(279)
    ]
    return {"OR": [*anniversaries, today]}


def _percentiles(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered):.3f} s, p99 {p99:.3f} s, max {ordered[-1]:.3f} s"


class Writer:
    """Account B: creates contacts one after another and notes when each answered."""

    def __init__(self, api: httpx.Client, list_id: str) -> None:
        self.api = api
        self.list_id = list_id
        self.done: dict[str, tuple[float, float]] = {}  # contact id: (latency, answered at)
        self.count = 0

    def write_until(self, stop: threading.Event | float) -> list[str]:
        """Writes until `stop` is set (or that many seconds pass); the ids written."""
        written: list[str] = []
        deadline = time.monotonic() + stop if isinstance(stop, float) else None
        while not (stop.is_set() if isinstance(stop, threading.Event) else False):
            if deadline is not None and time.monotonic() >= deadline:
                break
            written.append(self.one())
        return written

    def one(self) -> str:
        """One contact created; its id. Raises `ServiceFailed` unless it answered 201."""
        self.count += 1
        body = {"email": f"b{self.count}@isolation.test", "listId": self.list_id}
        started = time.monotonic()
        contact = expect(self.api.post("/v4/contacts", json=body), 201)["contact"]
        answered = time.monotonic()
        self.done[contact["id"]] = (answered - started, answered)
        return str(contact["id"])


def _deliveries(receiver: Receiver, writer: Writer, ids: list[str]) -> list[float]:
    """Seconds from each write's answer to its first delivery (the missing ones excluded)."""
    first: dict[str, float] = {}
    for item in receiver.succeeded():
        contact_id = item.payload()["data"]["contactId"]
        first.setdefault(contact_id, item.at)
    return [first[i] - writer.done[i][1] for i in ids if i in first]


def _heavy_work(api: httpx.Client, list_id: str, audiences: int, finished: threading.Event) -> None:
    """Account A: creates `audiences` heavy smart audiences, one after another."""
    try:
        for index in range(audiences):
            body = {"name": f"heavy {index}", "listId": list_id, "filters": heavy_filter()}
            expect(api.post("/v4/audiences?limit=1", json=body), 201)
    finally:
        finished.set()


def isolation(ctx: Context) -> Row:
    database_url = f"sqlite:///{ctx.workdir / 'isolation.db'}"
    key_a, key_b = create_key(database_url, "heavy"), create_key(database_url, "light")
    contacts, audiences = (4000, 2) if ctx.fast else (6000, 3)
    silent, receiver = SilentReceiver(), Receiver()
    settings = _settings(MEMBERSHIP_SWEEP_SECONDS="0")
    try:
        with running(database_url, ctx.workdir / "isolation.log", settings=settings) as service:
            with client(service, key_a, timeout=300) as api_a, client(service, key_b) as api_b:
                list_a, list_b = create_list(api_a, "heavy"), create_list(api_b, "light")
                seed_contacts(database_url, list_a, contacts)
                new_webhook(api_a, list_a, silent.url, ("audience.entered",))
                new_webhook(api_b, list_b, receiver.url, ("contact.created",))
                writer = Writer(api_b, list_b)
                baseline = writer.write_until(BASELINE_SECONDS)
                finished = threading.Event()
                heavy = threading.Thread(
                    target=_heavy_work, args=(api_a, list_a, audiences, finished)
                )
                started = time.monotonic()
                heavy.start()
                during = writer.write_until(finished)
                heavy_seconds = time.monotonic() - started
                heavy.join()
                expected = set(baseline + during)
                receiver.wait_for(
                    lambda got: (
                        expected
                        <= {
                            item.payload()["data"]["contactId"] for item in got if item.status < 300
                        }
                    ),
                    60.0,
                )
    finally:
        silent.close()
        receiver.close()
    writes_before = [writer.done[i][0] for i in baseline]
    writes_during = [writer.done[i][0] for i in during]
    delivered_during = _deliveries(receiver, writer, during)
    lost = len(during) - len(delivered_during)
    worst_write = max(writes_during, default=0.0)
    worst_delivery = max(delivered_during, default=0.0)
    figures = (
        f"A: {audiences} audiences of 280 zoned anniversaries over {contacts:,} contacts in "
        f"{heavy_seconds:.1f} s, receiver silent ({len(silent.connections)} connections held); "
        f"B writes alone: {_percentiles(writes_before)}; during A: {len(during)} writes, "
        f"{_percentiles(writes_during)} (bound {MAX_WRITE_SECONDS} s); B deliveries alone: "
        f"{_percentiles(_deliveries(receiver, writer, baseline))}; during A: "
        f"{_percentiles(delivered_during)} (bound {MAX_DELIVERY_SECONDS} s), undelivered {lost}"
    )
    # `--fast` (CI) judges what is exact, B wrote and every delivery arrived, and prints the
    # latencies: a bound in seconds is a verdict only in the full drill, as in `floods`.
    bounded = ctx.fast or (
        worst_write <= MAX_WRITE_SECONDS and worst_delivery <= MAX_DELIVERY_SECONDS
    )
    passed = bool(during) and lost == 0 and bounded
    if ctx.fast:
        figures += "; bounds printed, not judged"
    return row("isolation", passed, figures)
