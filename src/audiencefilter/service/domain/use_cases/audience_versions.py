"""Versions of an audience: page through them, read one, restore one (a new version).

The rules are `domain/audience_versions.py`'s; a restore is an update of the audience
(`audiences.update`) sending the version's name, mode and filter again, so it is read, checked,
judged and reported as any update is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import ApiKey, AudienceVersion
from ...db.queries import owned_audience
from ...settings import Settings
from .. import audience_versions
from . import audiences
from .unit import Page


@dataclass(frozen=True)
class Current:
    """A version, and the number of the audience's version now (to tell it apart)."""

    version: AudienceVersion
    current: int
    labels: dict[str, str] = field(default_factory=dict)
    """The label of the key that made it, by key id (none for a key without one, or gone)."""


@dataclass(frozen=True)
class Versions:
    """A page of versions, the number of the current one and the labels of their keys."""

    page: Page[AudienceVersion]
    current: int
    labels: dict[str, str]


def key_labels(
    session: Session, account_id: str, versions: Iterable[AudienceVersion]
) -> dict[str, str]:
    """`{key id: label}` of the account's keys that made these versions and have a label."""
    ids = sorted({v.keyId for v in versions if v.keyId is not None})
    if not ids:
        return {}
    statement = select(ApiKey.id, ApiKey.label).where(
        ApiKey.accountId == account_id, ApiKey.id.in_(ids), ApiKey.label.is_not(None)
    )
    return {key_id: label for key_id, label in session.execute(statement) if label}


def page(
    database: Database, account_id: str, audience_id: str, number: int, limit: int
) -> Versions:
    """A page of the audience's versions, newest first, the number of the current one, and
    the labels of the keys that made them."""
    with database.reading() as session:
        audience, _ = owned_audience(session, account_id, audience_id)
        found = audience_versions.listed(session, audience.id, number, limit)
        total = audience_versions.total(session, audience.id)
        labels = key_labels(session, account_id, found)
    return Versions(Page(found, total), total, labels)


def get(database: Database, account_id: str, audience_id: str, number: int) -> Current:
    """Version `number` of the audience (404 for an audience or a version not there)."""
    with database.reading() as session:
        audience, _ = owned_audience(session, account_id, audience_id)
        version = audience_versions.one(session, audience.id, number)
        total = audience_versions.total(session, audience.id)
        return Current(version, total, key_labels(session, account_id, [version]))


def restore(
    database: Database,
    settings: Settings,
    account_id: str,
    audience_id: str,
    number: int,
    key_id: str | None,
    subs: audiences.Subs,
) -> audiences.Read:
    """The audience set back to version `number`'s name, mode and filter, as a new version
    naming it; then read with its members (`subs`)."""
    version = get(database, account_id, audience_id, number).version
    change = audiences.AudienceChange(
        name=version.name,
        mode=version.mode,
        filters=version.filters,
        cleared=version.filters is None,
        key_id=key_id,
        restored_from=version.number,
    )
    return audiences.update(database, settings, account_id, audience_id, change, subs)
