"""ClickHouse as engines of the conformance and differential suites: chDB, ClickHouse in
process, with one session for the test run.

The contacts table is typed as docs/backends-clickhouse.md advises for ClickHouse:
`Nullable(String)`,
`Nullable(Int64)`, `Nullable(Bool)`, `Nullable(DateTime64(6, 'UTC'))`, `Nullable(Date32)`, and
JSON text in a `Nullable(String)` for JSON fields and list fields (ClickHouse has no nullable
array). Column names differ from field names as in `tests/sql_engines.py` (`COLUMNS`: a city
column with quotes and a backtick in its name), so identifier quoting is exercised too. Records
are loaded as `JSONEachRow`, with no filter code involved. Each distinct record set is loaded
once, into a table named after a hash of the records. Without chDB (an optional extra) there
are no ClickHouse engines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.language.values import record_date, record_datetime
from tests.engine_kinds import Engine, built_once
from tests.sql_engines import COLUMNS

Records = Sequence[dict[str, Any]]

_TYPES = {
    af.FieldType.STRING: "Nullable(String)",
    af.FieldType.NUMBER: "Nullable(Int64)",
    af.FieldType.BOOLEAN: "Nullable(Bool)",
    af.FieldType.DATETIME: "Nullable(DateTime64(6, 'UTC'))",
    af.FieldType.DATE: "Nullable(Date32)",
}
"""Each scalar field type's column; JSON and list fields are JSON text."""


def column_type(kind: af.FieldType) -> str:
    return _TYPES.get(kind, "Nullable(String)")


def quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '""') + '"'


def _utc_text(value: datetime) -> str:
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def _cell(kind: af.FieldType, value: Any) -> Any:
    """A record's value as the JSONEachRow cell of its column."""
    if value is None:
        return None
    if kind is af.FieldType.DATETIME:
        return _utc_text(record_datetime(value))
    if kind is af.FieldType.DATE:
        return record_date(value).isoformat()
    if kind is af.FieldType.JSON:
        return json.dumps(value, ensure_ascii=False)
    if kind.element is not None:
        items = [_item(kind.element, item) for item in value]
        return json.dumps(items, ensure_ascii=False)
    return value


def _item(element: af.FieldType, item: Any) -> Any:
    if item is None:
        return None
    if element is af.FieldType.DATETIME:
        return record_datetime(item).astimezone(UTC).isoformat()
    if element is af.FieldType.DATE:
        value = record_date(item)
        assert isinstance(value, date)
        return value.isoformat()
    return item


