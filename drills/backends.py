"""Throw-away PostgreSQL and Redis servers for one drill, from the test suite's helpers.

Each drill gets servers of its own, since some drills stop or kill them on purpose; they are
stopped by PID (and their data removed) when the drill ends. A server whose binaries are not
installed raises `Missing`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.servers import (
    Server,
    ServerMissing,
    create_pg_database,
    pg_ctl,
    start_postgres,
    start_redis,
)

from .common import Missing


@dataclass
class Postgres:
    """A cluster and one fresh ICU database on it."""

    server: Server
    database_url: str

    def stop_immediately(self) -> None:
        """Stop the way a crash would: no checkpoint, every client cut off."""
        pg_ctl(self.server, "stop", "-m", "immediate", "-w", "-t", "30")

    def start_again(self) -> None:
        pg_ctl(self.server, "restart", "-w", "-t", "60")


@contextmanager
def postgres() -> Iterator[Postgres]:
    try:
        server = start_postgres()
    except ServerMissing as exc:
        raise Missing(str(exc)) from None
    try:
        yield Postgres(server, create_pg_database(server.url))
    finally:
        server.stop()


@contextmanager
def redis() -> Iterator[Server]:
    try:
        server = start_redis()
    except ServerMissing as exc:
        raise Missing(str(exc)) from None
    try:
        yield server
    finally:
        server.stop()
