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
from sqlalchemy.dialects.mysql.base import ischema_names as mysql_types
from sqlalchemy.dialects.postgresql.base import ischema_names as postgresql_types
from sqlalchemy.dialects.sqlite.base import ischema_names as sqlite_types
from sqlalchemy.types import TypeEngine

from tests.shapes import Cell


def _duckdb_types() -> Mapping[str, type[TypeEngine[Any]]]:
    """duckdb_engine's map (PostgreSQL's, with DuckDB's own names), or PostgreSQL's."""
    try:
        from duckdb_engine import Dialect
    except ImportError:  # pragma: no cover - duckdb_engine is a test dependency
        return postgresql_types
    found: Mapping[str, type[TypeEngine[Any]]] = Dialect.ischema_names
    return found


TYPE_MAPS: Mapping[str, Mapping[str, type[TypeEngine[Any]]]] = {
    "postgresql": postgresql_types,
    "mysql": mysql_types,
    "sqlite": sqlite_types,
    "duckdb": _duckdb_types(),
}
"""Each engine's own map of DDL type names to SQLAlchemy types (what reflection reads)."""

TITLES = {"postgresql": "PostgreSQL", "mysql": "MariaDB", "sqlite": "SQLite", "duckdb": "DuckDB"}

_ALIASES: Mapping[str, Mapping[str, str]] = {
    "postgresql": {"varchar": "character varying", "timestamptz": "timestamp with time zone"},
    "duckdb": {"decimal": "numeric", "double": "double precision"},
}
"""DDL names an engine takes that its map spells otherwise (DuckDB's DECIMAL is NUMERIC)."""

_HOLDS: Mapping[tuple[str, str], str] = {("mysql", "TINYINT(1)"): "boolean"}
"""Field types a column holds other than its SQLAlchemy type says: MySQL's BOOLEAN is
TINYINT(1), which its map reads as an integer."""

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
    array = ddl.endswith("[]")
    name, _, rest = ddl.removesuffix("[]").partition("(")
    arguments = tuple(int(a) for a in rest.rstrip(")").split(",")) if rest else ()
    item = _item(engine, name, arguments)
    kind = _HOLDS.get((engine, ddl)) or next(k for cls, k in _FIELD_TYPES if isinstance(item, cls))
    if array:
        return ColumnShape(engine, ddl, ARRAY(item), f"{kind}[]")
    return ColumnShape(engine, ddl, item, kind)


def _item(engine: str, name: str, arguments: tuple[int, ...]) -> TypeEngine[Any]:
    """The SQLAlchemy type of a DDL name and its arguments, found in the engine's map."""
    types, lower = TYPE_MAPS[engine], name.lower()
    aliases = _ALIASES.get(engine, {})
    key = next(k for k in (name, lower, lower.upper(), aliases.get(lower, "")) if k in types)
    found: Any = types[key]  # the DDL arguments its constructor takes
    if lower == "timestamptz":
        made: TypeEngine[Any] = found(timezone=True)
    elif engine == "mysql" and lower == "datetime":  # DATETIME(6): fractional digits
        made = found(fsp=arguments[0]) if arguments else found()
    else:
        made = found(*arguments)
    return made


_UNCOLLATED = (
    '`mode: "insensitive"` folds under `utf8mb4_unicode_520_ci` (Unicode 5.2); declare'
    " `utf8mb4_uca1400_ai_ci` for later letters"
)

_EXACT: dict[tuple[str, str], str] = {
    ("mysql", "VARCHAR(50)"): _UNCOLLATED,
    ("mysql", "TEXT"): _UNCOLLATED,
    ("postgresql", "real"): "read as `double precision`: compared as the number it holds",
    ("postgresql", "citext"): "compared as `text` (case-sensitive, as the field is)",
    (
        "sqlite",
        "JSON",
    ): "a string holding NUL is read up to its first NUL (SQLite's JSON functions)",
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
        "integer",
        "bigint",
        "numeric(12,2)",
        "double precision",
        "real",
        "boolean",
        "timestamp",
        "timestamptz",
        "date",
        "json",
        "jsonb",
    ),
    "mysql": (
        "TINYINT(1)",
        "BIGINT",
        "DECIMAL(12,2)",
        "DOUBLE",
        "VARCHAR(50)",
        "TEXT",
        "JSON",
        "DATETIME(6)",
        "DATE",
    ),
    "sqlite": (
        "TEXT",
        "VARCHAR(50)",
        "INTEGER",
        "REAL",
        "NUMERIC",
        "BOOLEAN",
        "DATETIME",
        "DATE",
        "JSON",
    ),
    "duckdb": (
        "VARCHAR",
        "BIGINT",
        "DECIMAL(18,3)",
        "DOUBLE",
        "BOOLEAN",
        "TIMESTAMPTZ",
        "DATE",
        "JSON",
        "VARCHAR[]",
    ),
}
"""The column types of each engine, as its DDL spells them."""

ONLY: dict[tuple[str, str], tuple[str, ...]] = {
    ("postgresql", "citext"): ("to_sqlalchemy",),
    ("mysql", "VARCHAR(50)"): ("to_sqlalchemy",),
    ("mysql", "TEXT"): ("to_sqlalchemy",),
    ("postgresql", "real"): ("to_sqlalchemy",),
}
"""Column types asked through some ways only. `to_sql` text over a `citext` column compares
case-insensitively (its literals are untyped, so `citext`'s operators are chosen); over a
MariaDB text column declaring no collation, `mode: "insensitive"` folds with the database's
default case tables (`utf8mb4_general_ci` misses `ẞ`), where `to_sqlalchemy` sees the
column declares none and folds under Unicode 5.2's; over a PostgreSQL `real` column, an
`in` list of numbers is compared at single precision (0.3 is then the stored `real`), where
`to_sqlalchemy` reads the column as `double precision`. Nothing is declared to `to_sql` to refuse
or mend either by, so the cell is left out rather than shown as exact."""


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
    """The engine key of a cell (`postgresql`, `mysql`)."""
    title = cell.backend.rsplit(" ", 1)[0]
    return next(key for key, name in TITLES.items() if name == title)


def way_of(cell: Cell) -> str:
    """The way of asking of a cell (`to_sqlalchemy`, `to_sql`)."""
    return cell.backend.rsplit(" ", 1)[1]
