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

from sqlalchemy import (
    ARRAY,
    JSON,
    Boolean,
    Date,
    DateTime,
    Enum,
    Float,
    Integer,
    Numeric,
    String,
    Uuid,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects.mysql.base import ischema_names as mysql_types
from sqlalchemy.dialects.postgresql import ENUM
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
    "postgresql": {
        "varchar": "character varying",
        "char": "character",
        "timestamptz": "timestamp with time zone",
    },
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
    (Uuid, "string"),
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


ENUM_LABELS = ("b", "a", "ab", "A", "a ", "ß", "SS", "ss", "Σ", "σ", "ς", "İ", "i", "1", "50%")
"""The labels of the `enum` shape, declared in an order that is not the text's: PostgreSQL
orders an enum by declaration, the field by text."""

_MADE: Mapping[tuple[str, str], TypeEngine[Any]] = {
    ("postgresql", "enum"): ENUM(*ENUM_LABELS, name="colshape_labels"),
    ("duckdb", "ENUM"): Enum(*ENUM_LABELS, name="colshape_labels"),
    ("mysql", "ENUM"): mysql.ENUM(
        *(label for label in ENUM_LABELS if label == label.rstrip()), collation="utf8mb4_bin"
    ),
}
"""Shapes no DDL name spells alone: an enum is declared with its labels (MariaDB strips a
label's trailing spaces, so it has none, and compares them in binary to keep `a` and `A`)."""


def shape(engine: str, ddl: str) -> ColumnShape:
    """`ddl` (`varchar(50)[]`, `numeric(12,2)`) read through the engine's type map."""
    made = _MADE.get((engine, ddl))
    if made is not None:
        return ColumnShape(engine, ddl, made, "string")
    array = ddl.endswith("[]")
    name, _, rest = ddl.removesuffix("[]").partition("(")
    arguments = tuple(int(a) for a in rest.rstrip(")").split(",")) if rest else ()
    item = _item(engine, name, arguments)
    kind = _HOLDS.get((engine, ddl)) or next(k for cls, k in _FIELD_TYPES if isinstance(item, cls))
    if array:
        return ColumnShape(engine, ddl, ARRAY(item), f"{kind}[]")
    return ColumnShape(engine, ddl, item, kind)


def type_class(engine: str, name: str) -> type[TypeEngine[Any]] | None:
    """The SQLAlchemy type class the engine's map gives a DDL type name (no arguments), as
    reflection reads it; None where the map has none (reflection reads `NullType`)."""
    types, lower = TYPE_MAPS[engine], name.lower()
    aliases = _ALIASES.get(engine, {})
    keys = (name, lower, lower.upper(), aliases.get(lower, ""))
    return next((types[k] for k in keys if k in types), None)


def _item(engine: str, name: str, arguments: tuple[int, ...]) -> TypeEngine[Any]:
    """The SQLAlchemy type of a DDL name and its arguments, found in the engine's map."""
    lower = name.lower()
    found: Any = type_class(engine, name)  # the DDL arguments its constructor takes
    if found is None:
        raise LookupError(f"{engine} has no type {name} in its SQLAlchemy map")
    if lower == "timestamptz":
        made: TypeEngine[Any] = found(timezone=True)
    elif lower == "uuid":  # read back as the text the field holds
        made = found(as_uuid=False)
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
    ("mysql", "TINYTEXT"): _UNCOLLATED,
    ("mysql", "MEDIUMTEXT"): _UNCOLLATED,
    ("mysql", "LONGTEXT"): _UNCOLLATED,
    ("mysql", "ENUM"): "compared as its label's text (ordered as text, not by declaration)",
    ("postgresql", "real"): "read as `double precision`: compared as the number it holds",
    ("duckdb", "FLOAT"): "read as `DOUBLE`: compared as the number it holds",
    ("postgresql", "citext"): "compared as `text` (case-sensitive, as the field is)",
    ("postgresql", "uuid"): "compared as its text: lower-case, hyphenated",
    ("duckdb", "UUID"): "compared as its text: lower-case, hyphenated",
    ("mysql", "UUID"): "compared as its text: lower-case, hyphenated",
    ("duckdb", "ENUM"): "compared as its label's text (ordered as text, not by declaration)",
    ("postgresql", "enum"): "compared as its label's text (ordered as text, not by declaration)",
    (
        "sqlite",
        "JSON",
    ): "a string holding NUL is read up to its first NUL (SQLite's JSON functions)",
}
"""Notes of exact cells, by (engine, DDL)."""

_BLANK_PADDED = (
    "declare the column VARCHAR(n) or Text, or map the field to the trimmed text: "
    "columns={field: func.rtrim(column)} typed with type_coerce(..., String())"
)

