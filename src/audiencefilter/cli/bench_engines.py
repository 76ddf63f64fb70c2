"""The engines `audiencefilter bench` runs a filter on, each holding the same contacts.

An engine loads the normalized contacts once (`load`, timed apart from the queries), then for
each filter gives a timed call that counts the audience the fastest way the engine offers
(`counter`: the compiled predicate over the records, a lazy polars `filter().select(len())`,
SQL `count(*)`, Spark `count()`), and, untimed, the positions of the matching contacts
(`positions`), which the bench compares across engines. Positions rather than ids: a file's
ids may be missing or repeated, a contact's place in the input never is.

Every engine is driven through the library's public API (`af.compile`, `select_frame`,
`to_sql`, `to_pyspark`); the SQL tables are named as `to_sql` is told (`af_bench_contacts`,
`af_bench_actions`) and keyed by position, so relation conditions correlate on it.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import audiencefilter as af

from .bench_data import ACTIONS, Record

CONTACTS_TABLE, ACTIONS_TABLE = "af_bench_contacts", "af_bench_actions"
ACTION_FIELDS = ("id", "name", "increase", "createdAt")
INDEXES = (
    f"CREATE INDEX af_bench_actions_name ON {ACTIONS_TABLE} (sub_id, name, created_at)",
    f"CREATE INDEX af_bench_actions_time ON {ACTIONS_TABLE} (sub_id, created_at)",
)
"""The indexes docs/backends-sql-rules.md advises for relation conditions, as a user would
create them."""

Counter = Callable[[], int]


class Engine:
    """One engine: `load` the contacts, then `counter`/`positions` per filter, then `close`."""

    name = ""

    def load(self, records: list[Record]) -> None:
        raise NotImplementedError

    def counter(self, flt: af.Filter, now: datetime) -> Counter:
        raise NotImplementedError

    def positions(self, flt: af.Filter, now: datetime) -> set[int]:
        raise NotImplementedError

    def close(self) -> None:
        return None


class Memory(Engine):
    """The compiled predicate over the records the bench already holds."""

    name = "memory"

    def load(self, records: list[Record]) -> None:
        self.records = records

    def counter(self, flt: af.Filter, now: datetime) -> Counter:
        predicate, records = af.compile(flt, clock=lambda: now), self.records
        return lambda: len(list(filter(predicate, records)))

    def positions(self, flt: af.Filter, now: datetime) -> set[int]:
        predicate = af.compile(flt, clock=lambda: now)
        return {n for n, record in enumerate(self.records) if predicate(record)}


class Polars(Engine):
    """One DataFrame with a column per field and `actions` as a List of Struct."""

    name = "polars"

    def load(self, records: list[Record]) -> None:
        self.frame = contacts_frame(records)

    def counter(self, flt: af.Filter, now: datetime) -> Counter:
        import polars as pl

        query = flt.select_frame(self.frame.lazy(), now=now).select(pl.len())
        return lambda: int(query.collect().item())

    def positions(self, flt: af.Filter, now: datetime) -> set[int]:
        return set(flt.select_frame(self.frame, now=now).get_column("_row").to_list())


def contacts_frame(records: list[Record]) -> Any:
    """The records as a polars DataFrame: `_row` (the position), each field in its column type
    (`data` as JSON text), and `actions`."""
    import polars as pl

    columns = {"_row": pl.Series("_row", range(len(records)), dtype=pl.Int64)}
    for item in af.CONTACT:
        values = [record.get(item.name) for record in records]
        columns[item.name] = pl.Series(item.name, _column(item.type, values), _dtype(item, values))
    rows = [record[ACTIONS] for record in records]
    increases = (row["increase"] for rows_of in rows for row in rows_of)
    fields = {"id": pl.String, "name": pl.String, "increase": _number_dtype(increases)}
    fields["createdAt"] = pl.Datetime("us", "UTC")
    columns[ACTIONS] = pl.Series(ACTIONS, rows, dtype=pl.List(pl.Struct(fields)))
    return pl.DataFrame(columns)


def _column(kind: af.FieldType, values: list[Any]) -> list[Any]:
    if kind is af.FieldType.JSON:
        return [None if v is None else json.dumps(v, default=str) for v in values]
    return values


def _dtype(item: af.Field, values: list[Any]) -> Any:
    import polars as pl

    if item.type is af.FieldType.NUMBER:
        return _number_dtype(values)
    types = {af.FieldType.BOOLEAN: pl.Boolean, af.FieldType.DATETIME: pl.Datetime("us", "UTC")}
    return types.get(item.type, pl.String)


def _number_dtype(values: Iterable[Any]) -> Any:
    """Int64 unless a value is fractional: a column of floats then, as in SQL."""
    import polars as pl

    return pl.Float64 if any(type(v) is float for v in values) else pl.Int64


def _is_fractional(values: Iterable[Any]) -> bool:
    return any(type(v) is float for v in values)


class SqlEngine(Engine):
    """A database holding the contacts and their actions; queried with `to_sql` text."""

    dialect = ""

    def counter(self, flt: af.Filter, now: datetime) -> Counter:
        query = f"SELECT count(*) FROM {CONTACTS_TABLE} WHERE {self.condition(flt, now)}"
        return lambda: int(self.fetch(query)[0][0])

    def positions(self, flt: af.Filter, now: datetime) -> set[int]:
        query = f"SELECT id FROM {CONTACTS_TABLE} WHERE {self.condition(flt, now)}"
        return {int(row[0]) for row in self.fetch(query)}

    def condition(self, flt: af.Filter, now: datetime) -> str:
        tables = {ACTIONS: ACTIONS_TABLE}
        return flt.to_sql(self.dialect, now=now, table=CONTACTS_TABLE, tables=tables)

    def fetch(self, query: str) -> Sequence[Sequence[Any]]:
        raise NotImplementedError


def sql_columns(records: list[Record], types: dict[str, str]) -> str:
    """`"email" TEXT, "points" BIGINT, ...`: each field's column, in `types`' spelling."""
    columns = ["id BIGINT PRIMARY KEY"]
    for item in af.CONTACT:
        kind = item.type.value
        if item.type is af.FieldType.NUMBER and _is_fractional(r.get(item.name) for r in records):
            kind = "fraction"
        columns.append(f'"{item.name}" {types[kind]}')
    return ", ".join(columns)


def action_rows(records: list[Record]) -> list[tuple[Any, ...]]:
    """(sub_id, id, name, increase, created_at) for every action, keyed by its contact's place."""
    return [
        (position, row["id"], row["name"], row["increase"], row["createdAt"])
        for position, record in enumerate(records)
        for row in record[ACTIONS]
    ]


