"""Accounts and their API keys, for the command line (`keys ...`) and the demo.

Each use case is one transaction over `accounts.py`: a key is shown in full exactly once, in
what `issue` and `rotate` answer; afterwards only its display prefix and id are known.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ...db.engine import Database
from ...db.models import Account, ApiKey
from ...ground.keys import KeyType
from ...settings import Plan
from .. import accounts


@dataclass(frozen=True)
class Issued:
    """A new key: its account, its stored row, and the plaintext, never stored."""

    account: Account
    key: ApiKey
    plaintext: str


def issue(
    database: Database,
    account_name: str,
    plan: Plan | None,
    key_type: KeyType,
    expires_at: datetime | None = None,
    label: str | None = None,
) -> Issued:
    """A new key for the account called `account_name` (created when new; `plan` set if given),
    named by `label` where it acts (an audience's history)."""
    with database.transaction() as session:
        account = accounts.ensure_account(session, account_name, plan)
        row, plaintext = accounts.issue_key(session, account, key_type, expires_at, label)
    return Issued(account, row, plaintext)


def replace_all(database: Database, account_name: str, plan: Plan) -> tuple[Issued, Issued]:
    """The account's keys revoked and a new private and public key issued, in one transaction
    (the demo: only the keys of its last run work)."""
    with database.transaction() as session:
        account = accounts.ensure_account(session, account_name, plan)
        accounts.revoke_keys(session, account)
        private = accounts.issue_key(session, account, "private", label="demo private")
        public = accounts.issue_key(session, account, "public", label="demo public")
    return Issued(account, *private), Issued(account, *public)


def listing(database: Database, account_name: str | None = None) -> list[tuple[ApiKey, Account]]:
    """Every key (of one account, when named) with its account."""
    with database.reading() as session:
        return accounts.list_keys(session, account_name)


def rotate(database: Database, reference: str, grace: timedelta) -> accounts.Rotation | None:
    """A replacement of the key `reference`, the old one expiring after `grace` at most; None
    when there is no such key. Raises `accounts.RotationRefused` for a disabled or expired key."""
    with database.transaction() as session:
        return accounts.rotate_key(session, reference, grace)


def set_disabled(database: Database, reference: str, disabled: bool) -> ApiKey | None:
    """The key `reference` disabled or enabled; None when there is no such key."""
    with database.transaction() as session:
        key = accounts.find_key(session, reference)
        if key is not None:
            key.disabled = disabled
    return key
