"""Accounts and their API keys: the operations behind `keys ...` and the demo.

Keys are shown in full exactly once, when created; afterwards only the display prefix and the id
are known. A key is named on the command line by its id or by the whole key.

Rotation issues the replacement first and lets the old key live through a grace period, so the
clients can be moved over before it stops working; an expiry already sooner is never extended,
or rotating a leaked key would keep it alive longer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from ... import as_utc
from ..db.models import Account, ApiKey
from ..ground import keys
from ..settings import Plan


def ensure_account(session: Session, name: str, plan: Plan | None = None) -> Account:
    """The account called `name`, created when new; `plan`, when given, is set either way."""
    account = session.scalars(select(Account).where(Account.name == name)).first()
    if account is None:
        account = Account(name=name, plan=plan or "free")
        session.add(account)
    elif plan is not None:
        account.plan = plan
    session.flush()
    return account


def issue_key(
    session: Session,
    account: Account,
    key_type: keys.KeyType,
    expires_at: datetime | None = None,
    label: str | None = None,
) -> tuple[ApiKey, str]:
    """A new key for the account: the stored row and the plaintext, never stored."""
    plaintext = keys.generate(key_type)
    row = ApiKey(
        accountId=account.id,
        type=key_type,
        digest=keys.digest(plaintext),
        prefix=keys.display_prefix(plaintext),
        label=label,
        expiresAt=expires_at,
    )
    session.add(row)
    session.flush()
    return row, plaintext


def revoke_keys(session: Session, account: Account) -> int:
    """Delete every key of the account; returns how many there were."""
    found = list(session.scalars(select(ApiKey).where(ApiKey.accountId == account.id)))
    for key in found:
        session.delete(key)
    session.flush()
    return len(found)


def find_key(session: Session, reference: str) -> ApiKey | None:
    """A key by its id or by the whole key."""
    parsed = keys.parse(reference)
    condition = ApiKey.digest == parsed.digest if parsed else ApiKey.id == reference
    return session.scalars(select(ApiKey).where(condition)).first()


def list_keys(session: Session, account_name: str | None = None) -> list[tuple[ApiKey, Account]]:
    statement = (
        select(ApiKey, Account)
        .join(Account, Account.id == ApiKey.accountId)
        .order_by(Account.name, ApiKey.createdAt)
    )
    if account_name is not None:
        statement = statement.where(Account.name == account_name)
    return [(row[0], row[1]) for row in session.execute(statement)]


@dataclass(frozen=True)
class Rotation:
    """The outcome of rotating a key: the old row (with its new expiry) and the replacement."""

    old: ApiKey
    new: ApiKey
    plaintext: str
    account: Account
    old_expires_at: datetime


class RotationRefused(ValueError):
    """A rotation that would bring a disabled or expired key back to life."""


def rotate_key(session: Session, reference: str, grace: timedelta) -> Rotation | None:
    """A new key like `reference` (type, account); the old one expires after `grace` at most.

    None when there is no such key.
    """
    old = find_key(session, reference)
    if old is None:
        return None
    if old.disabled:
        raise RotationRefused(
            f"key {old.id} is disabled: rotating it would issue an enabled key; enable it "
            "first (keys enable), or create a new key"
        )
    if old.expiresAt is not None and as_utc(old.expiresAt) <= datetime.now(UTC):
        raise RotationRefused(
            f"key {old.id} has expired: rotating it would issue a live key; create a new key "
            "with keys create"
        )
    account = session.get_one(Account, old.accountId)
    new, plaintext = issue_key(session, account, cast(keys.KeyType, old.type), label=old.label)
    deadline = datetime.now(UTC) + grace
    current = None if old.expiresAt is None else as_utc(old.expiresAt)
    if current is None or deadline < current:
        old.expiresAt = current = deadline
    session.flush()
    return Rotation(old, new, plaintext, account, old_expires_at=current)