class ClickHouseDatabase:
    """One chDB session for the run, with the tables loaded so far."""

    def __init__(self) -> None:
        from chdb import session

        self.session = session.Session()
        self.tables: dict[str, dict[str, str]] = {}

    def run(self, sql: str) -> str:
        result = self.session.query(sql, "JSONCompactEachRow")
        return bytes(result.bytes()).decode("utf-8")

    def create(self, name: str, columns: list[tuple[str, str]]) -> None:
        spec = ", ".join(f"{quote(column)} {kind}" for column, kind in columns)
        self.session.query(f"DROP TABLE IF EXISTS {quote(name)}")
        self.session.query(f"CREATE TABLE {quote(name)} ({spec}) ENGINE = Memory")

    def insert(self, name: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            text = "\n".join(json.dumps(row, ensure_ascii=False) for row in rows)
            self.session.query(f"INSERT INTO {quote(name)} FORMAT JSONEachRow {text}")

    def table_for(self, records: Records, schema: af.Schema) -> str:
        """A table holding exactly `records` (and its related tables), created on first use."""
        return built_once("clickhouse", records, schema, lambda: self._table_for(records, schema))

    def _table_for(self, records: Records, schema: af.Schema) -> str:
        text = json.dumps(records, sort_keys=True, ensure_ascii=False, default=str)
        name = "af_contacts_" + hashlib.sha256((text + repr(schema)).encode()).hexdigest()[:12]
        if name not in self.tables:
            self.load(name, records, schema)
        return name

    def load(self, name: str, records: Records, schema: af.Schema) -> None:
        columns = [("id", "String")]
        columns += [(COLUMNS.get(f.name, f.name), column_type(f.type)) for f in schema.fields]
        self.create(name, columns)
        rows = []
        for record in records:
            row: dict[str, Any] = {"id": record["id"]}
            for f in schema.fields:
                row[COLUMNS.get(f.name, f.name)] = _cell(f.type, record.get(f.name))
            rows.append(row)
        self.insert(name, rows)
        self.tables[name] = {}
        for relation in schema.relations:
            table = f"{name}_{relation.name}"
            self.tables[name][relation.name] = table
            self.load_related(table, records, relation)

    def load_related(self, name: str, records: Records, relation: af.Relation) -> None:
        declared = dict(relation.columns)
        fields = relation.schema.fields
        columns = [(relation.foreign_key, "Nullable(String)")]
        columns += [(declared.get(f.name, f.name), column_type(f.type)) for f in fields]
        self.create(name, columns)
        rows = []
        for record in records:
            held = record.get(relation.name)
            for related in [held] if isinstance(held, dict) else held or ():
                row: dict[str, Any] = {relation.foreign_key: record["id"]}
                for f in fields:
                    row[declared.get(f.name, f.name)] = _cell(f.type, related.get(f.name))
                rows.append(row)
        self.insert(name, rows)

    def condition(self, flt: af.Filter, table: str, now: datetime | None) -> str:
        """The filter as ClickHouse SQL over `table` (a table of `table_for`)."""
        return flt.to_sql("clickhouse", COLUMNS, now=now, table=table, tables=self.tables[table])

    def select_sql(self, flt: af.Filter, records: Records, now: datetime | None) -> set[str]:
        table = self.table_for(records, flt.schema)
        condition = self.condition(flt, table, now)
        out = self.run(f"SELECT {quote('id')} FROM {quote(table)} WHERE {condition}")
        return {json.loads(line)[0] for line in out.split("\n") if line}

    def select_params(self, flt: af.Filter, records: Records, now: datetime | None) -> set[str]:
        """Through `to_sql_params`: the `i`-th parameter is bound by the name `p<i>`."""
        table = self.table_for(records, flt.schema)
        condition, params = flt.to_sql_params(
            "clickhouse", COLUMNS, now=now, table=table, tables=self.tables[table]
        )
        sql = f"SELECT {quote('id')} FROM {quote(table)} WHERE {condition}"
        named = {f"p{i}": value for i, value in enumerate(params)}
        out = bytes(self.session.query(sql, "JSONCompactEachRow", params=named).bytes())
        return {json.loads(line)[0] for line in out.decode("utf-8").split("\n") if line}

    def columns(self, table: str, conditions: dict[int, str]) -> dict[int, set[str]]:
        """The ids each condition selects, all asked in one statement, each as a column."""
        parts = [f"CASE WHEN {c} THEN 1 ELSE 0 END AS f{i}" for i, c in conditions.items()]
        out = self.run(f"SELECT {quote('id')}, {', '.join(parts)} FROM {quote(table)}")
        rows = [json.loads(line) for line in out.split("\n") if line]
        keys = list(conditions)
        return {i: {row[0] for row in rows if row[1 + n] == 1} for n, i in enumerate(keys)}


_database: list[ClickHouseDatabase] = []


def clickhouse_database() -> ClickHouseDatabase:
    """The run's one chDB session (chDB holds one per process)."""
    if not _database:
        _database.append(ClickHouseDatabase())
    return _database[0]


def close() -> None:
    """End the run's chDB session, if one was started: its data folder in the temporary
    directory goes with it (left to the interpreter's exit, it stayed behind after whole
    runs)."""
    while _database:
        _database.pop().session.close()


@pytest.fixture(scope="session")
def clickhouse() -> ClickHouseDatabase:
    """The chDB session; skips where the `clickhouse` extra is not installed."""
    pytest.importorskip("chdb")
    return clickhouse_database()


def _select(database: ClickHouseDatabase, *args: Any) -> set[str]:
    flt, records, now = args
    return database.select_sql(flt, records, now)


def _select_params(database: ClickHouseDatabase, *args: Any) -> set[str]:
    flt, records, now = args
    return database.select_params(flt, records, now)


try:
    import chdb  # noqa: F401
except ImportError:  # pragma: no cover - the clickhouse extra is not installed
    CLICKHOUSE_ENGINES: list[Engine] = []
else:
    CLICKHOUSE_ENGINES = [
        Engine("sql-clickhouse", _select, "clickhouse"),
        Engine("params-clickhouse", _select_params, "clickhouse"),
    ]
