"""Versions of an audience: what each change of its name, mode or filter made of it.

Decisions (docs/service-audiences.md, *Versions of an audience*):

- A version is recorded in the transaction of the write that makes it (creation, an update
  that changes the name, the mode or the filter, a restore), so it exists exactly when the
  change was committed; an update that changes none of the three, or only the experiment,
  records none. Versions are numbered 1, 2, 3... per audience under the list's lock, so two
  writers never take one number.
- A version keeps the name, the mode, the filter as stored (canonical JSON, with the
  declarations it was read with), the id of the API key that made the change and when.
  Deleting the audience deletes its versions.
- A restore is a change like any other: the version's name, mode and filter are sent again as
  an update (the filter read with the list's custom fields and zone now, so a filter naming a
  field since removed is refused as it would be when typed), and make a new version that names
  the one restored, even when nothing differs from the current one.
- The version in force at an instant is the last one recorded up to it; before the first kept
  (an audience stored before versions were kept has its version 1 dated at its last change)
  there is none.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..db.models import Audience, AudienceVersion
from ..db.queries import page_of
from ..ground.errors import NotFound

Shape = tuple[str, str, str | None]
"""What a version records of an audience: its name, mode and stored filter."""


def shape(audience: Audience) -> Shape:
    """The audience's name, mode and filter: a change of any makes a version."""
    return audience.name, audience.mode, audience.filters


def record(
    session: Session, audience: Audience, key_id: str | None, restored_from: int | None = None
) -> AudienceVersion:
    """A new version of the flushed audience, numbered after its last; call it under the
    list's lock."""
    last = session.scalar(
        select(func.max(AudienceVersion.number)).where(AudienceVersion.audienceId == audience.id)
    )
    version = AudienceVersion(
        audienceId=audience.id,
        number=(last or 0) + 1,
        name=audience.name,
        mode=audience.mode,
        filters=audience.filters,
        fields=audience.fields,
        keyId=key_id,
        restoredFrom=restored_from,
    )
    session.add(version)
    session.flush()
    return version


def after_update(
    session: Session,
    audience: Audience,
    before: Shape,
    key_id: str | None,
    restored_from: int | None,
) -> None:
    """Records a version when the update changed the audience's shape, or was a restore."""
    if restored_from is not None or shape(audience) != before:
        record(session, audience, key_id, restored_from)


def listed(session: Session, audience_id: str, page: int, limit: int) -> list[AudienceVersion]:
    """A page of the audience's versions, newest first."""
    statement = (
        select(AudienceVersion)
        .where(AudienceVersion.audienceId == audience_id)
        .order_by(AudienceVersion.number.desc())
    )
    return list(session.scalars(page_of(statement, page, limit)))


def total(session: Session, audience_id: str) -> int:
    """How many versions the audience has."""
    statement = select(func.count()).where(AudienceVersion.audienceId == audience_id)
    return int(session.scalar(statement) or 0)


def one(session: Session, audience_id: str, number: int) -> AudienceVersion:
    """Version `number` of the audience, or a 404."""
    version = session.get(AudienceVersion, (audience_id, number))
    if version is None:
        raise NotFound(f"Version {number} of this audience not found")
    return version


def in_force(session: Session, audience_id: str, moment: datetime) -> int | None:
    """The number of the audience's version in force at `moment`: the last recorded up to it
    (None before the first)."""
    statement = select(func.max(AudienceVersion.number)).where(
        AudienceVersion.audienceId == audience_id, AudienceVersion.createdAt <= moment
    )
    found = session.scalar(statement)
    return None if found is None else int(found)
