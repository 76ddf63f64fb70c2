"""Hostile values stay data: no filter value can leave its literal or its parameter.

Every hostile value goes through every string operator, on every database, in every way
(`to_sqlalchemy`, `to_sql`, `to_sql_params`); the ids selected must be memory's, and the
table must still hold all its rows afterwards. The literal renderers are also checked on their
own (`SELECT <literal>` reads back the value), including under the server settings that change
how literals are read: MySQL's NO_BACKSLASH_ESCAPES and PostgreSQL's
`standard_conforming_strings = off`.

PostgreSQL text cannot hold NUL, so no stored value there has one; a filter value with NUL
still runs everywhere and matches nothing (docs/backends.md).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select, text

import audiencefilter as af
from audiencefilter.backends.sql.dialects import get_dialect
from tests.sql_engines import WAYS, Database, database_params, open_database

HOSTILE = (
    "'",
    "''",
    "\\",
    "\\'",
    "\\\\'",
    "'; DROP TABLE contacts; --",
    '" OR 1=1 --',
    "') OR ('1'='1",
    "--",
    "/*",
    "*/ x",
    ";",
    "\x00",
    "a\x00b",
    "\x00'; --",
    "“quoted”",
    "‘single’",
    "\uff07",
    "\u02bc",
    "%",
    "_",
    "%_%",
    "!",
    "!%",
    "\\%",
    "\\_",
    "*",
    "?",
    "[",
    "[a]",
    "\n",
    "\r\n",
    "a\nb'",
    "\t",
    "\x1a",
    "\x08",
    "\u2028",
    "$1",
    "$$ $tag$",
    ":name",
    "%s",
    "%(x)s",
    "{0}",
    "`",
    '"',
    "\\0",
    "\\x00",
    "0x27",
    "X'27'",
    "E'\\x27'",
    "İ",
    "ẞß",
    "",
    " ",
)


def _storable(value: str, database: Database) -> bool:
    return database.dialect != "postgresql" or "\x00" not in value


def _records(database: Database) -> list[dict[str, Any]]:
    rows = [
        {"id": f"h{i}", "company": v, "city": v, "email": f"x{v}y"}
        for i, v in enumerate(HOSTILE)
        if _storable(v, database)
    ]
    return [*rows, {"id": "plain", "company": "Acme", "city": "Paris", "email": "a@b.c"}]


def _wheres(value: str) -> list[dict[str, Any]]:
    return [
        {"company": value},
        {"company": {"contains": value}},
        {"company": {"startsWith": value}},
        {"company": {"endsWith": value}},
        {"email": {"contains": value}},
        {"company": {"in": [value, "Acme"]}},
        {"company": {"notIn": [value]}},
        {"city": {"equals": value, "mode": "insensitive"}},
        {"city": {"not": {"startsWith": value}, "mode": "insensitive"}},
    ]


@pytest.fixture(scope="module", params=database_params())
def database(request: pytest.FixtureRequest) -> Database:
    return open_database(request.param, request)


@pytest.mark.parametrize("way", WAYS)
def test_hostile_values_come_back_as_data(database: Database, way: str) -> None:
    records = _records(database)
    table = database.table_for(records)
    ask = database.way(way)
    for value in HOSTILE:
        for where in _wheres(value):
            flt = af.parse(where)
            expected = {r["id"] for r in records if flt.matches(r)}
            assert ask(flt, table) == expected, (value, where)
        if _storable(value, database):
            assert ask(af.parse({"company": value}), table) >= {f"h{HOSTILE.index(value)}"}
    with database.engine.connect() as connection:
        assert connection.scalar(select(func.count()).select_from(table)) == len(records)


def _read_back(database: Database, values: tuple[str, ...], *setup: str) -> list[str]:
    dialect = get_dialect(database.dialect)
    with database.engine.connect() as connection:
        for statement in setup:
            connection.execute(text(statement))
        raw = connection.connection.dbapi_connection
        assert raw is not None
        cursor = raw.cursor()
        found = []
        for value in values:
            cursor.execute(f"SELECT {dialect.text(value)}")
            found.append(cursor.fetchone()[0])
        cursor.close()
        connection.rollback()
    return found


def test_literals_read_back_as_written(database: Database) -> None:
    values = tuple(v for v in HOSTILE if _storable(v, database))
    assert _read_back(database, values) == list(values)


@pytest.mark.mysql
def test_mysql_literals_read_back_without_backslash_escapes(request: pytest.FixtureRequest) -> None:
    database = open_database("mysql", request)
    setup = "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES,ANSI_QUOTES')"
    assert _read_back(database, HOSTILE, setup) == list(HOSTILE)


@pytest.mark.postgres
def test_postgresql_literals_read_back_without_standard_strings(
    request: pytest.FixtureRequest,
) -> None:
    database = open_database("postgresql", request)
    values = tuple(v for v in HOSTILE if "\x00" not in v)
    setup = ("SET standard_conforming_strings = off", "SET escape_string_warning = off")
    assert _read_back(database, values, *setup) == list(values)


def test_postgresql_nul_in_a_value_matches_nothing_without_error() -> None:
    flt = af.parse({"email": {"startsWith": "a\x00"}, "company": {"in": ["\x00", "x"]}})
    sql = flt.to_sql("postgresql")
    assert "\x00" not in sql
    assert sql == (
        """CASE WHEN "email" IS NOT NULL THEN FALSE END AND "company" COLLATE "default" IN ('x')"""
    )
    sql, params = flt.to_sql_params("postgresql")
    assert params == ["x"]
