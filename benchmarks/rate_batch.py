"""The batched part of `benchmarks.service_rate`: clients sending upsert imports of many rows
for a while, the realistic route for a writer of a thousand updates a second, while a reader
polls the event feed.

Each client owns a share of the pool of contacts and sends `POST /v4/contacts/import
?mode=upsert` of `rows` distinct contacts of its share at a time (new `points` and `country`,
which the filters read), one request after another. A contact is only ever written by its
client, one request at a time, so its writes commit in the order they were answered, and the
feed is attributed as in the single-write phase (`rate_load.attribute`): the k-th
`contact.updated` of a contact is its k-th updated row, and the membership events after it are
that row's. What a row should cause is decided after the clock stops, by the library: each
contact's row, read before the phase, takes each write's values in turn, and each audience's
stored filter says with `Filter.matches` whether it holds the contact before and after. The lag
of an event is the instant the reader received it minus the instant the client received the
answer of the request that wrote it.
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from audiencefilter import Filter
from audiencefilter.service.db.models import Contact
from audiencefilter.service.db.queries import contact_rows, fetch_rows
from audiencefilter.service.domain.audience_filters import stored_filter

from .rate_load import (
    COUNTRIES,
    ENTERED,
    LEFT,
    Lags,
    Write,
    attribute,
    beside_reader,
)
from .rate_setup import Stack, sql

IMPORTED = "contact.imported"


@dataclass(frozen=True)
class Sent:
    """One updated row of an answered import: its contact, the values sent, the answer's
    instant."""

    contact: str
    values: dict[str, Any]
    acked: float


@dataclass
class BatchLog:
    sent: list[Sent] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    requests: int = 0
    unchanged: int = 0
    errors: int = 0


class Importer(threading.Thread):
    """Sends upsert imports of `rows` random contacts of its share until the deadline."""

    def __init__(
        self, stack: Stack, path: str, share: dict[str, str], rows: int, deadline: float, seed: int
    ) -> None:
        super().__init__(daemon=True)
        self.stack, self.path, self.share = stack, path, share
        self.rows, self.deadline = min(rows, len(share)), deadline
        self.rng = random.Random(seed)
        self.log = BatchLog()

    def run(self) -> None:
        contacts = list(self.share)
        with self.stack.api() as api:
            while time.monotonic() < self.deadline:
                self._one(api, self.rng.sample(contacts, self.rows))

    def _one(self, api: Any, chosen: list[str]) -> None:
        values = [
            {"points": self.rng.randrange(0, 200), "country": self.rng.choice(COUNTRIES)}
            for _ in chosen
        ]
        body = [{"email": self.share[c], **v} for c, v in zip(chosen, values, strict=True)]
        started = time.monotonic()
        response = api.post(self.path, json=body)
        acked = time.monotonic()
        if response.status_code != 200:
            self.log.errors += 1
            return
        self.log.requests += 1
        self.log.latencies.append(acked - started)
        results = response.json()["data"]["results"]
        for contact, sent, result in zip(chosen, values, results, strict=True):
            if result["status"] == "updated":
                self.log.sent.append(Sent(contact, sent, acked))
            else:
                self.log.unchanged += 1


@dataclass
class Batched:
    """What `sustain_batches` measured."""

    seconds: float
    clients: int
    rows: int
    pool: int
    requests: int
    updates: int
    unchanged: int
    errors: int
    latencies: list[float]
    lags: Lags
    pages: int
    cpu: tuple[float, float, float]  # CPU seconds of the service, PostgreSQL, the clients


def _filters(stack: Stack, list_id: str) -> dict[str, Filter]:
    rows = sql(stack, "SELECT id, filters FROM audiences WHERE list_id = :lst", lst=list_id)
    found = {audience: stored_filter(canonical) for audience, canonical in rows}
    return {audience: flt for audience, flt in found.items() if flt is not None}


def _records(stack: Stack, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The contacts' rows as the library judges them (their `data` decoded)."""
    found: dict[str, dict[str, Any]] = {}
    with stack.database.reading() as session:
        for start in range(0, len(ids), 1000):
            statement = contact_rows([Contact.id.in_(ids[start : start + 1000])])
            for row in fetch_rows(session, statement):
                row["data"] = json.loads(row["data"]) if row["data"] else None
                found[row["id"]] = row
    return found


def expected_writes(
    sent: list[Sent], records: dict[str, dict[str, Any]], filters: dict[str, Filter]
) -> list[Write]:
    """Each updated row as a `Write` with the membership events it should cause: the audiences
    whose filters hold the contact after its values and not before, or the reverse."""
    now = datetime.now(UTC)

    def inside(record: dict[str, Any]) -> set[str]:
        return {a for a, flt in filters.items() if flt.matches(record, now=now)}

    current = {contact: inside(record) for contact, record in records.items()}
    writes = []
    for row in sorted(sent, key=lambda s: s.acked):
        record = records[row.contact]
        record.update(row.values)
        after, before = inside(record), current[row.contact]
        current[row.contact] = after
        expected = {(ENTERED, a) for a in after - before} | {(LEFT, a) for a in before - after}
        writes.append(Write(row.contact, row.acked, frozenset(expected)))
    return writes


def _shares(stack: Stack, list_id: str, size: int, clients: int) -> list[dict[str, str]]:
    """`size` random contacts of the list, `{id: email}` shared out among the clients."""
    rows = sql(stack, _POOL, lst=list_id, size=size)
    shares: list[dict[str, str]] = [{} for _ in range(clients)]
    for index, (contact, email) in enumerate(rows):
        shares[index % clients][contact] = email
    return shares


_POOL = "SELECT id, email FROM contacts WHERE list_id = :lst ORDER BY random() LIMIT :size"


def sustain_batches(
    stack: Stack, list_id: str, seconds: float, clients: int, rows: int, pool_size: int
) -> Batched:
    """`clients` importers of `rows` rows a request for `seconds`, one reader of the feed."""
    shares = _shares(stack, list_id, pool_size, clients)
    records = _records(stack, [c for share in shares for c in share])
    path = f"/v4/contacts/import?listId={list_id}&mode=upsert"
    run = beside_reader(
        stack,
        list_id,
        lambda started: [
            Importer(stack, path, share, rows, started + seconds, n)
            for n, share in enumerate(shares)
        ],
    )
    reader, elapsed, cpu = run.reader, run.seconds, run.cpu
    logs = [importer.log for importer in run.workers]
    sent = [s for log in logs for s in log.sent]
    writes = expected_writes(sent, records, _filters(stack, list_id))
    return Batched(
        seconds=elapsed,
        clients=clients,
        rows=rows,
        pool=len(records),
        requests=sum(log.requests for log in logs),
        updates=len(sent),
        unchanged=sum(log.unchanged for log in logs),
        errors=sum(log.errors for log in logs),
        latencies=[lat for log in logs for lat in log.latencies],
        lags=attribute(writes, reader.seen, cause=IMPORTED),
        pages=reader.pages,
        cpu=cpu,
    )
