"""The semantic differences docs/backends.md admits, each shown on a real engine.

Each test asserts agreement with memory and is marked xfail (strict) where the difference is
known, so that a difference that disappears (a newer engine, a better rendering) is noticed and
the documentation updated.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Column, MetaData, String, Table, create_engine, select
from sqlalchemy.pool import StaticPool

import audiencefilter as af
from tests.sql_engines import WAYS, Database, database_params, open_database

FINAL_SIGMA_REASON = "lower() maps Σ to σ everywhere; Python writes ς at the end of a word"


def _final_sigma_params() -> list[Any]:
    params = []
    for param in database_params():
        name = param.values[0]
        marks = list(param.marks)
        if name in ("mysql", "duckdb"):
            marks.append(pytest.mark.xfail(strict=True, reason=FINAL_SIGMA_REASON))
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.mark.parametrize("name", _final_sigma_params())
@pytest.mark.parametrize("way", WAYS)
def test_final_sigma_folds_like_python(name: str, way: str, request: pytest.FixtureRequest) -> None:
    database: Database = open_database(name, request)
    records = [{"id": "g1", "lastName": "ΟΔΟΣ"}, {"id": "g2", "lastName": "οδοσ"}]
    flt = af.parse({"lastName": {"equals": "Οδος", "mode": "insensitive"}})
    assert {r["id"] for r in records if flt.matches(r)} == {"g1"}
    assert database.way(way)(flt, database.table_for(records)) == {"g1"}


@pytest.mark.xfail(strict=True, reason="SQLite's own lower() folds ASCII only")
def test_sqlite_without_the_unicode_lower_helper() -> None:
    table = Table("people", MetaData(), Column("id", String), Column("firstName", String))
    engine = create_engine("sqlite://", poolclass=StaticPool)
    try:
        table.metadata.create_all(engine)
        with engine.begin() as connection:
            connection.execute(table.insert(), [{"id": "p1", "firstName": "ÉLODIE"}])
            flt = af.parse({"firstName": {"contains": "élo"}})
            found = connection.scalars(select(table.c.id).where(flt.to_sqlalchemy(table))).all()
    finally:
        engine.dispose()
    assert found == ["p1"]


@pytest.mark.mysql
def test_mysql_column_with_the_server_default_collation(mysql_url: str) -> None:
    table = Table(
        "af_default_collation", MetaData(), Column("id", String(8)), Column("v", String(64))
    )
    engine = create_engine(mysql_url)
    try:
        with engine.begin() as connection:
            table.drop(connection, checkfirst=True)
            table.create(connection)
            connection.execute(table.insert(), [{"id": "m1", "v": "GROẞ"}])
            flt = af.parse(
                {"v": {"equals": "groß", "mode": "insensitive"}}, af.Schema.of(v="string")
            )
            found = connection.scalars(select(table.c.id).where(flt.to_sqlalchemy(table))).all()
            table.drop(connection)
    finally:
        engine.dispose()
    assert found == ["m1"]
