"""A million contacts in one list of the reference service, side by side with hand-written SQL.

    python -m benchmarks.million --rows 1000000 --db sqlite|postgresql [--profile]
        [--only import|page|reads] [--audiences 100] [--client in-place|httpx]

One service database, two lists of the same N synthetic contacts (`synthetic:N` of the CLI,
emails made unique): list A is written and read through the whole HTTP application in process
(routing, authentication, validation, the domain code, SQL, rendering), list B by hand-written
SQL doing the same work on the same tables. Wall-clock times of:

- **bulk import**: `POST /contacts/import` in batches of 1,000 rows (its limit), `events=false`
  (a migration; membership still follows) against `executemany` (SQLite) or `COPY`
  (PostgreSQL) of the same rows;
- **audience over the list**: `POST /audiences` with a smart filter, which stores every member
  and appends one `audience.entered` event each, against `INSERT INTO memberships SELECT ...
  WHERE ...` and `INSERT INTO events SELECT ...` of the same rows;
- **contacts page** (100, each with its audiences), **one contact update** (moving it across
  the audience, membership and event written), **the export** of the audience as CSV, and **a
  page of the event feed** (1,000 events), each the median of `--runs`;
- the process's **peak memory** in each phase.

The ratio is ours ÷ hand (1.0: as fast). `--profile` runs the slowest path once more under
cProfile and prints where its time goes. `--only import` measures the import alone (the later
steps skipped); with `--profile` the import is what is profiled: the same rows into a third
list, every thread's work of the requests run on the event loop's thread, where the profiler
sees it. `--only page` measures the contacts page alone: both lists are loaded by the
hand-written import (the same rows, the same tables and triggers; the HTTP import of a million
rows takes most of an hour) and the audience is created on each side, then the page is timed
and, with `--profile`, profiled in this thread. `--only reads` loads both lists so and
measures every later step (the audience, the page, the update, the feed, the export): the
figures of a million contacts on PostgreSQL without the hour of its HTTP import.
`--audiences 100` measures the update in a list of 100 smart audiences (`million_update`).

The caller. The hand-written side is SQL with no client at all, so ours is called with none
either: by default (`--client in-place`) each request is one ASGI exchange with the
application on an event loop of this thread, its lifespan entered there (`asgi_in_place`), as
uvicorn would hand the request over once it has parsed it. Everything the service does is in
the figures: the middleware, the routing, FastAPI's hops to its worker threads for the sync
endpoints and back, the domain code, the SQL, the rendering. `--client httpx` calls it as
before, through httpx's `ASGITransport` on a loop in a background thread reached through an
anyio blocking portal (`service_audiences.InProcessClient`): the figures then also hold
httpx's building and parsing of every request and answer and the portal's hop between
threads, 1-2 ms of CPU a request that is the client's and not the service's (a
`GET /v4/lists/{id}`: 2.8-3.8 ms that way, 1.6-1.8 ms in place). It is kept to compare the
two callers (both, side by side: docs/performance-history-layers.md, "The million's caller").
A measurement script, not a test: nothing asserts a timing (tests/test_benchmarks_million.py
runs it tiny, for its shape only).
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import gc
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import cycle
from pathlib import Path
from typing import Any

import anyio.to_thread
from sqlalchemy import bindparam, text

from audiencefilter.cli.synthetic import synthetic_contacts
from audiencefilter.service import Settings
from audiencefilter.service.db.models import new_id
from audiencefilter.service.domain.contact_pages import Paging
from audiencefilter.service.domain.use_cases import audiences, contacts, keys
from audiencefilter.service.domain.use_cases.unit import in_transaction
from audiencefilter.service.http.responses import data

from . import million_update
from .asgi_in_place import InPlaceClient
from .service_audiences import InProcessClient, _postgres

BATCH = 1000
FILTER = {"points": {"gte": 100}, "country": {"in": ["US", "FR", "DE"]}}
AUDIENCE = "CAST(:audience AS VARCHAR(64))"  # one type for the parameter on PostgreSQL
HAND_CONDITION = "c.points >= 100 AND c.country IN ('US', 'FR', 'DE')"
CLIENTS = ("in-place", "httpx")


def hand_holds(row: Mapping[str, Any]) -> bool:
    """HAND_CONDITION as Python, for the hand-written update that judges in the application."""
    return bool(row["points"] >= 100 and row["country"] in ("US", "FR", "DE"))


FIELDS = ("firstName", "lastName", "company", "country", "city", "referrals", "isVerified")


def import_rows(count: int) -> list[dict[str, Any]]:
    """The contacts as import rows: realistic fields (synthetic:N), emails unique."""
    rows = []
    for index, contact in enumerate(synthetic_contacts(count)):
        row = {name: contact[name] for name in FIELDS if contact[name] is not None}
        row["email"] = f"m{index}.{contact['email']}"
        row["points"] = contact["points"] or 0
        row["data"] = contact["data"] or {}
        row["createdAt"] = contact["createdAt"].isoformat()
        rows.append(row)
    return rows


@dataclass
class Measure:
    """One comparison: ours and hand-written, in seconds, and the peak memory of ours."""

    what: str
    ours: float
    hand: float
    note: str = ""
    peak_bytes: int = 0

    @property
    def ratio(self) -> float:
        return self.ours / self.hand if self.hand else float("nan")


@dataclass
class Run:
    database: str
    rows: int
    measures: list[Measure] = field(default_factory=list)
    profile: str = ""
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)
    client: str = CLIENTS[0]


class Service:
    """The service in process, a key, and the two lists."""

    def __init__(self, url: str, client: str = CLIENTS[0], **overrides: Any) -> None:
        settings = Settings(
            database_url=url,
            auto_migrate=True,
            rate_limit_free="100000000/minute",
            rate_limit_pro="100000000/minute",
            membership_sweep_seconds=0,
            **overrides,
        )
        self.client: InPlaceClient | InProcessClient
        if client == "httpx":
            self.client = InProcessClient(settings)
        else:
            assert client == "in-place", client
            self.client = InPlaceClient(settings)
        self.database = self.client.app.state.db
        self.engine = self.database.engine
        issued = keys.issue(self.database, new_id("million"), "pro", "private")
        self.account_id = issued.account.id
        self.headers = {"apiKey": issued.plaintext}
        self.ours, self.hand = self.new_list("ours"), self.new_list("hand")

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.client.request(method, f"/v4{path}", headers=self.headers, **kwargs)
        assert response.status_code < 300, (path, response.status_code, response.text[:300])
        return response

    def new_list(self, name: str) -> str:
        return str(self.call("POST", "/lists", json={"name": name}).json()["data"]["list"]["id"])

    def sql(self, statement: str, **params: Any) -> Any:
        with self.engine.begin() as connection:
            return connection.execute(text(statement), params)

    def sql_rows(self, statement: str, **params: Any) -> list[Any]:
        """The rows of one read; a list parameter is expanded (`IN :name`)."""
        lists: list[Any] = [
            bindparam(k, expanding=True) for k, v in params.items() if isinstance(v, list)
        ]
        with self.engine.connect() as connection:
            return list(connection.execute(text(statement).bindparams(*lists), params))

    def close(self) -> None:
        self.client.close()


# ---- the import -----------------------------------------------------------------------------


def import_ours(service: Service, rows: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    for start in range(0, len(rows), BATCH):
        response = service.call(
            "POST", f"/contacts/import?listId={service.ours}&events=false",
            json=rows[start : start + BATCH],
        )  # fmt: skip
        assert response.json()["data"]["created"] == len(rows[start : start + BATCH])
    return time.perf_counter() - started


CONTACT_COLUMNS = (
    "id", "list_id", "email", "email_key", "first_name", "last_name", "company", "country",
    "city", "points", "referrals", "is_verified", "unsubscribed", "is_gdpr", "data",
    "referral_code", "created_at",
)  # fmt: skip


def _table_rows(list_id: str, rows: list[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """What the import stores for each row, as the contacts table's columns."""
    for row in rows:
        yield (
            new_id("con"), list_id, row["email"], row["email"].lower(), row.get("firstName"),
            row.get("lastName"), row.get("company"), row.get("country"), row.get("city"),
            row["points"], row.get("referrals", 0), row.get("isVerified", False), False, False,
            json.dumps(row["data"]), new_id("r")[:32], datetime.fromisoformat(row["createdAt"]),
        )  # fmt: skip


