"""The one helper that starts `worker` processes for drills and benchmarks (`drills.service`).

Two workers on a fresh database deliver a list's outbox to a local receiver, each event once,
and both stop on SIGTERM when the block ends: on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.webhooks import WORKER_SETTINGS, add_endpoint, prepare
from drills.receiver import Receiver
from drills.service import workers

EVENTS = 12
WAIT = 300.0  # generous: the workers share the machine with everything else


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'workers.db'}"
    pg_database: Callable[[], str] = request.getfixturevalue("pg_database")
    return pg_database()


def test_started_workers_deliver_each_event_once_and_stop_on_sigterm(database_url: str) -> None:
    list_id = prepare(database_url, EVENTS, contacts=3)
    receiver = Receiver()
    try:
        add_endpoint(database_url, list_id, receiver.url)
        with workers(database_url, 2, WORKER_SETTINGS) as processes:
            assert receiver.wait_for(lambda got: len(got) >= EVENTS, WAIT)
            assert [process.poll() for process in processes] == [None, None]
        ids = [item.id for item in receiver.snapshot()]
    finally:
        receiver.close()
    assert len(ids) == len(set(ids)) == EVENTS
    # Stopped by the SIGTERM: gracefully (0), or before its handler was installed.
    assert all(process.returncode in (0, -signal.SIGTERM) for process in processes)
