"""Number values and number column types against the oracle: every cell of
`tests/shapes/values.py` on its real engine.

A number literal is a JSON number, read as an int or a double; a `Decimal` value (a record's,
or a NUMERIC/DECIMAL column's) meets it as it is written (`0.3` is 3/10), a double (a float,
a DOUBLE column) as the double it is (docs/semantics.md, "Numbers"). Each cell stores its
values, asks every operator of a number field (`testing.space.operations`) with every edge
literal, through every way the engine is asked, and compares the ids with the oracle's on
the values the column holds: `Decimal`s for an exact column, floats for a double one.

The memory cell holds the oracle to the rule itself: a `Decimal` answers as the number it
writes would (an int when it is integral, else the double of its numeral).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Column, Double, MetaData, Numeric, String, Table, case, inspect, select
from sqlalchemy.types import TypeEngine

import audiencefilter as af
from audiencefilter.testing.space import NUMBERS, Operand, operations, slots
from tests.shapes import TALLY, Cell
from tests.shapes.values import NUMBER_CELLS as CELLS

SCHEMA = af.Schema.of(points="number")
SLOT = slots(SCHEMA)[0]

LITERALS: tuple[int | float, ...] = (
    *NUMBERS,
    0.3,
    0.1,
    9.99,
    -9.99,
    0.30000000000000004,
    0.2,
    2.5,
    1e-7,
    123456.789,
    2**60,
    2**60 + 1,
    2**60 - 1,
    2**63 + 1,
    -(2**63) - 2,
)
"""Edge numbers (`NUMBERS`), decimals whose double is not their numeral, and integers past
2^53 that no double holds, beside the doubles around them."""

DECIMALS: tuple[Decimal | None, ...] = (
    Decimal("0.3"),
    Decimal("0.10"),
    Decimal("9.99"),
    Decimal("-9.99"),
    Decimal("0.30000000000000004"),
    Decimal("2.5"),
    Decimal("0"),
    Decimal("100"),
    Decimal("99.5"),
    Decimal("123456.789"),
    Decimal("0.0000001"),
    Decimal(2**53 + 1),
    Decimal(2**60 + 1),
    Decimal(2**63 - 1),
    Decimal(-(2**63)),
    None,
)
"""Exact values: numerals whose double differs from them, integers no double holds."""

DOUBLES: tuple[float | None, ...] = (
    0.3,
    0.1,
    9.99,
    -9.99,
    0.30000000000000004,
    2.5,
    -0.0,
    100.0,
    99.5,
    2.0**53,
    2.0**60,
    2.0**63,
    -(2.0**63),
    1e23,
    1e300,
    -1e300,
    5e-324,
    None,
)
"""Doubles: beside the literals, the doubles next to integers no double holds."""


def _filters() -> list[dict[str, Any]]:
    """Every operation of a number field with every literal (a list: beside 1)."""
    found: list[dict[str, Any]] = []
    for operation in operations(SLOT, SCHEMA):
        if operation.operand is Operand.NULL:
            found.append({"points": operation.body(None)})
        elif operation.operand is Operand.LITERAL:
            found += [{"points": operation.body(v)} for v in LITERALS]
        elif operation.operand is Operand.LIST:
            found += [{"points": operation.body([v, 1])} for v in LITERALS]
            found.append({"points": operation.body(list(LITERALS))})
    return found


FILTERS = [af.parse(where, SCHEMA) for where in _filters()]

Runner = Callable[
    [tuple[Any, ...], pytest.FixtureRequest], tuple[tuple[Any, ...], dict[str, list[set[str]]]]
]
"""Stores the values on an engine; gives back the values held and each way's answers."""


def _records(values: tuple[Any, ...]) -> list[dict[str, Any]]:
    return [{"id": str(i), "points": v} for i, v in enumerate(values)]


def _oracle(values: tuple[Any, ...]) -> list[set[str]]:
    records = _records(values)
    return [{r["id"] for r in records if flt.matches(r)} for flt in FILTERS]


Answers = dict[str, list[set[str]]]
"""The ids each filter selects (in `FILTERS` order), per way of asking."""

Held = tuple[Any, ...]
"""The values as the column gives them back, by id: what the oracle is asked about (SQLite
keeps a NUMERIC's fraction as a double, a DECIMAL(p, s) rounds to `s` places)."""


def _twin(value: Decimal | None) -> int | float | None:
    """The number a Decimal writes, as JSON would read its numeral."""
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def _memory(values: tuple[Any, ...], request: pytest.FixtureRequest) -> tuple[Held, Answers]:
    return values, {"matches": _oracle(tuple(_twin(v) for v in values))}


# ---- SQLAlchemy engines: text, parameters and SQLAlchemy -------------------------------------


