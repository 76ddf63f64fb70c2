"""Every type and collation the engines list has a decision of the column gate.

Why: the gate (`backends/sql/column_shapes.py`) decides by SQLAlchemy type class, and the
support matrix proves its exact rules on the column types the cells name; the engines' own
catalogues are the world users' columns come from. Here each catalogue is listed on the real
engine (tests/shapes/catalogues.py says how), each entry made a column and read back as the
SQLAlchemy type reflection gives it (DuckDB's through its dialect's type map, as its
reflection does not run on this SQLAlchemy), and for every scalar field type the gate must
answer it exactly, with a cell of tests/shapes/columns.py (a type) or tests/shapes/settings.py
(a collation) running it on that engine, or refuse it with a reason and a fix, when the
expression is built. An entry with neither fails, naming the engine, the type and where its
rule goes: a new engine version's new type is a failing test here, not a user's wrong answer.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import duckdb
import pytest
from duckdb_engine import Dialect as DuckDBDialect
from sqlalchemy import ARRAY, Column, MetaData, String, Table, Text, create_engine, select
from sqlalchemy import inspect as reflected
from sqlalchemy import text as sql_text
from sqlalchemy import types as sqltypes
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection
from sqlalchemy.pool import StaticPool
from sqlalchemy.types import TypeEngine

import audiencefilter as af
from audiencefilter.backends.sql.column_shapes import verdict
from audiencefilter.backends.sql.dialects.mysql import CHARACTER_SETS
from audiencefilter.language.fields import FieldType
from tests.clickhouse_engines import ClickHouseDatabase
from tests.shapes import catalogues as listed
from tests.shapes.columns import CELLS, TITLES, engine_of, shape, type_class, way_of
from tests.shapes.settings import NONDETERMINISTIC, PG_LOCALE_COLLATIONS, SETTINGS, cell

SCALARS = (
    FieldType.STRING,
    FieldType.NUMBER,
    FieldType.BOOLEAN,
    FieldType.DATE,
    FieldType.DATETIME,
    FieldType.JSON,
)

_WHERE = {
    FieldType.STRING: {"equals": "x"},
    FieldType.NUMBER: {"gt": 3},
    FieldType.BOOLEAN: {"equals": True},
    FieldType.DATE: {"gt": "2024-01-01"},
    FieldType.DATETIME: {"gt": "2024-01-01T00:00:00Z"},
    FieldType.JSON: {"path": ["a"], "equals": 1},
}
"""A condition of each field type on the field `v`."""


@dataclass(frozen=True)
class Entry:
    """One catalogue entry of an engine: its name as listed, the SQLAlchemy type reflection
    reads its column as, and for a collation its name."""

    engine: str
    listed: str
    type: TypeEngine[Any]
    collation: str = ""

    def named(self) -> str:
        what = f"collation {self.collation}" if self.collation else f"type {self.listed}"
        return f"{TITLES.get(self.engine, self.engine)} {what} (read as {self.type!r})"


# ---- what an entry must have -----------------------------------------------------------------


@cache
def _proven_types() -> frozenset[tuple[str, str, type[Any]]]:
    """(engine, field type, SQLAlchemy type class) of every exact `to_sqlalchemy` cell."""
    return frozenset(
        (engine_of(c), c.field_type, type(shape(engine_of(c), c.shape).sqlalchemy))
        for c in CELLS
        if c.outcome == "exact" and way_of(c) == "to_sqlalchemy"
    )


def _type_proven(entry: Entry, kind: FieldType) -> bool:
    """An exact cell on the entry's engine runs a column of the entry's type class."""
    return (entry.engine, kind.value, type(entry.type)) in _proven_types()


def _collation_proven(entry: Entry, defaults: Iterable[str]) -> bool:
    """A column declaring none has the default; another is run by an exact settings cell."""
    name = entry.collation.lower()
    if name in (d.lower() for d in defaults):
        return True
    return any(
        s.engine == entry.engine
        and str(getattr(s.sqlalchemy, "collation", "") or "").lower() == name
        and cell(s, "to_sqlalchemy").outcome == "exact"
        for s in SETTINGS
    )


def problems(entries: Iterable[Entry], defaults: Iterable[str] = ()) -> list[str]:
    """A line for each entry and field type the gate answers exactly with no cell proving
    it, or refuses with no reason, or lets through unrefused when built."""
    found = []
    for entry in entries:
        for kind in SCALARS:
            found += _problem(entry, kind, tuple(defaults))
    return found


def _problem(entry: Entry, kind: FieldType, defaults: tuple[str, ...]) -> list[str]:
    decided = verdict(entry.type, kind)
    if not decided.exact:
        return _refusal_problem(entry, kind)
    proven = _collation_proven(entry, defaults) if entry.collation else _type_proven(entry, kind)
    if proven:
        return []
    where = "tests/shapes/settings.py" if entry.collation else "tests/shapes/columns.py"
    return [
        f"{entry.named()}: the gate answers it exactly as {kind.value}, but no cell on "
        f"{entry.engine} proves it; add a cell to {where}, or a refusal to "
        "backends/sql/column_shapes.py (RULES, or declared_charset for a collation)"
    ]


def _refusal_problem(entry: Entry, kind: FieldType) -> list[str]:
    """The refusal when the expression is built: a `FilterError` naming the column, its
    type and the fix."""
    table = Table("catalogued", MetaData(), Column("id", String), Column("v", entry.type))
    flt = af.parse({"v": _WHERE[kind]}, af.Schema.from_mapping({"v": kind.value}))
    fix = verdict(entry.type, kind).fix
    try:
        flt.to_sqlalchemy(table)
    except af.FilterError as refusal:
        message = str(refusal)
        if "catalogued.v" in message and type(entry.type).__name__ in message and fix in message:
            return []
        return [f"{entry.named()} as {kind.value}: refused without naming it: {message}"]
    return [f"{entry.named()} as {kind.value}: refused by the gate, but built"]


def _failed(engine: str, lines: list[str]) -> str:
    return f"{len(lines)} {engine} catalogue entries undecided:\n" + "\n".join(lines[:40])


# ---- PostgreSQL ------------------------------------------------------------------------------


def _scalars(connection: Connection, sql: str) -> list[str]:
    return [str(value) for value in connection.execute(sql_text(sql)).scalars()]


def _columns(connection: Connection, table: str, kinds: list[str]) -> dict[str, Any]:
    """The SQLAlchemy type of each column of a table made with one column per DDL type,
    `c0`, `c1`, ..., as reflection reads it (an unknown type, with a warning, as NullType)."""
    specs = ", ".join(f"c{n} {kind}" for n, kind in enumerate(kinds))
    connection.execute(sql_text(f"CREATE TABLE {table} ({specs})"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Did not recognize type": read as NullType
        found = reflected(connection).get_columns(table)
    return {column["name"]: column for column in found}


def _pg_entries(connection: Connection) -> Iterator[Entry]:
    for sql in listed.PG_MADE.values():
        connection.execute(sql_text(sql))
    names = _scalars(connection, listed.PG_BASE_TYPES) + _scalars(connection, listed.PG_ARRAYS)
    kinds = [f'pg_catalog."{name}"' for name in names] + list(listed.PG_MADE)
    columns = _columns(connection, "catalogue_types", kinds)
    for n, name in enumerate([*names, *listed.PG_MADE]):
        yield Entry("postgresql", name, columns[f"c{n}"]["type"])


def _pg_collations(connection: Connection) -> Iterator[Entry]:
    connection.execute(
        sql_text(
            f'CREATE COLLATION "{NONDETERMINISTIC}" (provider = icu, '
            "locale = 'und-u-ks-level2', deterministic = false)"
        )
    )
    names = _scalars(connection, listed.PG_COLLATIONS)
    columns = _columns(connection, "catalogue_collations", [f'text COLLATE "{n}"' for n in names])
    for n, name in enumerate(names):
        column = columns[f"c{n}"]
        declared = column.get("collation") or name
        yield Entry("postgresql", name, Text(collation=declared), collation=declared)


@pytest.mark.postgres
def test_every_postgresql_type_and_collation_has_a_decision(
    pg_database: Callable[[], str],
) -> None:
    engine = create_engine(pg_database())
    try:
        with engine.begin() as connection:
            types = list(_pg_entries(connection))
            collations = list(_pg_collations(connection))
    finally:
        engine.dispose()
    assert len(types) > 150 and {e.listed for e in types} >= {"int4", "_text", "jsonb", "xml"}
    assert {"ci", "C"} <= {e.collation for e in collations}
    lines = problems(types) + problems(collations, listed.PG_DEFAULT_COLLATIONS)
    assert not lines, _failed("PostgreSQL", lines)


_PG = postgresql.dialect()
_NAMED = re.compile(r'COLLATE "(default|C|und-x-icu)"')


@pytest.mark.postgres
def test_every_postgresql_locale_collation_is_compared_under_a_collation_the_sql_names(
    pg_database: Callable[[], str],
) -> None:
    """ICU's and libc's deterministic collations are too many for a cell each, so they are
    decided by one rule, held here for every one the server lists: a column declaring it is
    taken when built, and every comparison written for it names its own collation (`default`
    for equality and patterns, `C` for orderings, `und-x-icu` inside a fold), so the column's
    is never read. The settings cells run the rule on locales that fold or order unlike the
    root (Turkish, Swedish, German, Japanese, Greek) against the oracle."""
    engine = create_engine(pg_database())
    try:
        with engine.connect() as connection:
            names = _scalars(connection, listed.PG_LOCALE_COLLATIONS)
    finally:
        engine.dispose()
    assert len(names) > 100, names[:5]
    run = {
        str(getattr(s.sqlalchemy, "collation", "")) for s in SETTINGS if s.engine == "postgresql"
    }
    assert set(PG_LOCALE_COLLATIONS) <= run & set(names)
    unnamed = [name for name in names if not _compared_by_name(name)]
    assert not unnamed, f"comparisons that read the column's collation: {unnamed[:10]}"


def _compared_by_name(collation: str) -> bool:
    table = Table("t", MetaData(), Column("firstName", Text(collation=collation)))
    for where in _STRING_TESTS:
        sql = str(af.parse(where).to_sqlalchemy(table).compile(dialect=_PG))
        if not _NAMED.search(sql):
            return False
    return True


_STRING_TESTS: tuple[dict[str, Any], ...] = (
    {"firstName": "a"},
    {"firstName": {"in": ["a", "b"]}},
    {"firstName": {"gt": "a"}},
    {"firstName": {"startsWith": "a"}},
    {"firstName": {"contains": "a", "mode": "insensitive"}},
    {"firstName": {"lt": "a", "mode": "insensitive"}},
)


# ---- MariaDB ---------------------------------------------------------------------------------


def _mariadb_types(connection: Connection) -> tuple[list[Entry], list[str]]:
    """The documented types read back, and the server's type plugins the list lacks."""
    plugins = [name.upper() for name in _scalars(connection, listed.MARIADB_TYPE_PLUGINS)]
    missing = [f"type plugin {p}: add it to MARIADB_TYPES" for p in plugins]
    missing = [line for line, p in zip(missing, plugins, strict=True) if p not in _MARIADB]
    kinds = list(listed.MARIADB_TYPES)
    columns = _columns(connection, "catalogue_types", kinds)
    entries = [Entry("mysql", k, columns[f"c{n}"]["type"]) for n, k in enumerate(kinds)]
    return entries, missing


