"""The heavy-requests drill: one account's CPU-heavy requests do not hold another's reads.

Account A sends the requests whose cost is CPU in the service's process rather than database
work: a CSV import's dry run of a large file (one request for the rate limits), and loops of
compares, estimates and previews over a list of thousands of contacts, three at a time. Account
B, meanwhile, reads its lists (`GET /v4/lists`) one request after another, first alone (the
baseline), then during each kind of A's work. The row states B's p50 and p99 alone and beside
each kind; it judges what is exact (every request of A and B answered, none with a 5xx), not
the seconds, which a shared machine decides as much as the code
(docs/service-internals.md, *Heavy requests*).
"""

from __future__ import annotations

import itertools
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from .common import Context, Row, row
from .service import client, create_key, create_list, running, seed_contacts
from .webhooks import _settings

BASELINE_SECONDS = 2.0
LOOPS = 3
"""A's requests of one kind sent at once, each thread sending its next when one answers."""
ROW_TEMPLATE = "heavy{index}@drill.example,Heavy{index},Person{index},{points},FR,2021-03-04\n"
HEADER = "email,firstName,lastName,points,country,createdAt\n"


def csv_body(megabytes: int) -> bytes:
    """A CSV file of about `megabytes` MB of valid rows."""
    rows, size, index = [HEADER], len(HEADER), 0
    while size < megabytes * 1_000_000:
        line = ROW_TEMPLATE.format(index=index, points=index % 100)
        rows.append(line)
        size += len(line)
        index += 1
    return "".join(rows).encode()


def heavy_filter(ors: int, variant: int = 0) -> dict[str, Any]:
    """An AND of `ors` two-way ORs over distinct conditions: costly for the algebra (each OR
    doubles what a decision may explore), cheap to evaluate; `variant` makes it another
    filter (the service caches what it decided of one it has seen)."""
    return {
        "AND": [
            {
                "OR": [
                    {"points": {"gte": index + variant * ors}},
                    {"firstName": {"startsWith": f"S{index}"}},
                ]
            }
            for index in range(ors)
        ]
    }


@dataclass
class Probe:
    """Account B's reads: latencies in seconds and the statuses answered."""

    api: httpx.Client
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)

    def read_until(self, done: Callable[[], bool]) -> list[float]:
        """B's `GET /v4/lists`, one after another, until `done()`; at least three."""
        measured: list[float] = []
        while len(measured) < 3 or not done():
            started = time.perf_counter()
            response = self.api.get("/v4/lists", params={"limit": 10})
            measured.append(time.perf_counter() - started)
            self.statuses[response.status_code] += 1
        self.latencies += measured
        return measured