def import_hand(service: Service, rows: list[dict[str, Any]], list_id: str = "") -> float:
    """`executemany` on SQLite, one `COPY` on PostgreSQL, in one transaction: what one would
    write first; into list B unless `list_id` names another. (Before migration 0023 the
    contacts' row triggers made that one transaction's commit grow with the square of its rows
    on PostgreSQL, 928 s for 100,000, and this path copied BATCH rows a transaction:
    docs/performance-history-rate.md.)"""
    list_id = list_id or service.hand
    started = time.perf_counter()
    raw = service.engine.raw_connection()
    try:
        cursor = raw.cursor()
        names = ", ".join(CONTACT_COLUMNS)
        if service.engine.dialect.name == "postgresql":
            with cursor.copy(f"COPY contacts ({names}) FROM STDIN") as copy:  # type: ignore[attr-defined]
                for values in _table_rows(list_id, rows):
                    copy.write_row(values)
        else:
            # The service's connections are in autocommit mode (it begins its own transactions):
            # one transaction for the whole load, not one per row.
            marks = ", ".join("?" * len(CONTACT_COLUMNS))
            values = [_sqlite_values(v) for v in _table_rows(list_id, rows)]
            cursor.execute("BEGIN")
            cursor.executemany(f"INSERT INTO contacts ({names}) VALUES ({marks})", values)
            cursor.execute("COMMIT")
        raw.commit()
    finally:
        raw.close()
    return time.perf_counter() - started


