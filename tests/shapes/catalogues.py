"""The engines' own catalogues of column types and collations: what the catalogue test lists.

Why: the column gate (`backends/sql/column_shapes.py`) has a rule per SQLAlchemy type class,
and the support matrix's cells prove the exact ones; but the world users live in is the
engines' types, and a new engine version adds some. tests/test_engine_catalogues.py lists
each catalogue on the real engine (PostgreSQL `pg_type`, MariaDB's types, character sets
and collations, DuckDB `duckdb_types()`, ClickHouse `system.data_type_families`, SQLite's
affinities and `PRAGMA collation_list`), reads every entry as the SQLAlchemy type reflection
gives it, and holds that the gate decides it for every scalar field type: exact, and then a
cell of tests/shapes/columns.py or tests/shapes/settings.py runs it on that engine, or
refused with a reason and a fix. A type a new version lists fails the test, naming the
engine, the type and where its rule goes, before a user meets it as a wrong answer.

This module holds what the engines do not say themselves: how each entry is spelled as a
column's DDL, the types MariaDB has no catalogue of, and ClickHouse's decisions (it has no
SQLAlchemy dialect: `to_sql("clickhouse")` text knows no column type, so a type no cell
proves is refused here, by the documented column types, rather than when built).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from audiencefilter.backends.sql.dialects.mysql import PROVEN_COLLATIONS
from audiencefilter.language.fields import FieldType
from tests.clickhouse_engines import column_type

PG_BASE_TYPES = (
    "SELECT typname FROM pg_type WHERE typtype IN ('b', 'r', 'm') AND typcategory <> 'A'"
    " AND typnamespace = 'pg_catalog'::regnamespace ORDER BY typname"
)
"""PostgreSQL's built-in base types (the fixed-length arrays `name`, `point`, ... included:
their `typelem` is set, but they are no arrays), ranges and multiranges."""

PG_ARRAYS = (
    "SELECT a.typname FROM pg_type a JOIN pg_type e ON e.oid = a.typelem"
    " WHERE a.typcategory = 'A' AND e.typtype IN ('b', 'r', 'm')"
    " AND a.typnamespace = 'pg_catalog'::regnamespace ORDER BY a.typname"
)
"""PostgreSQL's array types of those (`_int4` is `integer[]`); arrays of the system tables'
row types and of pseudo-types are no column types of a user's."""

PG_MADE = {
    "catalogue_enum": "CREATE TYPE catalogue_enum AS ENUM ('b', 'a')",
    "catalogue_domain": "CREATE DOMAIN catalogue_domain AS text",
}
"""An enum and a domain, created in the test database: user-defined types of each kind."""

PG_COLLATIONS = (
    "SELECT collname FROM pg_collation WHERE collprovider = 'd' OR NOT collisdeterministic"
    " OR (collprovider = 'c' AND collcollate IN ('C', 'POSIX')) ORDER BY collname"
)
"""PostgreSQL's built-in collations (`default`, and libc's C locale: `C`, `POSIX`,
`ucs_basic`) and every nondeterministic one (the test creates `ci`, the docs'
case-insensitive ICU collation). The machine's libc locales and ICU's hundreds of
deterministic ones are left out: the dialect compares under the database's default and folds
under `und-x-icu`, whatever a column declares."""

PG_LOCALE_COLLATIONS = (
    "SELECT collname FROM pg_collation WHERE collisdeterministic AND collprovider IN ('c', 'i')"
    " AND coalesce(collcollate, '') NOT IN ('C', 'POSIX') ORDER BY collname"
)
"""The deterministic collations of ICU's and the machine's libc locales (hundreds): decided
by one rule, every comparison naming its own collation, and proven by the locale cells of
tests/shapes/settings.py (`PG_LOCALE_COLLATIONS` there)."""

PG_DEFAULT_COLLATIONS = ("default",)
"""Collations a column declaring none has: proven by the column-type cells."""