_MARIADB = {name.split("(")[0] for name in listed.MARIADB_TYPES}


def _mariadb_text(connection: Connection, sql: str, declared: str) -> list[Entry]:
    """A `TINYTEXT` column per character set or collation the server lists, read back."""
    names = _scalars(connection, sql)
    table = "catalogue_" + declared.split()[-1].lower()
    columns = _columns(connection, table, [f"TINYTEXT {declared} {name}" for name in names])
    found = []
    for n, name in enumerate(names):
        type_ = columns[f"c{n}"]["type"]
        collation = str(getattr(type_, "collation", None) or "")
        found.append(Entry("mysql", name, type_, collation=collation))
    return found


@pytest.mark.mysql
def test_every_mariadb_type_character_set_and_collation_has_a_decision(mysql_url: str) -> None:
    engine = create_engine(mysql_url)
    try:
        with engine.begin() as connection:
            for table in ("types", "set", "collate"):
                connection.execute(sql_text(f"DROP TABLE IF EXISTS catalogue_{table}"))
            types, lines = _mariadb_types(connection)
            charsets = _mariadb_text(connection, listed.MARIADB_CHARSETS, "CHARACTER SET")
            collations = _mariadb_text(connection, listed.MARIADB_COLLATIONS, "COLLATE")
    finally:
        engine.dispose()
    lines += [
        f"character set {e.listed}: add it to CHARACTER_SETS in backends/sql/dialects/mysql.py"
        for e in charsets
        if e.listed not in CHARACTER_SETS
    ]
    assert {"latin1", "utf8mb4", "utf8mb3", "ascii", "binary", "ucs2"} <= {
        e.listed for e in charsets
    }
    lines += problems(types) + problems(charsets, listed.MARIADB_DEFAULT_COLLATIONS)
    lines += problems(collations, listed.MARIADB_DEFAULT_COLLATIONS)
    assert not lines, _failed("MariaDB", lines)


