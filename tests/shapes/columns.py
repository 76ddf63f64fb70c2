"""Column types users bring: their cells for the support matrix (tests/shapes/__init__.py).

Why: the space proves the library on the column types it creates itself (`text[]`, `bigint`,
`timestamptz`); a user's table has the types their ORM chose, `varchar(50)[]` for Django's
`ArrayField(CharField(max_length=50))`, `citext` for a case-insensitive e-mail. Each shape is
spelled as the engine's DDL and read through the engine's own SQLAlchemy type map
(`ischema_names`), which also says the filter field type it holds: a shape the map does not
know, or maps to another field type, fails here rather than being tested as something else.

A cell is one way of asking (`to_sqlalchemy`, where the column's type is known when the
expression is built, or `to_sql` text, where nothing is declared) over one column type
holding one field type; tests/test_column_types.py runs every cell on its real engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ARRAY, JSON, Boolean, Date, DateTime, Float, Integer, Numeric, String
from sqlalchemy.dialects.postgresql.base import ischema_names as postgresql_types
from sqlalchemy.types import TypeEngine

from tests.shapes import Cell

TYPE_MAPS: Mapping[str, Mapping[str, type[TypeEngine[Any]]]] = {
    "postgresql": postgresql_types,
}
"""Each engine's own map of DDL type names to SQLAlchemy types (what reflection reads)."""

TITLES = {"postgresql": "PostgreSQL"}

WAYS = ("to_sqlalchemy", "to_sql")
"""The ways of asking each column type is run through."""

_FIELD_TYPES: tuple[tuple[type[TypeEngine[Any]], str], ...] = (
    (Boolean, "boolean"),
    (String, "string"),
    (Integer, "number"),
    (Numeric, "number"),
    (Float, "number"),
    (DateTime, "datetime"),
    (Date, "date"),
    (JSON, "json"),
)
"""The filter field type a SQLAlchemy type class holds (first match; `Float` is a `Numeric`)."""


@dataclass(frozen=True)
class ColumnShape:
    """A DDL column type, its SQLAlchemy type and the field type it holds."""

    engine: str
    ddl: str
    sqlalchemy: TypeEngine[Any]
    field_type: str


def shape(engine: str, ddl: str) -> ColumnShape:
    """`ddl` (`varchar(50)[]`, `numeric(12,2)`) read through the engine's type map."""
    names = {"varchar": "character varying", "timestamptz": "timestamp with time zone"}
    array = ddl.endswith("[]")
    base = ddl.removesuffix("[]")
    name, _, rest = base.partition("(")
    arguments = tuple(int(a) for a in rest.rstrip(")").split(",")) if rest else ()
    found = TYPE_MAPS[engine][names.get(name, name)]
    options = {"timezone": True} if name == "timestamptz" else {}
    item: TypeEngine[Any] = found(*arguments, **options)
    kind = next(k for cls, k in _FIELD_TYPES if isinstance(item, cls))
    if array:
        return ColumnShape(engine, ddl, ARRAY(item), f"{kind}[]")
    return ColumnShape(engine, ddl, item, kind)


_EXACT: dict[tuple[str, str], str] = {
    ("postgresql", "citext"): "compared as `text` (case-sensitive, as the field is)",
}
"""Notes of exact cells, by (engine, DDL)."""

_REFUSED: dict[tuple[str, str, str], str] = {}
"""Refused cells, by (engine, DDL, way): the fix the error suggests."""

SHAPES: dict[str, tuple[str, ...]] = {
    "postgresql": (
        "text",
        "varchar(50)",
        "citext",
        "text[]",
        "varchar(50)[]",
        "citext[]",
    ),
}
"""The column types of each engine, as its DDL spells them."""

ONLY: dict[tuple[str, str], tuple[str, ...]] = {("postgresql", "citext"): ("to_sqlalchemy",)}
"""Column types asked through some ways only. `to_sql` text over a `citext` column compares
case-insensitively (its literals are untyped, so `citext`'s operators are chosen): nothing is
declared there to refuse it by, so the cell is left out rather than shown as exact."""


def _cells() -> list[Cell]:
    found = []
    for engine, ddls in SHAPES.items():
        for ddl in ddls:
            column = shape(engine, ddl)
            for way in ONLY.get((engine, ddl), WAYS):
                note = _REFUSED.get((engine, ddl, way))
                found.append(
                    Cell(
                        "columns",
                        f"{TITLES[engine]} {way}",
                        ddl,
                        column.field_type,
                        "refused" if note is not None else "exact",
                        note if note is not None else _EXACT.get((engine, ddl), ""),
                    )
                )
    return found


CELLS: list[Cell] = _cells()


def engine_of(cell: Cell) -> str:
    """The engine key of a cell (`postgresql`)."""
    title = cell.backend.rsplit(" ", 1)[0]
    return next(key for key, name in TITLES.items() if name == title)


def way_of(cell: Cell) -> str:
    """The way of asking of a cell (`to_sqlalchemy`, `to_sql`)."""
    return cell.backend.rsplit(" ", 1)[1]