SQLITE_TYPES = {"string": "TEXT", "number": "BIGINT", "fraction": "REAL", "boolean": "BOOLEAN"}
SQLITE_TYPES |= {"datetime": "TEXT", "json": "TEXT"}


class SQLite(SqlEngine):
    """An in-memory SQLite database with the library's `lower()` registered; date-times stored
    as UTC text, as the SQLite dialect compares them."""

    name = dialect = "sqlite"

    def load(self, records: list[Record]) -> None:
        self.connection = sqlite3.connect(":memory:", check_same_thread=False)
        af.register_sqlite_functions(self.connection)
        execute = self.connection.execute
        execute(f"CREATE TABLE {CONTACTS_TABLE} ({sql_columns(records, SQLITE_TYPES)})")
        execute(
            f"CREATE TABLE {ACTIONS_TABLE} (sub_id BIGINT, id TEXT, name TEXT, "
            "increase REAL, created_at TEXT)"
        )
        marks = ", ".join("?" * (len(af.CONTACT.fields) + 1))
        rows = ((n, *_sqlite_row(r)) for n, r in enumerate(records))
        self.connection.executemany(f"INSERT INTO {CONTACTS_TABLE} VALUES ({marks})", rows)
        actions = ((*a[:4], _utc_text(a[4])) for a in action_rows(records))
        self.connection.executemany(f"INSERT INTO {ACTIONS_TABLE} VALUES (?, ?, ?, ?, ?)", actions)
        for statement in (*INDEXES, "ANALYZE"):
            execute(statement)
        self.connection.commit()

    def fetch(self, query: str) -> Sequence[Sequence[Any]]:
        return self.connection.execute(query).fetchall()

    def close(self) -> None:
        self.connection.close()


def _sqlite_row(record: Record) -> list[Any]:
    values = []
    for item in af.CONTACT:
        value = record.get(item.name)
        if value is not None and item.type is af.FieldType.DATETIME:
            value = _utc_text(value)
        elif value is not None and item.type is af.FieldType.JSON:
            value = json.dumps(value, default=str)
        values.append(value)
    return values