# ---- DuckDB ----------------------------------------------------------------------------------


def _duckdb_type(data_type: str) -> TypeEngine[Any]:
    """A DuckDB column type (`information_schema.columns.data_type`) as duckdb_engine's type
    map reads it: a list as an ARRAY, a name the map lacks as NullType."""
    if data_type.endswith("]"):
        return ARRAY(String())
    found: Any = type_class("duckdb", data_type.split("(")[0])
    if found is None:
        return sqltypes.NullType()
    return found("b", "a") if issubclass(found, sqltypes.Enum) else found()


_DUCKDB_READ = "SELECT data_type FROM information_schema.columns WHERE table_name = 'catalogue_{n}'"


def _duckdb_entries(connection: Connection) -> Iterator[Entry]:
    for n, name in enumerate(_scalars(connection, listed.DUCKDB_TYPES)):
        ddl = listed.DUCKDB_SPELLED.get(name, f'"{name}"')
        try:
            connection.execute(sql_text(f"CREATE TABLE catalogue_{n} (v {ddl})"))
        except Exception:  # the engine's refusal: no column may have it
            assert name in listed.DUCKDB_NO_COLUMN, f"DuckDB refuses a column of {name}"
            connection.rollback()
            continue
        read = _DUCKDB_READ.format(n=n)
        yield Entry("duckdb", name, _duckdb_type(_scalars(connection, read)[0]))


