"""A database that cannot be reached gives 503 in the error shape, never 500, and recovery needs
no restart: the pool checks connections before lending them.

The full drill (PostgreSQL restarted under load) is `python -m drills --only pg-outage`; these
tests pin the same behaviour in a few seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from audiencefilter.service.ground.keys import generate
from audiencefilter.service.http.errors import is_outage
from tests.servers import free_port

from .conftest import ApiClient, make_tenant, url_settings


def _unreachable_url() -> str:
    return f"postgresql://nobody:secret@127.0.0.1:{free_port()}/nothing"


def test_unreachable_database_is_503_in_the_error_shape(
    app_factory: Callable[..., ApiClient],
) -> None:
    settings = url_settings(
        _unreachable_url(),
        auto_migrate=False,
        db_connect_timeout_s=1,
    )
    api = app_factory(settings, raise_app_exceptions=False)
    response = api.get("/v4/lists", headers={"apiKey": generate("private")})
    assert response.status_code == 503
    body = response.json()
    assert body["error"] == 503
    assert "database is unavailable" in body["message"]
    assert response.headers["Retry-After"] == "1"
    ready = api.get("/health/ready")
    assert ready.status_code == 503
    assert ready.json()["error"] == 503
    assert api.get("/health/live").status_code == 200


def _driver_error(kind: type[DBAPIError], *, invalidated: bool = False) -> DBAPIError:
    return kind(
        "SELECT 1",
        {},
        Exception("server closed the connection"),
        connection_invalidated=invalidated,
    )


@pytest.mark.parametrize(
    ("error", "outage"),
    [
        (_driver_error(OperationalError), True),
        (_driver_error(DBAPIError, invalidated=True), True),
        (PoolTimeoutError("QueuePool limit reached"), True),
        (_driver_error(IntegrityError), False),
        (_driver_error(DBAPIError), False),
        (ValueError("not a database error"), False),
    ],
)
def test_which_database_errors_are_outages(error: Exception, outage: bool) -> None:
    assert is_outage(error) is outage


@pytest.mark.postgres
def test_postgres_connections_killed_under_the_pool_are_replaced(
    app_factory: Callable[..., ApiClient], pg_migrated_database: Callable[[], str]
) -> None:
    url = pg_migrated_database()
    settings = url_settings(url, auto_migrate=True)
    api = app_factory(settings)
    tenant = make_tenant(api)
    lst = tenant.new_list()
    assert tenant.ok("GET", f"/v4/lists/{lst['id']}")["list"]["id"] == lst["id"]

    admin = make_url(url).set(drivername="postgresql")
    database = admin.database
    dsn = admin.set(database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as connection:
        killed = connection.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        ).fetchone()
        assert killed is not None and killed[0] >= 1
        # The backends end a moment after the call returns: wait for them (at most 100
        # polls of 0.05 s), as a restart would have ended them before the next request.
        for _ in range(100):
            left = connection.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (database,),
            ).fetchone()
            if left is not None and left[0] == 0:
                break
            time.sleep(0.05)

    # Every pooled connection is dead; the check before lending replaces them (`db/lending.py`)
    # and the request succeeds.
    assert tenant.ok("GET", f"/v4/lists/{lst['id']}")["list"]["id"] == lst["id"]
    assert api.get("/health/ready").status_code == 200
    with api.app.state.db.engine.connect() as connection:
        assert connection.execute(text("SELECT 1")).scalar() == 1
