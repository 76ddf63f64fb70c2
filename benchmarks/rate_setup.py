"""The stack under `benchmarks.service_rate`: a throw-away PostgreSQL (and Redis when the service
runs several workers, which must share their rate-limit counters), the service as a real `serve`
process on 127.0.0.1, a key, and lists of synthetic contacts with 100 smart audiences.

Contacts are seeded straight into the table in chunks, by the bulk path the service's own
import uses (`db/bulk.RowMaker` and `insert_rows`: `COPY` on PostgreSQL): what is measured is
what the service does with them afterwards, not how they got there.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import bindparam, text

from audiencefilter.service.db.bulk import RowMaker, insert_rows
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import Contact
from audiencefilter.service.settings import Settings
from drills import service as served
from tests.servers import ServerFailed, ServerMissing, start_redis

from .pgserver import postgres
from .service_membership import _contacts, audience_filters

SEED_CHUNK = 5000
AUDIENCES = 100


@dataclass
class Stack:
    """What a run talks to: the service's URL and key, and the database for seeding and checks."""

    url: str
    key: str
    database: Database
    database_url: str
    note: str
    service: served.Service
    log: Path

    def api(self) -> httpx.Client:
        """A client of its own for each thread (httpx clients are not shared across threads)."""
        return served.client(self.service, self.key, timeout=120.0)


def _settings(workers: int, redis_url: str | None) -> dict[str, str]:
    settings = {
        "RATE_LIMIT_FREE": served.UNLIMITED,
        "RATE_LIMIT_PRO": served.UNLIMITED,
        "MAX_AUDIENCES_PER_LIST": str(AUDIENCES * 2),
        "LOG_FORMAT": "text",
    }
    if workers > 1 and redis_url:
        settings["RATE_LIMIT_STORAGE"] = redis_url
    return settings


@contextlib.contextmanager
def _redis(workers: int) -> Iterator[str | None]:
    """A Redis for the shared counters of several workers; None with one worker."""
    if workers < 2:
        yield None
        return
    try:
        server = start_redis()
    except (ServerMissing, ServerFailed) as exc:
        raise SystemExit(f"--workers {workers} needs Redis for the rate limits: {exc}") from None
    try:
        yield server.url
    finally:
        server.stop()


@contextlib.contextmanager
def stack(workers: int) -> Iterator[Stack | None]:
    """The whole stack for one run, stopped (by PID) when the block ends; None without
    PostgreSQL (the reason is printed)."""
    with postgres() as (url, note), _redis(workers) as redis_url:
        if url is None:
            print(f"PostgreSQL: {note}")
            yield None
            return
        served.migrate(url)
        key = served.create_key(url, account="rate")
        database = Database.from_settings(Settings(database_url=url))
        with tempfile.TemporaryDirectory(prefix="af-rate-") as folder:
            log = Path(folder) / "service.log"
            settings = _settings(workers, redis_url)
            try:
                with served.running(url, log, workers=workers, settings=settings) as service:
                    yield Stack(service.url, key, database, url, note, service, log)
            finally:
                database.dispose()


def logged_errors(log: Path) -> list[str]:
    """The service log's lines at level ERROR so far: what a request answered 500 or 503 for
    (the answer says only "unavailable"; the log names the database's error)."""
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return [line for line in lines if " ERROR " in line]


def new_list(stack: Stack, contacts: int) -> str:
    """A list of `contacts` synthetic contacts, analysed as autovacuum would after a load."""
    with stack.api() as api:
        list_id = str(
            served.expect(api.post("/v4/lists", json={"name": "rate"}), 201)["list"]["id"]
        )
    maker = RowMaker(Contact)
    rows = (maker.row(row) for row in _contacts(list_id, contacts))
    while chunk := [row for _, row in zip(range(SEED_CHUNK), rows, strict=False)]:
        with stack.database.transaction() as session:
            insert_rows(session, maker.table, chunk)
    _analyze(stack.database)
    return list_id


def _analyze(database: Database) -> None:
    autocommit = database.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    with autocommit as connection:
        connection.exec_driver_sql("VACUUM ANALYZE")


def add_audiences(stack: Stack, list_id: str, count: int = AUDIENCES) -> float:
    """`count` smart audiences of varied filters (`service_membership.audience_filters`), each
    built within its request; the seconds they took together."""
    started = time.perf_counter()
    with stack.api() as api:
        for index, where in enumerate(audience_filters(count)):
            body = {"name": f"a{index}", "listId": list_id, "filters": where}
            served.expect(api.post("/v4/audiences?limit=1&wait=true", json=body), 201)
    _analyze(stack.database)
    return time.perf_counter() - started


def sql(stack: Stack, statement: str, **params: Any) -> list[Any]:
    """Rows of one read; a list or tuple parameter is bound as an expanding `IN (...)`."""
    query = text(statement).bindparams(
        *(bindparam(name, expanding=True) for name, v in params.items() if isinstance(v, list))
    )
    with stack.database.engine.connect() as connection:
        return list(connection.execute(query, params))


def _stat(pid: str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (Linux), or None once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw.rpartition(")")[2].split()


def _cpu(fields: list[str], reaped: bool = False) -> float:
    """The process's own CPU seconds; `reaped`, those of its children that ended and it waited
    for too (a PostgreSQL backend that closes between two readings would otherwise take its
    time with it, and the difference could come out below zero)."""
    # utime and stime are fields 14 and 15 of stat, 11 and 12 after the command name; cutime
    # and cstime 16 and 17, 13 and 14 after it.
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_seconds(stack: Stack) -> tuple[float, float]:
    """CPU seconds used so far by the service's processes (its process group: the supervisor
    and its workers) and by PostgreSQL's (the postmaster's children): what the load on a
    shared machine cannot inflate, unlike the wall clock."""
    assert stack.service.process is not None
    group = str(stack.service.process.pid)
    backend = sql(stack, "SELECT pg_backend_pid()")[0][0]
    own = _stat(str(backend))
    postmaster = own[1] if own else ""
    service = postgres_cpu = 0.0
    for entry in Path("/proc").iterdir():
        fields = _stat(entry.name) if entry.name.isdigit() else None
        if fields is None:
            continue
        if fields[2] == group:
            service += _cpu(fields, reaped=entry.name == group)
        elif fields[1] == postmaster or entry.name == postmaster:
            postgres_cpu += _cpu(fields, reaped=entry.name == postmaster)
    return service, postgres_cpu
