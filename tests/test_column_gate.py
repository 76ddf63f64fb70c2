"""The column gate (`backends/sql/column_shapes.py`) and the support matrix say the same.

Why: `to_sqlalchemy` answers exactly only on the column shapes the support matrix proves, and
refuses every other when the expression is built. The gate's table and the matrix's cells are
two lists of one truth, so they are held together here: every cell the matrix runs exact is
exact in the gate (and compared the way the cell proves), every refused cell is refused, and
every rule the gate marks exact is run by a cell. Every type class SQLAlchemy and its dialect
modules define has a rule of its own, so a class a new SQLAlchemy adds fails here until it is
given one, rather than being compared as whatever its ancestor is.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from types import ModuleType
from typing import Any

import pytest
from duckdb_engine import Dialect as DuckDBDialect
from sqlalchemy import (
    ARRAY,
    JSON,
    BigInteger,
    Column,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    func,
    insert,
    literal_column,
    select,
    type_coerce,
)
from sqlalchemy import types as sqltypes
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.pool import StaticPool
from sqlalchemy.types import TypeDecorator, TypeEngine

import audiencefilter as af
from audiencefilter.backends.sql.column_shapes import RULES, verdict
from audiencefilter.backends.sql.sqlite_functions import sqlite_datetime_column
from audiencefilter.language.fields import FieldType
from tests.shapes.columns import CELLS, engine_of, shape, way_of

TYPE_MODULES: tuple[ModuleType, ...] = (sqltypes, postgresql, mysql, sqlite)


def _type_classes() -> Iterator[type[TypeEngine[Any]]]:
    """Every public type class of SQLAlchemy's type module and its dialect modules."""
    for module in TYPE_MODULES:
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, TypeEngine) and name[0] != "_":
                yield value


def _generic(cls: type[TypeEngine[Any]]) -> bool:
    """A class that is a base or a wrapper rather than a column type (`TypeDecorator`,
    `Variant`): the gate reads through it."""
    return cls in (TypeDecorator, sqltypes.Variant) or issubclass(cls, TypeDecorator)


@pytest.mark.parametrize("cls", sorted(set(_type_classes()), key=repr), ids=repr)
def test_every_sqlalchemy_type_class_has_a_rule_of_its_own(cls: type[TypeEngine[Any]]) -> None:
    if _generic(cls):
        pytest.skip("read through: its impl or its variants are gated")
    assert cls in RULES, f"{cls!r} has no rule in backends/sql/column_shapes.py"


_SQLALCHEMY_CELLS = [c for c in CELLS if way_of(c) == "to_sqlalchemy"]


@pytest.mark.parametrize("cell", _SQLALCHEMY_CELLS, ids=lambda c: c.id)
def test_the_gate_says_what_each_cell_proves(cell: Any) -> None:
    column = shape(engine_of(cell), cell.shape)
    found = verdict(column.sqlalchemy, FieldType(cell.field_type))
    assert found.exact is (cell.outcome == "exact"), (cell.id, found)
    if not found.exact:
        assert found.fix == cell.note


def _exact_rules() -> Iterator[tuple[type[Any], FieldType]]:
    for cls, rule in RULES.items():
        for kind in rule.holds:
            yield cls, kind


_DIALECTS = {
    "postgresql": postgresql.dialect(),
    "mysql": mysql.dialect(),
    "sqlite": sqlite.dialect(),
    "duckdb": DuckDBDialect(),
}


def _ddl(type_: TypeEngine[Any], engine: str) -> str | None:
    """The DDL name of a type on an engine, without its arguments; None where the engine's
    dialect writes none for it (a MariaDB type on PostgreSQL, a VARCHAR with no length on
    MariaDB)."""
    try:
        return type_.compile(_DIALECTS[engine]).split("(")[0].upper()
    except Exception:
        return None


def _proven_ddls(kind: FieldType) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {engine: set() for engine in _DIALECTS}
    for cell in _SQLALCHEMY_CELLS:
        if cell.outcome == "exact" and cell.field_type == kind.value:
            engine = engine_of(cell)
            found[engine].add(_ddl(shape(engine, cell.shape).sqlalchemy, engine) or "")
    return found


def _made(cls: type[Any]) -> TypeEngine[Any]:
    return cls("a", "b") if issubclass(cls, sqltypes.Enum) else cls()