@dataclass
class Heavy:
    """Account A's work of one kind: its requests, their statuses and how long it ran."""

    name: str
    send: Callable[[httpx.Client], httpx.Response]
    repeats: int
    loops: int = LOOPS
    statuses: Counter[int] = field(default_factory=Counter)
    seconds: float = 0.0

    def run(self, api: httpx.Client, finished: threading.Event) -> None:
        started = time.monotonic()
        threads = [threading.Thread(target=self._loop, args=(api,)) for _ in range(self.loops)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.seconds = time.monotonic() - started
        finished.set()

    def _loop(self, api: httpx.Client) -> None:
        for _ in range(self.repeats):
            try:
                self.statuses[self.send(api).status_code] += 1
            except httpx.HTTPError:
                self.statuses[0] += 1


def _kinds(list_id: str, fast: bool) -> list[Heavy]:
    megabytes, repeats = (8, 2) if fast else (50, 6)
    body = csv_body(megabytes)
    ors = 10 if fast else 12
    fresh = itertools.count()  # a new filter each request: no answer cached from the last
    csv_query = {"listId": list_id, "dryRun": "true"}
    csv_headers = {"Content-Type": "text/csv"}

    def pair() -> dict[str, Any]:
        where = heavy_filter(ors, next(fresh))
        other = {"AND": [*where["AND"][1:], {"points": {"gte": 50}}]}
        return {"listId": list_id, "a": {"filters": where}, "b": {"filters": other}}

    def one() -> dict[str, Any]:
        return {"listId": list_id, "filters": heavy_filter(ors, next(fresh))}

    return [
        Heavy(
            f"CSV dry run of {megabytes} MB",
            lambda api: api.post(
                "/v4/contacts/import", params=csv_query, content=body, headers=csv_headers
            ),
            1,
            loops=1,
        ),
        Heavy("compares", lambda api: api.post("/v4/audiences/compare", json=pair()), repeats),
        Heavy(
            "estimates",
            lambda api: api.post("/v4/audiences/estimate", json={**one(), "exact": True}),
            repeats,
        ),
        Heavy(
            "previews",
            lambda api: api.post("/v4/audiences/preview", params={"limit": 100}, json=one()),
            repeats,
        ),
    ]


def _percentiles(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:,.0f} ms, p99 {p99 * 1000:,.0f} ms"


def _during(heavy: Heavy, api_a: httpx.Client, probe: Probe) -> list[float]:
    finished = threading.Event()
    worker = threading.Thread(target=heavy.run, args=(api_a, finished))
    worker.start()
    measured = probe.read_until(finished.is_set)
    worker.join()
    return measured


WITHOUT_TURNS = {
    "HEAVY_REQUESTS_PER_ACCOUNT": "64",
    "HEAVY_QUEUE_PER_ACCOUNT": "10000",
    "ANALYSIS_PROCESSES": "0",
}
"""The service as it was before heavy requests took turns: any number of an account's at once,
each in its handler thread."""


@dataclass
class Round:
    """One service's round: B's figures beside each kind of A's work, and every status."""

    parts: list[str] = field(default_factory=list)
    statuses: list[Counter[int]] = field(default_factory=list)
    answered: bool = True


def _round(ctx: Context, name: str, settings: dict[str, str]) -> Round:
    database_url = f"sqlite:///{ctx.workdir / f'heavy-{name}.db'}"
    key_a, key_b = create_key(database_url, "heavy"), create_key(database_url, "reader")
    contacts = 4000 if ctx.fast else 10_000
    found = Round()
    log = ctx.workdir / f"heavy-{name}.log"
    with running(database_url, log, settings=_settings(**settings)) as service:
        with client(service, key_a, timeout=600) as api_a, client(service, key_b) as api_b:
            list_a = create_list(api_a, "heavy")
            seed_contacts(database_url, list_a, contacts)
            for index in range(3):
                create_list(api_b, f"light {index}")
            probe = Probe(api_b)
            alone = probe.read_until(_after(BASELINE_SECONDS))
            found.parts.append(f"alone {_percentiles(alone)}")
            for heavy in _kinds(list_a, ctx.fast):
                during = _during(heavy, api_a, probe)
                found.parts.append(
                    f"beside A's {heavy.name} ({_statuses(heavy.statuses)} in "
                    f"{heavy.seconds:.1f} s) {_percentiles(during)}"
                )
                found.statuses.append(heavy.statuses)
                found.answered &= bool(heavy.statuses) and 0 not in heavy.statuses
    found.statuses.append(probe.statuses)
    found.answered &= set(probe.statuses) == {200}
    return found


def heavy_requests(ctx: Context) -> Row:
    contacts = 4000 if ctx.fast else 10_000
    before = _round(ctx, "without-turns", {"MEMBERSHIP_SWEEP_SECONDS": "0", **WITHOUT_TURNS})
    after = _round(ctx, "with-turns", {"MEMBERSHIP_SWEEP_SECONDS": "0"})
    no_5xx = all(
        status < 500 for one in (before, after) for counts in one.statuses for status in counts
    )
    figures = (
        f"{contacts:,} contacts in A's list; B's `GET /v4/lists` without turns (each request "
        f"in its thread): {'; '.join(before.parts)}. With turns (the defaults): "
        f"{'; '.join(after.parts)}. Latencies printed, not judged"
    )
    return row("heavy-requests", before.answered and after.answered and no_5xx, figures)


def _after(seconds: float) -> Callable[[], bool]:
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() >= deadline


def _statuses(counts: Counter[int]) -> str:
    return ", ".join(f"{status} x{count}" for status, count in sorted(counts.items()))
