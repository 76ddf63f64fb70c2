"""`python -m benchmarks.execution_layers`: what SQLAlchemy's execution costs the service, a
statement and a transaction at a time, beside the driver's cursor doing the same.

A single write of the service (a PATCH) runs seven statements in one write transaction, after
a key check on a connection of its own: that many passes through SQLAlchemy's execution
layer. This benchmark times each kind of pass on the service's own engine (a throw-away SQLite
file, migrated), this thread's CPU time, the best of several rounds:

- **a statement**: the key check's `SELECT` (`api/deps.py`) run on an open connection through
  `Connection.execute`, through `Session.execute` (the ORM's path, which an ORM statement
  takes), and on the driver's cursor with the same compiled text;
- **a transaction**: one trivial statement in the service's write transaction
  (`Database.transaction`: a session, the SQLite gate, `BEGIN IMMEDIATE`, the commit), in the
  engine's (`engine.begin()`), and on a pooled driver connection by hand (`BEGIN IMMEDIATE`,
  the statement, `COMMIT`);
- **a one-statement read**: `Database.read_row`, the key check's way (a pooled connection
  outside a transaction) against the driver's cursor on a pooled connection;
- the transaction and the one-statement read again with the engine's connection-level events
  switched off for the measure (`engine._has_events`; the service's `begin` hook is one, and
  while any is registered SQLAlchemy dispatches every event of every statement): what that
  dispatch costs. Without the hook no `BEGIN IMMEDIATE` is sent, so that row of the
  transaction is an upper bound of the dispatch's share.

Printed in microseconds a pass, with each pass ÷ the driver's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import text

from audiencefilter.service import Settings
from audiencefilter.service.api.deps import _KEY
from audiencefilter.service.db import migrate
from audiencefilter.service.db.engine import Database

TRIVIAL = text("SELECT 1")
DIGEST = "0" * 64


@dataclass(frozen=True)
class Pass:
    """One kind of pass: its microseconds, and the driver's for the same work."""

    what: str
    way: str
    micros: float
    driver: float


def cpu_micros(call: Callable[[], Any], number: int, rounds: int) -> float:
    """The best of `rounds` of `number` calls, this thread's CPU microseconds a call."""
    for _ in range(max(1, number // 10)):
        call()
    best = float("inf")
    for _ in range(rounds):
        started = time.thread_time()
        for _ in range(number):
            call()
        best = min(best, time.thread_time() - started)
    return best / number * 1e6


@contextmanager
def service_database() -> Iterator[Database]:
    with tempfile.TemporaryDirectory(prefix="af-layers-") as folder:
        settings = Settings(database_url=f"sqlite:///{Path(folder) / 'layers.db'}")
        database = Database.from_settings(settings)
        migrate.upgrade(database.engine)
        try:
            yield database
        finally:
            database.engine.dispose()


def statement_passes(database: Database, number: int, rounds: int) -> list[Pass]:
    params = {"digest": DIGEST}
    with database.transaction() as session:
        connection = session.connection()
        sql = str(_KEY.compile(dialect=database.engine.dialect))
        raw = connection.connection.dbapi_connection
        assert raw is not None
        driver = cpu_micros(lambda: raw.execute(sql, (DIGEST,)).fetchone(), number, rounds)
        core = cpu_micros(lambda: connection.execute(_KEY, params).first(), number, rounds)
        orm = cpu_micros(lambda: session.execute(_KEY, params).first(), number, rounds)
    what = "a statement (the key's SELECT)"
    return [
        Pass(what, "Connection.execute", core, driver),
        Pass(what, "Session.execute", orm, driver),
    ]


def _by_hand(database: Database) -> Callable[[], None]:
    def run() -> None:
        raw = database.engine.raw_connection()
        try:
            cursor = raw.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            cursor.execute("SELECT 1").fetchone()
            cursor.execute("COMMIT")
        finally:
            raw.close()

    return run


def _read_by_hand(database: Database) -> Callable[[], None]:
    def run() -> None:
        raw = database.engine.raw_connection()
        try:
            raw.cursor().execute("SELECT 1").fetchone()
        finally:
            raw.close()

    return run


def transaction_passes(database: Database, number: int, rounds: int) -> list[Pass]:
    def service() -> None:
        with database.transaction() as session:
            session.execute(TRIVIAL)

    def engine() -> None:
        with database.engine.begin() as connection:
            connection.execute(TRIVIAL)

    def read_row() -> None:
        database.read_row(TRIVIAL, {})

    driver = cpu_micros(_by_hand(database), number, rounds)
    read_driver = cpu_micros(_read_by_hand(database), number, rounds)
    out = [
        Pass("a write transaction", "Database.transaction", cpu_micros(service, number, rounds),
             driver),
        Pass("a write transaction", "engine.begin", cpu_micros(engine, number, rounds), driver),
        Pass("a one-statement read", "Database.read_row", cpu_micros(read_row, number, rounds),
             read_driver),
    ]  # fmt: skip
    engine_object: Any = database.engine
    engine_object._has_events = False
    try:
        out += [
            Pass("a write transaction", "Database.transaction, events off",
                 cpu_micros(service, number, rounds), driver),
            Pass("a one-statement read", "Database.read_row, events off",
                 cpu_micros(read_row, number, rounds), read_driver),
        ]  # fmt: skip
    finally:
        engine_object._has_events = True
    return out


def measure(number: int = 3000, rounds: int = 5) -> list[Pass]:
    with service_database() as database:
        return [
            *statement_passes(database, number, rounds),
            *transaction_passes(database, number, rounds),
        ]


def markdown(passes: Sequence[Pass]) -> str:
    lines = ["| pass | way | µs | the driver's µs | ÷ the driver's |", "|---|---|---:|---:|---:|"]
    lines += [
        f"| {p.what} | {p.way} | {p.micros:.1f} | {p.driver:.1f} | {p.micros / p.driver:.1f}x |"
        for p in passes
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--number", type=int, default=3000, help="passes a round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(markdown(measure(args.number, args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