@pytest.mark.parametrize(
    ("cls", "kind"), sorted(_exact_rules(), key=repr), ids=lambda v: getattr(v, "__name__", v)
)
def test_every_exact_rule_is_run_by_a_cell(cls: type[Any], kind: FieldType) -> None:
    """A class marked exact for a field type is the class (or an ancestor of the class) of a
    column type some exact cell runs with that field type; or a class the cells do not
    reflect (`UnicodeText`) whose DDL is, on every engine that writes it, a proven cell's."""
    proving = [
        c.id
        for c in _SQLALCHEMY_CELLS
        if c.outcome == "exact"
        and c.field_type == kind.value
        and isinstance(shape(engine_of(c), c.shape).sqlalchemy, cls)
    ]
    if proving:
        return
    proven, made = _proven_ddls(kind), _made(cls)
    written = {engine: _ddl(made, engine) for engine in _DIALECTS}
    written = {engine: ddl for engine, ddl in written.items() if ddl is not None}
    assert written, f"{cls.__name__} is exact for {kind.value} in the gate, but no cell runs it"
    unproven = {e: ddl for e, ddl in written.items() if ddl not in proven[e]}
    assert not unproven, f"{cls.__name__} ({kind.value}) writes unproven DDL {unproven}"


# ---- refusals when built ------------------------------------------------------------------------

SCHEMA = af.Schema.from_mapping({"label": "string", "points": "number", "seen": "datetime"})


def _refusal(column_type: TypeEngine[Any], field: str = "label") -> str:
    table = Table("t", MetaData(), Column("id", String), Column(field, column_type))
    where = {"label": 'label = "x"', "points": "points > 3", "seen": "seen > 2024-01-01"}
    flt = af.parse_text(where[field], SCHEMA)
    with pytest.raises(af.FilterError) as caught:
        flt.to_sqlalchemy(table)
    return str(caught.value)


class Cents(TypeDecorator[Any]):
    """Money stored as integer cents, given and read as units."""

    impl = Integer
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return None if value is None else round(value * 100)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return None if value is None else value / 100


