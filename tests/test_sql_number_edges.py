"""Numbers at the edges of doubles and 64-bit integers, in every place a number lives, on every
SQL engine and every way of asking (and polars), against memory.

One table per engine holds a contact per edge value, the value in each placement: a number
column, a `number[]` column, a path inside `data`, a number and a `number[]` declared inside
JSON, and the same inside a related row. Every filter is asked of the table in one statement
(`ask`), so the cross product stays fast. Engines reading JSON numbers as doubles
(MySQL/MariaDB, DuckDB) are held to memory's answer on doubles (`tests/wide_engines.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy import Table, case, select

import audiencefilter as af
from tests.sql_engines import COLUMNS, WAYS, Database, database_params, open_database
from tests.wide_engines import DOUBLE_JSON_NUMBERS, polars_ids

EDGES: list[int | float] = [
    1e23,
    1e300,
    2**53,
    2**53 + 1,
    2**63 - 1,
    2**63,
    -(2**63),
    2**64,
    0.1,
    5e-324,
    -0.0,
    1.0,
    2.0**60,
    -1e23,
]
"""The values stored and the literals compared with them."""

INSIDE = [1e23, 2**53 + 1, 2**63, 0.1]
"""The values also compared inside a related row (the same writer, one subquery each)."""

INT64 = range(-(2**63), 2**63)


def _column(value: int | float) -> int | None:
    """What a 64-bit integer column holds of `value`: itself, or null where it cannot."""
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if int(value) in INT64 else None


def _row(i: int, value: int | float) -> dict[str, Any]:
    return {
        "id": f"c{i}",
        "points": _column(value),
        "scores": [value],
        "data": {"n": value, "s": [value]},
    }


RELATED = af.Schema.of(
    "item",
    id="string",
    points="number",
    scores="number[]",
    data="json",
    jn=("number", ("data", "n")),
    js=("number[]", ("data", "s")),
)
SCHEMA = af.CONTACT.with_fields(
    scores="number[]", jn=("number", ("data", "n")), js=("number[]", ("data", "s"))
).with_relations(af.Relation("items", RELATED))

RECORDS = [{**_row(i, v), "items": [_row(i, v)]} for i, v in enumerate(EDGES)]


def _scalar_wheres(value: int | float) -> list[dict[str, Any]]:
    tests: list[dict[str, Any]] = [
        {op: value} for op in ("equals", "gt", "gte", "lt", "lte")
    ]
    tests += [{"not": value}, {"in": [value, 5]}, {"notIn": [value]}]
    wheres: list[dict[str, Any]] = []
    for test in tests:
        wheres += [{"points": test}, {"jn": test}, {"data": {"path": ["n"], **test}}]
    lists = [{"has": value}, {"hasSome": [value, 7]}, {"hasEvery": [value]}]
    for test in lists:
        wheres += [{"scores": test}, {"js": test}]
    wheres.append({"data": {"path": ["s"], "array_contains": value}})
    return wheres


WHERES = [where for value in EDGES for where in _scalar_wheres(value)]
WHERES += [
    {"items": {"some": where}}
    for value in INSIDE
    for where in _scalar_wheres(value)
    if "equals" in str(where) or "lt" in str(where) or "has" in str(where) or "array" in str(where)
]


def ask(database: Database, way: str, flts: Sequence[af.Filter], table: Table) -> list[set[str]]:
    """The ids each filter selects, all asked in one statement per batch: `SELECT id,
    CASE WHEN <filter> THEN 1 ELSE 0 END, ...` keeps the rows a WHERE would keep."""
    found: list[set[str]] = []
    for start in range(0, len(flts), 200):
        batch = flts[start : start + 200]
        rows = _rows(database, way, batch, table)
        found += [{row[0] for row in rows if row[i + 1]} for i in range(len(batch))]
    return found


def _rows(database: Database, way: str, flts: Sequence[af.Filter], table: Table) -> list[Any]:
    if way == "sqlalchemy":
        relations = database.related.get(table.name)
        tests = [case((f.to_sqlalchemy(table, relations=relations), 1), else_=0) for f in flts]
        with database.engine.connect() as connection:
            return list(connection.execute(select(table.c.id, *tests)))
    tables = database.tables_of(table)
    params: list[Any] = []
    tests_sql = []
    for flt in flts:
        if way == "sql":
            condition = flt.to_sql(database.dialect, COLUMNS, table=table.name, tables=tables)
        else:
            condition, more = flt.to_sql_params(
                database.dialect, COLUMNS, table=table.name, tables=tables
            )
            params += more
        tests_sql.append(f"CASE WHEN {condition} THEN 1 ELSE 0 END")
    preparer = database.engine.dialect.identifier_preparer
    sql = f"SELECT {preparer.quote('id')}, {', '.join(tests_sql)} FROM {preparer.format_table(table)}"
    with database.engine.connect() as connection:
        if way == "sql":
            options = {"no_parameters": True}
            return list(connection.exec_driver_sql(sql, execution_options=options))
        return list(connection.exec_driver_sql(sql, tuple(params)))


def _stored(record: dict[str, Any]) -> dict[str, Any]:
    """The record as an engine holding JSON numbers and lists as doubles stores it."""
    doubled = {**record, "scores": [float(v) for v in record["scores"]]}
    doubled["data"] = {"n": float(record["data"]["n"]), "s": [float(record["data"]["s"][0])]}
    if "items" in record:
        doubled["items"] = [_stored(item) for item in record["items"]]
    return doubled


def _expected(dialect: str, flts: Sequence[af.Filter]) -> list[set[str]]:
    """Memory's answers, on the records as the engine stores them: MySQL/MariaDB and DuckDB
    hold JSON numbers and list items as doubles, and compare those doubles exactly."""
    records = [_stored(r) for r in RECORDS] if dialect in DOUBLE_JSON_NUMBERS else RECORDS
    return [{r["id"] for r in records if f.matches(r)} for f in flts]


@pytest.mark.parametrize("name", database_params())
def test_number_edges_agree_with_memory(name: str, request: pytest.FixtureRequest) -> None:
    database = open_database(name, request)
    flts = [af.parse(where, SCHEMA) for where in WHERES]
    table = database.table_for(RECORDS, SCHEMA)
    wanted = _expected(name, flts)
    wrong = []
    for way in WAYS:
        for where, flt, found, expected in zip(
            WHERES, flts, ask(database, way, flts, table), wanted, strict=True
        ):
            if found != expected:
                wrong.append(f"{way} {flt.to_json()}: {sorted(found)} memory {sorted(expected)}")
    assert not wrong, f"{len(wrong)} disagree on {name}:\n" + "\n".join(wrong[:80])
