"""Prepared statements kept on each connection, bounded by their size: SQLite's and PostgreSQL's.

pysqlite keeps each connection's last `cached_statements` prepared statements by SQL text, and
preparing one again is not free here: the `UPDATE` of a contact compiles the contacts table's
triggers into its program, and with no cache a PATCH on SQLite spent 0.7 of its 3.2 ms preparing
its statements again (docs/performance-history-writes.md, "Prepared statements kept").

Its cache counts entries, never bytes, and a prepared program grows with its text: about 28
bytes of memory a byte of SQL (measured: 290 KB for a 5,000-value `in`). Large filters whose
lengths changed from one request to the next once kept 128 such programs on every pooled
connection (tests/service/test_memory_bound.py). So each connection mirrors its cache here (the
same least-recently-used order by text, `CACHED_STATEMENTS` entries) with the texts' sizes, and a
connection whose kept texts pass `TEXT_BUDGET` has its cache emptied when it comes back to the
pool, its programs freed (`emptied`). Memory held at rest is at most the pool's connections ×
the budget (× 28); the statements a request runs every time (a PATCH runs 8, about 5 KB) stay
prepared.

On PostgreSQL, psycopg prepares a statement on the server after a few runs and keeps the last
100 by text; the service had that off (`prepare_threshold=None`): a filter's statements are
many and long, and the texts counted on the way were kept as well. Now only a statement
*planned once* is prepared, at its first run, at most `PREPARED_MAX` a connection (the least
recently used deallocated), and only when its text has at most `PREPARED_TEXT` characters. A
statement is planned once when its best plan cannot depend on its parameters' values: it finds
its rows by a unique key (the key's digest, a contact's id) from scalar parameters
(`PLANNED_ONCE`, an execution option set where the statement is built: `planned_once`), or it
runs with a few rows unpacked from a parameter (`driver_path.execute(..., unpacked_rows=n)`,
at most `PLANNED_ROWS`: a PATCH's events, not an import's thousand). The
server keeps one plan for it after five custom ones (`plan_cache_mode = auto`, PostgreSQL's
own default, set on the connection), so a PATCH no longer plans its key's read, its door, its
update and their triggers' statements at every run (0.7 of the server's 3.3 ms of CPU a PATCH
went to planning, `benchmarks.rate_layers --statements`).

Every other statement runs unnamed, planned for its values at each run, as each must be: a
plan made once for any list would fit a list of ten contacts and one of a million alike.
"""

from __future__ import annotations

from collections import OrderedDict
from contextvars import ContextVar
from typing import Any, TypeVar

from sqlalchemy import Engine, Executable, event
from sqlalchemy.pool import ConnectionPoolEntry

CACHED_STATEMENTS = 64
"""Entries of pysqlite's cache on each connection (`cached_statements`)."""
TEXT_BUDGET = 32 * 1024
"""SQL text, in characters, a connection's kept statements may hold before its cache is
emptied."""

PREPARED_TEXT = 4096
"""The longest statement text psycopg prepares on the server."""
PREPARED_MAX = 64
"""The statements psycopg keeps prepared on each connection."""
PLANNED_ONCE = "audiencefilter_planned_once"
"""The execution option of a statement planned once on PostgreSQL (above): set by
`planned_once`, read from a run's execution context or, on the driver's cursor, from
`PLANNING_ONCE`."""

PLANNED_ROWS = 128
"""The most rows unpacked from a parameter (`dialects.unpacked_rows_named`) for which a run is
planned once: a PATCH's events and memberships (one contact's, at most one row an audience of
its list), not an import turn's (thousands of pairs, whose joins a plan for their number may
serve better). Below it a plan by the rows' keys is the best for any number: probing a primary
key a row is cheaper than reading a table of memberships whole."""


PLANNING_ONCE: ContextVar[bool] = ContextVar(PLANNED_ONCE, default=False)
"""True while a statement planned once runs where no execution context carries the mark (the
driver path sets it around such a run, and resets it with its token)."""
_Statement = TypeVar("_Statement", bound=Executable)