def _utc_text(moment: datetime) -> str:
    """The text SQLite's dialect compares date-times as: UTC, to the microsecond."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


class DuckDB(SqlEngine):
    """An in-process DuckDB database, loaded from the polars frame (Arrow, no copy per row)."""

    name = dialect = "duckdb"

    def load(self, records: list[Record]) -> None:
        import duckdb
        import polars as pl

        self.connection = duckdb.connect()
        frame = contacts_frame(records).drop(ACTIONS).rename({"_row": "id"})  # noqa: F841
        names = ("sub_id", "id", "name", "increase", "created_at")
        actions = pl.DataFrame(action_rows(records), schema=names, orient="row")  # noqa: F841
        self.connection.execute(f"CREATE TABLE {CONTACTS_TABLE} AS SELECT * FROM frame")
        self.connection.execute(f"CREATE TABLE {ACTIONS_TABLE} AS SELECT * FROM actions")
        for statement in INDEXES:
            self.connection.execute(statement)

    def fetch(self, query: str) -> Sequence[Sequence[Any]]:
        return self.connection.execute(query).fetchall()

    def close(self) -> None:
        self.connection.close()


POSTGRES_TYPES = {"string": "TEXT", "number": "BIGINT", "fraction": "DOUBLE PRECISION"}
POSTGRES_TYPES |= {"boolean": "BOOLEAN", "datetime": "TIMESTAMPTZ", "json": "JSONB"}


class PostgreSQL(SqlEngine):
    """Temporary tables in the database at `--postgresql URL`, filled with COPY; they vanish
    with the connection. The server's memory is its own: not in the peak shown."""

    name = dialect = "postgresql"

    def __init__(self, url: str) -> None:
        self.url = url.replace("postgresql+psycopg://", "postgresql://", 1)

    def load(self, records: list[Record]) -> None:
        import psycopg

        self.connection = psycopg.connect(self.url, autocommit=True)
        execute = self.connection.execute
        execute(f"CREATE TEMP TABLE {CONTACTS_TABLE} ({sql_columns(records, POSTGRES_TYPES)})")
        execute(
            f"CREATE TEMP TABLE {ACTIONS_TABLE} (sub_id BIGINT, id TEXT, name TEXT, "
            "increase DOUBLE PRECISION, created_at TIMESTAMPTZ)"
        )
        self._copy(CONTACTS_TABLE, ((n, *_postgres_row(r)) for n, r in enumerate(records)))
        self._copy(ACTIONS_TABLE, action_rows(records))
        for statement in (*INDEXES, f"ANALYZE {CONTACTS_TABLE}", f"ANALYZE {ACTIONS_TABLE}"):
            execute(statement.encode())

    def _copy(self, table: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.connection.cursor() as cursor, cursor.copy(f"COPY {table} FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def fetch(self, query: str) -> Sequence[Sequence[Any]]:
        return self.connection.execute(query.encode()).fetchall()

    def close(self) -> None:
        self.connection.close()


def _postgres_row(record: Record) -> list[Any]:
    from psycopg.types.json import Jsonb

    values = [record.get(item.name) for item in af.CONTACT]
    return [Jsonb(v) if isinstance(v, dict | list) else v for v in values]


class Spark(Engine):
    """A local Spark session (two threads, `af.spark_session`) with the contacts
    cached as a DataFrame made from the polars frame's Arrow table."""

    name = "spark"

    def load(self, records: list[Record]) -> None:
        # The documented way to a local Spark the filters' answers hold on (127.0.0.1 only,
        # UTC, the en-US JVM locale for case folding); quiet, as a command's stderr must be.
        self.session = af.spark_session(cores=2, app_name="audiencefilter bench")
        self.session.sparkContext.setLogLevel("ERROR")
        self.frame = self.session.createDataFrame(contacts_frame(records).to_arrow()).cache()
        self.frame.count()

    def counter(self, flt: af.Filter, now: datetime) -> Counter:
        query = self.frame.filter(flt.to_pyspark(now=now, session=self.session))
        return lambda: int(query.count())

    def positions(self, flt: af.Filter, now: datetime) -> set[int]:
        query = self.frame.filter(flt.to_pyspark(now=now, session=self.session))
        return {int(row[0]) for row in query.select("_row").collect()}

    def close(self) -> None:
        self.frame.unpersist()
        self.session.stop()


ENGINES = ("memory", "polars", "duckdb", "sqlite", "postgresql", "spark")
# DuckDB reads the polars frame through Arrow: pyarrow.
_NEEDS = {"polars": ("polars",), "duckdb": ("duckdb", "polars", "pyarrow")}
_NEEDS["spark"] = ("pyspark", "polars")
_NEEDS["postgresql"] = ("psycopg",)


def unavailable(name: str) -> str | None:
    """Why engine `name` cannot run here (a package or Java missing), or None."""
    missing = [m for m in _NEEDS.get(name, ()) if importlib.util.find_spec(m) is None]
    if missing:
        return f"needs {' and '.join(missing)} (pip install {' '.join(missing)})"
    if name == "spark" and shutil.which("java") is None:
        return "needs a Java runtime (java on the PATH)"
    return None


def make(name: str, postgresql_url: str | None) -> Engine:
    """A fresh engine of that name; PostgreSQL on the database at `postgresql_url`."""
    if name == "postgresql":
        assert postgresql_url is not None
        return PostgreSQL(postgresql_url)
    classes: dict[str, type[Engine]] = {"memory": Memory, "polars": Polars, "duckdb": DuckDB}
    classes |= {"sqlite": SQLite, "spark": Spark}
    return classes[name]()