def _duckdb_collations(connection: Connection) -> list[Entry]:
    names = _scalars(connection, listed.DUCKDB_COLLATIONS)
    unknown = [n for n in names if n not in listed.DUCKDB_LOCALE_FREE and not _locale(n)]
    assert not unknown, f"DuckDB collations naming no locale: add to DUCKDB_LOCALE_FREE {unknown}"
    assert set(listed.DUCKDB_LOCALE_FREE) <= set(names)
    return [
        Entry("duckdb", name, String(collation=name), collation=name)
        for name in listed.DUCKDB_LOCALE_FREE
    ]


def _locale(name: str) -> bool:
    return re.fullmatch(r"[a-z]{2,3}(_[a-z]{2})?", name) is not None


def test_every_duckdb_type_and_collation_has_a_decision() -> None:
    engine = create_engine("duckdb:///:memory:", poolclass=StaticPool)
    try:
        with engine.connect() as connection:
            types = list(_duckdb_entries(connection))
            collations = _duckdb_collations(connection)
    finally:
        engine.dispose()
    assert len(types) > 70
    lines = problems(types) + problems(collations)
    assert not lines, _failed("DuckDB", lines)


# ---- SQLite ----------------------------------------------------------------------------------


def test_every_sqlite_affinity_and_collation_has_a_decision() -> None:
    engine = create_engine("sqlite://", poolclass=StaticPool)
    declared = [d for spellings in listed.SQLITE_DECLARED.values() for d in spellings]
    try:
        with engine.begin() as connection:
            columns = _columns(connection, "catalogue_types", [f'"{d}"' for d in declared])
            names = [str(row[1]) for row in connection.execute(sql_text(listed.SQLITE_COLLATIONS))]
    finally:
        engine.dispose()
    types = [Entry("sqlite", d, columns[f"c{n}"]["type"]) for n, d in enumerate(declared)]
    # SQLite's reflection reads no collation: each is the column a user declares
    collations = [Entry("sqlite", n, Text(collation=n), collation=n) for n in names]
    assert {"BINARY", "NOCASE", "RTRIM"} <= set(names)
    lines = problems(types) + problems(collations, listed.SQLITE_DEFAULT_COLLATIONS)
    assert not lines, _failed("SQLite", lines)


