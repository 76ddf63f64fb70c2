"""PostgreSQL's JIT compilation changes how a query runs, never what it answers: every case of the
conformance data, on PostgreSQL, with JIT forced on for every query.

The throw-away cluster of the tests runs with `jit=off` (`tests/servers.py`): its tables hold a
few rows, and the statements the suite sends, many filters to a query, are costed high enough to
be compiled, so compiling was most of their time (a relation shape's cell: 23.6 s with it, 7.1 s
without). Users' servers keep the default, so this file asks the same questions with JIT on for
every query, whatever its cost (`jit_above_cost = 0`), and expects the answers the conformance
data gives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, Select, create_engine, select, text

import audiencefilter as af
from tests.sql_engines import Database, postgresql_database
from tests.test_conformance import CASES, _filter, _now

pytestmark = pytest.mark.postgres

FORCED = "-c jit=on -c jit_above_cost=0"


@pytest.fixture(scope="module")
def shared(pg_database: Callable[[], str]) -> Database:
    return postgresql_database(pg_database)


@pytest.fixture(scope="module")
def compiled(shared: Database) -> Iterator[Engine]:
    """An engine on the same database whose sessions compile every query."""
    engine = create_engine(shared.engine.url, connect_args={"options": FORCED})
    with engine.connect() as connection:
        if not connection.scalar(text("SELECT pg_jit_available()")):
            pytest.skip("this PostgreSQL server has no JIT provider (llvmjit) installed")
    yield engine
    engine.dispose()


def _statement(shared: Database, flt: af.Filter, given: Any, case: Any) -> Select[Any]:
    """The ids `flt` selects from the case's records, stored once in the shared database."""
    table = shared.table_for(given, flt.schema)
    condition = flt.to_sqlalchemy(table, now=_now(case), relations=shared.related.get(table.name))
    return select(table.c.id).where(condition)


def test_the_tests_cluster_compiles_nothing(shared: Database) -> None:
    """The suite's own cluster runs without JIT (`start_postgres_for_tests`); a server given
    by `AUDIENCEFILTER_TEST_PG_URL` keeps its own settings."""
    if os.environ.get("AUDIENCEFILTER_TEST_PG_URL"):
        pytest.skip("the server is the caller's, with its own settings")
    with shared.engine.connect() as connection:
        assert connection.scalar(text("SHOW jit")) == "off"


def test_a_query_is_compiled(shared: Database, compiled: Engine) -> None:
    """The forcing holds: a filter's query reports JIT functions in its plan."""
    given, case = next(c.values for c in CASES if "matches" in c.values[1])
    query = _statement(shared, _filter(case), given, case).compile(compiled)
    with compiled.connect() as connection:
        plan = connection.exec_driver_sql(
            f"EXPLAIN (ANALYZE, FORMAT JSON) {query}", query.params
        ).scalar()
    assert plan is not None and plan[0]["JIT"]["Functions"] > 0, plan


def test_every_conformance_case_answers_alike_with_jit(shared: Database, compiled: Engine) -> None:
    wrong: list[str] = []
    asked = 0
    for param in CASES:
        given, case = param.values
        if "matches" not in case:
            continue
        flt = _filter(case)
        if "postgresql" in case.get("refused", ()):
            continue  # refused when the expression is built: no query reaches the server
        asked += 1
        with compiled.connect() as connection:
            found = set(connection.scalars(_statement(shared, flt, given, case)))
        if found != set(case["matches"]):
            wrong.append(f"{param.id}: {sorted(found)} != {sorted(case['matches'])}")
    assert asked > 500
    assert not wrong, "\n".join(wrong[:10])
