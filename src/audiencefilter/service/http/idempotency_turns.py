"""`Idempotency-Key` for work written in turns: the record follows the turns.

An import is written in turns, each its own transaction (`use_cases/imports.py`), so that no
account holds the write lock for long. Its key's record cannot commit with "the" effect, as
`idempotency.once` does, since there are several; it commits with each of them instead:

- the first turn inserts the record *pending*, with the work's progress (how far it got);
- every later turn checks that the record is still its own and stores the new progress, in its
  transaction, so the record always says exactly which turns committed;
- the last turn stores the answer: the record is completed, and replays as any other.

A request that meets its key's record pending answers 409 with `Retry-After` while the writer
is alive, which the record tells by its last turn: less than `LEASE` ago. A writer that stopped
(a crash, a lost connection to the database) leaves the record pending and older: the next
request with the key takes it over and resumes after the last committed turn, so no row is
applied twice and the final answer is the one a single transaction would give. A writer that
stopped on a refusal (a 404, a 409) releases the record at once, so a retry need not wait. Two
requests that take over at once are serialised on the record's row (`FOR UPDATE`; SQLite's
writers queue anyway), and a writer that finds its record taken over stops with a 409.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel
from sqlalchemy.orm import Session
from starlette.responses import Response

from ... import as_utc
from ..db.engine import Database
from ..db.models import IdempotencyRecord
from . import idempotency
from .errors import ApiError
from .idempotency import PENDING, Claim

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
Progress = dict[str, Any]

LEASE = timedelta(seconds=30)
"""How long after its last turn a pending record belongs to its writer. Longer than a writer
may wait for the lock between two of its turns (the busy timeout, 15 s), so a live writer is
never taken over; a retry after a crash resumes this long after the last turn at worst."""
RETRY_AFTER = 2
"""Seconds a request meeting an import in progress is asked to wait: turns take a fraction of
a second, so the import is likely finished, or its writer known stopped, soon after."""
IN_PROGRESS = (
    "A request with this Idempotency-Key is still in progress; retry after Retry-After seconds "
    "to get its answer"
)
TAKEN_OVER = (
    "Another request with this Idempotency-Key continued this work; send it again to get the answer"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Turned(Protocol[T_co]):
    """What this floor needs of a use case's work in turns (`use_cases/unit.Turned`)."""

    def turn(self, session: Session, progress: Progress | None) -> Progress: ...

    def done(self, progress: Progress) -> bool: ...

    def result(self, progress: Progress) -> T_co: ...


@dataclass
class _Held:
    """A pending record's body: whose writer holds it, turns committed, the last one's instant,
    and the work's progress after it."""

    owner: str
    turns: int
    at: datetime
    progress: Progress

    def text(self) -> str:
        held = {"owner": self.owner, "turns": self.turns, "at": self.at.isoformat()}
        return json.dumps({**held, "progress": self.progress}, separators=(",", ":"))

    @classmethod
    def of(cls, body: str) -> _Held:
        value = json.loads(body)
        at = as_utc(datetime.fromisoformat(value["at"]))
        return cls(value["owner"], value["turns"], at, value["progress"])


def in_turns(
    database: Database, claim: Claim | None, work: Turned[T], answer: Callable[[T], Response]
) -> Response:
    """Runs the turns of `work`, each in a transaction of its own, once per claim; the answer
    of its result, which the last turn stores. Without a claim, just the turns."""
    owner = secrets.token_hex(8)
    progress: Progress | None = None
    turns = 0
    try:
        while progress is None or not work.done(progress):
            with database.transaction() as session:
                record, held = _hold(session, claim, owner, turns, progress is None)
                if isinstance(record, Response):
                    return record
                if held is not None:
                    progress, turns = held.progress, held.turns
                    if work.done(progress):  # taken over after its last turn: answer it
                        return _complete(record, answer(work.result(progress)))
                progress = work.turn(session, progress)
                turns += 1
                if work.done(progress):
                    return _complete(record, answer(work.result(progress)))
                if record is not None:
                    record.body = _Held(owner, turns, idempotency.now(), progress).text()
    except Exception:
        if claim is not None and turns:
            _release(database, claim, owner)
        raise
    raise AssertionError("unreachable: the loop ends with an answer")


def _hold(
    session: Session, claim: Claim | None, owner: str, turns: int, first: bool
) -> tuple[IdempotencyRecord | None | Response, _Held | None]:
    """The record this turn writes to (None without a claim) and, for a first turn that takes
    over a stopped writer's record, what it holds; or the response that ends the request."""
    if claim is None:
        return None, None
    if first:
        return _first(session, claim)
    record = _locked(session, claim)
    held = None if record is None or record.status != PENDING else _Held.of(record.body)
    if held is None or (held.owner, held.turns) != (owner, turns):
        raise ApiError(409, TAKEN_OVER)
    return record, None


def _first(session: Session, claim: Claim) -> tuple[IdempotencyRecord | Response, _Held | None]:
    """A new pending record, the completed answer to replay, or a stopped writer's record."""
    try:
        reserved = idempotency.reserve(session, claim)
    except idempotency.KeyTaken:
        # PostgreSQL: a twin inserted it and committed its first turn meanwhile.
        raise ApiError(409, IN_PROGRESS, headers={"Retry-After": str(RETRY_AFTER)}) from None
    if isinstance(reserved, IdempotencyRecord):
        return reserved, None
    if reserved.status != PENDING:
        return idempotency.replayed(reserved), None
    record = _locked(session, claim)
    assert record is not None  # pending records are deleted only once expired
    return record, _stopped(_Held.of(record.body))


def _stopped(held: _Held) -> _Held:
    """`held`, when its writer has stopped: else a 409 saying when to ask again."""
    waited = idempotency.now() - held.at
    if waited < LEASE:
        retry = min(RETRY_AFTER, math.ceil((LEASE - waited).total_seconds()))
        raise ApiError(409, IN_PROGRESS, headers={"Retry-After": str(max(retry, 1))})
    return held


def _locked(session: Session, claim: Claim) -> IdempotencyRecord | None:
    return session.get(
        IdempotencyRecord,
        (claim.account_id, claim.key),
        with_for_update=True,
        populate_existing=True,
    )


def _complete(record: IdempotencyRecord | None, response: Response) -> Response:
    if record is not None:
        record.status = response.status_code
        record.body = bytes(response.body).decode()
    return response


def _release(database: Database, claim: Claim, owner: str) -> None:
    """After a turn failed: the record, still this writer's, is free for a retry at once. A
    database that fails again leaves it to the lease."""
    with suppress(Exception), database.transaction() as session:
        record = _locked(session, claim)
        if record is not None and record.status == PENDING:
            held = _Held.of(record.body)
            if held.owner == owner:
                held.at = _EPOCH
                record.body = held.text()


def once_in_turns(
    retry: idempotency.Retry, account_id: str, body: BaseModel, answer: Callable[[T], Response]
) -> OnceInTurns[T]:
    """The unit of work in turns (`use_cases/unit.TurnWrites`) of a use case whose answer this
    request replays, as `Retry.once` is for one transaction."""
    return OnceInTurns(retry.database, retry.claim(account_id, body), answer)


@dataclass(frozen=True)
class OnceInTurns(Generic[T]):
    """A use case's work in turns with this request's Idempotency-Key record following them
    (`in_turns`); implements `use_cases/unit.TurnWrites`."""

    database: Database
    claim: Claim | None
    answer: Callable[[T], Response]

    def __call__(self, work: Turned[T]) -> Response:
        return in_turns(self.database, self.claim, work, self.answer)
