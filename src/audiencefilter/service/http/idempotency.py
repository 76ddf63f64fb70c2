"""`Idempotency-Key` on the POSTs that create or change something: a retry gets the first answer.

A client that lost the answer to a POST (a timeout, a dropped connection, a 503) cannot tell
whether it took effect. Sent again with the same key and the same request, it gets the first
answer back, byte for byte, with `Idempotent-Replayed: true`, and nothing is created twice. The
same key with another request is refused with a 422, as the IETF draft
(draft-ietf-httpapi-idempotency-key-header) says: reusing a key for something else is a client
bug that replaying would hide.

Exactness comes from the transaction. The record of a key is inserted at the start of the very
transaction that performs the effect (the use case's: it runs its work through the `Once` a route
gives it, `use_cases/unit.Writes`), and filled in with the answer before it commits: an effect never
exists without its record, nor a record without its effect. The early insert is also the lock: on
SQLite every write transaction is `BEGIN IMMEDIATE`, so requests are serialized anyway; on
PostgreSQL a second request with the same key blocks on the first one's uncommitted row and, once it
commits, fails on the primary key. That failure is recognized at that one insert (never confused
with a conflict of the effect itself, such as a duplicate email) and the request is answered from
the record that won, read in a fresh transaction.

Only successful effects are remembered. A request that fails (404, 409, 400 from inside the
transaction) rolls back with its record, as if it never happened, so a retry runs again and may
succeed once the cause is gone. Checks that run before the transaction (authentication, body
validation, public-key restrictions) come before the record is even looked at.

What is "the same request": a SHA-256 over the method, the path, the query parameters (sorted)
and the validated body as sent (`model_dump(mode="json", exclude_unset=True)`, keys sorted). The
validated body rather than the raw bytes, so key order and whitespace do not matter; fields left
out and fields sent as `null` stay different requests, as they are for the handlers.

Records are scoped to the account and the key type: the account's private keys share theirs (a
retry after a key rotation still replays), each public key has its own, so a public key replaying
a private key's `Idempotency-Key` and body runs as a request of its own and reads nothing.

Records live `IDEMPOTENCY_TTL_SECONDS` (24 hours). An expired record met by a request is deleted
and the request runs afresh; each new record also deletes up to `PURGE_BATCH` expired records of
its account, so the table stays bounded by recent traffic.

Creating an audience commits before its answer (which may list thousands of members) is computed,
so the SQLite write lock is not held meanwhile. Its record is committed with the effect as
pending, holding the new audience's id, and completed right after; a retry that meets a pending
record (the first request still computing, or gone before it completed it) computes the answer
from that id and completes the record itself.

Work written in turns (an import) keeps its record pending, with its progress, from the first
turn to the last, so that a retry resumes after the last committed turn
(`idempotency_turns.py`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Generic, TypeVar, cast

from fastapi import Depends, Header, Request
from pydantic import BaseModel
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from starlette.responses import Response

from ... import as_utc
from ..db.engine import Database
from ..db.models import IdempotencyRecord
from ..ground import clock
from ..settings import Settings
from .errors import ApiError

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
KEY_PATTERN = r"^[\x20-\x7e]+$"
PURGE_BATCH = 100
PENDING = 0
ATTEMPTS = 3
KEY_REUSED = (
    "This Idempotency-Key was already used with a different request (method, path, query or "
    "body); send a new key for a new request"
)
KEY_DESCRIPTION = (
    "Makes a retry safe: the same key with the same request, within 24 hours by default, "
    "returns the first answer (with `Idempotent-Replayed: true`) and changes nothing; the same "
    "key with another request is a 422. Keys are scoped to the account; use a fresh random "
    "value (a UUID) per operation. Failed requests are not remembered."
)

Effect = Callable[[Session], Response]
T = TypeVar("T")


def now() -> datetime:
    """Now on the service's clock (`ground/clock.py`); tests may also replace this function."""
    return clock.now()


