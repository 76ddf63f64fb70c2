"""Prepared statements kept on each pooled connection, bounded by their text
(`db/prepared_cache.py`). SQLite: the statements a request runs every time stay prepared on the
same connection; a connection whose kept texts pass the budget has its cache emptied when it comes
back.
PostgreSQL: short statements planned once are prepared on the server, long ones and the others
never, at most a bound of them a connection; the others are planned for their values at each
run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from audiencefilter.service.db import driver_path, prepared_cache
from audiencefilter.service.db.engine import make_engine

from .conftest import sqlite_settings, url_settings


def test_the_mirror_keeps_the_caches_order_and_size() -> None:
    kept = prepared_cache.Kept(entries=3)
    for statement in ["a" * 10, "b" * 20, "c" * 30, "a" * 10]:
        kept.ran(statement)
    assert list(kept.texts) == ["b" * 20, "c" * 30, "a" * 10]
    kept.ran("d" * 40)  # the least recently used goes, as in pysqlite's cache
    assert list(kept.texts) == ["c" * 30, "a" * 10, "d" * 40]
    assert kept.size == 80


def _connection_of(engine: Any, statement: str) -> Any:
    """The driver's connection a checkout ran `statement` on (held, so that its identity is
    not reused)."""
    with engine.connect() as connection:
        assert connection.execute(text(statement)).scalar() == 1
        return connection.connection.dbapi_connection


def _kept(engine: Any) -> prepared_cache.Kept:
    """The mirror of the cache of the one pooled connection."""
    with engine.connect() as connection:
        kept = connection.info[prepared_cache._KEPT]
        assert isinstance(kept, prepared_cache.Kept)
        return kept


def test_short_statements_stay_kept_and_a_long_one_empties_the_cache(tmp_path: Path) -> None:
    engine = make_engine(sqlite_settings(tmp_path / "kept.db", db_pool_size=1, db_max_overflow=0))
    try:
        first = _connection_of(engine, "SELECT 1")
        assert all(_connection_of(engine, f"SELECT 1 -- {n}") is first for n in range(100))
        assert "SELECT 1 -- 99" in _kept(engine).texts
        ones = ", ".join("1" for _ in range(prepared_cache.TEXT_BUDGET // 3 + 1))
        long_one = f"SELECT 1 WHERE 1 IN ({ones})"
        assert len(long_one) > prepared_cache.TEXT_BUDGET
        assert _connection_of(engine, long_one) is first
        # Back in the pool: its cache emptied by tiny statements, the connection kept (closing
        # the last one open would copy SQLite's whole WAL into the database file).
        kept = _kept(engine)
        assert long_one not in kept.texts and "SELECT 1 -- 99" not in kept.texts
        assert kept.size < 1000 and len(kept.texts) == prepared_cache.CACHED_STATEMENTS
        assert _connection_of(engine, "SELECT 1") is first
    finally:
        engine.dispose()


def test_many_short_statements_past_the_budget_empty_it_too(tmp_path: Path) -> None:
    """Not only one long text: what the cache holds in all (its entries, least recently used
    dropped first)."""
    engine = make_engine(sqlite_settings(tmp_path / "kept.db", db_pool_size=1, db_max_overflow=0))
    try:
        padding = "x" * (prepared_cache.TEXT_BUDGET // 40)
        with engine.connect() as connection:
            for n in range(prepared_cache.CACHED_STATEMENTS):
                connection.execute(text(f"SELECT 1 -- {n} {padding}")).all()
        assert _kept(engine).size < 1000
    finally:
        engine.dispose()


def _prepared(connection: Any) -> list[str]:
    """The statements the server holds prepared for this connection's session."""
    rows = connection.exec_driver_sql("SELECT statement FROM pg_prepared_statements").all()
    return [str(row[0]) for row in rows]


