"""SQL engines: every SQL back-end on every real database, for the conformance and differential
suites.

Four databases (SQLite and DuckDB in process; PostgreSQL and MariaDB from `tests/servers.py`)
times three ways of asking them (`to_sqlalchemy`, `to_sql` text, `to_sql_params`) make twelve
engines. Each database is opened once per session and each distinct record set is loaded once,
into a table named after a hash of the records, so the conformance cases reuse it.

The contacts table is typed as the service's: `DateTime(timezone=True)` (`DATETIME(6)` on
MariaDB), `BigInteger`, `Boolean`, `String`. Column names differ from field names
(`created_at` for `createdAt`, and the city column has quotes and a backtick in its name), so
every engine also exercises the `columns=` mapping and identifier quoting.
"""

from __future__ import annotations

import atexit
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    ARRAY,
    JSON,
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    Double,
    Engine,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    create_engine,
    delete,
    inspect,
    select,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.pool import StaticPool
from sqlalchemy.types import TypeEngine

import audiencefilter as af
from audiencefilter.backends.sql.dialects import integral
from audiencefilter.language.values import record_date, record_datetime
from tests.engine_kinds import Engine as SuiteEngine
from tests.engine_kinds import built_once

Records = Sequence[dict[str, Any]]

COLUMNS = {
    "firstName": "first_name",
    "lastName": "last_name",
    "city": "ci\"t`y'",
    "isVerified": "is_verified",
    "createdAt": "created_at",
}
"""Column names of the fields whose column is not named like the field."""


def _string_type(engine: Engine) -> TypeEngine[Any]:
    """VARCHAR(255); on MariaDB with a Unicode 14 collation, whose `lower()` is the most recent.

    The comparisons themselves do not depend on the collation (MySQL compares as binary).
    """
    dialect = engine.dialect
    if dialect.name in ("mysql", "mariadb"):
        with engine.connect():  # the server version is known once connected
            version = dialect.server_version_info or ()
        mariadb = getattr(dialect, "is_mariadb", False)
        if mariadb and version >= (10, 10):
            return mysql.VARCHAR(255, collation="utf8mb4_uca1400_ai_ci")
        if not mariadb and version >= (8,):
            return mysql.VARCHAR(255, collation="utf8mb4_0900_ai_ci")
    return String(255)


def _list_type(kind: af.FieldType, engine: Engine) -> TypeEngine[Any]:
    """A list column as the SQL dialects (`Dialect.list_test`) read it: a native array on PostgreSQL
    (numbers `numeric`) and DuckDB (numbers DOUBLE), JSON text elsewhere."""
    element = kind.element
    assert element is not None
    name = engine.dialect.name
    if name in ("postgresql", "duckdb"):
        items: dict[af.FieldType, TypeEngine[Any]] = {
            af.FieldType.STRING: Text(),
            af.FieldType.NUMBER: Numeric() if name == "postgresql" else Double(),
            af.FieldType.BOOLEAN: Boolean(),
            af.FieldType.DATETIME: DateTime(timezone=True),
            af.FieldType.DATE: Date(),
        }
        return ARRAY(items[element])
    return JSON(none_as_null=True)


def _column_type(kind: af.FieldType, engine: Engine) -> TypeEngine[Any]:
    if kind.element is not None:
        return _list_type(kind, engine)
    if kind is af.FieldType.STRING:
        return _string_type(engine)
    if kind is af.FieldType.NUMBER:
        return BigInteger()
    if kind is af.FieldType.BOOLEAN:
        return Boolean()
    if kind is af.FieldType.DATE:
        return Date()
    if kind is af.FieldType.JSON:
        # jsonb on PostgreSQL, as the service stores it; the JSON text type elsewhere.
        return JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
    return DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def _row(record: dict[str, Any], schema: af.Schema, native_lists: bool = True) -> dict[str, Any]:
    row: dict[str, Any] = {"id": record["id"]}
    for f in schema.fields:
        value = record.get(f.name)
        if value is not None and f.type is af.FieldType.DATETIME:
            # In UTC: SQLite and MariaDB store a datetime's wall time and drop its offset.
            value = record_datetime(value).astimezone(UTC)
        if value is not None and f.type is af.FieldType.DATE:
            value = record_date(value)
        if value is not None and f.type is af.FieldType.DATE_LIST:
            value = [None if v is None else record_date(v) for v in value]
            if not native_lists:  # JSON text: ISO 8601 strings
                value = [None if v is None else v.isoformat() for v in value]
        if value is not None and f.type is af.FieldType.DATETIME_LIST:
            value = [None if v is None else record_datetime(v) for v in value]
            if not native_lists:  # JSON text: ISO 8601 strings (which those engines refuse)
                value = [None if v is None else v.isoformat() for v in value]
        if value is not None and f.type is af.FieldType.NUMBER_LIST and native_lists:
            # One item type for the driver, each the number memory compares: an integral float
            # as the integer it equals (1e23 is 99999999999999991611392, not 10**23), others as
            # their shortest decimal (PostgreSQL's numeric[]), as the SQL writes literals.
            value = [None if v is None else _exact_item(v) for v in value]
        row[f.name] = value
    return row