def _sqlite_values(values: tuple[Any, ...]) -> tuple[Any, ...]:
    created = values[-1].astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return (*values[:-1], created)


def analyze(service: Service) -> None:
    """Statistics as autovacuum or an operator after a bulk load would make them."""
    if service.engine.dialect.name == "postgresql":
        autocommit = service.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        with autocommit as connection:
            connection.exec_driver_sql("VACUUM ANALYZE")
    else:
        service.sql("ANALYZE")


# ---- the audience ---------------------------------------------------------------------------


def audience_ours(service: Service) -> tuple[float, str, int]:
    started = time.perf_counter()
    body = {"name": "big", "listId": service.ours, "filters": FILTER}
    response = service.call("POST", "/audiences?limit=1&wait=true", json=body)
    seconds = time.perf_counter() - started
    audience = response.json()["data"]["audience"]
    return seconds, str(audience["id"]), int(response.json()["data"]["pagination"]["total"])


def audience_hand(service: Service) -> tuple[float, str, int]:
    """The audience row, its members and one event each, by set statements in SQL."""
    audience_id = new_id("aud")
    now = datetime.now(UTC)
    service.sql(
        "INSERT INTO audiences (id, list_id, name, mode, filters, created_at, updated_at) "
        "VALUES (:id, :list, 'big', 'smart', :filters, :now, :now)",
        id=audience_id, list=service.hand, filters=json.dumps(FILTER), now=now,
    )  # fmt: skip
    payload = json.dumps({"audience": {"id": audience_id, "name": "big", "mode": "smart"}})
    as_json = (
        "CAST(:payload AS JSON)" if service.engine.dialect.name == "postgresql" else ":payload"
    )
    started = time.perf_counter()
    with service.engine.begin() as connection:
        members = connection.execute(
            text(
                "INSERT INTO memberships (audience_id, contact_id, entered_at) "
                f"SELECT {AUDIENCE}, c.id, :now FROM contacts c WHERE c.list_id = :list "
                f"AND {HAND_CONDITION}"
            ),
            {"audience": audience_id, "now": now, "list": service.hand},
        ).rowcount
        connection.execute(
            text(
                "INSERT INTO events (id, list_id, position, type, contact_id, audience_id, "
                "cause, occurred_at, payload) SELECT 'evt_' || m.contact_id, :list, "
                "row_number() OVER (ORDER BY m.contact_id), 'audience.entered', m.contact_id, "
                f"{AUDIENCE}, 'audience.created', :now, {as_json} FROM memberships m "
                "WHERE m.audience_id = :audience"
            ),
            {"audience": audience_id, "now": now, "list": service.hand, "payload": payload},
        )
    return time.perf_counter() - started, audience_id, int(members)


