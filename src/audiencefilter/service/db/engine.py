"""Engine and sessions: one `Database` per application, built from the settings.

SQLite is tuned on every new connection (an engine `connect` event): WAL journal, `synchronous=FULL`
(a committed write survives a power cut), foreign keys on (the cascades depend on it),
`secure_delete` (a deleted or rewritten row's bytes are overwritten with zeros, not left in free
space: an erased contact's e-mail must not stay in the file), a busy
timeout, a checkpoint every `sqlite_checkpoint_pages` pages of WAL, and, through the filter
library's `register_sqlite_functions`, a `lower()` that folds like Python's `str.lower()`
(SQLite's own folds ASCII only), so filters fold case alike in SQL and in memory.

pysqlite's own transaction handling is switched off and the `begin` event emits `BEGIN` itself:
plain `BEGIN` for reads, `BEGIN IMMEDIATE` for sessions that will write. A deferred transaction
that reads and then writes can fail at once with SQLITE_BUSY when another writer got there first
(the busy timeout cannot help it); taking the write lock up front makes writers queue instead.

Route handlers open and close their session inside one function call, never in a dependency:
FastAPI runs sync dependencies and the handler as separate thread-pool jobs, and a SQLite write
lock held across that hop can wait for a thread that is itself waiting for the lock.

Both engines hide bound parameters in their exceptions (`hide_parameters`): a logged database
error says which statement failed, never the e-mail addresses or other personal data bound to it.

SQLite's own checkpoint comes every 1,000 pages of WAL (4 MB). A turn of an import writes
about that much, its rows landing on pages spread across the contacts' indexes, so every turn
copied its pages back into the database file, and again the next turn for the same leaves.
The service checkpoints every 10,000 pages (about 40 MB, the WAL file's size at rest): a leaf
written by several turns is copied back once. Measured on an import of 60,000 rows, two
rounds each: 17.9 and 17.1 s before, 14.8 and 15.6 s after (`synchronous = NORMAL`, for
comparison, 16.0 and 16.4 s: the time was the copying, not the syncs).

PostgreSQL sessions run in UTC so timestamps come back with a `+00:00` offset. Its pool checks
each connection before lending it (`lending.py`: its socket, and a ping after a long idle):
after a server restart, dead connections are replaced without a request seeing them, so the
service recovers by itself.

Compiled statements are cached in a `StatementCache` bounded by bound parameters, not only by
entries: memory stays bounded whatever filters arrive (`statement_cache.py`).

The drivers' prepared statements are kept, bounded by what they hold (`prepared_cache.py`).
Preparing the service's own statements again on every request cost a fifth of a PATCH on SQLite
(the contacts table's triggers compile into each write's program) and the planning of each on
PostgreSQL; but a statement with a 5,000-value `in` list is a prepared program of about a
megabyte, and the drivers' caches count entries, never bytes: large filters whose lengths
changed from one request to the next once made every pooled connection keep 128 of them
(measured: RSS +92 MB over 200 distinct previews). So pysqlite's cache is mirrored and a
connection whose kept statements pass a budget of SQL text has its cache emptied, and psycopg
prepares only the statements planned once (found by unique keys: their plans fit every value),
of a short text, at most `PREPARED_MAX` of them a connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, Executable, create_engine, event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.orm import Session, sessionmaker

from ... import register_sqlite_functions
from ..ground.json import stored
from ..settings import Settings
from . import prepared_cache
from .driver_path import DRIVER_STATEMENTS, execute
from .fair_gate import FairGate, current_key
from .lending import check_before_lending
from .statement_cache import StatementCache

WRITE_OPTION = "audiencefilter_write"
SINGLE_STATEMENT_OPTION = "audiencefilter_single_statement"
"""The execution option of a SQLite connection that runs one statement outside a transaction
(`Database.read_row`): its `BEGIN` is not sent."""
RESIDUAL = "membership_residual"
"""The key of write sessions' `info` holding the setting `membership_residual`."""
SHARED_TURNS = "shared_import_turns"
"""The key of write sessions' `info` holding the setting `shared_import_turns`."""


_BEGINS = {True: text("BEGIN IMMEDIATE"), False: text("BEGIN")}
"""SQLite's `BEGIN` of a write transaction (it takes the write lock at once) and of a read."""