def _exact_item(value: float) -> Decimal:
    item = integral(value)
    return Decimal(item) if isinstance(item, int) else Decimal(repr(item))


@dataclass
class Database:
    """One database of one engine, with the contacts tables loaded so far."""

    dialect: str
    engine: Engine
    metadata: MetaData = field(default_factory=MetaData)
    tables: dict[str, Table] = field(default_factory=dict)
    #: The related tables of each contacts table, by relation name (`actions`).
    related: dict[str, dict[str, Table]] = field(default_factory=dict)

    def new_table(self, name: str, schema: af.Schema = af.CONTACT) -> Table:
        columns = [Column("id", String(64), primary_key=True)]
        for f in schema.fields:
            column_name = COLUMNS.get(f.name, f.name)
            columns.append(Column(column_name, _column_type(f.type, self.engine), key=f.name))
        table = Table(name, self.metadata, *columns)
        with self.engine.begin() as connection:
            if inspect(connection).has_table(name):
                table.drop(connection)
            table.create(connection)
        return table

    def table_for(self, records: Records, schema: af.Schema = af.CONTACT) -> Table:
        """A table holding exactly `records`, created and filled on first use (named without
        hashing the records again while the same list is asked again)."""
        return built_once(
            f"table-{self.dialect}", records, schema, lambda: self._table_for(records, schema)
        )

    def _table_for(self, records: Records, schema: af.Schema) -> Table:
        text = json.dumps(records, sort_keys=True, ensure_ascii=False, default=str)
        if schema != af.CONTACT:
            text += repr(schema)
        name = "af_contacts_" + hashlib.sha256(text.encode()).hexdigest()[:12]
        if name not in self.tables:
            self.tables[name] = table = self.new_table(name, schema)
            self.fill(table, records, schema=schema)
            related = {
                relation.name: self.related_table(f"{name}_{relation.name}", records, relation)
                for relation in schema.relations
                if any(relation.name in r for r in records)
            }
            if related:
                self.related[name] = related
        return self.tables[name]

    def related_table(self, name: str, records: Records, relation: af.Relation) -> Table:
        """The related table of a to-many `relation` (`actions`: named as the default schema
        maps it, `sub_id`, `created_at`), holding each record's rows of it."""
        declared = dict(relation.columns)
        columns = [Column("row_id", Integer, primary_key=True, autoincrement=False)]
        columns.append(Column(relation.foreign_key, String(64)))
        for f in relation.schema.fields:
            columns.append(
                Column(declared.get(f.name, f.name), _column_type(f.type, self.engine), key=f.name)
            )
        table = Table(name, self.metadata, *columns)
        rows = []
        for record in records:
            for action in record.get(relation.name) or ():
                row = _row(action, relation.schema, self.dialect in ("postgresql", "duckdb"))
                row.update(row_id=len(rows), **{relation.foreign_key: record["id"]})
                rows.append(row)
        with self.engine.begin() as connection:
            if inspect(connection).has_table(name):
                table.drop(connection)
            table.create(connection)
            if rows:
                connection.execute(table.insert(), rows)
        return table

    def scratch(self, schema: af.Schema = af.CONTACT) -> Table:
        """A table of its own for callers that refill it at will (the differential tests),
        one per schema."""
        name = "af_contacts_scratch"
        if schema != af.CONTACT:
            name = "af_scratch_" + hashlib.sha256(repr(schema).encode()).hexdigest()[:12]
        if name not in self.tables:
            self.tables[name] = self.new_table(name, schema)
        return self.tables[name]

    def fill(
        self,
        table: Table,
        records: Records,
        *,
        replace: bool = False,
        schema: af.Schema = af.CONTACT,
    ) -> None:
        native = self.dialect in ("postgresql", "duckdb")
        with self.engine.begin() as connection:
            if replace:
                connection.execute(delete(table))
            if records:
                rows = [_row(r, schema, native) for r in records]
                connection.execute(table.insert(), rows)

    def ids(self, sql: str, params: Sequence[Any] | None = None) -> set[str]:
        with self.engine.connect() as connection:
            if params is None:
                # No parameters at all, so that a `format` driver leaves `%` in literals alone.
                options = {"no_parameters": True}
                rows = connection.exec_driver_sql(sql, execution_options=options).all()
            else:
                rows = connection.exec_driver_sql(sql, tuple(params)).all()
        return {row[0] for row in rows}

    def query(self, table: Table, condition: str) -> str:
        preparer = self.engine.dialect.identifier_preparer
        return (
            f"SELECT {preparer.quote('id')} FROM {preparer.format_table(table)} WHERE {condition}"
        )

    # The three ways of asking; relative date-times taken at `now` (None: the clock).

    def select_sqlalchemy(
        self, flt: af.Filter, table: Table, now: datetime | None = None
    ) -> set[str]:
        relations = self.related.get(table.name)
        statement = select(table.c.id).where(flt.to_sqlalchemy(table, now=now, relations=relations))
        with self.engine.connect() as connection:
            return set(connection.scalars(statement))

    def select_sql(self, flt: af.Filter, table: Table, now: datetime | None = None) -> set[str]:
        condition = flt.to_sql(
            self.dialect, COLUMNS, now=now, table=table.name, tables=self.tables_of(table)
        )
        return self.ids(self.query(table, condition))

    def tables_of(self, table: Table) -> dict[str, str]:
        return {name: t.name for name, t in self.related.get(table.name, {}).items()}

    def select_params(self, flt: af.Filter, table: Table, now: datetime | None = None) -> set[str]:
        condition, params = flt.to_sql_params(
            self.dialect, COLUMNS, now=now, table=table.name, tables=self.tables_of(table)
        )
        return self.ids(self.query(table, condition), params)

    def way(self, name: str) -> Callable[[af.Filter, Table, datetime | None], set[str]]:
        method: Callable[[af.Filter, Table, datetime | None], set[str]] = getattr(
            self, f"select_{name}"
        )
        return method


