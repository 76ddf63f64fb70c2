"""The engines compared: ours and what a user would pick instead, all on the same contacts.

Each engine loads the contacts once, in its own form (a list of dicts, a polars DataFrame, a
table in DuckDB, SQLite or PostgreSQL), then `plan`s one run per filter: a timed call that
counts the audience the fastest way that engine offers, and an untimed way to get the ids, so
answers can be compared with ours. Row engines build the list of matching records (what
`audiencefilter.select` gives; its length is the count), polars engines run a lazy
`filter(...).select(pl.len())`, SQL engines `count(*)`. Materializing the matching rows would
time the copying of a dozen columns (polars) or a driver (SQL) rather than the filter.

Rule engines evaluate about a hundred times slower than compiled code, so they are `slow`:
one run instead of several, and over a prefix of the contacts when a full run would exceed
the time budget. The report says so beside their numbers.
"""

from __future__ import annotations

import importlib.metadata
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import audiencefilter as af
from audiencefilter.backends.memory.compiler import compile_node

from .data import FIELDS, Contacts
from .filters import BenchFilter

ROW_TYPES = {
    "email": "TEXT", "firstName": "TEXT", "lastName": "TEXT", "company": "TEXT",
    "country": "TEXT", "city": "TEXT", "points": "BIGINT", "referrals": "BIGINT",
    "isVerified": "BOOLEAN", "unsubscribed": "BOOLEAN", "createdAt": "TIMESTAMPTZ",
}  # fmt: skip


@dataclass
class Run:
    """One engine on one filter: `call()` is timed; `ids(result)` is not."""

    call: Callable[[], Any]
    ids: Callable[[Any], set[int]]
    rows: int


class Engine:
    """Base class: a name, the family it belongs to, and its library's version."""

    name = ""
    family = "rows"  # rows | columns | sql
    ours = False
    slow = False
    package = ""

    def version(self) -> str:
        return _version(self.package) if self.package else ""

    def load(self, contacts: Contacts) -> None:
        raise NotImplementedError

    def plan(self, bench: BenchFilter, flt: af.Filter, limit: int | None = None) -> Run | None:
        raise NotImplementedError

    def close(self) -> None:
        return None


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _record_ids(result: list[dict[str, Any]]) -> set[int]:
    return {record["id"] for record in result}


class RowEngine(Engine):
    """Python predicates over the list of dicts: `list(filter(predicate, rows))`."""

    def load(self, contacts: Contacts) -> None:
        self.rows = contacts.rows

    def predicate(self, bench: BenchFilter, flt: af.Filter) -> Callable[[Any], Any] | None:
        raise NotImplementedError

    def plan(self, bench: BenchFilter, flt: af.Filter, limit: int | None = None) -> Run | None:
        predicate = self.predicate(bench, flt)
        if predicate is None:
            return None
        rows = self.rows if limit is None or limit >= len(self.rows) else self.rows[:limit]
        return Run(lambda: list(filter(predicate, rows)), _record_ids, len(rows))


class Compiled(RowEngine):
    name = "audiencefilter compile()"
    ours = True
    package = "audiencefilter"

    def predicate(self, bench: BenchFilter, flt: af.Filter) -> Callable[[Any], Any]:
        return compile_node(flt.lowered, flt.schema)


class HandLambda(RowEngine):
    name = "hand-written lambda"

    def version(self) -> str:
        import platform

        return f"Python {platform.python_version()}"

    def predicate(self, bench: BenchFilter, flt: af.Filter) -> Callable[[Any], Any] | None:
        return bench.lambda_


class MongoQuery(RowEngine):
    name = "mongoquery"
    package = "mongoquery"
    slow = True

    def predicate(self, bench: BenchFilter, flt: af.Filter) -> Callable[[Any], Any] | None:
        if bench.mongo is None:
            return None
        import mongoquery

        return mongoquery.Query(bench.mongo).match


