"""The unit of work: how a use case runs its write transaction, and pages of results.

A use case builds its work, a function of the session, and hands it to a `Writes`, which opens
the write transaction, runs it and commits. `in_transaction` answers the work's result as it
is. The HTTP floor gives its own for the POSTs that take an `Idempotency-Key`
(`http/idempotency.Once`): it inserts the key's record in the same transaction and stores the
answer it shapes from the result, so an effect never exists without its record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from sqlalchemy.orm import Session

from ...db.engine import Database

T = TypeVar("T")
R = TypeVar("R")
T_contra = TypeVar("T_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)


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


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of rows, and how many there are in all."""

    items: Sequence[T]
    total: int
