"""What the pool checks before it lends a PostgreSQL connection: its socket, not a round trip.

After a server restart, or a backend ended under the pool (`pg_terminate_backend`), the pooled
connections are dead, and a request that took one would fail. SQLAlchemy's `pool_pre_ping`
prevents that by sending a statement on every lend; that ping was a fifth of the client's CPU
of the key check every request makes (`Database.read_row`: 543 µs with it, 402 µs without,
and 0.21 ms of wall time), and a PATCH lends two connections.

A server that ends a connection says so on its socket: it sends its last error and closes,
and an idle connection's socket has nothing else to read (the service does not `LISTEN`). So
a connection is lent when its socket has nothing to read, a syscall, and a real ping is sent
only to one idle for `PING_AFTER_IDLE_S` or longer, where a connection dropped without a word
(a firewall's idle timeout) would otherwise go unnoticed. A connection that fails either check
is replaced before the request sees it (`DisconnectionError` from the `checkout` event: the pool
opens another). A socket with something unexpected to read costs one reconnection, never a
wrong answer.
"""

from __future__ import annotations

import select
import time
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

PING_AFTER_IDLE_S = 30.0
"""How long a connection may sit in the pool before it is lent only after a ping."""

_RETURNED = "audiencefilter_returned_at"


def check_before_lending(engine: Engine) -> None:
    """Installs the check on `engine`'s pool (in place of `pool_pre_ping`)."""

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info[_RETURNED] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _lend(
        dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: PoolProxiedConnection
    ) -> None:
        idle = time.monotonic() - record.info.get(_RETURNED, time.monotonic())
        if not lendable(engine, dbapi_connection, idle):
            raise DisconnectionError("the server ended this pooled connection")


def _readable(fd: int) -> bool:
    """Whether the socket `fd` has something to read, without waiting. `poll`, not `select`:
    `select` refuses a descriptor numbered past 1,023, and a process holding that many files and
    sockets (a busy service) had every connection judged dead and replaced on each lend."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    readable, _, _ = select.select([fd], [], [], 0)  # where there is no poll (Windows)
    return bool(readable)


def lendable(engine: Engine, dbapi_connection: Any, idle: float) -> bool:
    """Whether a connection idle for `idle` seconds may be lent: not closed, nothing to read
    on its socket, and, past `PING_AFTER_IDLE_S`, answering a ping."""
    if getattr(dbapi_connection, "closed", False) or getattr(dbapi_connection, "broken", False):
        return False
    try:
        if _readable(dbapi_connection.fileno()):
            return False  # the server's last words, or its end of the socket closed
    except (OSError, ValueError):  # a socket already closed
        return False
    if idle < PING_AFTER_IDLE_S:
        return True
    try:
        return bool(engine.dialect.do_ping(dbapi_connection))
    except engine.dialect.loaded_dbapi.Error:
        return False
