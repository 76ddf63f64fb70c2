"""Bodies of the versions of an audience (`/v4/audiences/{id}/versions`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from ...db.models import AudienceVersion
from ...domain.audience_filters import filter_text
from .audiences import AudienceMode
from .resources import Pagination, envelope


class AudienceVersionOut(BaseModel):
    """What one change made of an audience."""

    audienceId: str
    number: int = Field(description="1 for the audience as created, then one more per change.")
    current: bool = Field(description="Whether it is the audience's version now.")
    name: str
    mode: AudienceMode
    filters: str | None = Field(description="The filter as canonical JSON text, or null.")
    filtersText: str | None = Field(description="The same filter in the text syntax, or null.")
    keyId: str | None = Field(
        description="The id of the API key that made the change; null for the version 1 of an "
        "audience stored before versions were kept."
    )
    keyLabel: str | None = Field(
        default=None,
        description="The label of that key, as its operator named it (`keys create --label`); "
        "null for a key without one, or deleted since.",
    )
    restoredFrom: int | None = Field(description="The version this one restored, if any.")
    createdAt: datetime = Field(description="When the change was committed.")


class AudienceVersionData(BaseModel):
    version: AudienceVersionOut


class AudienceVersionsData(BaseModel):
    versions: list[AudienceVersionOut] = Field(description="Newest first.")
    pagination: Pagination


AudienceVersionResponse = envelope("AudienceVersionResponse", AudienceVersionData)
AudienceVersionsResponse = envelope("AudienceVersionsResponse", AudienceVersionsData)


def version_view(
    version: AudienceVersion, current: int, labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A version as the API shows it; `current`: the number of the audience's version now;
    `labels`: the labels of keys, by id."""
    filters = version.filters
    return {
        "audienceId": version.audienceId,
        "number": version.number,
        "current": version.number == current,
        "name": version.name,
        "mode": version.mode,
        "filters": filters,
        "filtersText": filter_text(filters, version.fields) if filters else None,
        "keyId": version.keyId,
        "keyLabel": (labels or {}).get(version.keyId or ""),
        "restoredFrom": version.restoredFrom,
        "createdAt": version.createdAt,
    }
