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

FOLDS_WITHOUT_FINAL_SIGMA = ("mysql", "duckdb")
"""Engines whose `lower()` maps Σ to σ everywhere, where Python writes ς at the end of a word:
a case-insensitive test whose literal holds a sigma is refused there when it is built
(`Dialect.fold_refusal`); before, it answered otherwise than memory."""

SIGMA_WHERES: list[dict[str, Any]] = [
    {"lastName": {"equals": "Οδος", "mode": "insensitive"}},
    {"lastName": {"endsWith": "ΟΣ", "mode": "insensitive"}},
    {"lastName": {"in": ["x", "οδοσ"], "mode": "insensitive"}},
    {"lastName": {"contains": "ς"}},
    {"lastName": {"gte": "οδος", "mode": "insensitive"}},
    {"lastName": {"not": "Οδοσ", "mode": "insensitive"}},
]
"""Case-insensitive tests holding a sigma, each operator kind (`contains` is always so)."""


@pytest.mark.parametrize("where", SIGMA_WHERES, ids=lambda w: next(iter(w["lastName"])))
@pytest.mark.parametrize("name", database_params())
@pytest.mark.parametrize("way", WAYS)
def test_final_sigma_folds_like_python_or_is_refused(
    name: str, way: str, where: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    database: Database = open_database(name, request)
    records = [{"id": "g1", "lastName": "ΟΔΟΣ"}, {"id": "g2", "lastName": "οδοσ"}]
    records += [{"id": "g3", "lastName": "Οδος"}, {"id": "g4", "lastName": "x"}]
    flt = af.parse(where)
    expected = {r["id"] for r in records if flt.matches(r)}
    select = database.way(way)
    if name in FOLDS_WITHOUT_FINAL_SIGMA:
        with pytest.raises(af.FilterError, match="sigma"):
            select(flt, database.table_for(records))
    else:
        assert select(flt, database.table_for(records)) == expected


def test_a_case_insensitive_test_without_a_sigma_still_runs_everywhere() -> None:
    """The refusal is the literal's: one without any sigma is written on every engine."""
    flt = af.parse({"lastName": {"equals": "Οδό", "mode": "insensitive"}})
    for dialect in ("mysql", "duckdb", "postgresql", "sqlite"):
        assert flt.to_sql(dialect)


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
