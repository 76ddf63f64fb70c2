"""The one-off parts of `benchmarks.service_rate`: building a smart audience over a whole list,
checked against the library's own answer, and what one change to the list costs by the number
of contacts it touches.

A change is an upsert import (`POST /v4/contacts/import?mode=upsert`) of existing contacts
with new `points` and `country`, which the audiences read: every touched contact is judged
against the list's audiences and its membership events are written. Its cost should follow
the contacts touched, not the contacts in the list; the benchmark runs it on two lists of
different sizes to show which.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from audiencefilter.service.db.models import Contact
from audiencefilter.service.db.queries import contact_rows, stream_rows
from audiencefilter.service.domain.audience_filters import stored_filter
from drills.service import expect

from .rate_load import COUNTRIES
from .rate_setup import Stack, sql

# The million benchmark's audience: about one contact in seven of the synthetic lists.
BUILD_FILTER = {"points": {"gte": 100}, "country": {"in": ["US", "FR", "DE"]}}
IMPORT_ROWS = 1000  # the service's limit per import request
STREAM = 5000


@dataclass(frozen=True)
class Build:
    seconds: float
    members: int
    exact: bool  # the stored members are those `Filter.matches` selects


def build(stack: Stack, list_id: str, name: str = "whole list") -> Build:
    """`POST /v4/audiences?wait=true` over the list, timed, then checked in memory."""
    body = {"name": name, "listId": list_id, "filters": BUILD_FILTER}
    started = time.perf_counter()
    with stack.api() as api:
        created = expect(api.post("/v4/audiences?limit=1&wait=true", json=body), 201)
    seconds = time.perf_counter() - started
    audience = created["audience"]
    stored = {row[0] for row in sql(stack, _MEMBERS, audience=audience["id"])}
    return Build(seconds, len(stored), stored == matching(stack, list_id, audience["filters"]))


_MEMBERS = "SELECT contact_id FROM memberships WHERE audience_id = :audience"


def matching(stack: Stack, list_id: str, canonical: str) -> set[str]:
    """The ids of the list's contacts for which the library's `Filter.matches` is TRUE."""
    flt = stored_filter(canonical)
    assert flt is not None, canonical
    now = datetime.now(UTC)
    chosen: set[str] = set()
    statement = contact_rows([Contact.listId == list_id])
    with stack.database.reading() as session:
        for part in stream_rows(session, statement, STREAM):
            for row in part:
                row["data"] = json.loads(row["data"]) if row["data"] else None
                if flt.matches(row, now=now):
                    chosen.add(row["id"])
    return chosen


def change(stack: Stack, list_id: str, touched: int, rng: random.Random) -> float:
    """Seconds of one upsert import touching `touched` random contacts of the list (in requests
    of at most 1,000 rows, the service's limit)."""
    emails = [row[0] for row in sql(stack, _EMAILS, lst=list_id, size=touched)]
    rows = [
        {"email": e, "points": rng.randrange(200), "country": rng.choice(COUNTRIES)} for e in emails
    ]
    path = f"/v4/contacts/import?listId={list_id}&mode=upsert"
    started = time.perf_counter()
    with stack.api() as api:
        for start in range(0, len(rows), IMPORT_ROWS):
            part = rows[start : start + IMPORT_ROWS]
            answer: dict[str, Any] = expect(api.post(path, json=part), 200)
            assert answer["updated"] + answer["unchanged"] == len(part), answer
    return time.perf_counter() - started


_EMAILS = "SELECT email FROM contacts WHERE list_id = :lst ORDER BY random() LIMIT :size"


def changes(stack: Stack, list_id: str, touched: list[int], repeats: int) -> dict[int, float]:
    """Median seconds of a change by contacts touched, the sizes taking turns."""
    rng = random.Random(11)
    times: dict[int, list[float]] = {count: [] for count in touched}
    for _ in range(repeats):
        for count in touched:
            times[count].append(change(stack, list_id, count, rng))
    return {count: statistics.median(values) for count, values in times.items()}