# ---- the reads and the update ---------------------------------------------------------------


def median_pair(ours: Callable[[], Any], hand: Callable[[], Any], runs: int) -> tuple[float, float]:
    """Median seconds of each, in alternation after one warm-up each."""
    ours(), hand()
    times: tuple[list[float], list[float]] = ([], [])
    for run in range(runs):
        for index in (0, 1) if run % 2 == 0 else (1, 0):
            started = time.perf_counter()
            (ours, hand)[index]()
            times[index].append(time.perf_counter() - started)
    return statistics.median(times[0]), statistics.median(times[1])


PAGE_SQL = (
    "SELECT c.* FROM contacts c WHERE c.list_id = :list "
    "ORDER BY c.points DESC, c.created_at, c.id LIMIT 100"
)


def page_hand(service: Service) -> Callable[[], Any]:
    def run() -> Any:
        with service.engine.connect() as connection:
            rows = connection.execute(text(PAGE_SQL), {"list": service.hand}).mappings().all()
            ids = [row["id"] for row in rows]
            statement = text(
                "SELECT contact_id, audience_id FROM memberships WHERE contact_id IN "
                "(" + ", ".join(f":c{n}" for n in range(len(ids))) + ")"
            )
            audiences = connection.execute(statement, {f"c{n}": i for n, i in enumerate(ids)})
            return json.dumps([dict(r) for r in rows], default=str), audiences.all()

    return run


def update_pair(service: Service, audience_ours_id: str, audience_hand_id: str) -> Any:
    """PATCH a contact's points back and forth across the audience, against the hand-written
    update and membership difference with its event."""
    path = f"/contacts?listId={service.ours}&limit=20&country=US"
    ours_ids = [c["id"] for c in service.call("GET", path).json()["data"]["contacts"]]
    hand_ids = [
        row[0]
        for row in service.sql(
            "SELECT id FROM contacts WHERE list_id = :list AND country = 'US' LIMIT 20",
            list=service.hand,
        )
    ]
    ours_steps = cycle([(i, p) for i in ours_ids for p in (5, 500)])
    hand_steps = cycle([(i, p) for i in hand_ids for p in (5, 500)])

    def ours() -> Any:
        contact_id, points = next(ours_steps)
        return service.call("PATCH", f"/contacts/{contact_id}", json={"points": points})

    def hand() -> Any:
        contact_id, points = next(hand_steps)
        return _hand_update(service, audience_hand_id, contact_id, points)

    return ours, hand


def _hand_update(service: Service, audience_id: str, contact_id: str, points: int) -> None:
    now = datetime.now(UTC)
    params = {"contact": contact_id, "audience": audience_id, "points": points, "now": now}
    with service.engine.begin() as connection:
        run = lambda sql: connection.execute(text(sql), params).rowcount  # noqa: E731
        run("UPDATE contacts SET points = :points WHERE id = :contact")
        left = run(
            "DELETE FROM memberships WHERE audience_id = :audience AND contact_id = :contact "
            f"AND NOT EXISTS (SELECT 1 FROM contacts c WHERE c.id = :contact AND {HAND_CONDITION})"
        )
        entered = run(
            f"INSERT INTO memberships (audience_id, contact_id, entered_at) SELECT {AUDIENCE}, "
            f"c.id, :now FROM contacts c WHERE c.id = :contact AND {HAND_CONDITION} AND NOT "
            "EXISTS (SELECT 1 FROM memberships m WHERE m.audience_id = :audience "
            "AND m.contact_id = :contact)"
        )
        if left or entered:
            run(
                "INSERT INTO events (id, list_id, position, type, contact_id, audience_id, cause, "
                "occurred_at, payload) SELECT :event, c.list_id, (SELECT COALESCE(MAX(position), "
                "0) + 1 FROM events WHERE list_id = c.list_id), :type, c.id, :audience, "
                "'contact.updated', :now, '{}' FROM contacts c WHERE c.id = :contact".replace(
                    ":event", f"'{new_id('evt')}'"
                ).replace(":type", "'audience.left'" if left else "'audience.entered'")
            )