def _sql(database: str, column: Callable[[], TypeEngine[Any]]) -> Runner:
    def run(values: tuple[Any, ...], request: pytest.FixtureRequest) -> tuple[Held, Answers]:
        from tests.sql_engines import open_database

        db = open_database(database, request)
        name = f"shape_values_{abs(hash((database, repr(column()))))}"
        table = Table(
            name,
            MetaData(),
            Column("id", String(64), primary_key=True),
            Column("points", column()),
        )
        with db.engine.begin() as connection:
            if inspect(connection).has_table(name):
                table.drop(connection)
            table.create(connection)
            connection.execute(table.insert(), _records(values))
            # read by the driver itself: SQLAlchemy's Numeric would round a float to 10 places
            raw = connection.exec_driver_sql(f'SELECT id, points FROM "{name}"').all()
        held = dict(raw)
        answers: Answers = {"sql": [], "params": [], "sqlalchemy": []}
        with db.engine.connect() as connection:
            for start in range(0, len(FILTERS), _BATCH):
                batch = FILTERS[start : start + _BATCH]
                for way, found in _batch(connection, db.dialect, table, batch).items():
                    answers[way] += found
        return tuple(held[str(i)] for i in range(len(values))), answers

    return run


_BATCH = 100
"""Filters asked in one statement, each as a column of its own."""


def _batch(connection: Any, dialect: str, table: Table, batch: list[af.Filter]) -> Answers:
    """The ids each filter of `batch` selects, per way, asking each way one statement."""
    quoted = f'"{table.name}"'
    texts = [flt.to_sql(dialect, table=table.name) for flt in batch]
    pairs = [flt.to_sql_params(dialect, table=table.name) for flt in batch]
    cases = ", ".join(f"CASE WHEN {t} THEN 1 ELSE 0 END" for t in texts)
    rows = {
        "sql": connection.exec_driver_sql(
            f"SELECT id, {cases} FROM {quoted}", execution_options={"no_parameters": True}
        ).all()
    }
    cases = ", ".join(f"CASE WHEN {c} THEN 1 ELSE 0 END" for c, _ in pairs)
    params = tuple(p for _, bound in pairs for p in bound)
    rows["params"] = connection.exec_driver_sql(f"SELECT id, {cases} FROM {quoted}", params).all()
    columns = [case((flt.to_sqlalchemy(table), 1), else_=0) for flt in batch]
    rows["sqlalchemy"] = connection.execute(select(table.c.id, *columns)).all()
    return {
        way: [{row[0] for row in found if row[1 + n] == 1} for n in range(len(batch))]
        for way, found in rows.items()
    }


# ---- ClickHouse (chDB) -------------------------------------------------------------------------


def _clickhouse(kind: str) -> Runner:
    def run(values: tuple[Any, ...], request: pytest.FixtureRequest) -> tuple[Held, Answers]:
        db = request.getfixturevalue("clickhouse")
        name = f"shape_values_{abs(hash(kind))}"
        db.create(name, [("id", "String"), ("points", kind)])
        lines = []  # each number as its numeral: a Decimal read exactly
        for record in _records(values):
            number = "null" if record["points"] is None else str(record["points"])
            if isinstance(record["points"], float):
                number = repr(record["points"])
            lines.append(f'{{"id": {json.dumps(record["id"])}, "points": {number}}}')
        db.session.query(f'INSERT INTO "{name}" FORMAT JSONEachRow ' + "\n".join(lines))
        db.tables[name] = {}
        text, params = [], []
        for flt in FILTERS:
            sql = f'SELECT "id" FROM "{name}" WHERE {db.condition(flt, name, None)}'
            text.append({json.loads(line)[0] for line in db.run(sql).split("\n") if line})
            condition, bound = flt.to_sql_params("clickhouse", table=name, tables={})
            named = {f"p{i}": value for i, value in enumerate(bound)}
            sql = f'SELECT "id" FROM "{name}" WHERE {condition}'
            out = bytes(db.session.query(sql, "JSONCompactEachRow", params=named).bytes())
            params.append({json.loads(line)[0] for line in out.decode().split("\n") if line})
        out = db.run(f'SELECT "id", toString("points") FROM "{name}"')
        rows = [json.loads(line) for line in out.split("\n") if line]
        exact = "Decimal" in kind
        held = {i: None if v is None else Decimal(v) if exact else float(v) for i, v in rows}
        return tuple(held[str(i)] for i in range(len(values))), {"sql": text, "params": params}

    return run


# ---- Django ------------------------------------------------------------------------------------


