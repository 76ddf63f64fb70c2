"""The sustained part of `benchmarks.service_rate`: concurrent clients PATCHing contacts while a
reader polls the event feed, and how late each membership event became visible.

Each client owns the contacts whose place in the pool is its number modulo the clients, so the
writes of one contact are sequential and commit in the order they were acknowledged. That makes
the feed attributable without guessing: a write appends `contact.updated` and then, in the same
transaction, the `audience.entered` / `audience.left` events it causes, so the k-th
`contact.updated` of a contact is its k-th write, and the membership events after it are that
write's. What a write should cause is known from the answers alone: the contact's `audiences`
before (the stored memberships, read once, then the previous answer) and after (this answer).

The lag of an event is the instant the reader received the page holding it minus the instant
the writer received its acknowledgement; an event seen before its write's answer arrived
counts as 0 (the reader was faster than the answer).
"""

from __future__ import annotations

import random
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from audiencefilter.service.domain import event_feed

from .rate_setup import Stack, cpu_seconds, sql

ENTERED, LEFT, UPDATED = "audience.entered", "audience.left", "contact.updated"
COUNTRIES = ["US", "FR", "DE", "GB", "JP", "BR", "IN", "ES"]
POLL_PAUSE = 0.02
DRAIN_LIMIT = 120.0


@dataclass(frozen=True)
class Write:
    """One acknowledged PATCH: when its answer arrived and the membership events it implies."""

    contact: str
    acked: float
    expected: frozenset[tuple[str, str]]  # (event type, audience id)


@dataclass
class ClientLog:
    writes: list[Write] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    errors: int = 0


@dataclass(frozen=True)
class Seen:
    at: float
    type: str
    contact: str | None
    audience: str | None
    cause: str | None


def pool(stack: Stack, list_id: str, size: int) -> dict[str, set[str]]:
    """`size` random contacts of the list and the audiences each belongs to now."""
    ids = [row[0] for row in sql(stack, _POOL, lst=list_id, size=size)]
    audiences: dict[str, set[str]] = {contact: set() for contact in ids}
    for start in range(0, len(ids), 1000):
        rows = sql(stack, _MEMBERS, ids=ids[start : start + 1000])
        for contact, audience in rows:
            audiences[contact].add(audience)
    return audiences


_POOL = "SELECT id FROM contacts WHERE list_id = :lst ORDER BY random() LIMIT :size"
_MEMBERS = "SELECT contact_id, audience_id FROM memberships WHERE contact_id IN :ids"


def feed_end(stack: Stack, list_id: str) -> str:
    """The cursor after the list's last event: the reader starts there, not at position 1."""
    rows = sql(stack, "SELECT max(position) FROM events WHERE list_id = :lst", lst=list_id)
    return event_feed.cursor(list_id, int(rows[0][0] or 0))


class Client(threading.Thread):
    """PATCHes random contacts of its own until the deadline, changing fields filters read."""

    def __init__(self, stack: Stack, audiences: dict[str, set[str]], deadline: float, seed: int):
        super().__init__(daemon=True)
        self.stack, self.audiences, self.deadline = stack, audiences, deadline
        self.rng = random.Random(seed)
        self.log = ClientLog()

    def run(self) -> None:
        contacts = list(self.audiences)
        with self.stack.api() as api:
            while time.monotonic() < self.deadline:
                self._one(api, self.rng.choice(contacts))

    def _one(self, api: Any, contact: str) -> None:
        body = {"points": self.rng.randrange(0, 200), "country": self.rng.choice(COUNTRIES)}
        started = time.monotonic()
        response = api.patch(f"/v4/contacts/{contact}", json=body)
        acked = time.monotonic()
        if response.status_code != 200:
            self.log.errors += 1
            return
        self.log.latencies.append(acked - started)
        after = {a["id"] for a in response.json()["data"]["contact"]["audiences"]}
        before, self.audiences[contact] = self.audiences[contact], after
        expected = {(ENTERED, a) for a in after - before} | {(LEFT, a) for a in before - after}
        self.log.writes.append(Write(contact, acked, frozenset(expected)))


class Reader(threading.Thread):
    """Polls `GET /v4/events` from a cursor, noting when each event was first received; after
    `finish` is set it stops at the first empty page asked for after that (every acknowledged
    write is committed by then). An empty page asked for before `finish` may have been read
    before the last writes committed, however late it arrives: it does not end the reading."""

    def __init__(self, stack: Stack, list_id: str, after: str) -> None:
        super().__init__(daemon=True)
        self.stack, self.list_id, self.after = stack, list_id, after
        self.finish = threading.Event()
        self.seen: list[Seen] = []
        self.pages = 0

    def run(self) -> None:
        limit_at: float | None = None
        with self.stack.api() as api:
            while True:
                finishing = self.finish.is_set()
                if finishing and limit_at is None:
                    limit_at = time.monotonic() + DRAIN_LIMIT
                found = self._page(api)
                if found == 0 and finishing:
                    return
                if limit_at is not None and time.monotonic() > limit_at:
                    return
                if not found:
                    time.sleep(POLL_PAUSE)

    def _page(self, api: Any) -> int | None:
        """How many events the next page held; None when it was not answered (asked again)."""
        path = f"/v4/events?listId={self.list_id}&limit=1000&after={self.after}"
        response = api.get(path)
        at = time.monotonic()
        if response.status_code != 200:
            return None
        data = response.json()["data"]
        self.pages += 1
        for e in data["events"]:
            self.seen.append(Seen(at, e["type"], e["contactId"], e["audienceId"], e["cause"]))
        self.after = data["next"]
        return len(data["events"])


