"""Date-times in SQL text select what memory selects on every engine, stored as users store
them: SQLAlchemy `DateTime` columns (text `2025-01-01 00:00:00.000000` on SQLite, `TIMESTAMP`
on PostgreSQL and DuckDB, `DATETIME` on MariaDB). Every operator, literals on and around a
midnight, on the contact and inside a related row, through the SQL WHERE writer, its reader,
and react-querybuilder's own SQL export of our rule (docs/interop.md, "Date-times in SQL
text")."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    insert,
    select,
)
from sqlalchemy.pool import StaticPool

import audiencefilter as af
from audiencefilter.filter import Filter
from audiencefilter.formats import react_querybuilder as rqb
from audiencefilter.formats import sql_where
from tests.interop.node_runner import FormatSql
from tests.servers import create_mysql_database, server_url, start_mariadb

MIDNIGHT = datetime(2025, 1, 1)
STORED = [
    MIDNIGHT - timedelta(microseconds=1),
    MIDNIGHT,
    MIDNIGHT + timedelta(microseconds=1),
    MIDNIGHT + timedelta(seconds=1),
    datetime(2025, 1, 1, 10, 30),
    datetime(2025, 1, 2),
    None,
]
"""Values on, just before and just after the literals below, and a null."""
LITERALS = ["2025-01-01", "2025-01-01T00:00:00.000001Z", "2025-01-01T11:30:00+01:00"]
"""Literals of our filters: a date alone (midnight UTC), a microsecond past it, an offset."""
OPS = ["equals", "not", "gt", "gte", "lt", "lte", "in", "notIn"]


def _conditions() -> list[dict[str, Any]]:
    found = []
    for op in OPS:
        for literal in LITERALS:
            operand: Any = [literal, "2025-01-02"] if op in ("in", "notIn") else literal
            found.append({"createdAt": {op: operand}})
            found.append({"actions": {"some": {"createdAt": {op: operand}}}})
    found.append({"createdAt": {"gte": LITERALS[0], "lt": "2025-01-02"}})
    return found


CONDITIONS = _conditions()


def _tables(metadata: MetaData) -> tuple[Table, Table]:
    contacts = Table(
        "contacts",
        metadata,
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("createdAt", DateTime),
    )
    actions = Table(
        "actions",
        metadata,
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("sub_id", Integer),
        Column("name", String(20)),
        Column("created_at", DateTime),
    )
    return contacts, actions


def _filled(url: str) -> tuple[Engine, list[dict[str, Any]]]:
    """The engine at `url` holding one contact per stored value (each with one action at that
    value), and the records as the engine gives them back (MariaDB's DATETIME keeps seconds)."""
    engine = create_engine(url, poolclass=StaticPool)
    metadata = MetaData()
    contacts, actions = _tables(metadata)
    metadata.create_all(engine)
    rows = [{"id": i, "createdAt": value} for i, value in enumerate(STORED, 1)]
    with engine.begin() as connection:
        connection.execute(insert(contacts), rows)
        connection.execute(
            insert(actions),
            [
                {"id": r["id"], "sub_id": r["id"], "name": "open", "created_at": r["createdAt"]}
                for r in rows
            ],
        )
        kept = connection.execute(select(contacts.c.id, contacts.c.createdAt)).all()
    records = [
        {"id": i, "createdAt": at, "actions": [{"name": "open", "createdAt": at}]} for i, at in kept
    ]
    return engine, records


def _selected(engine: Engine, condition: str) -> set[int]:
    with engine.connect() as connection:
        if engine.dialect.name in ("mysql", "mariadb"):
            connection.exec_driver_sql("SET SESSION sql_mode = 'ANSI_QUOTES'")
        found = connection.exec_driver_sql(f"SELECT id FROM contacts WHERE {condition}")
        return {row[0] for row in found}


@pytest.fixture(scope="module", params=["sqlite", "duckdb", "postgresql", "mariadb"])
def database(
    request: pytest.FixtureRequest,
) -> Iterator[tuple[str, Engine, list[dict[str, Any]]]]:
    name = request.param
    if name == "sqlite":
        url = "sqlite://"
    elif name == "duckdb":
        url = "duckdb:///:memory:"
    elif name == "postgresql":
        url = request.getfixturevalue("pg_database")()
    else:
        request.getfixturevalue("_servers_stopped")
        admin = server_url("mariadb", "AUDIENCEFILTER_TEST_MYSQL_URL", start_mariadb)
        url = create_mysql_database(admin)
    engine, records = _filled(url)
    yield name, engine, records
    engine.dispose()


def _memory(where: dict[str, Any], records: list[dict[str, Any]]) -> set[int]:
    return {r["id"] for r in af.parse(where).select(records)}


def test_written_sql_selects_what_memory_selects(
    database: tuple[str, Engine, list[dict[str, Any]]],
) -> None:
    _, engine, records = database
    for where in CONDITIONS:
        flt = af.parse(where)
        text = sql_where.write(flt.root, flt.schema)
        assert _selected(engine, text) == _memory(where, records), (where, text)
        assert Filter(sql_where.read(text, flt.schema)).to_json() == flt.to_json(), text


READ = [
    "createdAt >= '2025-01-01'",
    "createdAt < '2025-01-01'",
    "createdAt >= '2025-01-01 00:00'",
    "createdAt < '2025-01-01 00:00:00.000001'",
    "createdAt = '2025-01-01 00:00:00.000000'",
    "createdAt <> '2025-01-01 00:00:00.000000'",
    "createdAt > '2025-01-01 00:00:00.000001'",
    "createdAt <= '2025-01-01 10:30:00.000000'",
    "createdAt IN ('2025-01-01 00:00:00.000000', '2025-01-02 00:00:00.000000')",
    "createdAt NOT IN ('2025-01-01 00:00:00.000000')",
    "createdAt BETWEEN '2025-01-01' AND '2025-01-01 10:30:00.000000'",
    "EXISTS (SELECT 1 FROM actions AS a WHERE a.sub_id = contacts.id "
    "AND a.created_at < '2025-01-02')",
]


def test_read_sql_means_what_each_engine_selects(
    database: tuple[str, Engine, list[dict[str, Any]]],
) -> None:
    _, engine, records = database
    for text in READ:
        flt = Filter(sql_where.read(text, af.CONTACT))
        expected = {r["id"] for r in flt.select(records)}
        assert _selected(engine, text.replace("createdAt", '"createdAt"')) == expected, text


@pytest.mark.parametrize(
    "text",
    [
        "createdAt = '2025-01-01'",
        "createdAt > '2025-01-01'",
        "createdAt <= '2025-01-01 10:30'",
        "createdAt IN ('2025-01-01')",
        "createdAt BETWEEN '2025-01-01' AND '2025-01-02'",
        "createdAt >= '2025-01-01T00:00:00Z'",
        "createdAt >= '2025-01-01 00:00:00+00:00'",
        "createdAt < '2025-01-01 01:00:00.000000+01:00'",
        "EXISTS (SELECT 1 FROM actions AS a WHERE a.sub_id = contacts.id "
        "AND a.created_at = '2025-01-01')",
    ],
)
def test_a_literal_engines_read_apart_is_refused(text: str) -> None:
    with pytest.raises(af.FilterError, match="SQLite keeps a date-time as text"):
        sql_where.read(text, af.CONTACT)


# The export leaves createdAt unquoted, which PostgreSQL folds to lower case.
@pytest.mark.parametrize("database", ["sqlite", "duckdb", "mariadb"], indirect=True)
def test_react_querybuilder_export_selects_what_memory_selects(
    database: tuple[str, Engine, list[dict[str, Any]]], format_sql: FormatSql
) -> None:
    _, engine, records = database
    for where in CONDITIONS:
        if "actions" in where:
            continue  # react-querybuilder has no relations
        flt = af.parse(where)
        query = rqb.write(flt.root, flt.schema)
        assert _selected(engine, format_sql(query)) == _memory(where, records), (where, query)
        assert Filter(rqb.read(query, flt.schema)).to_json() == flt.to_json(), query