def planned_once(statement: _Statement) -> _Statement:
    """`statement` marked planned once: its rows found by unique keys from scalar
    parameters, so that no plan serves some of its values better than another."""
    return statement.execution_options(**{PLANNED_ONCE: True})


_KEPT = "audiencefilter_prepared_texts"
_SPENT = "audiencefilter_prepared_spent"


class Kept:
    """One connection's mirror of pysqlite's cache: texts in least-recently-used order, and
    the characters they hold."""

    def __init__(self, entries: int = CACHED_STATEMENTS) -> None:
        self.entries = entries
        self.texts: OrderedDict[str, int] = OrderedDict()
        self.size = 0

    def ran(self, statement: str) -> None:
        if statement in self.texts:
            self.texts.move_to_end(statement)
            return
        self.texts[statement] = len(statement)
        self.size += len(statement)
        if len(self.texts) > self.entries:
            _, dropped = self.texts.popitem(last=False)
            self.size -= dropped


def bound_prepared_statements(engine: Engine, budget: int = TEXT_BUDGET) -> None:
    """Installs the mirror on `engine` (SQLite, connected with `cached_statements` set to
    `CACHED_STATEMENTS`)."""

    def ran(info: dict[Any, Any], statement: str) -> None:
        kept = info.get(_KEPT)
        if kept is None:
            kept = info[_KEPT] = Kept()
        kept.ran(statement)
        if kept.size > budget:
            info[_SPENT] = True

    @event.listens_for(engine, "after_cursor_execute")
    def _ran(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        ran(conn.info, statement)  # the pooled connection's, kept across its checkouts

    @event.listens_for(engine, "handle_error")
    def _failed(context: Any) -> None:
        # A statement prepared and then failing is kept too.
        if context.connection is not None and context.statement is not None:
            ran(context.connection.info, context.statement)

    @event.listens_for(engine, "checkin")
    def _returned(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        if record.info.pop(_SPENT, False):
            record.info[_KEPT] = emptied(dbapi_connection, record)


def emptied(dbapi_connection: Any, record: ConnectionPoolEntry) -> Kept:
    """The connection's cache emptied of what it kept, by as many tiny statements as it has
    places (its least recently used go first, so all of it goes, and its programs are freed):
    the connection itself stays. Closing it instead would make SQLite copy the whole WAL into
    the database file when it was the last one open, an import turn's every time (measured:
    100,000 rows 19% slower). The mirror of what the cache then holds."""
    kept = Kept()
    try:
        cursor = dbapi_connection.cursor()
        for place in range(kept.entries):
            statement = f"SELECT {place}"
            cursor.execute(statement)
            kept.ran(statement)
        cursor.close()
    except Exception:  # a connection that cannot run them is not lent again
        record.invalidate()
    return kept


def prepare_planned_once(engine: Engine) -> None:
    """Installs on `engine` (PostgreSQL through psycopg, `prepare_threshold=None`) the
    preparing of the statements planned once at their first run."""

    @event.listens_for(engine, "connect")
    def _connected(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.prepared_max = PREPARED_MAX
        dbapi_connection.prepare_threshold = None  # the setting itself is not kept
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET plan_cache_mode = auto")
        dbapi_connection.commit()

    def threshold(cursor: Any, statement: str, context: Any) -> None:
        # psycopg counts and keeps a text only while its threshold is set: set for those
        # planned once, and unset otherwise (a text it holds prepared then runs unnamed).
        once = PLANNING_ONCE.get() or (
            context is not None and bool(context.execution_options.get(PLANNED_ONCE, False))
        )
        prepared = once and len(statement) <= PREPARED_TEXT
        cursor.connection.prepare_threshold = 0 if prepared else None

    @event.listens_for(engine, "do_execute")
    def _execute(cursor: Any, statement: str, parameters: Any, context: Any) -> bool:
        threshold(cursor, statement, context)
        cursor.execute(statement, parameters)
        return True

    @event.listens_for(engine, "do_executemany")
    def _execute_many(cursor: Any, statement: str, parameters: Any, context: Any) -> bool:
        threshold(cursor, statement, context)  # psycopg's `executemany` prepares what it may
        cursor.executemany(statement, parameters)
        return True