@dataclass
class Lags:
    """The membership events expected from the writes, as found in the feed."""

    lags: list[float] = field(default_factory=list)
    expected: int = 0
    missing: int = 0
    unexpected: int = 0
    early: int = 0


def attribute(writes: Iterable[Write], seen: Iterable[Seen], cause: str = UPDATED) -> Lags:
    """Each membership event of a write, found after that write's `contact.updated`; `cause`:
    the membership events' (an import's are `contact.imported`)."""
    queues: dict[str, deque[Write]] = defaultdict(deque)
    result = Lags()
    for write in sorted(writes, key=lambda w: w.acked):
        queues[write.contact].append(write)
        result.expected += len(write.expected)
    open_: dict[str, tuple[Write, set[tuple[str, str]]]] = {}
    found = 0
    for event in seen:
        if event.contact is None:
            continue
        if event.type == UPDATED:
            queue = queues.get(event.contact)
            if queue:
                write = queue.popleft()
                open_[event.contact] = (write, set(write.expected))
            continue
        found += _match(event, open_.get(event.contact), result, cause)
    result.missing = result.expected - found
    return result


def _match(
    event: Seen, current: tuple[Write, set[tuple[str, str]]] | None, out: Lags, cause: str
) -> int:
    if event.type not in (ENTERED, LEFT) or event.cause != cause:
        return 0
    key = (event.type, event.audience or "")
    if current is None or key not in current[1]:
        out.unexpected += 1
        return 0
    write, remaining = current
    remaining.discard(key)
    lag = event.at - write.acked
    out.early += lag < 0
    out.lags.append(max(0.0, lag))
    return 1


def percentile(values: list[float], fraction: float) -> float:
    """The value at `fraction` of the sorted values (nearest rank); nan when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


@dataclass
class Sustained:
    """What `sustain` measured: the writes, their answers' latencies and the events' lags."""

    seconds: float
    clients: int
    pool: int
    writes: int
    errors: int
    latencies: list[float]
    lags: Lags
    pages: int
    cpu: tuple[float, float, float]  # CPU seconds of the service, PostgreSQL, the clients


W = TypeVar("W", bound=threading.Thread)


@dataclass
class Run(Generic[W]):
    """Workers run to their end beside the feed's reader: the reader, the workers, the seconds
    they took and the CPU seconds of the service, PostgreSQL and this process meanwhile."""

    reader: Reader
    workers: list[W]
    seconds: float
    cpu: tuple[float, float, float]


def beside_reader(stack: Stack, list_id: str, make: Callable[[float], list[W]]) -> Run[W]:
    """Starts a reader at the feed's end, then the workers `make` builds for the instant they
    start (their deadlines count from it), waits for them and stops the reader: every phase of
    sustained writes is measured the same way."""
    reader = Reader(stack, list_id, feed_end(stack, list_id))
    cpu_before, own_before = cpu_seconds(stack), time.process_time()
    reader.start()
    started = time.monotonic()
    workers = make(started)
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - started
    reader.finish.set()
    reader.join()
    cpu_after, own_after = cpu_seconds(stack), time.process_time()
    cpu = (cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1], own_after - own_before)
    return Run(reader, workers, elapsed, cpu)


def sustain(stack: Stack, list_id: str, seconds: float, clients: int, pool_size: int) -> Sustained:
    """`clients` writers for `seconds` over a pool of random contacts, one reader of the feed."""
    audiences = pool(stack, list_id, pool_size)
    shares: list[dict[str, set[str]]] = [{} for _ in range(clients)]
    for index, (contact, current) in enumerate(audiences.items()):
        shares[index % clients][contact] = current
    run = beside_reader(
        stack,
        list_id,
        lambda started: [
            Client(stack, share, started + seconds, n) for n, share in enumerate(shares)
        ],
    )
    reader, writers, elapsed, cpu = run.reader, run.workers, run.seconds, run.cpu
    writes = [w for writer in writers for w in writer.log.writes]
    return Sustained(
        seconds=elapsed,
        clients=clients,
        pool=len(audiences),
        writes=len(writes),
        errors=sum(writer.log.errors for writer in writers),
        latencies=[lat for writer in writers for lat in writer.log.latencies],
        lags=attribute(writes, reader.seen),
        pages=reader.pages,
        cpu=cpu,
    )
