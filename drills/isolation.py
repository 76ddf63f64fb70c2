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
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from . import backends
from .common import Context, Row, row
from .receiver import Receiver
from .service import client, create_key, create_list, expect, migrate, running, seed_contacts
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


# The builds and clock cases (issue 51): account A's queue of background builds against
# account B's small build and B's clock-driven exit, each measured alone and during A's builds.
MAX_BUILD_ADDED_SECONDS = 2.0  # before: 4.5-5.8 s on SQLite, 10-13 s on PostgreSQL
MAX_CLOCK_ADDED_SECONDS = 1.0  # before: 3.9-9.1 s on PostgreSQL
WINDOW_SECONDS = 2.0  # B's clock audience: "signed up in the last 2 seconds"
DATED_WITHIN = 0.01  # B's exit is dated at its instant, however late it comes
BUILD_SETTINGS = {"AUDIENCE_BUILD_BACKGROUND_ABOVE": "100", "AUDIENCE_BUILD_CHUNK": "250"}


def isolation_builds_sqlite(ctx: Context) -> Row:
    return _builds("isolation-builds-sqlite", ctx, f"sqlite:///{ctx.workdir / 'builds.db'}")


def isolation_builds_postgres(ctx: Context) -> Row:
    cluster: AbstractContextManager[Any] = backends.postgres()
    with cluster as postgres:
        return _builds("isolation-builds-postgres", ctx, postgres.database_url)


class AccountB:
    """B's two probes: a small audience built in the background, and a contact leaving a
    window on the clock; each answers seconds, and the exits' dating errors are kept."""

    def __init__(self, api: httpx.Client, small_list: str, clock_list: str) -> None:
        self.api, self.small_list, self.clock_list = api, small_list, clock_list
        self.dating: list[float] = []
        self.builds = 0

    def small_build(self) -> float:
        """Seconds from creating a small audience (built in the background) to its `built`."""
        self.builds += 1
        body: dict[str, Any] = {"name": f"small {self.builds}", "listId": self.small_list}
        body["filters"] = {"points": {"gte": 0}}
        started = time.monotonic()
        audience = expect(self.api.post("/v4/audiences", json=body), 201)["audience"]
        while audience["status"] != "built":
            time.sleep(0.02)
            audience = expect(self.api.get(f"/v4/audiences/{audience['id']}"), 200)["audience"]
        return time.monotonic() - started

    def clock_exit(self) -> float:
        """Seconds from a new contact's instant of leaving the window to its `audience.left`
        in the feed; notes how far from that instant the event is dated."""
        body = {"email": f"clock{len(self.dating)}@isolation.test", "listId": self.clock_list}
        contact = expect(self.api.post("/v4/contacts", json=body), 201)["contact"]
        turned = datetime.fromisoformat(contact["createdAt"]) + timedelta(seconds=WINDOW_SECONDS)
        while (left := self._left(contact["id"])) is None:
            time.sleep(0.02)
        arrived = datetime.now(UTC)
        self.dating.append(
            abs((datetime.fromisoformat(left["occurredAt"]) - turned).total_seconds())
        )
        return (arrived - turned).total_seconds()

    def _left(self, contact_id: str) -> dict[str, Any] | None:
        query: dict[str, str | int] = {"listId": self.clock_list, "limit": 1000}
        events = expect(self.api.get("/v4/events", params=query), 200)["events"]
        found = [e for e in events if e["type"] == "audience.left" and e["contactId"] == contact_id]
        return found[0] if found else None


def _b_lists(api: httpx.Client, database_url: str) -> AccountB:
    """B's small list (just past the background threshold) and its clock list and audience."""
    small, clock_list = create_list(api, "small"), create_list(api, "clock")
    seed_contacts(database_url, small, 150, seed=11)
    window = {"createdAt": {"gte": {"ago": f"PT{WINDOW_SECONDS:g}S"}}}
    body = {"name": "just now", "listId": clock_list, "filters": window}
    expect(api.post("/v4/audiences", json=body), 201)
    return AccountB(api, small, clock_list)


def _a_builds(api: httpx.Client, list_id: str, count: int, ids: list[str]) -> None:
    """A's queue: `count` costly audiences, each answered `building` at once (their ids)."""
    for index in range(count):
        body = {"name": f"heavy {index}", "listId": list_id, "filters": heavy_filter()}
        # `limit=1`: the answer's page of members is judged now, seconds of this filter
        audience = expect(api.post("/v4/audiences?limit=1", json=body), 201)["audience"]
        ids.append(str(audience["id"]))


def _still_building(api: httpx.Client, list_id: str) -> int:
    """How many of A's audiences are still building (the list's page: no members judged)."""
    query: dict[str, str | int] = {"listId": list_id, "limit": 100}
    listed = expect(api.get("/v4/audiences", params=query), 200)["audiences"]
    return sum(audience["status"] == "building" for audience in listed)


def _probe(b: AccountB, repeats: int) -> tuple[float, float]:
    """B's slowest small build and slowest clock exit over `repeats` of each."""
    builds = [b.small_build() for _ in range(repeats)]
    exits = [b.clock_exit() for _ in range(repeats)]
    return max(builds), max(exits)


def _builds(name: str, ctx: Context, database_url: str) -> Row:
    contacts, queued, repeats = (2000, 4, 1) if ctx.fast else (6000, 8, 3)
    migrate(database_url)
    key_a, key_b = create_key(database_url, "builder"), create_key(database_url, "prober")
    settings = _settings(MEMBERSHIP_SWEEP_SECONDS="1", **BUILD_SETTINGS)
    with running(database_url, ctx.workdir / f"{name}.log", settings=settings) as service:
        # A's own requests wait for its builds' turns (a listing of building audiences on
        # SQLite took over 30 s); B's, whose delays are measured, keep the default timeout.
        with client(service, key_a, timeout=300) as api_a, client(service, key_b) as api_b:
            list_a = create_list(api_a, "heavy")
            seed_contacts(database_url, list_a, contacts)
            b = _b_lists(api_b, database_url)
            build_alone, clock_alone = _probe(b, repeats)
            ids: list[str] = []
            queue = threading.Thread(target=_a_builds, args=(api_a, list_a, queued, ids))
            queue.start()
            while not ids and queue.is_alive():
                time.sleep(0.02)
            build_during, clock_during = _probe(b, repeats)
            overlapped = _still_building(api_a, list_a)
            queue.join()
    added_build, added_clock = build_during - build_alone, clock_during - clock_alone
    figures = (
        f"A: {queued} builds of 280 zoned anniversaries over {contacts:,} contacts, "
        f"{overlapped} still building after B's probes; B's small build alone "
        f"{build_alone:.2f} s, during A {build_during:.2f} s (added {added_build:.2f} s, bound "
        f"{MAX_BUILD_ADDED_SECONDS} s); B's clock exit after its instant alone "
        f"{clock_alone:.2f} s, during A {clock_during:.2f} s (added {added_clock:.2f} s, bound "
        f"{MAX_CLOCK_ADDED_SECONDS} s); exits dated within {max(b.dating):.3f} s of their instants"
    )
    # `--fast` judges what is exact (A still built while B probed, every exit dated at its
    # instant) and prints the seconds; the bounds are a verdict in the full drill only.
    exact = overlapped > 0 and max(b.dating) <= DATED_WITHIN
    bounded = ctx.fast or (
        added_build <= MAX_BUILD_ADDED_SECONDS and added_clock <= MAX_CLOCK_ADDED_SECONDS
    )
    if ctx.fast:
        figures += "; bounds printed, not judged"
    return row(name, exact and bounded, figures)
