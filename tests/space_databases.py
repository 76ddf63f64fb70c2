"""The databases the surfaces of the space test (`tests/space_surfaces.py`) store their batches
in, one per session: a plugin of the suite (tests/conftest.py), so every test module asking the
surfaces shares them rather than starting its own."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def space_db_sqlite() -> Any:
    from tests.sql_engines import sqlite_database

    return sqlite_database()


@pytest.fixture(scope="session")
def space_db_duckdb() -> Any:
    from tests.sql_engines import duckdb_database

    return duckdb_database()


@pytest.fixture(scope="session")
def space_db_postgresql(pg_database: Any) -> Any:
    from tests.sql_engines import postgresql_database

    return postgresql_database(pg_database)


@pytest.fixture(scope="session")
def space_db_mysql(mysql_url: str) -> Any:
    from tests.sql_engines import mysql_database

    return mysql_database(mysql_url)


@pytest.fixture(scope="session")
def space_django_sqlite() -> Any:
    pytest.importorskip("django")
    from tests.django_engines import sqlite_store

    return sqlite_store()


@pytest.fixture(scope="session")
def space_django_postgresql(pg_database: Any) -> Any:
    pytest.importorskip("django")
    from tests.django_engines import postgresql_store

    return postgresql_store(pg_database)