# ---- ClickHouse ------------------------------------------------------------------------------


def test_every_clickhouse_type_family_has_a_decision(clickhouse: ClickHouseDatabase) -> None:
    out = clickhouse.run(listed.CLICKHOUSE_FAMILIES)
    families = {line.strip('[]"') for line in out.split("\n") if line}
    exact = listed.clickhouse_exact()
    assert exact <= families, f"cells run families ClickHouse lists not: {exact - families}"
    assert not exact & set(listed.CLICKHOUSE_REFUSED), exact & set(listed.CLICKHOUSE_REFUSED)
    undecided = sorted(families - exact - set(listed.CLICKHOUSE_REFUSED))
    assert not undecided, (
        f"ClickHouse type families with no decision: {undecided}; add each to "
        "CLICKHOUSE_REFUSED in tests/shapes/catalogues.py, or a cell that runs it"
    )


# ---- the known gap: a MariaDB column in another character set ---------------------------------

_LATIN1 = {
    "column": "label VARCHAR(20) CHARACTER SET latin1",
    "table": "label VARCHAR(20)) DEFAULT CHARSET=latin1 COLLATE latin1_swedish_ci -- ",
}
"""A latin1 column declared by itself, and one that takes its table's default set."""


@pytest.mark.mysql
@pytest.mark.parametrize("declared", list(_LATIN1))
def test_a_latin1_column_is_refused_rather_than_answered_wrong(
    mysql_url: str, declared: str
) -> None:
    """`label = "é"` over a latin1 column, reflected: `CAST(label AS BINARY)` is latin1's byte
    E9, the literal utf8mb4's C3 A9, so the row holding `é` was not selected. Now the column
    is refused when the filter is built, naming its character set and the fix."""
    engine = create_engine(mysql_url)
    name = f"latin1_by_{declared}"
    try:
        with engine.begin() as connection:
            connection.execute(sql_text(f"DROP TABLE IF EXISTS {name}"))
            spec = f"id VARCHAR(8) PRIMARY KEY, {_LATIN1[declared]}"
            connection.execute(sql_text(f"CREATE TABLE {name} ({spec})"))
            connection.execute(sql_text(f"INSERT INTO {name} VALUES ('r1', 'é'), ('r2', 'e')"))
            table = Table(name, MetaData(), autoload_with=connection)
        _answers_as_the_oracle_or_refuses(engine, table)
    finally:
        engine.dispose()


def _answers_as_the_oracle_or_refuses(engine: Any, table: Table) -> None:
    flt = af.parse({"label": {"equals": "é"}}, af.Schema.from_mapping({"label": "string"}))
    try:
        where = flt.to_sqlalchemy(table)
    except af.FilterError as refusal:
        assert "latin1" in str(refusal) and "CONVERT(column USING utf8mb4)" in str(refusal)
        return
    with engine.connect() as connection:
        found = set(connection.execute(select(table.c.id).where(where)).scalars())
    assert found == {"r1"}, f"the latin1 column selected {found}, where the oracle selects r1"


def test_every_duckdb_collation_is_compared_under_binary() -> None:
    """DuckDB's ICU locale collations (about 140) are, like PostgreSQL's, one rule held for each
    `pragma_collations()` lists: a column declaring one is taken, and every comparison written
    for it names the binary collation, so the column's never decides; the settings cells run
    `NOCASE`, `NOACCENT`, `NFC` and `ICU_NOACCENT` against the oracle."""
    with duckdb.connect() as connection:
        names = [
            row[0] for row in connection.sql("SELECT collname FROM pragma_collations()").fetchall()
        ]
    assert len(names) > 100 and {"nocase", "de", "tr"} <= set(names)
    unnamed = [name for name in names if not _duckdb_compared_under_binary(name, DuckDBDialect())]
    assert not unnamed, f"comparisons that read the column's collation: {unnamed[:10]}"


def _duckdb_compared_under_binary(collation: str, dialect: Any) -> bool:
    table = Table("t", MetaData(), Column("firstName", String(collation=collation)))
    for where in _STRING_TESTS:
        sql = str(af.parse(where).to_sqlalchemy(table).compile(dialect=dialect))
        if 'COLLATE "binary"' not in sql:
            return False
    return True