def _install_sqlite_hooks(engine: Engine, busy_timeout_ms: int, checkpoint_pages: int) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = FULL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA secure_delete = ON")
        cursor.execute(f"PRAGMA wal_autocheckpoint = {int(checkpoint_pages)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        options = connection.get_execution_options()
        if options.get(SINGLE_STATEMENT_OPTION, False):
            return  # one statement, its own read transaction
        begin = _BEGINS[bool(options.get(WRITE_OPTION, False))]
        execute(connection, begin, {}, direct=options.get(DRIVER_STATEMENTS, False))


def make_engine(settings: Settings) -> Engine:
    """An engine for the configured URL, with the per-dialect tuning described above."""
    url = make_url(settings.database_url)
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() == "sqlite":
        engine = create_engine(
            url,
            hide_parameters=True,
            json_serializer=stored,
            execution_options={"compiled_cache": StatementCache()},
            pool_size=settings.db_pool_size,
            max_overflow=settings.db_max_overflow,
            connect_args={
                "check_same_thread": False,
                "cached_statements": prepared_cache.CACHED_STATEMENTS,
            },
        )
        _install_sqlite_hooks(
            engine, settings.sqlite_busy_timeout_ms, settings.sqlite_checkpoint_pages
        )
        prepared_cache.bound_prepared_statements(engine)
        register_sqlite_functions(engine)
        return engine
    connect_args: dict[str, Any] = {}
    if url.get_backend_name() == "postgresql":
        connect_args["options"] = "-c timezone=UTC"
        # A server that accepts TCP but does not answer must not hold a request for minutes.
        connect_args["connect_timeout"] = settings.db_connect_timeout_s
        if url.get_driver_name() == "psycopg":
            connect_args["prepare_threshold"] = None  # each statement's own (`prepared_cache`)
    engine = create_engine(
        url,
        hide_parameters=True,
        json_serializer=stored,
        execution_options={"compiled_cache": StatementCache()},
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_timeout=settings.db_pool_timeout_s,
        connect_args=connect_args,
    )
    check_before_lending(engine)
    if url.get_driver_name() == "psycopg" and settings.db_prepared_statements:
        prepared_cache.prepare_planned_once(engine)
    return engine


def _snapshot_reads(engine: Engine) -> Engine:
    """The engine reads go through. A read (a page: its rows, their positions, their
    audiences) takes several statements and must see one snapshot: PostgreSQL's READ COMMITTED
    gives each statement its own, so a write landing between them showed half of itself. A
    read-only REPEATABLE READ transaction never fails to serialize. SQLite's read transaction
    is one snapshot."""
    if engine.dialect.name == "postgresql":
        return engine.execution_options(isolation_level="REPEATABLE READ")
    return engine


def _single_statements(engine: Engine) -> Engine:
    """The engine a read of one statement goes through, outside any transaction: one statement
    is one snapshot on either database, so the `BEGIN` and the `ROLLBACK` around it were two
    more round trips to PostgreSQL (autocommit sends neither) and two more statements on
    SQLite (whose hook then sends no `BEGIN`, the `SELECT` its own read transaction)."""
    if engine.dialect.name == "sqlite":
        return engine.execution_options(**{SINGLE_STATEMENT_OPTION: True})
    return engine.execution_options(isolation_level="AUTOCOMMIT")


class Database:
    """The engine plus two session factories: one for reads, one for writes. On SQLite, write
    transactions take turns by account, then in arrival order (`fair_gate.py`)."""

    def __init__(
        self,
        engine: Engine,
        *,
        gate_timeout: float = 15.0,
        residual: bool = True,
        shared_turns: bool = True,
        driver_statements: bool = True,
    ) -> None:
        self.engine = engine
        self.gate = FairGate() if engine.dialect.name == "sqlite" else None
        self.shared_turns = shared_turns and self.gate is None
        """Whether writers of one list may share turns (`shared_import_turns`; never on SQLite,
        whose writers take turns anyway)."""
        self._gate_timeout = gate_timeout
        # The `begin` hook reads whether to send SQLite's `BEGIN` on the driver's cursor.
        engine = engine.execution_options(**{DRIVER_STATEMENTS: driver_statements})
        self._reader = sessionmaker(_snapshot_reads(engine), expire_on_commit=False)
        self._single = _single_statements(engine)
        self.driver_statements = driver_statements
        """Whether the fixed statements run on the driver's cursor (`driver_path.py`)."""
        self._writer = sessionmaker(
            engine.execution_options(**{WRITE_OPTION: True}),
            expire_on_commit=False,
            # What a write's judgement reads (`membership/residuals`), how an import's turn
            # locks its list (`use_cases/imports`).
            info={
                RESIDUAL: residual,
                SHARED_TURNS: shared_turns,
                DRIVER_STATEMENTS: driver_statements,
            },
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> Database:
        return cls(
            make_engine(settings),
            gate_timeout=settings.sqlite_busy_timeout_ms / 1000,
            residual=settings.membership_residual,
            shared_turns=settings.shared_import_turns,
            driver_statements=settings.driver_statements,
        )

    def session(self, *, write: bool) -> Session:
        return self._writer() if write else self._reader()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A write session that commits on success and rolls back on error."""
        gated = self.gate is not None and self.gate.enter(self._gate_timeout, current_key())
        try:
            with self.session(write=True) as session, session.begin():
                yield session
        finally:
            if gated and self.gate is not None:
                self.gate.leave()

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A read-only session whose transaction ends when the block does."""
        with self.session(write=False) as session, session.begin():
            yield session

    def read_row(self, statement: Executable, parameters: dict[str, Any]) -> tuple[Any, ...] | None:
        """The first row of one statement, read on a bare connection: one statement is one
        snapshot on either database, and a session's bookkeeping was half the time of the key
        check every request makes (`api/deps.py`); read outside a transaction
        (`_single_statements`), on the driver's cursor when `driver_statements`."""
        with self._single.connect() as connection:
            return execute(connection, statement, parameters, direct=self.driver_statements).first()

    def truncate_wal(self) -> bool:
        """On SQLite, copies every page of the WAL into the database file and truncates the
        WAL to nothing (`wal_checkpoint(TRUNCATE)`), the service's writers held at the gate
        meanwhile: after an erasure, the WAL's older frames still hold the erased row as it was,
        until overwritten some 40 MB of writes later. Whether it completed (a reader still on an
        older snapshot past the busy timeout keeps it from it); True on PostgreSQL, where no
        such file is the service's to clear (docs/service-operations.md)."""
        if self.gate is None:
            return True
        gated = self.gate.enter(self._gate_timeout, current_key())
        try:
            raw = self.engine.raw_connection()
            try:
                cursor = raw.cursor()
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                busy, _frames, _copied = cursor.fetchone() or (1, 0, 0)
                cursor.close()
            finally:
                raw.close()
        finally:
            if gated:
                self.gate.leave()
        return bool(busy == 0)

    def ping(self) -> None:
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    def dispose(self) -> None:
        self.engine.dispose()
