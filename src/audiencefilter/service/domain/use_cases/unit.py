"""The unit of work: how a use case runs its write transaction, and pages of results.

A use case builds its work, a function of the session, and hands it to a `Writes`, which opens
the write transaction, runs it and commits. `in_transaction` answers the work's result as it
is. The HTTP floor gives its own for the POSTs that take an `Idempotency-Key`
(`http/idempotency.Once`): it inserts the key's record in the same transaction and stores the
answer it shapes from the result, so an effect never exists without its record.

Work too large for one transaction (an import of a thousand rows with their histories) is cut
into turns (`Turned`), each its own transaction: no account holds the write lock (SQLite) or its
list's lock for more than a turn. `InTurns` runs them one after another. Between two turns the
work keeps only its `Progress`, plain JSON values, so that the keyed unit of the HTTP floor
(`http/idempotency_turns.py`) can store it with the request's record in each turn's transaction
and a retry after a crash resumes after the last turn committed, applying no row twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy.orm import Session

from ...db.engine import Database

T = TypeVar("T")
R = TypeVar("R")
T_contra = TypeVar("T_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)
T_co = TypeVar("T_co", covariant=True)

Progress = dict[str, Any]
"""What the turns done so far leave to the next ones, as JSON values (it may be stored)."""


class Writes(Protocol[T_contra, R_co]):
    """Runs `work` in one write transaction that commits when it returns; its answer."""

    def __call__(self, work: Callable[[Session], T_contra]) -> R_co: ...


@dataclass(frozen=True)
class InTransaction:
    """The plain unit of work: the database's write transaction, and the work's own result."""

    database: Database

    def __call__(self, work: Callable[[Session], T]) -> T:
        with self.database.transaction() as session:
            return work(session)


def in_transaction(database: Database) -> InTransaction:
    return InTransaction(database)


class Turned(Protocol[T_co]):
    """Work cut into turns: each `turn` runs in its own write transaction."""

    def turn(self, session: Session, progress: Progress | None) -> Progress:
        """Runs the next turn (the first when `progress` is None); the progress after it."""
        ...

    def done(self, progress: Progress) -> bool:
        """Whether no turn is left after the one that left `progress`."""
        ...

    def result(self, progress: Progress) -> T_co:
        """The work's result once done."""
        ...


class TurnWrites(Protocol[T_contra, R_co]):
    """Runs the turns of `work`, each in a write transaction of its own; its answer."""

    def __call__(self, work: Turned[T_contra]) -> R_co: ...


def _unwatched(_progress: Progress) -> None:
    return None


@dataclass(frozen=True)
class InTurns:
    """The plain unit of work in turns: one transaction per turn, and the work's own result.
    `committed` is told the progress of each turn once its transaction committed, so a caller
    stopped half-way by an error can say what was written."""

    database: Database
    committed: Callable[[Progress], None] = _unwatched

    def __call__(self, work: Turned[T]) -> T:
        progress: Progress | None = None
        while progress is None or not work.done(progress):
            with self.database.transaction() as session:
                progress = work.turn(session, progress)
            self.committed(progress)
        return work.result(progress)


def in_turns(database: Database, committed: Callable[[Progress], None] = _unwatched) -> InTurns:
    return InTurns(database, committed)


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of rows, and how many there are in all."""

    items: Sequence[T]
    total: int
