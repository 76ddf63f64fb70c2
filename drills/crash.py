"""Crash safety: SIGKILL the service half-way through a burst of contact creations.

Twenty clients create contacts as fast as the service takes them. Once half the burst has been
acknowledged, the service's process group gets SIGKILL while requests are in flight; it is then
started again on the same database and the clients finish the burst. A 201 is a promise: every
acknowledged contact must be in the database with the id the client was given (one query reads
them all; a sample is also fetched through the API). A request cut off mid-flight is *in doubt*:
it may or may not have committed, and both are correct. One refused at connect never reached
the service and is sent again after the restart. Any row that is neither acknowledged nor in
doubt would be a phantom. On SQLite, `PRAGMA integrity_check` runs on the file right after the
kill, before anything reopens it cleanly, and again at the end.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from . import backends
from .common import Context, Row, rate, row
from .service import UNLIMITED, Service, client, create_key, create_list, migrate, running

SAMPLE = 200


class Burst:
    """Contact creations by concurrent clients, with what each request is known to have done."""

    def __init__(self, service: Service, key: str, list_id: str, total: int, clients: int):
        self.service, self.key, self.list_id, self.clients = service, key, list_id, clients
        self.pending = list(range(total))
        self.acknowledged: dict[str, str] = {}  # email -> id
        self.in_doubt: set[str] = set()
        self.unexpected: Counter[int] = Counter()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.killed_at: int | None = None

    @staticmethod
    def email(index: int) -> str:
        return f"burst{index}@drill.example"

    def _take(self) -> int | None:
        with self.lock:
            if self.stopping.is_set() or not self.pending:
                return None
            return self.pending.pop()

    def _client(self, kill_after: int | None, kill: Callable[[], None]) -> None:
        with client(self.service, self.key) as api:
            while (index := self._take()) is not None:
                email = self.email(index)
                body = {"email": email, "listId": self.list_id, "points": index % 100}
                try:
                    response = api.post("/v4/contacts", json=body)
                except httpx.ConnectError:
                    with self.lock:  # never reached the service: send it again later
                        self.pending.append(index)
                    self.stopping.set()
                    continue
                except httpx.TransportError:
                    with self.lock:
                        self.in_doubt.add(email)
                    self.stopping.set()
                    continue
                if response.status_code != 201:
                    with self.lock:
                        self.unexpected[response.status_code] += 1
                    continue
                with self.lock:
                    self.acknowledged[email] = response.json()["data"]["contact"]["id"]
                    due = kill_after is not None and self.killed_at is None
                    due = due and len(self.acknowledged) >= (kill_after or 0)
                    if due:
                        self.killed_at = len(self.acknowledged)
                if due:
                    kill()

    def run(self, kill_after: int | None = None, kill: Callable[[], None] = lambda: None) -> float:
        """Send until everything is sent, or until the service is gone; the seconds it took."""
        self.stopping.clear()
        random.shuffle(self.pending)
        started = time.monotonic()
        threads = [
            threading.Thread(target=self._client, args=(kill_after, kill), daemon=True)
            for _ in range(self.clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        return time.monotonic() - started


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as connection:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])


def stored_contacts(database_url: str, list_id: str) -> dict[str, str]:
    """Email -> id of every contact of the list, read straight from the database."""
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                text("SELECT email, id FROM contacts WHERE list_id = :list_id"),
                {"list_id": list_id},
            )
            return {str(email): str(id_) for email, id_ in rows}
    finally:
        engine.dispose()


def _drill(name: str, ctx: Context, database_url: str, sqlite_file: Path | None) -> Row:
    sizes = ctx.sizes
    key = create_key(database_url)
    settings = {"RATE_LIMIT_FREE": UNLIMITED}
    with running(database_url, ctx.workdir / f"{name}.log", settings=settings) as service:
        with client(service, key) as api:
            list_id = create_list(api)
        burst = Burst(service, key, list_id, sizes.crash_creations, sizes.crash_clients)
        first = burst.run(kill_after=sizes.crash_creations // 2, kill=service.kill)
        if burst.killed_at is None:
            return row(name, False, "the burst ended before the kill")
        after_kill = integrity(sqlite_file) if sqlite_file else "n/a"
        service.start()
        second = burst.run()
        stored = stored_contacts(database_url, list_id)
        with client(service, key) as api:
            acknowledged_ids = sorted(burst.acknowledged.items())
            sample = random.sample(acknowledged_ids, min(SAMPLE, len(acknowledged_ids)))
            served = sum(
                api.get(f"/v4/contacts/{id_}").json().get("data", {}).get("contact", {}).get("id")
                == id_
                for _, id_ in sample
            )
    at_end = integrity(sqlite_file) if sqlite_file else "n/a"
    lost = sum(stored.get(email) != id_ for email, id_ in burst.acknowledged.items())
    committed_in_doubt = sum(email in stored for email in burst.in_doubt)
    phantoms = len(set(stored) - set(burst.acknowledged) - burst.in_doubt)
    unsent = len(burst.pending)
    acknowledged = len(burst.acknowledged)
    passed = (
        lost == 0
        and phantoms == 0
        and unsent == 0
        and not burst.unexpected
        and served == len(sample)
        and acknowledged + len(burst.in_doubt) == sizes.crash_creations
        and (sqlite_file is None or (after_kill == "ok" and at_end == "ok"))
    )
    figures = (
        f"{acknowledged:,}/{sizes.crash_creations:,} acknowledged ({burst.killed_at:,} before "
        f"SIGKILL), lost {lost}, in doubt {len(burst.in_doubt)} ({committed_in_doubt} committed), "
        f"phantoms {phantoms}, {rate(acknowledged, first + second)}"
    )
    if sqlite_file:
        figures += f", integrity_check {after_kill}/{at_end}"
    if burst.unexpected:
        figures += f", unexpected statuses {dict(burst.unexpected)}"
    if served != len(sample):
        figures += f", API served {served}/{len(sample)} sampled ids"
    return row(name, passed, figures)


def crash_sqlite(ctx: Context) -> Row:
    path = ctx.workdir / "crash.db"
    return _drill("crash-sqlite", ctx, f"sqlite:///{path}", path)


def crash_postgres(ctx: Context) -> Row:
    with backends.postgres() as cluster:
        migrate(cluster.database_url)
        return _drill("crash-postgres", ctx, cluster.database_url, None)
