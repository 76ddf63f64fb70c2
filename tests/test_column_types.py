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
import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    DateTime,
    MetaData,
    String,
    Table,
    create_engine,
    delete,
    insert,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import StatementError
from sqlalchemy.pool import StaticPool

import audiencefilter as af
from audiencefilter.language.fields import FieldType
from audiencefilter.testing.space import (
    FIXED_DATES,
    FIXED_INSTANTS,
    JSON_HOLDINGS,
    NOWS,
    NUMBERS,
    SPACE,
    STRINGS,
    Operand,
    Operation,
    Placement,
    Slot,
    operations,
    slots,
    spelt_instant,
)
from tests.shapes import TALLY, Cell
from tests.shapes.columns import CELLS, ColumnShape, engine_of, shape, way_of
from tests.wide_engines import as_jsonb, doubled, refuses

NOW = NOWS[0]
BATCH = 200
"""Conditions asked in one SELECT, each as a column of its own."""


# ---- what the column holds ---------------------------------------------------------------------

_FRACTIONS = (0.3, 0.1, 2.5, 9.99, -9.99, 123456.789, 1e-7, 2**31, -(2**31) - 1, 10**10)
"""Numbers beside the edges: decimals whose double is not their numeral, and the bounds of a
32-bit integer and of a DECIMAL(12,2)."""

_NEAR_NOW = tuple(
    NOW + timedelta(**{unit: step})
    for unit, step in (
        ("microseconds", 1),
        ("microseconds", -1),
        ("hours", -1),
        ("hours", 14),
        ("days", -1),
        ("days", -7),
        ("days", -30),
        ("days", -366),
    )
)


_UUIDS = (
    "00000000-0000-0000-0000-000000000000",
    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "a0eebc99",
    "A0EEBC99",
    "-4ef8-",
    "bb6d6bb9bd380a11",
)
"""Uuids and pieces of them, in both cases: an engine keeps a uuid's lower-case form, so an
upper-case literal matches nothing the field holds (the pieces are only literals)."""

_SHAPE_STRINGS: dict[str, tuple[str, ...]] = {"uuid": _UUIDS}
"""Strings offered to a column type beside the edges: the ones it can hold."""


def _pool(kind: FieldType, ddl: str = "") -> tuple[Any, ...]:
    """The edge values of a scalar field type, as a record holds them (with the strings a
    column type of `ddl` holds)."""
    if kind is FieldType.STRING:
        return (*_SHAPE_STRINGS.get(ddl.lower(), ()), *STRINGS)
    pools: dict[FieldType, tuple[Any, ...]] = {
        FieldType.STRING: STRINGS,
        FieldType.NUMBER: (*NUMBERS, *_FRACTIONS),
        FieldType.BOOLEAN: (True, False),
        FieldType.DATE: (*FIXED_DATES, NOW.date(), *(moment.date() for moment in _NEAR_NOW)),
        FieldType.DATETIME: (*FIXED_INSTANTS, NOW, *_NEAR_NOW),
    }
    return pools[kind]


def _scalars(kind: FieldType, engine: str, ddl: str = "") -> tuple[Any, ...]:
    """The edge values of a scalar field type offered to the column: a PostgreSQL string
    cannot hold NUL; values a column type cannot hold otherwise (a number past its range) are
    left out when the engine refuses them (`load`)."""
    return tuple(v for v in _pool(kind, ddl) if engine != "postgresql" or "\x00" not in str(v))


def _json_values(engine: str) -> list[Any]:
    """The documents of a JSON column: null, `{}`, and `{"a": v}` for every JSON holding
    and every string and number edge (on SQLite, none the cell's note leaves out)."""
    held = [h for h in JSON_HOLDINGS if type(h) is not object]  # not the missing key
    strings = _scalars(FieldType.STRING, engine)
    if engine == "sqlite":  # its JSON functions read a string up to its first NUL
        strings = tuple(s for s in strings if "\x00" not in s)
    held += [*strings, *NUMBERS]
    return [None, {}, *({"a": value} for value in held)]