class Epoch(TypeDecorator[Any]):
    """A date-time stored as epoch seconds."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return None if value is None else int(value.timestamp())


class Plain(TypeDecorator[Any]):
    """A decorator that converts nothing (it only changes how changes are detected)."""

    impl = Text
    cache_ok = True

    def compare_values(self, x: Any, y: Any) -> bool:
        return bool(x is y)


@pytest.mark.parametrize(
    ("column_type", "field", "named"),
    [
        (postgresql.INET(), "label", "INET"),
        (postgresql.TSVECTOR(), "label", "TSVECTOR"),
        (postgresql.CHAR(5), "label", "CHAR(5)"),
        (mysql.SET("a", "b"), "label", "SET"),
        (sqltypes.LargeBinary(), "label", "LargeBinary"),
        (sqltypes.Integer(), "label", "INTEGER"),
        (postgresql.ARRAY(Text), "label", "ARRAY"),
        (Cents(), "points", "Cents"),
        (Epoch(), "seen", "Epoch"),
        (String().with_variant(postgresql.CHAR(3), "postgresql"), "label", "CHAR"),
    ],
    ids=lambda v: str(v)[:30],
)
def test_unproven_columns_are_refused_when_built(
    column_type: TypeEngine[Any], field: str, named: str
) -> None:
    message = _refusal(column_type, field)
    assert f"{field}:" in message and "t." + field in message and named in message, message


def test_a_decorator_that_converts_nothing_is_its_impl() -> None:
    table = Table("t", MetaData(), Column("id", String), Column("label", Plain()))
    sql = str(af.parse_text('label = "x"', SCHEMA).to_sqlalchemy(table))
    assert "t.label" in sql


def test_an_untyped_expression_is_refused_and_a_typed_one_taken() -> None:
    flt = af.parse_text('label = "x"', SCHEMA)
    table = Table("t", MetaData(), Column("id", String), Column("first", String))
    with pytest.raises(af.FilterError, match="type_coerce"):
        flt.to_sqlalchemy(table, columns={"label": literal_column("first")})
    typed = type_coerce(literal_column("first"), String())
    assert "first" in str(flt.to_sqlalchemy(table, columns={"label": typed}))
    with pytest.raises(af.FilterError, match="NullType"):  # SQLAlchemy knows no lower()'s type
        flt.to_sqlalchemy(table, columns={"label": func.lower(table.c.first)})
    lowered = func.lower(table.c.first, type_=String())
    assert "lower" in str(flt.to_sqlalchemy(table, columns={"label": lowered}))


# ---- the findings, on SQLite -----------------------------------------------------------------


def test_a_cents_decorator_is_refused_not_answered_in_the_wrong_unit() -> None:
    """`points > 3` over integer cents: the literal 3 is 3 cents unless it goes through the
    decorator; SQLite answered it for a record of 0.5 units (50 cents)."""
    engine = create_engine("sqlite://")
    table = Table("wallet", MetaData(), Column("id", String), Column("points", Cents()))
    table.create(engine)
    with engine.begin() as connection:
        connection.execute(insert(table), [{"id": "half", "points": 0.5}])
    flt = af.parse_text("points > 3", SCHEMA)
    assert not flt.matches({"points": 0.5})
    with pytest.raises(af.FilterError, match="Cents"):
        with engine.connect() as connection:
            connection.execute(select(table.c.id).where(flt.to_sqlalchemy(table))).all()


def test_a_uuid_on_sqlite_is_compared_as_its_canonical_text() -> None:
    engine = create_engine("sqlite://")
    table = Table("ids", MetaData(), Column("id", String), Column("label", sqltypes.Uuid(False)))
    table.create(engine)
    held = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
    with engine.begin() as connection:
        connection.execute(insert(table), [{"id": "u", "label": held}])
    for where in (f'label = "{held}"', 'label starts with "a0eebc99-"', 'label contains "-4ef8-"'):
        flt = af.parse_text(where, SCHEMA)
        with engine.connect() as connection:
            found = connection.execute(select(table.c.id).where(flt.to_sqlalchemy(table))).all()
        assert [row[0] for row in found] == ["u"], where
        assert flt.matches({"label": held})


def test_json_and_arrays_still_hold_lists() -> None:
    schema = af.Schema.of(tags="string[]", when="datetime")
    table = Table(
        "t",
        MetaData(),
        Column("tags", JSON),
        Column("when", sqltypes.DateTime),
        Column("a", ARRAY(Text)),
    )
    assert af.parse_text('tags has "x"', schema).to_sqlalchemy(table) is not None
    assert (
        af.parse_text('tags has "x"', schema).to_sqlalchemy(table, columns={"tags": "a"})
        is not None
    )
    assert af.parse_text("when > 2024-01-01T00:00:00Z", schema).to_sqlalchemy(table) is not None


def test_the_librarys_utc_datetime_column_is_taken_and_answers_as_the_oracle() -> None:
    """`sqlite_datetime_column` converts (an aware value to UTC), yet it is the library's own
    storage for SQLite date-times: the gate takes it as its `impl`, and every instant, whatever
    its offset, answers as `Filter.matches` does."""
    engine = create_engine("sqlite://")
    af.register_sqlite_functions(engine)
    table = Table("seen", MetaData(), Column("id", String), sqlite_datetime_column("seen"))
    table.create(engine)
    zones = [timezone(timedelta(hours=h)) for h in (-9, 0, 2, 14)]
    held = {f"p{i}": datetime(2024, 1, 1, 1, tzinfo=zone) for i, zone in enumerate(zones)}
    with engine.begin() as connection:
        connection.execute(insert(table), [{"id": k, "seen": v} for k, v in held.items()])
    for where in ("seen > 2024-01-01", "seen >= 2023-12-31T12:00:00Z", "seen < 2024-01-01T05:00Z"):
        flt = af.parse_text(where, SCHEMA)
        with engine.connect() as connection:
            found = connection.execute(select(table.c.id).where(flt.to_sqlalchemy(table))).all()
        expected = sorted(k for k, v in held.items() if flt.matches({"seen": v}))
        assert sorted(row[0] for row in found) == expected, where


def test_a_duckdb_float_array_is_compared_as_the_doubles_it_holds() -> None:
    """DuckDB's `FLOAT[]` holds single-precision items: `list_contains` met the literal 0.3 at
    single precision and found the stored 0.30000001192092896, which memory, reading the
    column's items, does not. The gate reads the array as doubles (`CAST(... AS DOUBLE[])`)."""
    engine = create_engine("duckdb:///:memory:", poolclass=StaticPool)
    schema = af.Schema.of(scores="number[]")
    table = Table("t", MetaData(), Column("id", String), Column("scores", ARRAY(sqltypes.Float())))
    table.create(engine)
    with engine.begin() as connection:
        connection.execute(
            insert(table), [{"id": "a", "scores": [0.3, 2.5]}, {"id": "b", "scores": [1.0]}]
        )
        held = {row.id: row.scores for row in connection.execute(select(table))}
    for where in ({"has": 0.3}, {"hasSome": [0.3, 1.0]}, {"equals": [0.3, 2.5]}, {"has": 2.5}):
        flt = af.parse({"scores": where}, schema)
        with engine.connect() as connection:
            found = connection.execute(select(table.c.id).where(flt.to_sqlalchemy(table))).all()
        expected = sorted(k for k, v in held.items() if flt.matches({"scores": v}))
        assert sorted(row[0] for row in found) == expected, where
    engine.dispose()
