"""A `number[]` stored as a native array of each item type, on PostgreSQL and DuckDB,
answers as memory does on the items the column gives back, through every way of asking: SQL
text, SQL with parameters and SQLAlchemy (docs/backends-sql-rules.md, "Lists").

The item types are a dimension: doubles (SQLAlchemy `ARRAY(Float)`, as Python floats are
usually stored, and `ARRAY(Double)`), exact decimals (`numeric[]`, DuckDB's `DECIMAL[]`,
holding the floats written exactly and `Decimal`s such as `0.3`, which `has 0.3` finds as
`equals 0.3` finds the scalar) and 64-bit integers (`bigint[]`, `BIGINT[]`, holding integers
no double holds, such as 2^53 + 1, which `has 2^53 + 1` finds and `has 2^53` does not). So
one SQL form is held to every item type.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    ARRAY,
    BigInteger,
    Column,
    Double,
    Float,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    insert,
    select,
    text,
)
from sqlalchemy import case as sql_case
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool
from sqlalchemy.types import TypeEngine

import audiencefilter as af

ROWS: list[list[float] | None] = [
    [1e23],
    [1e300],
    [0.1, 2.5],
    [1 / 3],
    [-0.0],
    [5e-324],
    [],
    None,
    [1e23, 1.0],
]
"""The lists stored, each in its own row."""

DECIMALS: list[list[Any]] = [
    [Decimal("0.3")],
    [Decimal("0.10"), Decimal("9.99")],
    [Decimal(2**53 + 1)],
    [Decimal("0.299999999999999988897769753748434595763683319091796875")],
]
"""Lists of exact decimals a `numeric[]` column holds besides the floats: `0.3` as written,
and the double nearest it, which `0.3` is not."""

INTEGERS: list[list[int] | None] = [
    [2**53 + 1],
    [2**53],
    [2**63 - 1, -(2**63)],
    [0, 5],
    [1, 2**53 + 1],
    [],
    None,
]
"""Lists a 64-bit integer column holds: integers no double holds beside their neighbours."""

LITERALS: list[int | float] = [1e23, 1e300, 0.1, 1 / 3, 0.0, 1, 5e-324, 10**23, 2**53 + 1]
LITERALS += [0.3, 0.30000000000000004, 9.99, 2**53, 2**63 - 1, 2**63]
"""The literals compared with them: the numbers stored, integers near them no double holds,
and doubles beside the decimals."""

SCHEMA = af.Schema.of(scores="number[]")


def _filters() -> list[dict[str, Any]]:
    """Each operator on each literal, on pairs of literals, and negated."""
    pairs = [list(p) for p in itertools.combinations(LITERALS, 2)]
    tests: list[dict[str, Any]] = [{"isEmpty": True}, {"isEmpty": False}]
    tests += [{"has": v} for v in LITERALS]
    tests += [{op: [v]} for op in ("hasSome", "hasEvery", "equals") for v in LITERALS]
    tests += [{op: p} for op in ("hasSome", "hasEvery", "equals") for p in pairs]
    tests += [{"equals": [1e23, 1.0]}, {"equals": [0.1, 2.5]}, {"equals": [2.5, 0.1]}]
    tests += [{"hasSome": LITERALS}, {"hasEvery": [1e23, 1]}]
    long = [i + 0.5 for i in range(40)]  # a long list, bound as one parameter
    tests += [{"hasSome": [1e23, 0.1, 5e-324, *long]}, {"hasEvery": [1e23, *long]}]
    plain = [{"scores": t} for t in tests]
    return plain + [{"NOT": f} for f in plain]


FILTERS = _filters()

ELEMENTS: dict[str, TypeEngine[Any]] = {
    "float": Float(),
    "double": Double(),
    "numeric": Numeric(),
    "bigint": BigInteger(),
}
"""The column's item type: `double precision[]` twice (SQLAlchemy's two names), `numeric[]`
(DuckDB: `DECIMAL(38,17)[]`) and `bigint[]`."""


def _stored(items: list[float] | None, element: str) -> list[Any] | None:
    """A row's list as the column takes it: a `numeric[]` holds each float as
    docs/backends-sql-rules.md advises (an integral float as its integer, others as their shortest
    decimal)."""
    if items is None or element != "numeric":
        return items
    return [int(x) if x.is_integer() else Decimal(repr(x)) for x in items]


def _rows(element: str) -> list[list[Any] | None]:
    if element == "bigint":
        return list(INTEGERS)
    rows = [_stored(r, element) for r in ROWS]
    return rows + DECIMALS if element == "numeric" else rows


@pytest.fixture(scope="module", params=["postgresql", "duckdb"])
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    if request.param == "postgresql":
        engine = create_engine(request.getfixturevalue("pg_url"))
    else:
        engine = create_engine("duckdb:///:memory:", poolclass=StaticPool)
    yield engine
    engine.dispose()


def _item_type(engine: Engine, element: str) -> TypeEngine[Any]:
    """DuckDB's `FLOAT` is single precision, and its default `DECIMAL(18,3)` would round
    the floats: a double and a `DECIMAL(38,10)` there."""
    if engine.dialect.name == "duckdb" and element != "bigint":
        return Numeric(38, 10) if element == "numeric" else Double()
    return ELEMENTS[element]


def _fits(items: list[Any] | None, engine: Engine, element: str) -> bool:
    """Whether DuckDB's `DECIMAL(38,10)` list meets every literal: DuckDB compares it with a
    literal of 16 fraction digits (1/3) as a `DECIMAL(38,16)`, which holds 22 integer digits,
    and fails on a larger item, so the items stay below 10^12."""
    wide = engine.dialect.name == "duckdb" and element == "numeric"
    return not (wide and items and any(abs(v) >= 10**12 for v in items))


@pytest.fixture(scope="module", params=list(ELEMENTS))
def table(request: pytest.FixtureRequest, engine: Engine) -> Table:
    element: str = request.param
    table = Table(
        f"{element}_arrays",
        MetaData(),
        Column("id", String, primary_key=True),
        Column("scores", ARRAY(_item_type(engine, element))),
    )
    with engine.begin() as connection:
        table.drop(connection, checkfirst=True)
        table.create(connection)
        rows = [
            {"id": str(i), "scores": r}
            for i, r in enumerate(_rows(element))
            if _fits(r, engine, element)
        ]
        connection.execute(insert(table), rows)
    return table


def _held(connection: Connection, table: Table) -> dict[str, Any]:
    """Each row's list as the column gives it back: the oracle's records."""
    return {row.id: row.scores for row in connection.execute(select(table))}


PARSED = [af.parse(source, SCHEMA) for source in FILTERS]
BATCH = 100


def _flags(conditions: list[str]) -> str:
    return ", ".join(f"CASE WHEN {c} THEN 1 ELSE 0 END" for c in conditions)


def _batch(connection: Connection, table: Table, flts: list[af.Filter]) -> list[dict[str, Any]]:
    """Each filter's ids in every way, the filters of one way asked in one SELECT (a column
    each, true where the filter's condition is): a round trip per way and batch, not per
    filter."""
    dialect = connection.dialect.name
    found: list[dict[str, Any]] = [{} for _ in flts]

    def note(way: str, rows: Any) -> None:
        listed = [tuple(row) for row in rows]
        for n in range(len(flts)):
            found[n][way] = {row[0] for row in listed if row[n + 1] == 1}

    conditions = [flt.to_sql(dialect) for flt in flts]
    note("text", connection.execute(text(f'SELECT id, {_flags(conditions)} FROM "{table.name}"')))
    written = [flt.to_sql_params(dialect) for flt in flts]
    params = tuple(p for _, held in written for p in held)
    query = f'SELECT id, {_flags([c for c, _ in written])} FROM "{table.name}"'
    note("params", connection.exec_driver_sql(query, params))
    tests = [sql_case((flt.to_sqlalchemy(table), 1), else_=0) for flt in flts]
    note("sqlalchemy", connection.execute(select(table.c.id, *tests)))
    return found


def test_number_arrays_answer_as_memory(engine: Engine, table: Table) -> None:
    wrong: list[str] = []
    with engine.connect() as connection:
        held = _held(connection, table)
        for start in range(0, len(FILTERS), BATCH):
            flts = PARSED[start : start + BATCH]
            answers = _batch(connection, table, flts)
            for source, flt, got in zip(FILTERS[start:], flts, answers, strict=False):
                expected = {i for i, items in held.items() if flt.matches({"scores": items})}
                wrong += [
                    f"{way} {source}: {ids} != {expected}"
                    for way, ids in got.items()
                    if ids != expected
                ]
    assert not wrong, "\n".join(wrong[:20])
