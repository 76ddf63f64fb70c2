"""Every column type of tests/shapes/columns.py, on its real engine, against the oracle.

For each cell (an engine, a column type, the field type it holds, a way of asking) a table is
made with that column type and loaded with the edge values of the field type
(`audiencefilter.testing.space`: `STRINGS`, `COLUMN_NUMBERS`, ...; lists of them), and every
operation the space's registries accept for the field type (`operations`, with `not` and
`mode: "insensitive"`, every edge value as its literal) is asked through the cell's way:
`to_sqlalchemy` over the table, or `to_sql(dialect)` text. An exact cell must select the rows
the in-memory oracle (`Filter.matches`) selects, with no error from the database; a refused
cell must be refused when the expression is built, by a `FilterError` naming the column type
and the fix.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Column, MetaData, String, Table, create_engine, insert, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

import audiencefilter as af
from audiencefilter.language.fields import FieldType
from audiencefilter.testing.space import (
    COLUMN_NUMBERS,
    NOWS,
    SPACE,
    STRINGS,
    Operand,
    Operation,
    Placement,
    Slot,
    operations,
    slots,
)
from tests.shapes import Cell
from tests.shapes.columns import CELLS, ColumnShape, engine_of, shape, way_of

NOW = NOWS[0]
BATCH = 200
"""Conditions asked in one SELECT, each as a column of its own."""


# ---- what the column holds ---------------------------------------------------------------------


def _scalars(kind: FieldType, engine: str) -> tuple[Any, ...]:
    """The edge values of a scalar field type that the engine's column can store."""
    if kind is FieldType.STRING:
        return tuple(s for s in STRINGS if engine != "postgresql" or "\x00" not in s)
    if kind is FieldType.NUMBER:
        return COLUMN_NUMBERS
    raise NotImplementedError(kind)


def stored_values(column: ColumnShape) -> list[Any]:
    """The values loaded into the column: null, every edge value, and for a list type the
    empty list, a list with a null item, each edge alone, and pairs of them."""
    kind = FieldType(column.field_type)
    element = kind.element
    if element is None:
        return [None, *_scalars(kind, column.engine)]
    items = _scalars(element, column.engine)
    pairs = [[a, b] for a, b in zip(items, items[3:] + items[:3], strict=True)]
    return [None, [], [None], *([item] for item in items), *pairs, [items[0], None, items[-1]]]


def records(column: ColumnShape, slot: Slot) -> list[dict[str, Any]]:
    """The rows: the column holding each stored value, its peer (a reference's other side)
    another one."""
    values = stored_values(column)
    rows = []
    for n, value in enumerate(values):
        row = {"id": f"r{n}", slot.field: value}
        for peer in slot.peers:
            if peer != slot.field:
                row[peer] = values[(7 * n + 3) % len(values)]
        rows.append(row)
    return rows


# ---- what is asked -----------------------------------------------------------------------------


def column_slot(field_type: str) -> Slot:
    """The space's own column of a field type (`c_string_list`)."""
    kind = FieldType(field_type)
    return next(
        s
        for s in slots(SPACE)
        if s.relation is None
        and s.placement is Placement.COLUMN
        and s.type is kind
        and not s.field.endswith("_2")
    )


_PROBES: dict[Operand, Any] = {
    Operand.NULL: None,
    Operand.FLAG: True,
    Operand.RELATIVE: {"ago": "P1D"},
    Operand.START: {"startOf": "day"},
    Operand.PERIOD: {"this": "day"},
}


PER_OPERATION = 12
"""Edge literals each operation is asked with, taken in turn from the pool so that every
edge meets many operations."""


def operands(slot: Slot, operation: Operation, column: ColumnShape, turn: int) -> Iterator[Any]:
    """Edge literals of the field type (NUL included), alone or in a list beside another; a
    flag both ways; the other kinds of operand once. `turn` says where in the pool to start."""
    kind = slot.type.element or slot.type
    pool = STRINGS if kind is FieldType.STRING else _scalars(kind, column.engine)
    start = turn * PER_OPERATION
    chosen = [pool[(start + n) % len(pool)] for n in range(min(PER_OPERATION, len(pool)))]
    if operation.operand is Operand.LITERAL:
        yield from chosen
    elif operation.operand is Operand.LIST:
        yield []
        for n, a in enumerate(chosen):
            yield [a] if n % 2 else [a, pool[(start + n + 5) % len(pool)]]
    elif operation.operand is Operand.FLAG:
        yield from (True, False)
    elif operation.operand is Operand.REFERENCE:
        yield from ({"_ref": peer} for peer in slot.peers)
    else:
        yield _PROBES[operation.operand]


def filters(slot: Slot, column: ColumnShape) -> list[af.Filter]:
    """Every operation of the slot with each of its operands, as filters the library reads."""
    found = []
    for turn, operation in enumerate(operations(slot, SPACE)):
        for operand in operands(slot, operation, column, turn):
            body = operation.body(operand)
            where = slot.where(body) if body is not None else None
            if where is None:
                continue
            try:
                found.append(af.parse(where, SPACE))
            except af.FilterError:
                continue  # an operand the operation does not take (an empty list, say)
    return found


# ---- the engines -------------------------------------------------------------------------------

