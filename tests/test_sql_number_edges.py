"""Numbers at the edges of doubles and 64-bit integers, in every place a number lives, on every
SQL engine and every way of asking (and polars), against memory.

One table per engine holds a contact per edge value, the value in each placement: a number
column, a `number[]` column, a path inside `data`, a number and a `number[]` declared inside
JSON, and the same inside a related row. Every filter is asked of the table in one statement
(`ask`), so the cross product stays fast. Engines reading JSON numbers as doubles
(MySQL/MariaDB, DuckDB) are held to memory's answer on doubles (`tests/wide_engines.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Table, case, select

import audiencefilter as af
from tests.sql_engines import COLUMNS, WAYS, Database, database_params, open_database
from tests.wide_engines import DOUBLE_JSON_NUMBERS, refuses

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
    tests: list[dict[str, Any]] = [{op: value} for op in ("equals", "gt", "gte", "lt", "lte")]
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


BATCH = 25
"""Filters per statement: wider statements of correlated subqueries take planners (DuckDB's,
PostgreSQL's) far longer than the same filters in a few statements."""


def ask(database: Database, way: str, flts: Sequence[af.Filter], table: Table) -> list[set[str]]:
    """The ids each filter selects, all asked in one statement per batch: `SELECT id,
    CASE WHEN <filter> THEN 1 ELSE 0 END, ...` keeps the rows a WHERE would keep."""
    found: list[set[str]] = []
    for start in range(0, len(flts), BATCH):
        batch = flts[start : start + BATCH]
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
    source = preparer.format_table(table)
    sql = f"SELECT {preparer.quote('id')}, {', '.join(tests_sql)} FROM {source}"
    with database.engine.connect() as connection:
        if way == "sql":
            options = {"no_parameters": True}
            return list(connection.exec_driver_sql(sql, execution_options=options))
        return list(connection.exec_driver_sql(sql, tuple(params)))


def _as_jsonb(value: int | float) -> int | float:
    """A JSON number as PostgreSQL reads it back from jsonb, which keeps no exponent: a float
    Python writes with one (from 10^16 up) that is an integer within 64 bits is that integer
    (`1.152921504606847e+18` is 1152921504606847000, not 2^60)."""
    if isinstance(value, float) and 1e16 <= abs(value) and int(value) in INT64:
        return int(Decimal(repr(value)))
    return value


def _stored(record: dict[str, Any], dialect: str) -> dict[str, Any]:
    """The record as `dialect` stores it: MySQL/MariaDB and DuckDB hold JSON numbers and list
    items as doubles, PostgreSQL JSON numbers as jsonb keeps them (`_as_jsonb`)."""
    if dialect in DOUBLE_JSON_NUMBERS:
        read: Callable[[Any], Any] = float
        stored = {**record, "scores": [read(v) for v in record["scores"]]}
    elif dialect == "postgresql":
        read, stored = _as_jsonb, dict(record)
    else:
        return record
    stored["data"] = {"n": read(record["data"]["n"]), "s": [read(record["data"]["s"][0])]}
    if "items" in record:
        stored["items"] = [_stored(item, dialect) for item in record["items"]]
    return stored


def _expected(dialect: str, flts: Sequence[af.Filter]) -> list[set[str]]:
    """Memory's answers on the records as the engine stores them (docs/semantics.md,
    "Numbers"); every comparison with what it stores is exact."""
    records = [_stored(r, dialect) for r in RECORDS]
    return [{r["id"] for r in records if f.matches(r)} for f in flts]


@pytest.mark.parametrize("name", database_params())
def test_number_edges_agree_with_memory(name: str, request: pytest.FixtureRequest) -> None:
    database = open_database(name, request)
    parsed = [af.parse(where, SCHEMA) for where in WHERES]
    table = database.table_for(RECORDS, SCHEMA)
    wrong = _unrefused(database, table, [flt for flt in parsed if refuses(name, flt)])
    flts = [flt for flt in parsed if not refuses(name, flt)]
    wanted = _expected(name, flts)
    for way in WAYS:
        for flt, found, expected in zip(flts, ask(database, way, flts, table), wanted, strict=True):
            if found != expected:
                wrong.append(f"{way} {flt.to_json()}: {sorted(found)} memory {sorted(expected)}")
    assert not wrong, f"{len(wrong)} disagree on {name}:\n" + "\n".join(wrong[:80])


def _unrefused(database: Database, table: Table, refused: Sequence[af.Filter]) -> list[str]:
    """A line for each filter the engine must refuse when built (an equality with an integer
    it keeps as a double, `wide_engines.refuses`) but built."""
    wrong = []
    for flt in refused:
        for way in WAYS:
            try:
                ask(database, way, [flt], table)
            except af.FilterError:
                continue
            wrong.append(f"{way} {flt.to_json()}: built, where the literal is refused")
    return wrong


def _without_scores(record: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in record.items() if k != "scores"}
    if "items" in record:
        kept["items"] = [_without_scores(item) for item in record["items"]]
    return kept


def test_number_edges_agree_with_memory_on_polars() -> None:
    """polars, the columnar reference, on one frame. No polars list type holds 2^53 + 1 beside
    0.1 (a `FrameError` by design), so the `number[]` column is left out."""
    pl = pytest.importorskip("polars")
    from audiencefilter.backends.frames.polars import frame_for

    records = [_without_scores(r) for r in RECORDS]
    frame = frame_for(records, SCHEMA).with_columns(id=pl.Series([r["id"] for r in records]))
    wrong = []
    for where in WHERES:
        if "scores" in str(where):
            continue
        flt = af.parse(where, SCHEMA)
        expected = {r["id"] for r in records if flt.matches(r)}
        found = set(flt.select_frame(frame)["id"].to_list())
        if found != expected:
            wrong.append(f"{flt.to_json()}: {sorted(found)} memory {sorted(expected)}")
    assert not wrong, f"{len(wrong)} disagree:\n" + "\n".join(wrong[:40])


BIG = 2**62
SUMMED: list[list[int | None]] = [
    [BIG, BIG],
    [BIG, BIG, BIG],
    [-BIG, -BIG],
    [-BIG, -BIG, -BIG],
    [2**63 - 1, 1],
    [2**63 - 1, 2**63 - 1, 2],
    [-(2**63), -1],
    [BIG, BIG, -BIG, -BIG],  # 0, past 64 bits on the way
    [2**63 - 1],
    [-(2**63)],
    [5, None],
    [],
]
SUM_RECORDS = [
    {"id": f"s{i}", "actions": [{"id": f"a{i}.{j}", "increase": v} for j, v in enumerate(values)]}
    for i, values in enumerate(SUMMED)
]
WITHIN = [2**63 - 1, -(2**63), -(2**63) + 1, 0, 5, BIG, 1.5]
BEYOND = [2**63, 2**64, -(2**63) - 1, 1e19, 3 * BIG]


def _aggregate_wheres(
    literals: list[int | float], functions: Sequence[str], *, every_operator: bool = True
) -> list[Any]:
    wheres: list[Any] = []
    for value in literals:
        tests: list[Any] = [{op: value} for op in ("equals", "gt", "lt")]
        if every_operator:
            tests += [{"gte": value}, {"lte": value}, {"not": value}]
            tests += [{"in": [value, 7]}, {"notIn": [value]}]
        for function in functions:
            inner = (lambda t: t) if function == "count" else (lambda t: {"increase": t})
            wheres += [{"actions": {function: inner(test)}} for test in tests]
    return wheres


AGGREGATES = _aggregate_wheres(WITHIN, ("sum",)) + _aggregate_wheres(
    [2**63 - 1, -(2**63), 0], ("min", "max", "count"), every_operator=False
)
WIDE_SUMS = _aggregate_wheres(BEYOND, ("sum",))


@pytest.mark.parametrize("name", database_params())
def test_sums_past_64_bits_agree_with_memory(name: str, request: pytest.FixtureRequest) -> None:
    """A sum is exact past 64 bits, partial sums included (SQLite's own SUM stops with
    `integer overflow` there); SQLite, which holds a sum exactly within 64 bits only, refuses a
    sum compared with a number beyond them, before running, through every way of asking."""
    database = open_database(name, request)
    table = database.table_for(SUM_RECORDS)
    wheres = AGGREGATES + WIDE_SUMS[: 0 if name == "sqlite" else None]
    flts = [af.parse(where) for where in wheres]
    wrong = []
    for way in WAYS:
        answers = ask(database, way, flts, table)
        for flt, found in zip(flts, answers, strict=True):
            expected = {r["id"] for r in SUM_RECORDS if flt.matches(r)}
            if found != expected:
                wrong.append(f"{way} {flt.to_json()}: {sorted(found)} memory {sorted(expected)}")
    assert not wrong, f"{len(wrong)} disagree on {name}:\n" + "\n".join(wrong[:60])
    if name == "sqlite":
        for where in WIDE_SUMS:
            for way in WAYS:
                with pytest.raises(af.FilterError, match="within 64-bit integers"):
                    ask(database, way, [af.parse(where)], table)


def test_sums_past_64_bits_agree_with_memory_on_polars() -> None:
    pl = pytest.importorskip("polars")
    from audiencefilter.backends.frames.polars import frame_for

    frame = frame_for(SUM_RECORDS, af.CONTACT).with_columns(
        id=pl.Series([r["id"] for r in SUM_RECORDS])
    )
    for where in AGGREGATES + WIDE_SUMS:
        flt = af.parse(where)
        expected = {r["id"] for r in SUM_RECORDS if flt.matches(r)}
        assert set(flt.select_frame(frame)["id"].to_list()) == expected, where