def _django(vendor: str, field: str) -> Runner:
    def run(values: tuple[Any, ...], request: pytest.FixtureRequest) -> tuple[Held, Answers]:
        from django.db import connections, models

        from tests import django_engines

        if vendor == "postgresql":
            store = django_engines.postgresql_store(request.getfixturevalue("pg_database"))
        else:
            store = django_engines.sqlite_store()
        kinds: dict[str, Callable[[], models.Field[Any, Any]]] = {
            "DecimalField": lambda: models.DecimalField(
                max_digits=38, decimal_places=17, null=True
            ),
            "FloatField": lambda: models.FloatField(null=True),
        }
        name = f"af_shape_{vendor[:2]}_{field.lower()}"
        if name not in store.models:
            meta = type("Meta", (), {"app_label": django_engines.APP, "db_table": name})
            body = {
                "__module__": django_engines.__name__,
                "Meta": meta,
                "id": models.CharField(max_length=64, primary_key=True),
                "points": kinds[field](),
            }
            model = type(name, (models.Model,), body)
            with connections[store.alias].schema_editor() as editor:
                editor.create_model(model)
            rows = [model(**record) for record in _records(values)]
            model.objects.using(store.alias).bulk_create(rows)
            store.models[name] = model
        model = store.models[name]
        with connections[store.alias].cursor() as cursor:  # as stored: no converter rounding
            cursor.execute(f'SELECT id, points FROM "{name}"')
            held = dict(cursor.fetchall())
        answers = {"django": [store.ids(model, flt, None) for flt in FILTERS]}
        return tuple(held[str(i)] for i in range(len(values))), answers

    return run


# ---- frames ------------------------------------------------------------------------------------


def _polars(dtype: str) -> Runner:
    def run(values: tuple[Any, ...], request: pytest.FixtureRequest) -> tuple[Held, Answers]:
        import polars as pl

        kind = pl.Decimal(38, 17) if dtype == "decimal" else pl.Float64
        frame = pl.DataFrame(
            _records(values), schema={"id": pl.String, "points": kind}, strict=False
        )
        held = tuple(frame["points"].to_list())
        return held, {"polars": [set(flt.select_frame(frame)["id"]) for flt in FILTERS]}

    return run


def _pandas(dtype: str) -> Runner:
    def run(values: tuple[Any, ...], request: pytest.FixtureRequest) -> tuple[Held, Answers]:
        import pandas as pd

        ids = [str(i) for i in range(len(values))]
        column = pd.Series(list(values), dtype=object if dtype == "object" else "float64")
        frame = pd.DataFrame({"id": ids, "points": column})
        answers = {"pandas": [set(flt.select_frame(frame)["id"]) for flt in FILTERS]}
        return values, answers  # pandas' own rule: a NaN (None here) is missing

    return run


RUNNERS: dict[tuple[str, str], tuple[Runner, bool]] = {
    ("memory", "Decimal"): (_memory, True),
    ("PostgreSQL", "numeric"): (_sql("postgresql", Numeric), True),
    ("PostgreSQL", "double precision"): (_sql("postgresql", Double), False),
    ("DuckDB", "DECIMAL(38,10)"): (_sql("duckdb", lambda: Numeric(38, 10)), True),
    ("DuckDB", "DOUBLE"): (_sql("duckdb", Double), False),
    ("SQLite", "NUMERIC"): (_sql("sqlite", Numeric), True),
    ("SQLite", "REAL"): (_sql("sqlite", Double), False),
    ("ClickHouse", "Nullable(Decimal(38, 10))"): (
        _clickhouse("Nullable(Decimal(38, 10))"),
        True,
    ),
    ("ClickHouse", "Nullable(Float64)"): (_clickhouse("Nullable(Float64)"), False),
    ("Django", "DecimalField (SQLite)"): (_django("sqlite", "DecimalField"), True),
    ("Django", "DecimalField (PostgreSQL)"): (_django("postgresql", "DecimalField"), True),
    ("Django", "FloatField (PostgreSQL)"): (_django("postgresql", "FloatField"), False),
    ("polars", "Decimal(38, 17)"): (_polars("decimal"), True),
    ("polars", "Float64"): (_polars("float"), False),
    ("pandas", "object (Decimal)"): (_pandas("object"), True),
    ("pandas", "float64"): (_pandas("float64"), False),
}
"""Each cell's way of asking its engine, and whether it holds `DECIMALS` (else `DOUBLES`)."""


def _marks(cell: Cell) -> tuple[Any, ...]:
    return (pytest.mark.postgres,) if "PostgreSQL" in (cell.backend, cell.shape[-12:-1]) else ()


def test_every_cell_has_a_runner() -> None:
    assert {(c.backend, c.shape) for c in CELLS} <= set(RUNNERS)


@pytest.mark.parametrize(
    "cell", [pytest.param(c, id=c.id, marks=_marks(c)) for c in CELLS if c.outcome == "exact"]
)
def test_number_values_answer_as_the_oracle(cell: Cell, request: pytest.FixtureRequest) -> None:
    runner, exact = RUNNERS[(cell.backend, cell.shape)]
    held, got_by_way = runner(DECIMALS if exact else DOUBLES, request)
    expected = _oracle(held)
    wrong: list[str] = []
    for way, answers in got_by_way.items():
        for flt, want, got in zip(FILTERS, expected, answers, strict=True):
            if got != want:
                shown = [held[int(i)] for i in sorted(got ^ want, key=int)]
                wrong.append(f"{way} {flt.to_dict()}: differs on {shown}")
    TALLY.note(cell, len(FILTERS) * len(got_by_way), len(held), len(wrong))
    assert not wrong, f"{len(wrong)} disagreements:\n" + "\n".join(wrong[:30])
