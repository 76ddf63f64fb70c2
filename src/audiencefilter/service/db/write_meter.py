"""What each write transaction wrote: its statements that changed rows, and those rows.

The service bounds what one write transaction may do (docs/service-internals-writes.md, "No
account holds another's writes"): a write of one account must never hold the database's write
lock (SQLite) or a list's lock for long, so large work is cut into turns of a bounded size.
Durations vary with the machine and its load; rows do not, so the bound is checked on rows. A
`WriteMeter` listens to an engine and keeps, for every write transaction that ends, how many
`INSERT`, `UPDATE` and `DELETE` statements it ran and how many rows they changed (the driver's
`rowcount`); the tests and the drills read the records, the service itself never needs them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.engine import Connection

from .engine import WRITE_OPTION

WRITING = ("INSERT", "UPDATE", "DELETE")


@dataclass(frozen=True)
class WriteRecord:
    """One write transaction as it ended: statements that changed rows, rows they changed."""

    statements: int
    rows: int
    committed: bool


class WriteMeter:
    """Records every write transaction of `engine` until `close`; thread-safe."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.records: list[WriteRecord] = []
        self._open: dict[int, list[int]] = {}
        self._lock = threading.Lock()
        event.listen(engine, "after_cursor_execute", self._executed)
        event.listen(engine, "commit", self._committed)
        event.listen(engine, "rollback", self._rolled_back)

    def close(self) -> None:
        event.remove(self.engine, "after_cursor_execute", self._executed)
        event.remove(self.engine, "commit", self._committed)
        event.remove(self.engine, "rollback", self._rolled_back)

    def __enter__(self) -> WriteMeter:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def largest(self) -> WriteRecord:
        """The committed write transaction that changed the most rows (an empty one if none)."""
        committed = [record for record in self.records if record.committed]
        return max(committed, key=lambda record: record.rows, default=WriteRecord(0, 0, True))

    def _executed(self, conn: Connection, cursor: Any, statement: str, *_: Any) -> None:
        if not conn.get_execution_options().get(WRITE_OPTION, False):
            return
        if not statement.lstrip().upper().startswith(WRITING):
            return
        with self._lock:
            counts = self._open.setdefault(id(conn.connection), [0, 0])
            counts[0] += 1
            counts[1] += max(int(cursor.rowcount or 0), 0)

    def _end(self, conn: Connection, committed: bool) -> None:
        if not conn.get_execution_options().get(WRITE_OPTION, False):
            return
        with self._lock:
            statements, rows = self._open.pop(id(conn.connection), [0, 0])
            self.records.append(WriteRecord(statements, rows, committed))

    def _committed(self, conn: Connection) -> None:
        self._end(conn, True)

    def _rolled_back(self, conn: Connection) -> None:
        self._end(conn, False)