def export_pair(service: Service, ours_id: str, hand_id: str) -> Any:
    def ours() -> int:
        path = f"/audiences/{ours_id}/export?format=csv"
        return len(service.call("GET", path).content)

    def hand() -> int:
        out = io.StringIO()
        writer = csv.writer(out)
        with service.engine.connect() as connection:
            result = connection.execution_options(stream_results=True).execute(
                text(
                    "SELECT c.* FROM contacts c JOIN memberships m ON m.contact_id = c.id "
                    "WHERE m.audience_id = :audience ORDER BY c.id"
                ),
                {"audience": hand_id},
            )
            writer.writerow(result.keys())
            for row in result:
                writer.writerow(row)
        return len(out.getvalue().encode())

    return ours, hand


def feed_pair(service: Service) -> Any:
    """The second page of 1,000 events (after a cursor), ours and by hand."""
    first = service.call("GET", f"/events?listId={service.ours}&limit=1000").json()["data"]
    cursor = first["next"]

    def ours() -> Any:
        return service.call("GET", f"/events?listId={service.ours}&limit=1000&after={cursor}")

    def hand() -> Any:
        with service.engine.connect() as connection:
            rows = connection.execute(
                text(
                    "SELECT * FROM events WHERE list_id = :list AND position > 1000 "
                    "ORDER BY position LIMIT 1001"
                ),
                {"list": service.hand},
            ).mappings()
            return json.dumps([dict(r) for r in rows], default=str)

    return ours, hand


# ---- memory, profile, the run ---------------------------------------------------------------


def reset_peak() -> int:
    """The resident memory now, after resetting the kernel's peak (Linux)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return 0
    return _status("VmRSS")


def peak() -> int:
    return _status("VmHWM")


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def profile(call: Callable[[], Any], top: int = 18) -> str:
    """Where `call`'s time goes: the functions with the most cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    call()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def run(
    name: str,
    url: str,
    count: int,
    runs: int,
    with_profile: bool,
    only: str | None = None,
    audiences: int = 1,
    client: str = CLIENTS[0],
) -> Run:
    """The steps measured (`only`: the import or the page alone), and the profile if asked; with
    `audiences` above 1 the update is measured in a list of that many smart audiences
    (`million_update`), every one of which it moves across. `client`: how ours is called, in
    place or through httpx (the module's docstring)."""
    result = Run(name, count, client=client)
    rows = import_rows(count)
    # The rows are the client's: in a deployment they live in another process. Here they would
    # be millions of objects in the service's heap, every full collection walking them (7 % of
    # our import's time at 200,000 rows, growing with the list): out of the collector's sight.
    gc.collect()
    gc.freeze()
    service = Service(url, client)
    try:
        if only == "import":
            _measure_import(service, rows, result)
            if with_profile:
                result.profile = profile_import(service, rows)
        elif only == "page":
            _measure_page(service, rows, runs, result)
        elif only == "reads":
            import_hand(service, rows, service.ours)
            import_hand(service, rows)
            _measure_after_load(service, rows, runs, result, audiences)
            if with_profile:
                pages = lambda: [page_in_thread(service) for _ in range(runs)]  # noqa: E731
                result.profile = profile(pages, top=40)
        else:
            _measure(service, rows, runs, result, audiences)
            if with_profile:
                result.profile = _profile_slowest(service, result)
    finally:
        service.close()
        gc.unfreeze()
    result.load_average = os.getloadavg()
    return result


