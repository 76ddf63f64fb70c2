"""A PostgreSQL `number[]` stored as `double precision[]` (SQLAlchemy `ARRAY(Float)`, as Python
floats are usually stored) answers as memory does on the same floats, through every way of
asking: SQL text, SQL with parameters and SQLAlchemy (docs/backends-sql-rules.md, "Lists").

The same filters are asked of a `numeric[]` column holding the same floats written exactly,
as docs/backends-sql-rules.md advises, so one SQL form is held to both column types.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    ARRAY,
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
from sqlalchemy.engine import Engine
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

LITERALS: list[int | float] = [1e23, 1e300, 0.1, 1 / 3, 0.0, 1, 5e-324, 10**23, 2**53 + 1]
"""The literals compared with them: the floats stored, and integers near them no double holds."""

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
}
"""The column's item type: `double precision[]` twice (SQLAlchemy's two names) and `numeric[]`."""


def _stored(items: list[float] | None, element: str) -> list[Any] | None:
    """A row's list as the column holds it: a `numeric[]` holds each float as
    docs/backends-sql-rules.md advises (an integral float as its integer, others as their shortest
    decimal)."""
    if items is None or element != "numeric":
        return items
    return [int(x) if x.is_integer() else Decimal(repr(x)) for x in items]


@pytest.fixture(scope="module")
def engine(pg_url: str) -> Iterator[Engine]:
    engine = create_engine(pg_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="module", params=list(ELEMENTS))
def table(request: pytest.FixtureRequest, engine: Engine) -> Table:
    element: str = request.param
    table = Table(
        f"pg_{element}_arrays",
        MetaData(),
        Column("id", String, primary_key=True),
        Column("scores", ARRAY(ELEMENTS[element])),
    )
    with engine.begin() as connection:
        table.drop(connection, checkfirst=True)
        table.create(connection)
        rows = [{"id": str(i), "scores": _stored(r, element)} for i, r in enumerate(ROWS)]
        connection.execute(insert(table), rows)
    return table


def _expected(flt: af.Filter) -> set[str]:
    return {str(i) for i, items in enumerate(ROWS) if flt.matches({"scores": items})}


def test_double_arrays_answer_as_memory(engine: Engine, table: Table) -> None:
    wrong: list[str] = []
    with engine.connect() as connection:
        for source in FILTERS:
            flt = af.parse(source, SCHEMA)
            expected = _expected(flt)
            condition = flt.to_sql("postgresql")
            query = f'SELECT id FROM "{table.name}" WHERE {condition}'
            got = {"text": set(connection.scalars(text(query)))}
            condition, params = flt.to_sql_params("postgresql")
            query = f'SELECT id FROM "{table.name}" WHERE {condition}'
            raw = connection.exec_driver_sql(query, tuple(params))
            got["params"] = {row[0] for row in raw}
            statement = select(table.c.id).where(flt.to_sqlalchemy(table))
            got["sqlalchemy"] = set(connection.scalars(statement))
            wrong += [
                f"{way} {source}: {ids} != {expected}"
                for way, ids in got.items()
                if ids != expected
            ]
    assert not wrong, "\n".join(wrong[:20])
