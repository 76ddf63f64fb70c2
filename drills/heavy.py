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


def heavy_filter(ors: int) -> dict[str, Any]:
    """An AND of `ors` two-way ORs over distinct conditions: costly for the algebra (each OR
    doubles what a decision may explore), cheap to evaluate."""
    return {
        "AND": [
            {"OR": [{"points": {"gte": index}}, {"firstName": {"startsWith": f"S{index}"}}]}
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
    where = heavy_filter(12 if fast else 14)
    other = {"AND": [*where["AND"][1:], {"points": {"gte": 50}}]}
    csv_query = {"listId": list_id, "dryRun": "true"}
    csv_headers = {"Content-Type": "text/csv"}
    return [
        Heavy(
            f"CSV dry run of {megabytes} MB",
            lambda api: api.post(
                "/v4/contacts/import", params=csv_query, content=body, headers=csv_headers
            ),
            1,
            loops=1,
        ),
        Heavy(
            "compares",
            lambda api: api.post(
                "/v4/audiences/compare",
                json={"listId": list_id, "a": {"filters": where}, "b": {"filters": other}},
            ),
            repeats,
        ),
        Heavy(
            "estimates",
            lambda api: api.post(
                "/v4/audiences/estimate",
                json={"listId": list_id, "filters": where, "exact": True},
            ),
            repeats,
        ),
        Heavy(
            "previews",
            lambda api: api.post(
                "/v4/audiences/preview",
                params={"limit": 100},
                json={"listId": list_id, "filters": where},
            ),
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


def heavy_requests(ctx: Context) -> Row:
    database_url = f"sqlite:///{ctx.workdir / 'heavy.db'}"
    key_a, key_b = create_key(database_url, "heavy"), create_key(database_url, "reader")
    contacts = 4000 if ctx.fast else 10_000
    settings = _settings(MEMBERSHIP_SWEEP_SECONDS="0")
    parts: list[str] = []
    kinds: list[Heavy] = []
    with running(database_url, ctx.workdir / "heavy.log", settings=settings) as service:
        with client(service, key_a, timeout=600) as api_a, client(service, key_b) as api_b:
            list_a = create_list(api_a, "heavy")
            seed_contacts(database_url, list_a, contacts)
            for index in range(3):
                create_list(api_b, f"light {index}")
            probe = Probe(api_b)
            alone = probe.read_until(_after(BASELINE_SECONDS))
            parts.append(f"B's `GET /v4/lists` alone {_percentiles(alone)}")
            kinds = _kinds(list_a, ctx.fast)
            for heavy in kinds:
                during = _during(heavy, api_a, probe)
                parts.append(
                    f"beside A's {heavy.name} ({_statuses(heavy.statuses)} in "
                    f"{heavy.seconds:.1f} s) {_percentiles(during)}"
                )
    answered = all(heavy.statuses and 0 not in heavy.statuses for heavy in kinds)
    no_5xx = all(
        status < 500
        for counts in [probe.statuses, *(h.statuses for h in kinds)]
        for status in counts
    )
    b_ok = set(probe.statuses) == {200}
    figures = f"{contacts:,} contacts in A's list; " + "; ".join(parts)
    figures += f"; B's reads {_statuses(probe.statuses)}; latencies printed, not judged"
    return row("heavy-requests", answered and no_5xx and b_ok, figures)


def _after(seconds: float) -> Callable[[], bool]:
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() >= deadline


def _statuses(counts: Counter[int]) -> str:
    return ", ".join(f"{status} x{count}" for status, count in sorted(counts.items()))
