"""Request dependencies: settings, the database, the API key check and rate limiting.

The key check is one dependency with its own short read session: the key's shape and checksum
first (a malformed key costs no database query), then one indexed lookup by digest, then the rate
limit of the key's account.
Rate limiting comes before the permission check, so a public key hammering private endpoints
spends its account's quota too. `PrivateKey` and `AnyKey` are the two aliases routes declare.

Dependencies that only read application state are `async def`: FastAPI runs every plain `def`
dependency as a separate thread-pool job, and three needless hops per request cost more than
the rest of a small request. `authenticate` queries the database and stays a `def`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, cast

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader
from sqlalchemy import select
from sqlalchemy.orm import Session

from . import keys
from .db import Database
from .errors import ApiError
from .middleware import RATE_LIMIT_STATE
from .models import Account, ApiKey
from .ratelimit import RateLimiter
from .settings import Plan, Settings

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


async def get_settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


async def get_database(request: Request) -> Database:
    return cast(Database, request.app.state.db)


DatabaseDep = Annotated[Database, Depends(get_database)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _load_key(session: Session, presented: str) -> tuple[ApiKey, str]:
    parsed = keys.parse(presented)
    if parsed is None:
        raise ApiError(401, "Invalid API key")
    row = session.execute(
        select(ApiKey, Account.plan)
        .join(Account, Account.id == ApiKey.accountId)
        .where(ApiKey.digest == parsed.digest)
    ).first()
    if row is None or not keys.digests_match(row[0].digest, parsed.digest):
        raise ApiError(401, "Invalid API key")
    api_key, plan = row
    if api_key.disabled:
        raise ApiError(401, "This API key is disabled")
    if api_key.expiresAt is not None and _aware(api_key.expiresAt) <= datetime.now(UTC):
        raise ApiError(401, "This API key has expired")
    return api_key, plan


def authenticate(
    request: Request,
    database: DatabaseDep,
    presented: Annotated[str | None, Security(api_key_header)],
) -> Principal:
    if not presented:
        raise ApiError(401, "Missing API key: send it in the apiKey header")
    with database.reading() as session:
        api_key, plan = _load_key(session, presented)
    principal = Principal(
        account_id=api_key.accountId,
        plan=cast(Plan, plan),
        key_type=cast(keys.KeyType, api_key.type),
        key_id=api_key.id,
    )
    limiter = cast(RateLimiter, request.app.state.limiter)
    decision = limiter.hit(principal.account_id, principal.plan)
    setattr(request.state, RATE_LIMIT_STATE, decision.headers())
    if not decision.allowed:
        raise ApiError(
            429,
            f"Rate limit of {decision.quota} requests per {decision.window} s exceeded",
            headers={"Retry-After": decision.headers()["Retry-After"]},
        )
    return principal


async def require_private(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
    if principal.key_type != "private":
        raise ApiError(403, "Public keys may only create contacts (POST /v4/contacts)")
    return principal


AnyKey = Annotated[Principal, Depends(authenticate)]
PrivateKey = Annotated[Principal, Depends(require_private)]