class JsonLogic(RowEngine):
    name = "json-logic"
    package = "json-logic-qubit"
    slow = True

    def predicate(self, bench: BenchFilter, flt: af.Filter) -> Callable[[Any], Any] | None:
        if bench.jsonlogic is None:
            return None
        from json_logic import jsonLogic

        rule = bench.jsonlogic
        return lambda record: jsonLogic(rule, record)


class Frames:
    """The contacts as one polars DataFrame, shared by the polars engines and DuckDB."""

    def __init__(self) -> None:
        self.frame: Any = None

    def get(self, contacts: Contacts) -> Any:
        if self.frame is None or self.frame.height != len(contacts):
            import polars as pl

            from audiencefilter.backends.frames.polars import CANONICAL

            dtypes = {name: CANONICAL[af.CONTACT[name].type] for name in FIELDS}
            frame = pl.DataFrame(contacts.columns, schema=dtypes)
            self.frame = frame.with_row_index("id").with_columns(pl.col("id").cast(pl.Int64))
        return self.frame


FRAMES = Frames()


def _frame_ids(result: Any) -> set[int]:
    return set(result["id"].to_list())


class PolarsHand(Engine):
    name = "polars hand-written expression"
    family = "columns"
    package = "polars"

    def load(self, contacts: Contacts) -> None:
        self.frame = FRAMES.get(contacts)

    def expression(self, bench: BenchFilter, flt: af.Filter) -> Any:
        return None if bench.polars is None else bench.polars()

    def plan(self, bench: BenchFilter, flt: af.Filter, limit: int | None = None) -> Run | None:
        expr = self.expression(bench, flt)
        if expr is None:
            return None
        import polars as pl

        query = self.frame.lazy().filter(expr).select(pl.len())
        ids = lambda _: _frame_ids(self.frame.filter(expr))  # noqa: E731
        return Run(lambda: query.collect().item(), ids, self.frame.height)


class PolarsOurs(PolarsHand):
    name = "audiencefilter to_polars()"
    ours = True

    def expression(self, bench: BenchFilter, flt: af.Filter) -> Any:
        return flt.to_polars(self.frame.schema)


class SqlEngine(Engine):
    """A database holding the contacts in a `contacts` table with the field names as columns."""

    family = "sql"
    dialect = ""

    def count(self, condition: str) -> int:
        raise NotImplementedError

    def ids(self, condition: str) -> set[int]:
        raise NotImplementedError

    def condition(self, bench: BenchFilter, flt: af.Filter) -> str | None:
        return flt.to_sql(self.dialect)

    def plan(self, bench: BenchFilter, flt: af.Filter, limit: int | None = None) -> Run | None:
        condition = self.condition(bench, flt)
        if condition is None:
            return None
        return Run(lambda: self.count(condition), lambda _: self.ids(condition), self.size)


class DuckDBOurs(SqlEngine):
    name = "DuckDB to_sql()"
    dialect = "duckdb"
    package = "duckdb"
    ours = True

    def load(self, contacts: Contacts) -> None:
        import duckdb

        self.connection = duckdb.connect()
        frame = FRAMES.get(contacts)
        self.connection.register("frame", frame)
        self.connection.execute("CREATE TABLE contacts AS SELECT * FROM frame")
        self.connection.unregister("frame")
        self.size = len(contacts)

    def count(self, condition: str) -> int:
        row = self.connection.execute(f"SELECT count(*) FROM contacts WHERE {condition}").fetchone()
        return int(row[0]) if row else 0

    def ids(self, condition: str) -> set[int]:
        rows = self.connection.execute(f"SELECT id FROM contacts WHERE {condition}").fetchall()
        return {int(row[0]) for row in rows}

    def close(self) -> None:
        self.connection.close()


class DuckDBHand(DuckDBOurs):
    name = "DuckDB hand-written SQL"
    ours = False

    def condition(self, bench: BenchFilter, flt: af.Filter) -> str | None:
        return bench.sql