def test_postgresql_prepares_short_statements_planned_once_alone_and_keeps_few(
    pg_database: Callable[[], str],
) -> None:
    settings = url_settings(pg_database(), db_pool_size=1, db_max_overflow=0)
    engine = make_engine(settings)
    once = prepared_cache.planned_once
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("SHOW plan_cache_mode").scalar() == "auto"
            assert connection.execute(once(text("SELECT 1 + :n")), {"n": 1}).scalar() == 2
            assert any("SELECT 1 +" in s for s in _prepared(connection))
            assert connection.execute(text("SELECT 2 + :n"), {"n": 1}).scalar() == 3
            assert not any("SELECT 2 +" in s for s in _prepared(connection))
            ones = ", ".join("1" for _ in range(prepared_cache.PREPARED_TEXT // 3 + 1))
            assert connection.execute(once(text(f"SELECT 1 WHERE 1 IN ({ones})"))).scalar() == 1
            assert not any("1 IN (1, 1" in s for s in _prepared(connection))
            for n in range(prepared_cache.PREPARED_MAX + 20):
                statement = once(text(f"SELECT {n} + :n"))
                assert connection.execute(statement, {"n": 1}).scalar() == n + 1
            connection.exec_driver_sql("SELECT 1")  # the deallocations are sent with the next
            assert len(_prepared(connection)) <= prepared_cache.PREPARED_MAX + 1
            connection.commit()  # (a rollback deallocates them all: psycopg's rule)
        with engine.connect() as connection:  # the pooled connection again: still prepared
            assert any(f"SELECT {prepared_cache.PREPARED_MAX + 19} +" in s
                       for s in _prepared(connection))  # fmt: skip
    finally:
        engine.dispose()


def test_postgresql_plans_a_statement_planned_once_for_a_run_of_the_driver_path(
    pg_database: Callable[[], str],
) -> None:
    """The driver path's runs pass no execution context: the statement's mark, or the run's
    own (`unpacked_rows`, a few), reaches the preparing by `PLANNING_ONCE`; a run
    without either, the same text, runs unnamed."""
    engine = make_engine(url_settings(pg_database(), db_pool_size=1, db_max_overflow=0))
    marked = prepared_cache.planned_once(text("SELECT 10 + :n"))
    plain = text("SELECT 20 + :n")
    try:
        with engine.connect() as connection:
            assert driver_path.execute(connection, marked, {"n": 1}).first() == (11,)
            assert driver_path.execute(connection, plain, {"n": 1}).first() == (21,)
            assert any("SELECT 10 +" in s for s in _prepared(connection))
            assert not any("SELECT 20 +" in s for s in _prepared(connection))
            run = driver_path.execute(connection, plain, {"n": 2}, unpacked_rows=1)
            assert run.first() == (22,)
            assert any("SELECT 20 +" in s for s in _prepared(connection))
    finally:
        engine.dispose()


def test_a_statement_failing_as_it_runs_is_counted_too(tmp_path: Path) -> None:
    """Prepared, then failing (`abs` of the least integer overflows): pysqlite keeps it."""
    engine = make_engine(sqlite_settings(tmp_path / "kept.db", db_pool_size=1, db_max_overflow=0))
    failing = "SELECT abs(-9223372036854775807 - 1) -- " + "x" * 100
    try:
        with engine.connect() as connection, pytest.raises(OperationalError):
            connection.execute(text(failing)).all()
        assert failing in _kept(engine).texts
    finally:
        engine.dispose()


def test_postgresql_executemany_of_a_long_statement_prepares_nothing(
    pg_database: Callable[[], str],
) -> None:
    """psycopg's `executemany` prepares whatever the threshold lets it: after a statement
    planned once set it, a long one run many times must still not be kept, nor a short one
    not planned once."""
    engine = make_engine(url_settings(pg_database(), db_pool_size=1, db_max_overflow=0))
    padding = " " * prepared_cache.PREPARED_TEXT
    once = prepared_cache.planned_once
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("CREATE TEMPORARY TABLE kept (n integer)")
            assert connection.execute(once(text("SELECT 1 + :n")), {"n": 1}).scalar() == 2
            long_update = once(text(f"UPDATE kept SET n = :n {padding}"))
            connection.execute(long_update, [{"n": 1}, {"n": 2}])
            assert not any("UPDATE kept" in s for s in _prepared(connection))
            connection.execute(text("UPDATE kept SET n = :n"), [{"n": 1}, {"n": 2}])
            assert not any("UPDATE kept" in s for s in _prepared(connection))
            connection.execute(once(text("UPDATE kept SET n = :n")), [{"n": 1}, {"n": 2}])
            assert any("UPDATE kept" in s for s in _prepared(connection))
    finally:
        engine.dispose()