_open: dict[str, Database] = {}


@atexit.register
def _close_all() -> None:
    for database in _open.values():
        database.engine.dispose()
    _open.clear()


def _in_process(dialect: str) -> Database:
    if dialect not in _open:
        url = "sqlite://" if dialect == "sqlite" else "duckdb:///:memory:"
        # One connection for the session: an in-memory database lives as long as it.
        engine = create_engine(url, poolclass=StaticPool)
        if dialect == "sqlite":
            af.register_sqlite_functions(engine)
        _open[dialect] = Database(dialect, engine)
    return _open[dialect]


def sqlite_database() -> Database:
    return _in_process("sqlite")


def duckdb_database() -> Database:
    return _in_process("duckdb")


def postgresql_database(pg_database: Callable[[], str]) -> Database:
    """A database of its own on the session's PostgreSQL server (ICU 'und' collation)."""
    if "postgresql" not in _open:
        _open["postgresql"] = Database("postgresql", create_engine(pg_database()))
    return _open["postgresql"]


def mysql_database(mysql_url: str) -> Database:
    if "mysql" not in _open:
        _open["mysql"] = Database("mysql", create_engine(mysql_url))
    return _open["mysql"]


DATABASES: dict[str, tuple[str | None, Callable[..., Database]]] = {
    "sqlite": (None, sqlite_database),
    "postgresql": ("pg_database", postgresql_database),
    "mysql": ("mysql_url", mysql_database),
    "duckdb": (None, duckdb_database),
}
"""Each database: the server fixture it needs (None: in process) and how to open it."""

WAYS = ("sqlalchemy", "sql", "params")
MARKS: dict[str, tuple[Any, ...]] = {
    "postgresql": (pytest.mark.postgres,),
    "mysql": (pytest.mark.mysql,),
}


def open_database(name: str, request: pytest.FixtureRequest) -> Database:
    """The database `name`, asking `request` for the server fixture it needs."""
    server_fixture, opener = DATABASES[name]
    resources = [request.getfixturevalue(server_fixture)] if server_fixture else []
    return opener(*resources)


def database_params() -> list[Any]:
    """One pytest parameter per database, marked `postgres`/`mysql` where a server is needed."""
    return [pytest.param(name, marks=MARKS.get(name, ()), id=name) for name in DATABASES]


def _engine(database: str, way: str) -> SuiteEngine:
    server_fixture, opener = DATABASES[database]

    def select_ids(*args: Any) -> set[str]:
        *resource, flt, records, now = args
        db = opener(*resource)
        return db.way(way)(flt, db.table_for(records, flt.schema), now)

    return SuiteEngine(f"{way}-{database}", select_ids, server_fixture, MARKS.get(database, ()))


SQL_ENGINES: list[SuiteEngine] = [_engine(db, way) for db in DATABASES for way in WAYS]