def _wide_doubled(value: Any) -> Any:
    """`value` with every integer beyond 64 bits its nearest double."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if -(2**63) <= value < 2**63 else float(value)
    if isinstance(value, dict):
        return {k: _wide_doubled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wide_doubled(v) for v in value]
    return value


def as_compared(column: ColumnShape, document: Any) -> Any:
    """A JSON document as the engine compares it (docs/semantics.md, JSON "Numbers"): MariaDB
    and DuckDB read every number as a double, SQLite and PostgreSQL an integer beyond 64 bits,
    and jsonb keeps no exponent."""
    if column.engine in ("mysql", "duckdb"):
        return doubled(document)
    document = _wide_doubled(document)
    return as_jsonb(document) if column.ddl == "jsonb" else document


def stored_values(column: ColumnShape) -> list[Any]:
    """The values offered to the column: null, every edge value, and for a list type the
    empty list, a list with a null item, each edge alone, and pairs of them."""
    kind = FieldType(column.field_type)
    if kind is FieldType.JSON:
        return _json_values(column.engine)
    element = kind.element
    if element is None:
        return [None, *_scalars(kind, column.engine, column.ddl)]
    items = _scalars(element, column.engine)
    pairs = [[a, b] for a, b in zip(items, items[3:] + items[:3], strict=True)]
    return [None, [], [None], *([item] for item in items), *pairs, [items[0], None, items[-1]]]


def _storable(value: Any, column: ColumnShape) -> Any:
    """A date-time as a column without time zone takes it: its UTC wall time (SQLite and
    MariaDB would keep the wall time of its own offset)."""
    naive = isinstance(column.sqlalchemy, DateTime) and not column.sqlalchemy.timezone
    if naive and isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def records(values: list[Any], slot: Slot) -> list[dict[str, Any]]:
    """The rows: the column holding each value, its peers (a reference's other side) another
    one."""
    rows = []
    for n, value in enumerate(values):
        row = {"id": f"r{n}", slot.field: value}
        for peer in slot.peers:
            if peer != slot.field:
                row[peer] = values[(7 * n + 3) % len(values)]
        rows.append(row)
    return rows


# ---- what is asked -----------------------------------------------------------------------------


def column_slots(field_type: str) -> list[Slot]:
    """The space's own column of a field type (`c_string_list`); for `json`, a path inside
    the JSON column `data` per type a JSON value may have."""
    kind = FieldType(field_type)
    top = [s for s in slots(SPACE) if s.relation is None and s.type is kind]
    if kind is FieldType.JSON:
        return [s for s in slots(SPACE) if s.relation is None and s.placement is Placement.PATH]
    columns = [s for s in top if s.placement is Placement.COLUMN and not s.field.endswith("_2")]
    return columns[:1]


_PROBES: dict[Operand, Any] = {
    Operand.NULL: None,
    Operand.FLAG: True,
    Operand.RELATIVE: {"ago": "P1D"},
    Operand.START: {"startOf": "day"},
    Operand.PERIOD: {"this": "day"},
}


PER_OPERATION = 10**6 if os.environ.get("HYPOTHESIS_PROFILE") == "deep" else 12
"""Edge literals each operation is asked with (every one in the deep run), taken in turn from
the pool so that every edge meets many operations."""


def _literals(kind: FieldType, ddl: str = "") -> tuple[Any, ...]:
    """The edge literals of a scalar type, as JSON operands (NUL included)."""
    if kind is FieldType.DATE:
        return tuple(day.isoformat() for day in _pool(kind))
    if kind is FieldType.DATETIME:
        return tuple(spelt_instant(moment, n % 3) for n, moment in enumerate(_pool(kind)))
    return _pool(kind, ddl)


def operands(slot: Slot, operation: Operation, turn: int, ddl: str = "") -> Iterator[Any]:
    """Edge literals of the field type, alone or in a list beside another; a flag both ways;
    the other kinds of operand once. `turn` says where in the pool to start."""
    pool = _literals(slot.type.element or slot.type, ddl)
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


def filters(column: ColumnShape) -> list[af.Filter]:
    """Every operation of the column's slots with each of its operands, as filters the
    library reads."""
    found = []
    for slot in column_slots(column.field_type):
        for turn, operation in enumerate(operations(slot, SPACE)):
            for operand in operands(slot, operation, turn, column.ddl):
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
_SERVERS = {"postgresql": "pg_url", "mysql": "mysql_url"}
"""The server fixture of each engine that needs one (skipped without its binary, as
everywhere: `tests/servers.py`); SQLite and DuckDB run in process."""
_MARKS = {"postgresql": (pytest.mark.postgres,), "mysql": (pytest.mark.mysql,)}


def _new_engine(name: str, request: pytest.FixtureRequest) -> Engine:
    if name in _SERVERS:
        return create_engine(request.getfixturevalue(_SERVERS[name]))
    # in memory, one connection for the module: the database lives as long as it
    made = create_engine(
        "sqlite://" if name == "sqlite" else "duckdb:///:memory:", poolclass=StaticPool
    )
    if name == "sqlite":
        af.register_sqlite_functions(made)
    return made


@pytest.fixture(scope="module")
def engines(request: pytest.FixtureRequest) -> Iterator[Callable[[str], Engine]]:
    """The engine of each back-end, made on first use."""
    made: dict[str, Engine] = {}

    def engine(name: str) -> Engine:
        if name not in made:
            made[name] = _new_engine(name, request)
            with made[name].begin() as connection:
                for statement in _SETUP.get(name, ()):
                    connection.execute(text(statement))
        return made[name]

    yield engine
    for made_engine in made.values():
        made_engine.dispose()


# ---- loading -----------------------------------------------------------------------------------


def make_table(engine: Engine, column: ColumnShape) -> Table:
    """An empty table with a column of the shape for each field the column's slots name."""
    name = "colshape_" + "".join(ch if ch.isalnum() else "_" for ch in column.ddl.lower())
    fields = [f for s in column_slots(column.field_type) for f in (s.field, *s.peers)]
    columns = [Column(field, column.sqlalchemy) for field in dict.fromkeys(fields)]
    table = Table(name, MetaData(), Column("id", String(16), primary_key=True), *columns)
    with engine.begin() as connection:
        table.drop(connection, checkfirst=True)
        table.create(connection)
    return table


def _insert(engine: Engine, table: Table, column: ColumnShape, rows: list[dict[str, Any]]) -> bool:
    """Whether the engine (or its driver: SQLite's past int64) takes the rows, in a
    transaction of their own (DuckDB has no savepoints)."""
    stored = [{k: _storable(v, column) for k, v in row.items()} for row in rows]
    try:
        with engine.begin() as connection:
            connection.execute(insert(table), stored)
    except (StatementError, OverflowError):
        return False
    return True


def _read(engine: Engine, table: Table, column: ColumnShape) -> list[dict[str, Any]]:
    """The rows as the column gives them back, in id order. Numbers are read by the driver itself
    (SQLAlchemy's `Numeric` would round a double to 10 places); a TINYINT(1)'s 0 and 1 are
    false and true."""
    with engine.connect() as connection:
        if column.field_type == "number":
            quote = engine.dialect.identifier_preparer.quote
            names = ", ".join(quote(c.name) for c in table.columns)
            found = connection.exec_driver_sql(f"SELECT {names} FROM {quote(table.name)}")
        else:
            found = connection.execute(select(table))
        rows = [dict(row._mapping) for row in found]
    if column.ddl == "real":  # a single-precision float, which the driver prints shortest
        rows = [{k: _single(v) for k, v in row.items()} for row in rows]
    if column.field_type == "boolean":
        rows = [{k: bool(v) if isinstance(v, int) else v for k, v in r.items()} for r in rows]
    return sorted(rows, key=lambda row: int(row["id"][1:]))


def _single(value: Any) -> Any:
    """A PostgreSQL `real` as the number it is (0.3 is 0.30000001192092896)."""
    if isinstance(value, float):
        found: float = struct.unpack("f", struct.pack("f", value))[0]
        return found
    return value


def load(engine: Engine, column: ColumnShape) -> tuple[Table, list[dict[str, Any]]]:
    """The table holding the values the column can hold, and its rows as read back (a JSON
    document as the engine compares it): each value is offered alone first, the ones the
    engine refuses left out."""
    table = make_table(engine, column)
    slot = column_slots(column.field_type)[0]
    offered = [{"id": f"v{n}", slot.field: v} for n, v in enumerate(stored_values(column))]
    # All at once when the engine takes them all, which is most shapes: a row's acceptance
    # does not depend on the others.
    if not _insert(engine, table, column, offered):
        for row in offered:
            _insert(engine, table, column, [row])
    held = [row[slot.field] for row in _read(engine, table, column)]
    with engine.begin() as connection:
        connection.execute(delete(table))
    assert _insert(engine, table, column, records(held, slot))
    rows = _read(engine, table, column)
    if column.field_type == "json":
        rows = [{**row, slot.field: as_compared(column, row[slot.field])} for row in rows]
    return table, rows


# ---- asking ------------------------------------------------------------------------------------


def _ask_batch(
    connection: Connection, table: Table, way: str, dialect: str, batch: list[af.Filter]
) -> list[set[str]]:
    """The ids each filter selects, every filter a column of one SELECT."""
    if way == "to_sqlalchemy":
        tests = [f.to_sqlalchemy(table, now=NOW).label(f"t{n}") for n, f in enumerate(batch)]
        rows = connection.execute(select(table.c.id, *tests)).all()
    else:
        quote = connection.dialect.identifier_preparer.quote
        tests_sql = [f"({f.to_sql(dialect, now=NOW)}) AS t{n}" for n, f in enumerate(batch)]
        rows = connection.execute(
            text(f"SELECT id, {', '.join(tests_sql)} FROM {quote(table.name)}")
        ).all()
    return [
        {row[0] for row in rows if row[n + 1] is True or row[n + 1] == 1} for n in range(len(batch))
    ]


def ask(engine: Engine, table: Table, way: str, flts: list[af.Filter]) -> list[set[str] | str]:
    """The ids each filter selects, or the database's error for a filter it failed."""
    answers: list[set[str] | str] = []
    dialect = engine.dialect.name
    for start in range(0, len(flts), BATCH):
        batch = flts[start : start + BATCH]
        try:
            with engine.connect() as connection:
                answers += _ask_batch(connection, table, way, dialect, batch)
            continue
        except StatementError:
            pass
        for flt in batch:  # one by one, to name the filters that fail
            try:
                with engine.connect() as connection:
                    answers += _ask_batch(connection, table, way, dialect, [flt])
            except StatementError as exc:
                answers.append(str(exc.orig).splitlines()[0])
    return answers


def _built(engine: Engine, table: Table, way: str, flt: af.Filter) -> None:
    """The filter's SQL for the engine, as the way builds it (SQLAlchemy's compiled)."""
    if way == "to_sqlalchemy":
        select(table.c.id).where(flt.to_sqlalchemy(table, now=NOW)).compile(dialect=engine.dialect)
    else:
        flt.to_sql(engine.dialect.name, now=NOW)


def _unrefused(engine: Engine, table: Table, way: str, flts: list[af.Filter]) -> list[str]:
    """A line for each filter the engine must refuse by its literal (`wide_engines.refuses`:
    a case-insensitive sigma on MySQL and DuckDB) that is built without a `FilterError`."""
    wrong = []
    for flt in flts:
        try:
            _built(engine, table, way, flt)
        except af.FilterError:
            continue
        wrong.append(f"{flt.to_json()}: built, where the literal is refused")
    return wrong


@dataclass(frozen=True)
class Loaded:
    """A column shape's table on one engine, its rows as read back, the filters the engine
    refuses by their literal, the others, and the oracle's ids for each of those."""

    table: Table
    rows: list[dict[str, Any]]
    refused: list[af.Filter]
    asked: list[af.Filter]
    expected: list[set[str]]


_loaded: dict[tuple[Engine, str], Loaded] = {}


def loaded(engine: Engine, column: ColumnShape) -> Loaded:
    """The shape loaded and judged by the oracle once per engine: both ways of asking (the
    cells `to_sqlalchemy` and `to_sql`) read the same table, rows and filters."""
    key = (engine, column.ddl)
    if key not in _loaded:
        table, rows = load(engine, column)
        name = "mysql" if engine.dialect.name == "mariadb" else engine.dialect.name
        flts = filters(column)
        asked = [f for f in flts if not refuses(name, f, NOW)]
        expected = [{row["id"] for row in rows if flt.matches(row, now=NOW)} for flt in asked]
        refused = [f for f in flts if refuses(name, f, NOW)]
        _loaded[key] = Loaded(table, rows, refused, asked, expected)
    return _loaded[key]


def disagreements(cell: Cell, engine: Engine) -> tuple[int, list[str]]:
    """The number of filters asked, and a line for each answered otherwise than the oracle;
    a filter the engine refuses by its literal must be refused when it is built."""
    column = shape(engine_of(cell), cell.shape)
    held = loaded(engine, column)
    table, rows, flts = held.table, held.rows, held.asked
    wrong = _unrefused(engine, table, way_of(cell), held.refused)
    answers = ask(engine, table, way_of(cell), flts)
    for flt, answer, expected in zip(flts, answers, held.expected, strict=True):
        if answer != expected:
            shown = answer if isinstance(answer, str) else sorted(answer ^ expected)
            wrong.append(f"{flt.to_json()}: {shown}")
    TALLY.note(cell, len(flts), len(rows), len(wrong))
    return len(flts), wrong


def _params(outcome: str) -> list[Any]:
    return [
        pytest.param(c, id=c.id, marks=_MARKS.get(engine_of(c), ()))
        for c in CELLS
        if c.outcome == outcome
    ]


@pytest.mark.parametrize("cell", _params("exact"))
def test_exact_column_types_answer_as_the_oracle(
    cell: Cell, engines: Callable[[str], Engine]
) -> None:
    asked, wrong = disagreements(cell, engines(engine_of(cell)))
    assert asked > 0
    assert not wrong, f"{len(wrong)} of {asked} filters wrong:\n" + "\n".join(wrong[:60])


@pytest.mark.parametrize("cell", _params("refused") or [None])
def test_refused_column_types_are_refused_when_built(cell: Cell | None) -> None:
    if cell is None:
        pytest.skip("no refused column type")
    column = shape(engine_of(cell), cell.shape)
    slot = column_slots(cell.field_type)[0]
    table = Table(
        "refused", MetaData(), Column("id", String), Column(slot.field, column.sqlalchemy)
    )
    for flt in itertools.islice(filters(column), None, None, 7):
        try:
            built = flt.to_sqlalchemy(table, now=NOW)
        except af.FilterError as exc:
            message = str(exc)
        else:  # a filter lowered to a constant (`in: []`) reads no column: nothing to refuse
            assert slot.field not in str(built), flt.to_json()
            continue
        assert cell.shape.split("(")[0].lower() in message.lower(), message
        assert cell.note in message, message
