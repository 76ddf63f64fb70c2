"""The pool's check before it lends a PostgreSQL connection (`db/lending.py`): a live one is
lent without a round trip, one the server ended is replaced, one idle past the limit pinged."""

from __future__ import annotations

import os
import resource
import select
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from audiencefilter.service.db.engine import make_engine
from audiencefilter.service.db.lending import PING_AFTER_IDLE_S, lendable

from .conftest import url_settings

pytestmark = pytest.mark.postgres


@pytest.fixture
def engine(pg_database: Callable[[], str]) -> Iterator[Engine]:
    made = make_engine(url_settings(pg_database()))
    yield made
    made.dispose()


@pytest.fixture
def pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pings the dialect sends, counted (each still sent)."""
    sent: list[int] = []
    ping = engine.dialect.do_ping

    def counted(dbapi_connection: Any) -> bool:
        sent.append(1)
        return ping(dbapi_connection)

    monkeypatch.setattr(engine.dialect, "do_ping", counted)
    return sent


def _backend(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(engine: Engine, pid: int) -> None:
    admin = make_url(str(engine.url.render_as_string(hide_password=False)))
    dsn = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("SELECT pg_terminate_backend(%s)", (pid,))


def _wait_readable(dbapi_connection: Any) -> None:
    """Until the server's last words reach the socket (bounded: 100 polls of 0.1 s)."""
    for _ in range(100):
        if select.select([dbapi_connection.fileno()], [], [], 0.1)[0]:
            return
    raise AssertionError("the ended connection's socket never became readable")


def test_a_live_connection_is_lent_again_without_a_round_trip(
    engine: Engine, pings: list[int]
) -> None:
    first = _backend(engine)
    assert _backend(engine) == first  # the same pooled connection, lent twice
    assert pings == []


def test_a_connection_the_server_ended_is_replaced_before_it_is_lent(
    engine: Engine, pings: list[int]
) -> None:
    raw = engine.raw_connection()
    pooled = raw.driver_connection
    with raw.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        first = cursor.fetchone()[0]
    raw.rollback()
    raw.close()  # back to the pool
    _terminate(engine, first)
    _wait_readable(pooled)  # the server ends it a moment after the call returns
    raw = engine.raw_connection()  # the pooled one, checked on this lend
    try:
        with raw.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            assert cursor.fetchone()[0] != first
    finally:
        raw.close()
    assert pings == []


def test_the_check_refuses_an_ended_connection_and_pings_only_after_a_long_idle(
    engine: Engine, pings: list[int]
) -> None:
    raw = engine.raw_connection()
    try:
        connection = raw.driver_connection
        assert lendable(engine, connection, idle=0.0)
        assert pings == []
        assert lendable(engine, connection, idle=PING_AFTER_IDLE_S)
        assert pings == [1]
        with raw.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        raw.rollback()
        _terminate(engine, pid)
        _wait_readable(connection)
        assert not lendable(engine, connection, idle=0.0)
        assert pings == [1]
    finally:
        raw.invalidate()
        raw.close()


def test_a_connection_returned_long_ago_is_pinged_when_lent(
    engine: Engine, pings: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _backend(engine)
    later = time.monotonic() + PING_AFTER_IDLE_S + 1
    monkeypatch.setattr(time, "monotonic", lambda: later)
    _backend(engine)
    assert pings == [1]


def test_a_live_connection_numbered_past_select_s_limit_is_lent(engine: Engine) -> None:
    """A process with a thousand files open (a busy service) gets sockets numbered past 1,023,
    which `select` refuses: each lend then judged a live connection dead."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1200 if hard == resource.RLIM_INFINITY else min(hard, 1200)
    if wanted < 1100:  # no descriptor past 1,023 here: the case cannot arise
        pytest.skip("this machine allows a process no more than 1,100 files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    held: list[int] = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        raw = engine.raw_connection()
        try:
            connection = raw.driver_connection
            assert connection.fileno() > 1023
            assert lendable(engine, connection, idle=0.0)
        finally:
            raw.close()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
