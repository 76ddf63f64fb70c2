"""Long `in`/`notIn` lists bind as ONE parameter, so a statement's text does not depend on the
list's length (`backends/sql/dialects/members.py`).

The answers are the conformance suite's (`tests/conformance/long_lists.json` runs on every
engine); here, the shape: the same text for 40 and for 400 values on each dialect, through
`to_sql_params` and through SQLAlchemy, one parameter per list, and the literal form kept
where it must be (short lists, Spark SQL, an integer beyond 64 bits).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Column, Date, DateTime, MetaData, String, Table, create_engine, select
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.engine.interfaces import Dialect as SADialect

import audiencefilter as af
from audiencefilter.backends.sql.dialects.members import LONG_LIST

SCHEMA = af.Schema.from_mapping(
    {"name": "string", "points": "number", "seen": "datetime", "day": "date"}
)
START = datetime(2024, 1, 1, tzinfo=UTC)
DAY = date(2024, 1, 1)


def _fractions(n: int) -> list[float]:
    return [i + 0.5 for i in range(n)]


LISTS: dict[str, Callable[[int], dict[str, Any]]] = {
    "strings": lambda n: {"name": {"in": [f"n{i}" for i in range(n)]}},
    "strings-insensitive": lambda n: {
        "name": {"notIn": [f"N{i}" for i in range(n)], "mode": "insensitive"}
    },
    "integers": lambda n: {"points": {"in": list(range(n))}},
    "fractions": lambda n: {"points": {"notIn": [i + 0.5 for i in range(n)]}},
    "integers-and-fractions": lambda n: {
        "points": {"in": [*range(n), *(i + 0.5 for i in range(n))]}
    },
    "date-times": lambda n: {
        "seen": {"in": [(START + timedelta(hours=i)).isoformat() for i in range(n)]}
    },
    "dates": lambda n: {
        "day": {"notIn": [(date(2024, 1, 1) + timedelta(i)).isoformat() for i in range(n)]}
    },
}
BINDING = ("postgresql", "sqlite", "mysql", "duckdb")


def _params(where: dict[str, Any], dialect: str) -> tuple[str, list[Any]]:
    return af.parse(where, SCHEMA).to_sql_params(dialect)


@pytest.mark.parametrize("kind", sorted(LISTS))
@pytest.mark.parametrize("dialect", BINDING)
def test_params_text_is_the_same_for_40_and_400_values(kind: str, dialect: str) -> None:
    short, short_params = _params(LISTS[kind](40), dialect)
    long, long_params = _params(LISTS[kind](400), dialect)
    assert short == long
    groups = 2 if kind == "integers-and-fractions" else 1
    assert len(short_params) == len(long_params) == groups


@pytest.mark.parametrize("dialect", BINDING)
def test_a_list_of_at_most_the_threshold_keeps_a_placeholder_per_value(dialect: str) -> None:
    sql, params = _params(LISTS["strings"](LONG_LIST), dialect)
    assert len(params) == LONG_LIST
    assert _params(LISTS["strings"](LONG_LIST + 1), dialect)[1] != params


def test_spark_keeps_a_placeholder_per_value() -> None:
    sql, params = _params(LISTS["strings"](40), "spark")
    assert len(params) == 40


def test_an_integer_beyond_64_bits_keeps_the_literal_form() -> None:
    where = {"points": {"in": [*range(40), 2**64]}}
    sql, params = _params(where, "postgresql")
    # the 64-bit integers bound as one list, the wider one as a literal of its own
    assert len(params) == 2 and params[-1] == 2**64 and "ANY" in sql


def test_inlined_text_keeps_literals() -> None:
    sql = af.parse(LISTS["integers"](40), SCHEMA).to_sql("postgresql")
    assert "39" in sql and "ANY" not in sql


def _table() -> Table:
    return Table(
        "contacts",
        MetaData(),
        Column("id", String, primary_key=True),
        Column("name", String),
        Column("points", postgresql.BIGINT),
        Column("seen", DateTime(timezone=True)),
        Column("day", Date),
    )


def _duckdb_dialect() -> SADialect:
    return create_engine("duckdb:///:memory:").dialect


SA_DIALECTS: dict[str, Callable[[], SADialect]] = {
    "postgresql": lambda: postgresql.psycopg.dialect(),
    "sqlite": lambda: sqlite.pysqlite.dialect(),
    "mysql": lambda: mysql.pymysql.dialect(),
    "duckdb": _duckdb_dialect,
}


def _compiled(where: dict[str, Any], dialect: SADialect) -> tuple[str, int]:
    table = _table()
    statement = select(table.c.id).where(af.parse(where, SCHEMA).to_sqlalchemy(table))
    compiled = statement.compile(dialect=dialect)
    return str(compiled), len(compiled.params)


@pytest.mark.parametrize("kind", sorted(LISTS))
@pytest.mark.parametrize("dialect", sorted(SA_DIALECTS))
def test_sqlalchemy_text_is_the_same_for_40_and_400_values(kind: str, dialect: str) -> None:
    sa_dialect = SA_DIALECTS[dialect]()
    short = _compiled(LISTS[kind](40), sa_dialect)
    long = _compiled(LISTS[kind](400), sa_dialect)
    assert short == long
    assert "POSTCOMPILE" not in short[0]


def test_sqlalchemy_reuses_one_compiled_statement_across_lengths() -> None:
    engine = create_engine("sqlite://")
    table = _table()
    table.metadata.create_all(engine)
    cache: dict[Any, Any] = {}
    with engine.connect().execution_options(compiled_cache=cache) as connection:
        for n in (40, 400, 41):
            where = af.parse(LISTS["strings"](n), SCHEMA).to_sqlalchemy(table)
            connection.execute(select(table.c.id).where(where)).all()
    assert len(cache) == 1


def test_sqlalchemy_on_another_dialect_expands_the_one_parameter() -> None:
    from sqlalchemy.dialects import mssql

    sql, _ = _compiled(LISTS["strings"](40), mssql.dialect())
    assert "POSTCOMPILE" in sql


LIST_SCHEMA = af.Schema.from_mapping({"tags": "string[]", "scores": "number[]"})
LIST_TESTS: dict[str, Callable[[int], dict[str, Any]]] = {
    "hasSome": lambda n: {"tags": {"hasSome": [f"t{i}" for i in range(n)]}},
    "hasEvery": lambda n: {"scores": {"hasEvery": list(range(n))}},
}


@pytest.mark.parametrize("kind", sorted(LIST_TESTS))
@pytest.mark.parametrize("dialect", ["postgresql", "duckdb"])
def test_list_tests_of_40_and_400_values_have_one_text(kind: str, dialect: str) -> None:
    def written(n: int) -> tuple[str, list[Any]]:
        return af.parse(LIST_TESTS[kind](n), LIST_SCHEMA).to_sql_params(dialect)

    (short, short_params), (long, long_params) = written(40), written(400)
    assert short == long
    assert len(short_params) == len(long_params) == 1


@pytest.mark.parametrize("dialect", sorted(SA_DIALECTS.keys() & {"postgresql", "duckdb"}))
def test_sqlalchemy_list_tests_bind_one_parameter(dialect: str) -> None:
    table = Table(
        "contacts",
        MetaData(),
        Column("id", String, primary_key=True),
        Column("tags", postgresql.ARRAY(String)),
    )
    where = af.parse(LIST_TESTS["hasSome"](40), LIST_SCHEMA).to_sqlalchemy(table)
    compiled = select(table.c.id).where(where).compile(dialect=SA_DIALECTS[dialect]())
    assert len(compiled.params) == 1
