"""Request dependencies: settings, the database, the API key check and rate limiting.

The key check is one dependency with its own short read session: the key's shape and checksum
first (a malformed key costs no database query), then one indexed lookup by digest, then the rate
limit of the key's account.
Rate limiting comes before the permission check, so a public key hammering private endpoints is
counted too, but in the account's public budget: it never spends what the private keys have
(`ratelimit.py`). `PrivateKey` and `AnyKey` are the two aliases routes declare.

A contact created with a public key is also counted per key and client address, and a browser
sign-up (an `Origin` header) is checked against its list's `allowedOrigins` in the key's session,
before any quota is spent: both need the key, and the handler stays about contacts.

Dependencies that only read application state are `async def`: FastAPI runs every plain `def`
dependency as a separate thread-pool job, and three needless hops per request cost more than
the rest of a small request. `authenticate` queries the database and stays a `def`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, NoReturn, cast

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader
from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ... import as_utc
from ..db import fair_gate
from ..db.engine import Database
from ..db.models import Account, ApiKey, List
from ..db.prepared_cache import planned_once
from ..ground import clock, keys
from ..ground.errors import ValidationIssue, pointer
from ..http.client_address import TrustedProxies
from ..http.errors import ApiError, validation_failed
from ..http.middleware import CORS_ORIGIN_STATE, PUBLIC_PATH, RATE_LIMIT_STATE
from ..http.origins import OriginDirectory
from ..http.ratelimit import Decision, RateLimiter, rate_limit_headers
from ..settings import Plan, Settings

api_key_header = APIKeyHeader(
    name="apiKey",
    scheme_name="apiKey",
    description="An API key: `afk_priv_...` (private) or `afk_pub_...` (public).",
    auto_error=False,
)


@dataclass(frozen=True)
class Principal:
    """Who is calling: the account and the kind of key it used."""

    account_id: str
    plan: Plan
    key_type: keys.KeyType
    key_id: str

    @property
    def idempotency_scope(self) -> str | None:
        """Whose `Idempotency-Key` records this caller reads: the account's private keys share
        theirs (a retry after a key rotation still replays); each public key has its own."""
        return None if self.key_type == "private" else f"public:{self.key_id}"


async def get_settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


async def get_database(request: Request) -> Database:
    return cast(Database, request.app.state.db)


DatabaseDep = Annotated[Database, Depends(get_database)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


@dataclass(frozen=True)
class _Key:
    """What a request needs of the key presented: the columns, not an ORM object."""

    id: str
    accountId: str  # noqa: N815 (the column's name)
    type: str
    disabled: bool
    expiresAt: datetime | None  # noqa: N815
    digest: str
    plan: str


_KEY = planned_once(
    select(
        ApiKey.id,
        ApiKey.accountId,
        ApiKey.type,
        ApiKey.disabled,
        ApiKey.expiresAt,
        ApiKey.digest,
        Account.plan,
    )
    .join(Account, Account.id == ApiKey.accountId)
    .where(ApiKey.digest == bindparam("digest"))
)
"""The key presented and its account's plan: built once, every request runs it, planned once
(found by the digest's unique index)."""


def _load_key(database: Database, presented: str) -> _Key:
    parsed = keys.parse(presented)
    if parsed is None:
        raise ApiError(401, "Invalid API key")
    row = database.read_row(_KEY, {"digest": parsed.digest})
    key = None if row is None else _Key(*row)
    if key is None or not keys.digests_match(key.digest, parsed.digest):
        raise ApiError(401, "Invalid API key")
    if key.disabled:
        raise ApiError(401, "This API key is disabled")
    if key.expiresAt is not None and as_utc(key.expiresAt) <= clock.now():
        raise ApiError(401, "This API key has expired")
    return key


@dataclass(frozen=True)
class BrowserSignUp:
    """A contact creation sent by a page of another origin: the origin and the list it names."""

    origin: str
    list_id: str | None


async def browser_sign_up(request: Request) -> BrowserSignUp | None:
    """The origin and list of a cross-origin `POST /v4/contacts`; None for any other request.

    Async because it only reads the body FastAPI has already parsed; the key check, a thread-pool
    job, then decides on it within its own database session.
    """
    origin = request.headers.get("origin")
    if origin is None or not _creates_contact(request):
        return None
    if origin.partition("://")[2] == request.headers.get("host"):
        return None  # same origin (the /docs page): not a cross-origin request
    try:
        body = await request.json()
    except ValueError:
        body = None
    list_id = body.get("listId") if isinstance(body, dict) else None
    return BrowserSignUp(origin, list_id if isinstance(list_id, str) else None)


def _check_origin(
    session: Session, request: Request, account_id: str, sign_up: BrowserSignUp
) -> None:
    """Refuse a browser sign-up whose page the target list does not allow.

    An unknown list or a body without `listId` is left to the handler (404, 400); the origin is
    then allowed only by the settings.
    """
    directory = cast(OriginDirectory, request.app.state.origins)
    if directory.allowed_globally(sign_up.origin):
        setattr(request.state, CORS_ORIGIN_STATE, sign_up.origin)
        return
    if sign_up.list_id is None:
        return
    list_origins = session.scalar(
        select(List.allowedOrigins).where(List.id == sign_up.list_id, List.accountId == account_id)
    )
    if list_origins is None:
        return
    if not directory.allowed_for(sign_up.origin, list_origins):
        raise ApiError(
            403,
            f"Origin {sign_up.origin} may not create contacts in list {sign_up.list_id}: add it "
            "to the list's allowedOrigins",
        )
    setattr(request.state, CORS_ORIGIN_STATE, sign_up.origin)


def _count(request: Request, principal: Principal) -> None:
    """Spend the account's quota of the key's type, and for a public sign-up the key's quota at
    this address.

    The per-address limit goes first: a request it refuses does not spend the account's quota,
    so one flooding client does not use up the sign-ups of everybody else.
    """
    limiter = cast(RateLimiter, request.app.state.limiter)
    public = principal.key_type == "public"
    if public and _creates_contact(request):
        proxies = cast(TrustedProxies, request.app.state.trusted_proxies)
        per_address = limiter.hit_address(principal.key_id, proxies.client_address(request.scope))
        if not per_address.allowed:
            decisions = [
                limiter.peek(principal.account_id, principal.plan, public=True),
                per_address,
            ]
            _refuse(
                request,
                decisions,
                f"Rate limit of {per_address.quota} contacts per {per_address.window} s from one "
                "client address with this public key exceeded",
            )
        account = limiter.hit(principal.account_id, principal.plan, public=True)
        decisions = [account, per_address]
    else:
        account = limiter.hit(principal.account_id, principal.plan, public=public)
        decisions = [account]
    setattr(request.state, RATE_LIMIT_STATE, rate_limit_headers(decisions))
    if not account.allowed:
        _refuse(
            request,
            decisions,
            f"Rate limit of {account.quota} requests per {account.window} s exceeded",
        )


def _refuse(request: Request, decisions: list[Decision], message: str) -> NoReturn:
    headers = rate_limit_headers(decisions)
    setattr(request.state, RATE_LIMIT_STATE, headers)
    raise ApiError(429, message, headers={"Retry-After": headers["Retry-After"]})


def _creates_contact(request: Request) -> bool:
    return request.method == "POST" and request.url.path == PUBLIC_PATH


def _checked_key(
    request: Request, database: Database, presented: str | None, sign_up: BrowserSignUp | None
) -> _Key:
    """The key presented and its account's plan; a browser's sign-up also from an origin the
    list allows."""
    if not presented:
        raise ApiError(401, "Missing API key: send it in the apiKey header")
    key = _load_key(database, presented)
    if sign_up is not None:
        with database.reading() as session:
            _check_origin(session, request, key.accountId, sign_up)
    return key


def authenticate(
    request: Request,
    database: DatabaseDep,
    presented: Annotated[str | None, Security(api_key_header)],
    sign_up: Annotated[BrowserSignUp | None, Depends(browser_sign_up)],
) -> Principal:
    key = _checked_key(request, database, presented, sign_up)
    principal = Principal(key.accountId, cast(Plan, key.plan), cast(keys.KeyType, key.type), key.id)
    request.state.principal = principal  # named in the request log line, 429s included
    _share_writes(principal)
    _count(request, principal)
    return principal


def _share_writes(principal: Principal) -> None:
    """The request's write transactions queue at SQLite's gate as its account's."""
    share = fair_gate.SHARE.get()
    if share is not None:
        share.key = principal.account_id


def private_only(principal: Principal) -> Principal:
    """A private key's caller; a public key's is refused (403)."""
    if principal.key_type != "private":
        raise ApiError(403, "Public keys may only create contacts (POST /v4/contacts)")
    return principal


async def require_private(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
    return private_only(principal)


def private_caller(request: Request, sign_up: BrowserSignUp | None) -> Principal:
    """What `PrivateKey` gives a route, for a caller outside FastAPI's dependencies (a hot
    route, `api/hot_routes.py`): the same steps in the same order, the key, its quota, private
    only."""
    database = cast(Database, request.app.state.db)
    presented = request.headers.get(api_key_header.model.name)
    return private_only(authenticate(request, database, presented, sign_up))


AnyKey = Annotated[Principal, Depends(authenticate)]
PrivateKey = Annotated[Principal, Depends(require_private)]


async def single_valued_query(request: Request) -> None:
    """Refuse a query parameter given twice: none is a list, and keeping one value would answer
    a question the client did not ask (`?limit=1&limit=2`)."""
    names = [name for name, _ in request.query_params.multi_items()]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise validation_failed(
            [
                ValidationIssue(pointer=pointer(("query", name)), detail="given more than once")
                for name in repeated
            ]
        )