@dataclass(frozen=True)
class Retry:
    """The `Idempotency-Key` of a request and what identifies the request besides its body."""

    key: str | None
    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    ttl: timedelta
    database: Database

    def once(
        self,
        account_id: str,
        body: BaseModel,
        answer: Callable[[T], Response],
        scope: str | None = None,
    ) -> Once[T]:
        """The unit of work (`use_cases/unit.Writes`) of a use case whose answer this request
        replays: `answer` shapes the use case's result in its transaction, and is recorded."""
        return Once(self.database, self.claim(account_id, body, scope), answer)

    def once_then(
        self, account_id: str, body: BaseModel, respond: Callable[[str], Response]
    ) -> OnceThen:
        """Like `once`, for a use case whose answer is read after its commit from the id its
        work returns (`respond`), so no large answer is computed under the write lock."""
        return OnceThen(self.database, self.claim(account_id, body), respond)

    def claim(self, account_id: str, body: BaseModel, scope: str | None = None) -> Claim | None:
        """The record this request reads or writes, or None when it came without a key.

        `scope` separates callers of one account that must not read each other's records (a
        public key, see `deps.Principal.idempotency_scope`); None is the account's private keys.
        """
        if self.key is None:
            return None
        canonical = json.dumps(
            {
                "method": self.method,
                "path": self.path,
                "query": sorted(self.query),
                "body": body.model_dump(mode="json", exclude_unset=True),
            },
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        fingerprint = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
        key = self.key if scope is None else _scoped(scope, self.key)
        return Claim(account_id, key, self.method, self.path, fingerprint, self.ttl)


def _scoped(scope: str, key: str) -> str:
    """The stored key of a scoped record: the scope and a digest, within the column's 255."""
    return f"{scope}:{hashlib.sha256(key.encode('utf-8')).hexdigest()}"


@dataclass(frozen=True)
class Claim:
    """A keyed request of one account: keys are per account, so two tenants never collide."""

    account_id: str
    key: str
    method: str
    path: str
    fingerprint: str
    ttl: timedelta


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes


class KeyTaken(Exception):
    """Another transaction committed a record for this key while ours was inserting it."""


async def _retry(
    request: Request,
    key: Annotated[
        str | None,
        Header(
            alias=HEADER,
            min_length=1,
            max_length=MAX_KEY_LENGTH,
            pattern=KEY_PATTERN,
            description=KEY_DESCRIPTION,
        ),
    ] = None,
) -> Retry:
    settings = cast(Settings, request.app.state.settings)
    return Retry(
        key=key,
        method=request.method,
        path=request.url.path,
        query=tuple(request.query_params.multi_items()),
        ttl=timedelta(seconds=settings.idempotency_ttl_seconds),
        database=cast(Database, request.app.state.db),
    )


RetryDep = Annotated[Retry, Depends(_retry)]


def replayed(answer: Answer) -> Response:
    """The response of a record found completed: its answer, marked as a replay."""
    return _response(answer, replayed=True)


def _response(answer: Answer, *, replayed: bool) -> Response:
    headers = {REPLAYED: "true"} if replayed else None
    return Response(
        answer.body, status_code=answer.status, media_type="application/json", headers=headers
    )


def _where(claim: Claim) -> list[Any]:
    return [IdempotencyRecord.accountId == claim.account_id, IdempotencyRecord.key == claim.key]


def _find(session: Session, claim: Claim) -> Answer | None:
    """A live record to replay; one of another request is refused rather than replayed, since
    answering it would tell the client its new request succeeded when it never ran."""
    row = session.execute(
        select(
            IdempotencyRecord.fingerprint,
            IdempotencyRecord.status,
            IdempotencyRecord.body,
            IdempotencyRecord.expiresAt,
        ).where(*_where(claim))
    ).first()
    if row is None or as_utc(row.expiresAt) <= now():
        return None
    if row.fingerprint != claim.fingerprint:
        raise ApiError(422, KEY_REUSED)
    return Answer(row.status, row.body.encode())


def reserve(session: Session, claim: Claim) -> IdempotencyRecord | Answer:
    """Inserted before the effect runs, so a concurrent twin waits on this row, not on luck."""
    found = _find(session, claim)
    if found is not None:
        return found
    moment = now()
    session.execute(
        delete(IdempotencyRecord)
        .where(*_where(claim), IdempotencyRecord.expiresAt <= moment)
        .execution_options(synchronize_session=False)
    )
    _purge(session, claim.account_id, moment)
    record = IdempotencyRecord(
        accountId=claim.account_id,
        key=claim.key,
        method=claim.method,
        path=claim.path,
        fingerprint=claim.fingerprint,
        status=PENDING,
        body="",
        createdAt=moment,
        expiresAt=moment + claim.ttl,
    )
    session.add(record)
    try:
        session.flush()
    except IntegrityError:
        raise KeyTaken from None
    return record


def _purge(session: Session, account_id: str, moment: datetime) -> None:
    """Bounded, so no request pays for a backlog; locked rows are skipped, not waited for."""
    expired = (
        select(IdempotencyRecord.key)
        .where(IdempotencyRecord.accountId == account_id, IdempotencyRecord.expiresAt <= moment)
        .order_by(IdempotencyRecord.expiresAt)
        .limit(PURGE_BATCH)
        .with_for_update(skip_locked=True)
    )
    session.execute(
        delete(IdempotencyRecord)
        .where(IdempotencyRecord.accountId == account_id, IdempotencyRecord.key.in_(expired))
        .execution_options(synchronize_session=False)
    )


def _run(
    database: Database, claim: Claim, effect: Callable[[Session], Answer]
) -> tuple[Answer, bool]:
    """The answer and whether it is a replay. A lost race on the key is answered from the
    winner's record, read in a fresh transaction since ours is aborted; the loop only covers a
    winner that vanished meanwhile (expired and purged), which makes the key free again."""
    for _ in range(ATTEMPTS):
        try:
            with database.transaction() as session:
                reserved = reserve(session, claim)
                if isinstance(reserved, Answer):
                    return reserved, True
                answer = effect(session)
                reserved.status = answer.status
                reserved.body = answer.body.decode()
            return answer, False
        except KeyTaken:
            with database.reading() as session:
                found = _find(session, claim)
            if found is not None:
                return found, True
    raise ApiError(409, "Concurrent requests with this Idempotency-Key; retry")


def once(database: Database, claim: Claim | None, effect: Effect) -> Response:
    """Runs `effect` in a write transaction, once per claim; its response is what is stored.

    Without a claim (no key sent) this is just the transaction.
    """
    if claim is None:
        with database.transaction() as session:
            return effect(session)

    def perform(session: Session) -> Answer:
        response = effect(session)
        return Answer(response.status_code, bytes(response.body))

    answer, replayed = _run(database, claim, perform)
    if answer.status == PENDING:  # only `once_then` leaves pending records
        raise ApiError(409, "A request with this Idempotency-Key is still in progress; retry")
    return _response(answer, replayed=replayed)


def once_then(
    database: Database,
    claim: Claim | None,
    effect: Callable[[Session], str],
    respond: Callable[[str], Response],
) -> Response:
    """Like `once`, for an effect whose answer is computed after its commit, from the id it returns.

    The record is committed pending with the effect, and completed once the answer is known.
    """
    if claim is None:
        with database.transaction() as session:
            reference = effect(session)
        return respond(reference)

    def perform(session: Session) -> Answer:
        return Answer(PENDING, effect(session).encode())

    answer, replayed = _run(database, claim, perform)
    if answer.status != PENDING:
        return _response(answer, replayed=replayed)
    response = respond(answer.body.decode())
    body = bytes(response.body)
    with database.transaction() as session:
        session.execute(
            update(IdempotencyRecord)
            .where(*_where(claim), IdempotencyRecord.status == PENDING)
            .values(status=response.status_code, body=body.decode())
            .execution_options(synchronize_session=False)
        )
    return _response(Answer(response.status_code, body), replayed=replayed)


@dataclass(frozen=True)
class Once(Generic[T]):
    """A use case's write transaction with this request's Idempotency-Key record in it (`once`)."""

    database: Database
    claim: Claim | None
    answer: Callable[[T], Response]

    def __call__(self, work: Callable[[Session], T]) -> Response:
        return once(self.database, self.claim, lambda session: self.answer(work(session)))


@dataclass(frozen=True)
class OnceThen:
    """A use case's write transaction whose answer comes after the commit (`once_then`)."""

    database: Database
    claim: Claim | None
    respond: Callable[[str], Response]

    def __call__(self, work: Callable[[Session], str]) -> Response:
        return once_then(self.database, self.claim, work, self.respond)