class SQLiteOurs(SqlEngine):
    name = "SQLite to_sql()"
    dialect = "sqlite"
    ours = True

    def version(self) -> str:
        return sqlite3.sqlite_version

    def load(self, contacts: Contacts) -> None:
        from audiencefilter.backends.sql.dialects import utc_text

        self.connection = sqlite3.connect(":memory:")
        af.register_sqlite_functions(self.connection)
        columns = ", ".join(f'"{name}" {ROW_TYPES[name]}' for name in FIELDS)
        self.connection.execute(f"CREATE TABLE contacts (id INTEGER PRIMARY KEY, {columns})")
        created = contacts.columns["createdAt"]
        stamps = [None if c is None else utc_text(c) for c in created]
        values = [contacts.columns[name] if name != "createdAt" else stamps for name in FIELDS]
        marks = ", ".join("?" for _ in range(len(FIELDS) + 1))
        rows = zip(range(len(contacts)), *values, strict=True)
        self.connection.executemany(f"INSERT INTO contacts VALUES ({marks})", rows)
        self.connection.commit()
        self.size = len(contacts)

    def count(self, condition: str) -> int:
        query = f"SELECT count(*) FROM contacts WHERE {condition}"
        return int(self.connection.execute(query).fetchone()[0])

    def ids(self, condition: str) -> set[int]:
        query = f"SELECT id FROM contacts WHERE {condition}"
        return {int(row[0]) for row in self.connection.execute(query)}

    def close(self) -> None:
        self.connection.close()


class PostgresOurs(SqlEngine):
    name = "PostgreSQL to_sql()"
    dialect = "postgresql"
    ours = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.server_version = "?"

    def version(self) -> str:
        return self.server_version

    def load(self, contacts: Contacts) -> None:
        import io

        import psycopg

        self.connection = psycopg.connect(self.url, autocommit=True)
        self.server_version = str(self.connection.execute("SHOW server_version").fetchone()[0])
        columns = ", ".join(f'"{name}" {ROW_TYPES[name]}' for name in FIELDS)
        self.connection.execute("DROP TABLE IF EXISTS contacts")
        self.connection.execute(f"CREATE TABLE contacts (id BIGINT PRIMARY KEY, {columns})")
        buffer = io.BytesIO()
        FRAMES.get(contacts).write_csv(buffer, include_header=False)
        names = ", ".join(['"id"', *(f'"{name}"' for name in FIELDS)])
        with self.connection.cursor() as cursor:
            with cursor.copy(f"COPY contacts ({names}) FROM STDIN WITH (FORMAT csv)") as copy:
                copy.write(buffer.getvalue())
            cursor.execute("VACUUM ANALYZE contacts")
        self.size = len(contacts)

    def count(self, condition: str) -> int:
        query = f"SELECT count(*) FROM contacts WHERE {condition}"
        row = self.connection.execute(query.encode()).fetchone()
        return int(row[0]) if row else 0

    def ids(self, condition: str) -> set[int]:
        query = f"SELECT id FROM contacts WHERE {condition}"
        return {int(row[0]) for row in self.connection.execute(query.encode())}

    def close(self) -> None:
        self.connection.execute("DROP TABLE IF EXISTS contacts")
        self.connection.close()


def available(names: Sequence[str] = ()) -> list[Engine]:
    """Every engine whose library is installed, ours first in each family."""
    engines: list[Engine] = [Compiled(), HandLambda()]
    for module, engine in (("mongoquery", MongoQuery), ("json_logic", JsonLogic)):
        if _importable(module):
            engines.append(engine())
    if _importable("polars"):
        engines += [PolarsOurs(), PolarsHand()]
    if _importable("duckdb") and _importable("polars"):
        engines += [DuckDBOurs(), DuckDBHand()]
    engines.append(SQLiteOurs())
    return [e for e in engines if not names or e.name in names]


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