MARIADB_TYPES = (
    *("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "INT UNSIGNED", "BIGINT UNSIGNED"),
    *("DECIMAL(12,2)", "FLOAT", "DOUBLE", "REAL", "BIT(3)", "BOOLEAN"),
    *("CHAR(5)", "VARCHAR(50)", "NCHAR(5)", "NATIONAL VARCHAR(50)", "BINARY(5)", "VARBINARY(50)"),
    *("TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT"),
    *("ENUM('b','a')", "SET('b','a')", "DATE", "TIME", "DATETIME(6)", "TIMESTAMP", "YEAR", "JSON"),
    *("GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING"),
    *("MULTIPOLYGON", "GEOMETRYCOLLECTION", "INET4", "INET6", "UUID"),
)
"""MariaDB's data types (it keeps no catalogue of them): the documented list, each created
as a column. Those its type plugins add are listed by the server (`MARIADB_TYPE_PLUGINS`),
and the test fails on one missing here."""

MARIADB_TYPE_PLUGINS = (
    "SELECT PLUGIN_NAME FROM information_schema.PLUGINS WHERE PLUGIN_TYPE = 'DATA TYPE'"
)

MARIADB_CHARSETS = "SELECT CHARACTER_SET_NAME FROM information_schema.CHARACTER_SETS"

MARIADB_COLLATIONS = (
    "SELECT FULL_COLLATION_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY"
    " WHERE CHARACTER_SET_NAME = 'utf8mb4' ORDER BY 1"
)
"""Every utf8mb4 collation (the UCA 14 ones by their full names, `utf8mb4_uca1400_ai_ci`)."""

MARIADB_DEFAULT_COLLATIONS = ("utf8mb4_unicode_ci",)
"""The test database's own (tests/servers.py): a column declaring none has it."""

DUCKDB_TYPES = (
    "SELECT DISTINCT type_name FROM duckdb_types() WHERE database_name = 'system'"
    " ORDER BY type_name"
)

DUCKDB_SPELLED: Mapping[str, str] = {
    "array": "VARCHAR[2]",
    "list": "VARCHAR[]",
    "struct": "STRUCT(a INTEGER)",
    "row": "ROW(a INTEGER)",
    "map": "MAP(VARCHAR, INTEGER)",
    "union": "UNION(a INTEGER)",
    "enum": "ENUM('b', 'a')",
}
"""DuckDB types that take arguments, as a column declares them (any other is its name)."""

DUCKDB_NO_COLUMN = ("type",)
"""DuckDB types no column may have (the engine refuses the table; the test holds it does)."""

DUCKDB_COLLATIONS = "SELECT collname FROM pragma_collations() ORDER BY collname"

DUCKDB_LOCALE_FREE = ("nocase", "noaccent", "nfc", "icu_noaccent")
"""DuckDB's collations that name no ICU locale, each run by a settings cell; the ICU locales
(`de`, `tr`, ...) are compared as binary by the dialect whatever a column declares, and are
left out of the catalogue test (not yet a cell each)."""

SQLITE_DECLARED: Mapping[str, tuple[str, ...]] = {
    "INTEGER": ("INTEGER", "UNSIGNED BIG INT", "MEDIUMINT"),
    "TEXT": ("TEXT", "CLOB", "NATIVE CHARACTER(70)", "VARCHAR(50)"),
    "BLOB": ("BLOB", ""),
    "REAL": ("REAL", "DOUBLE PRECISION", "FLOATING"),
    "NUMERIC": ("NUMERIC", "DECIMAL(10,5)", "BOOLEAN", "DATE", "DATETIME", "JSON", "STRING"),
}
"""SQLite's five affinities, each by declared types its rules give it (sqlite.org/datatype3:
`INT` anywhere is INTEGER, `CHAR`/`CLOB`/`TEXT` TEXT, `BLOB` or nothing BLOB,
`REAL`/`FLOA`/`DOUB` REAL, anything else NUMERIC: `STRING` is a number column)."""

SQLITE_COLLATIONS = "PRAGMA collation_list"

SQLITE_DEFAULT_COLLATIONS = ("BINARY",)

CLICKHOUSE_FAMILIES = "SELECT name FROM system.data_type_families WHERE alias_to = ''"

_NO_CELL = "no cell runs the ClickHouse SQL over it"
_INTEGER = f"an integer other than Int64: {_NO_CELL}"
_NO_FIELD = "it holds values no field type compares"
_TIME = "a time of day or an interval is no field type"
_GEOMETRY = "a geometry holds no field type"
_UNITS = ("Day", "Hour", "Microsecond", "Millisecond", "Minute", "Month", "Nanosecond")
_INTERVALS = tuple(f"Interval{unit}" for unit in (*_UNITS, "Quarter", "Second", "Week", "Year"))

CLICKHOUSE_REFUSED: Mapping[str, str] = {
    **dict.fromkeys(("Int8", "Int16", "Int32", "Int128", "Int256"), _INTEGER),
    **dict.fromkeys(("UInt8", "UInt16", "UInt32", "UInt64", "UInt128", "UInt256"), _INTEGER),
    "Float32": "single precision: literals are compared rounded to it",
    "BFloat16": "16-bit floats: literals are compared rounded to them",
    **dict.fromkeys(("Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256"), _NO_CELL),
    **dict.fromkeys(("Date", "DateTime", "DateTime32"), f"{_NO_CELL} (Date32, DateTime64 are)"),
    **dict.fromkeys(("Time", "Time64", *_INTERVALS), _TIME),
    "FixedString": "a FixedString(n) pads with NUL bytes, which the text then holds",
    **dict.fromkeys(("Enum", "Enum8", "Enum16"), "an enum orders by its numbers, not its text"),
    "LowCardinality": f"a dictionary-encoded column: {_NO_CELL}",
    **dict.fromkeys(("UUID", "IPv4", "IPv6"), f"{_NO_FIELD}: {_NO_CELL}"),
    **dict.fromkeys(("Array", "Map", "Tuple", "Nested"), "no nullable list: a list is JSON text"),
    **dict.fromkeys(("JSON", "Dynamic", "Variant"), f"JSON fields are JSON text: {_NO_CELL}"),
    **dict.fromkeys(("AggregateFunction", "SimpleAggregateFunction", "QBit"), _NO_FIELD),
    "Nothing": "it holds nothing but NULL",
    **dict.fromkeys(("Geometry", "Point", "Ring", "LineString", "MultiLineString"), _GEOMETRY),
    **dict.fromkeys(("Polygon", "MultiPolygon", "MultiPoint"), _GEOMETRY),
}
"""The ClickHouse type families no cell proves, and why: `to_sql("clickhouse")` text knows no
column type, so none is refused when built; docs/backends-clickhouse.md's table names the
column of each field type. The exact ones are the columns the ClickHouse cells run
(`tests/clickhouse_engines.py`, `tests/shapes/values.py`), read by the test."""

CLICKHOUSE_FIX = (
    "declare the column as docs/backends-clickhouse.md's table says (Nullable(String), "
    "Nullable(Int64) or Nullable(Float64), Nullable(Bool), Nullable(DateTime64(6, 'UTC')), "
    "Nullable(Date32)), or query a view that casts to it"
)


def _families(column: str) -> set[str]:
    """The type families a ClickHouse column type names (`Nullable(DateTime64(6, 'UTC'))`)."""
    return set(re.findall(r"([A-Za-z][A-Za-z0-9]*)\(?", re.sub(r"'[^']*'", "", column)))


def clickhouse_exact() -> set[str]:
    """The families of the columns the ClickHouse cells run: the conformance's contacts table
    (one column per field type) and the number values' cells."""
    from tests.shapes import values  # the cells' module, which the page renders too

    kinds = [column_type(kind) for kind in FieldType]
    kinds += [c.shape for c in values.CELLS if c.backend == "ClickHouse" and c.outcome == "exact"]
    return set().union(*(_families(kind) for kind in kinds))


def render() -> list[str]:
    """The support page's section on the engines' catalogues: what the catalogue test holds,
    MariaDB's refusals by character set and collation, and ClickHouse's type families."""
    proven = ", ".join(f"`{name}`" for name in sorted(PROVEN_COLLATIONS))
    out = [
        "## Engine catalogues",
        "",
        "tests/test_engine_catalogues.py lists every type and collation the engines have",
        "(PostgreSQL `pg_type` and its built-in and nondeterministic collations; MariaDB's",
        "types, character sets and utf8mb4 collations; DuckDB `duckdb_types()` and its",
        "collations naming no locale; SQLite's affinities and `PRAGMA collation_list`) and",
        "holds each to the cells above: a column of it that `to_sqlalchemy` answers exactly is",
        "run by a cell on that engine, every other is refused when the expression is built.",
        "On MariaDB a string column in a character set other than utf8mb4 (declared, or its",
        "table's default) is refused, and so is one declaring a utf8mb4 collation but",
        f"{proven}.",
        "",
        "### ClickHouse type families",
        "",
        '`to_sql("clickhouse")` text knows no column type, so nothing is refused when built:',
        "the columns it answers exactly are of the families marked exact (each `Nullable`);",
        f"the others are **unsupported**: {CLICKHOUSE_FIX}.",
        "",
        "| family | outcome | why |",
        "|---|---|---|",
    ]
    out += [f"| `{name}` | exact | |" for name in sorted(clickhouse_exact())]
    out += [f"| `{n}` | unsupported | {why} |" for n, why in CLICKHOUSE_REFUSED.items()]
    return [*out, ""]
