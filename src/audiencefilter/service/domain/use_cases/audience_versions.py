"""Versions of an audience: page through them, read one, restore one (a new version).

The rules are `domain/audience_versions.py`'s; a restore is an update of the audience
(`audiences.update`) sending the version's name, mode and filter again, so it is read, checked,
judged and reported as any update is.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...db.engine import Database
from ...db.models import AudienceVersion
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


def page(
    database: Database, account_id: str, audience_id: str, number: int, limit: int
) -> tuple[Page[AudienceVersion], int]:
    """A page of the audience's versions, newest first, and the number of the current one."""
    with database.reading() as session:
        audience, _ = owned_audience(session, account_id, audience_id)
        found = audience_versions.listed(session, audience.id, number, limit)
        total = audience_versions.total(session, audience.id)
    return Page(found, total), total


def get(database: Database, account_id: str, audience_id: str, number: int) -> Current:
    """Version `number` of the audience (404 for an audience or a version not there)."""
    with database.reading() as session:
        audience, _ = owned_audience(session, account_id, audience_id)
        version = audience_versions.one(session, audience.id, number)
        return Current(version, audience_versions.total(session, audience.id))


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