_NATIONAL = "declare the column String (Unicode) or VARCHAR(n)"

_REFUSED: dict[tuple[str, str, str], str] = {
    ("mysql", "NVARCHAR(50)", "to_sqlalchemy"): _NATIONAL,
    ("sqlite", "NVARCHAR(50)", "to_sqlalchemy"): _NATIONAL,
    ("postgresql", "char(5)", "to_sqlalchemy"): _BLANK_PADDED,
    ("mysql", "CHAR(5)", "to_sqlalchemy"): _BLANK_PADDED,
    ("duckdb", "UHUGEINT", "to_sqlalchemy"): "declare the column HUGEINT or DECIMAL(38,0)",
}
"""Refused cells, by (engine, DDL, way): the fix the error suggests."""

SHAPES: dict[str, tuple[str, ...]] = {
    "postgresql": (
        "text",
        "varchar(50)",
        "name",
        '"char"',
        "citext",
        "char(5)",
        "uuid",
        "enum",
        "text[]",
        "varchar(50)[]",
        "citext[]",
        "smallint",
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
        "TINYINT",
        "SMALLINT",
        "MEDIUMINT",
        "INT",
        "BIGINT",
        "DECIMAL(12,2)",
        "NUMERIC(12,2)",
        "DOUBLE",
        "VARCHAR(50)",
        "NVARCHAR(50)",
        "CHAR(5)",
        "TINYTEXT",
        "TEXT",
        "MEDIUMTEXT",
        "LONGTEXT",
        "ENUM",
        "UUID",
        "JSON",
        "DATETIME(6)",
        "DATE",
    ),
    "sqlite": (
        "TEXT",
        "VARCHAR(50)",
        "NVARCHAR(50)",
        "INTEGER",
        "REAL",
        "FLOAT",
        "NUMERIC",
        "DECIMAL(12,2)",
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
        "TEXT",
        "TIMESTAMP",
        "UUID",
        "ENUM",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "UHUGEINT",
        "FLOAT",
    ),
}
"""The column types of each engine, as its DDL spells them."""

ONLY: dict[tuple[str, str], tuple[str, ...]] = {
    ("postgresql", "citext"): ("to_sqlalchemy",),
    ("mysql", "VARCHAR(50)"): ("to_sqlalchemy",),
    ("mysql", "TEXT"): ("to_sqlalchemy",),
    ("mysql", "TINYTEXT"): ("to_sqlalchemy",),
    ("mysql", "MEDIUMTEXT"): ("to_sqlalchemy",),
    ("mysql", "LONGTEXT"): ("to_sqlalchemy",),
    ("postgresql", "real"): ("to_sqlalchemy",),
    ("postgresql", "char(5)"): ("to_sqlalchemy",),
    ("mysql", "CHAR(5)"): ("to_sqlalchemy",),
    ("mysql", "NVARCHAR(50)"): ("to_sqlalchemy",),
    ("sqlite", "NVARCHAR(50)"): ("to_sqlalchemy",),
    ("postgresql", "uuid"): ("to_sqlalchemy",),
    ("postgresql", "enum"): ("to_sqlalchemy",),
    ("mysql", "ENUM"): ("to_sqlalchemy",),
    ("duckdb", "UUID"): ("to_sqlalchemy",),
    ("duckdb", "ENUM"): ("to_sqlalchemy",),
    ("duckdb", "FLOAT"): ("to_sqlalchemy",),
    ("duckdb", "UHUGEINT"): ("to_sqlalchemy",),
    ("mysql", "UUID"): ("to_sqlalchemy",),
}
"""Column types asked through some ways only. `to_sql` text over a `citext` column compares
case-insensitively (its literals are untyped, so `citext`'s operators are chosen); over a
MariaDB text column declaring no collation, `mode: "insensitive"` folds with the database's
default case tables (`utf8mb4_general_ci` misses `ẞ`), where `to_sqlalchemy` sees the
column declares none and folds under Unicode 5.2's; over a PostgreSQL `real` column, an
`in` list of numbers is compared at single precision (0.3 is then the stored `real`), where
`to_sqlalchemy` reads the column as `double precision` (DuckDB's single-precision `FLOAT`
met `= 0.3` and `> 0.1` at single precision: read as `DOUBLE` the same way). A `uuid` or
enum column is compared as its text by `to_sqlalchemy` alone (`to_sql` text knows no column
type to cast), and a blank-padded `char(n)`, a `NATIONAL VARCHAR` (utf8mb3 on MariaDB) and
DuckDB's `UHUGEINT` (a negative literal, cast to it, failed the query) are refused by it
alone. Nothing is declared to `to_sql` to refuse or mend either by, so the cell is left out
rather than shown as exact."""


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