_SETUP: dict[str, tuple[str, ...]] = {"postgresql": ("CREATE EXTENSION IF NOT EXISTS citext",)}


@pytest.fixture(scope="module")
def engines(request: pytest.FixtureRequest) -> Iterator[Callable[[str], Engine]]:
    """The engine of each back-end, made on first use."""
    made: dict[str, Engine] = {}

    def engine(name: str) -> Engine:
        if name not in made:
            if name == "postgresql":
                url = request.getfixturevalue("pg_url")
            else:
                raise NotImplementedError(name)
            made[name] = create_engine(url)
            with made[name].begin() as connection:
                for statement in _SETUP.get(name, ()):
                    connection.execute(text(statement))
        return made[name]

    yield engine
    for made_engine in made.values():
        made_engine.dispose()


def make_table(
    engine: Engine, column: ColumnShape, slot: Slot, rows: list[dict[str, Any]]
) -> Table:
    name = "colshape_" + "".join(ch if ch.isalnum() else "_" for ch in column.ddl)
    columns = [
        Column(field, column.sqlalchemy) for field in dict.fromkeys((slot.field, *slot.peers))
    ]
    table = Table(name, MetaData(), Column("id", String, primary_key=True), *columns)
    with engine.begin() as connection:
        table.drop(connection, checkfirst=True)
        table.create(connection)
        connection.execute(insert(table), rows)
    return table


# ---- asking ------------------------------------------------------------------------------------


def _ask_batch(
    connection: Connection, table: Table, way: str, dialect: str, batch: list[af.Filter]
) -> list[set[str]]:
    """The ids each filter selects, every filter a column of one SELECT."""
    if way == "to_sqlalchemy":
        tests = [f.to_sqlalchemy(table, now=NOW).label(f"t{n}") for n, f in enumerate(batch)]
        rows = connection.execute(select(table.c.id, *tests)).all()
    else:
        tests_sql = [f"({f.to_sql(dialect, now=NOW)}) AS t{n}" for n, f in enumerate(batch)]
        rows = connection.execute(
            text(f'SELECT id, {", ".join(tests_sql)} FROM "{table.name}"')
        ).all()
    return [
        {row[0] for row in rows if row[n + 1] is True or row[n + 1] == 1} for n in range(len(batch))
    ]


def ask(
    connection: Connection, table: Table, way: str, dialect: str, flts: list[af.Filter]
) -> list[set[str] | str]:
    """The ids each filter selects, or the database's error for a filter it failed."""
    answers: list[set[str] | str] = []
    for start in range(0, len(flts), BATCH):
        batch = flts[start : start + BATCH]
        try:
            with connection.begin_nested():
                answers += _ask_batch(connection, table, way, dialect, batch)
            continue
        except DBAPIError:
            pass
        for flt in batch:  # one by one, to name the filters that fail
            try:
                with connection.begin_nested():
                    answers += _ask_batch(connection, table, way, dialect, [flt])
            except DBAPIError as exc:
                answers.append(str(exc.orig).splitlines()[0])
    return answers


def disagreements(cell: Cell, engine: Engine) -> tuple[int, list[str]]:
    """The number of filters asked, and a line for each answered otherwise than the oracle."""
    column = shape(engine_of(cell), cell.shape)
    slot = column_slot(cell.field_type)
    rows = records(column, slot)
    table = make_table(engine, column, slot, rows)
    flts = filters(slot, column)
    wrong = []
    with engine.connect() as connection, connection.begin():
        answers = ask(connection, table, way_of(cell), engine.dialect.name, flts)
    for flt, answer in zip(flts, answers, strict=True):
        expected = {row["id"] for row in rows if flt.matches(row, now=NOW)}
        if answer != expected:
            shown = answer if isinstance(answer, str) else sorted(answer ^ expected)
            wrong.append(f"{flt.to_json()}: {shown}")
    return len(flts), wrong


@pytest.mark.parametrize("cell", [c for c in CELLS if c.outcome == "exact"], ids=lambda c: c.id)
def test_exact_column_types_answer_as_the_oracle(
    cell: Cell, engines: Callable[[str], Engine]
) -> None:
    asked, wrong = disagreements(cell, engines(engine_of(cell)))
    assert asked > 0
    assert not wrong, f"{len(wrong)} of {asked} filters wrong:\n" + "\n".join(wrong[:15])


def _refused_cells() -> list[Cell]:
    return [c for c in CELLS if c.outcome == "refused"]


@pytest.mark.parametrize("cell", _refused_cells() or [None], ids=lambda c: c.id if c else "none")
def test_refused_column_types_are_refused_when_built(cell: Cell | None) -> None:
    if cell is None:
        pytest.skip("no refused column type")
    column = shape(engine_of(cell), cell.shape)
    slot = column_slot(cell.field_type)
    table = Table(
        "refused", MetaData(), Column("id", String), Column(slot.field, column.sqlalchemy)
    )
    for flt in itertools.islice(filters(slot, column), None, None, 7):
        with pytest.raises(af.FilterError) as caught:
            flt.to_sqlalchemy(table, now=NOW)
        message = str(caught.value)
        assert cell.shape.split("(")[0].lower() in message.lower(), message
        assert cell.note in message, message