def _measure_import(service: Service, rows: list[dict[str, Any]], result: Run) -> None:
    base = reset_peak()
    ours = import_ours(service, rows)
    # Shown at once, before the hand path's figure.
    print(f"bulk import, ours: {ours:.2f} s", file=sys.stderr, flush=True)
    result.measures.append(
        Measure("bulk import", ours, import_hand(service, rows), f"{len(rows):,} rows",
                peak() - base)
    )  # fmt: skip


def _measure(
    service: Service, rows: list[dict[str, Any]], runs: int, result: Run, audiences: int = 1
) -> None:
    _measure_import(service, rows, result)
    _measure_after_load(service, rows, runs, result, audiences)


def _measure_after_load(
    service: Service, rows: list[dict[str, Any]], runs: int, result: Run, audiences: int = 1
) -> None:
    """Every step after the import, both lists loaded (by either import)."""
    add = result.measures.append
    analyze(service)
    base = reset_peak()
    ours_seconds, ours_id, ours_members = audience_ours(service)
    hand_seconds, hand_id, hand_members = audience_hand(service)
    assert ours_members == hand_members, (ours_members, hand_members)
    add(Measure("audience over the list", ours_seconds, hand_seconds,
                f"{ours_members:,} members", peak() - base))  # fmt: skip
    update: tuple[str, Any] = ("one contact update", update_pair(service, ours_id, hand_id))
    extra = None
    if audiences > 1:
        extra = million_update.Audiences(service, rows, audiences - 1)
        update = (f"one contact update, {audiences} audiences",
                  million_update.update_pair(service, extra, (hand_id, hand_holds)))  # fmt: skip
    analyze(service)
    plans: list[tuple[str, Any, int]] = [
        ("contacts page of 100", (page_ours(service), page_hand(service)), runs),
        (*update, runs),
        ("event feed, 1,000 events", feed_pair(service), runs),
        ("audience export (CSV)", export_pair(service, ours_id, hand_id), max(1, runs // 10)),
    ]  # fmt: skip
    for what, (ours_call, hand_call), count in plans:
        base = reset_peak()
        ours_median, hand_median = median_pair(ours_call, hand_call, count)
        add(Measure(what, ours_median, hand_median, f"median of {count}", peak() - base))
    if extra is not None:  # both lists hold the same memberships after the updates
        assert extra.memberships(service.ours) == extra.memberships(service.hand)


def page_ours(service: Service) -> Callable[[], Any]:
    return lambda: service.call("GET", f"/contacts?listId={service.ours}&limit=100")


def _measure_page(service: Service, rows: list[dict[str, Any]], runs: int, result: Run) -> None:
    """The contacts page alone, both lists loaded by the hand-written import (`--only page`)."""
    import_hand(service, rows, service.ours)
    import_hand(service, rows)
    analyze(service)
    _, ours_id, ours_members = audience_ours(service)
    _, hand_id, hand_members = audience_hand(service)
    assert ours_members == hand_members, (ours_members, hand_members)
    analyze(service)
    base = reset_peak()
    ours_median, hand_median = median_pair(page_ours(service), page_hand(service), runs)
    result.measures.append(
        Measure("contacts page of 100", ours_median, hand_median, f"median of {runs}",
                peak() - base)
    )  # fmt: skip


def page_in_thread(service: Service) -> bytes:
    """What `GET /contacts?listId=...&limit=100` does, its use case and rendering called in
    this thread (the routes run on the server's threads, which a profiler here cannot see)."""
    search = contacts.ContactSearch(
        list_id=service.ours, matches={}, filters=None, filters_text=None,
        paging=Paging(1, 100, None, "desc"),
    )  # fmt: skip
    settings = service.client.app.state.settings
    answer = contacts.search(service.database, settings, service.account_id, search)
    return bytes(data(answer).body)


def _profile_slowest(service: Service, result: Run) -> str:
    """The slowest path against its hand-written twin, run again under the profiler. The
    routes run on the server's threads, where a profiler of this thread sees nothing: the
    audience is created here by the route's own use case (`use_cases/audiences.create`)."""
    slowest = max(result.measures, key=lambda m: m.ratio)
    header = (
        f"highest ratio: {slowest.what} ({slowest.ratio:.1f}x); profiled: the audience over "
        "the list, the slowest path that grows with the list after the import\n"
    )
    return header + profile(lambda: create_audience_in_thread(service))


def profile_import(service: Service, rows: list[dict[str, Any]], top: int = 40) -> str:
    """The import of the same rows into a new list, profiled. A request's work runs on the
    event loop's thread and on worker threads, where a profiler of one thread sees nothing of
    the other's: meanwhile the worker threads' calls run inline, so the loop's thread does it
    all, and the profiler is enabled there (this thread, when the loop runs in place)."""
    service.ours = service.new_list("profiled")
    client = service.client
    on_loop = client.portal.call if isinstance(client, InProcessClient) else _now
    original = anyio.to_thread.run_sync

    async def inline(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return func(*args)

    profiler = cProfile.Profile()
    anyio.to_thread.run_sync = inline  # type: ignore[assignment]
    try:
        on_loop(profiler.enable)
        seconds = import_ours(service, rows)
        on_loop(profiler.disable)
    finally:
        anyio.to_thread.run_sync = original
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return f"the import profiled: {seconds:.2f} s under the profiler\n" + out.getvalue()


def _now(call: Callable[[], Any]) -> Any:
    return call()


def create_audience_in_thread(service: Service) -> str:
    """What `POST /audiences` does for a smart audience, its use case called in this thread."""
    change = audiences.AudienceChange(name="profiled", list_id=service.ours, filters=FILTER)
    database, settings = service.database, service.client.app.state.settings
    return audiences.create(
        database, settings, service.account_id, change, in_transaction(database)
    )


def render(result: Run) -> str:
    """The run as a markdown table, as docs/performance-history-service.md shows it."""
    average = ", ".join(f"{v:.2f}" for v in result.load_average)
    lines = [
        f"{result.database}, {result.rows:,} contacts per list, ours called "
        f"{_CALLERS[result.client]}; "
        f"load average {average} on {os.cpu_count()} CPUs",
        "",
        "| step | ours | hand-written | ours ÷ hand | peak memory (ours and hand) | note |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for m in result.measures:
        lines.append(
            f"| {m.what} | {_seconds(m.ours)} | {_seconds(m.hand)} | {m.ratio:.2f}x | "
            f"{m.peak_bytes / 1e6:.0f} MB | {m.note} |"
        )
    return "\n".join(lines) + "\n"


_CALLERS = {"in-place": "in place (ASGI)", "httpx": "through httpx"}


def _seconds(value: float) -> str:
    return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.1f} ms"


@contextmanager
def database(kind: str) -> Iterator[tuple[str | None, str]]:
    """A fresh SQLite file or a fresh PostgreSQL database (throw-away server or the one at
    AUDIENCEFILTER_BENCH_PG_URL)."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="af-million-") as folder:
            yield f"sqlite:///{Path(folder) / 'million.db'}", "SQLite"
        return
    with _postgres() as (url, note):
        yield url, f"PostgreSQL ({note})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--runs", type=int, default=21, help="timed runs of each read (median)")
    parser.add_argument("--profile", action="store_true", help="profile the slowest path")
    parser.add_argument(
        "--audiences", type=int, default=1,
        help="smart audiences of each list the update is judged against (moves across all)",
    )  # fmt: skip
    parser.add_argument(
        "--only", choices=("import", "page", "reads"),
        help="measure this step alone (and profile it); reads: every step but the import, "
        "both lists loaded by the hand-written import",
    )  # fmt: skip
    parser.add_argument(
        "--client", choices=CLIENTS, default=CLIENTS[0],
        help="how ours is called: the ASGI application in place (the figures), or through "
        "httpx and a portal thread (the former harness, which charges ours the client's work)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    with database(args.db) as (url, name):
        if url is None:
            print(f"{args.db}: {name}")
            return 0
        result = run(
            name, url, args.rows, args.runs, args.profile, args.only, args.audiences, args.client
        )
    print(render(result))
    if result.profile:
        print(result.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
