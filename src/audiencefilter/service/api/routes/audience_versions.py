"""Versions of an audience: list them, read one, restore one.

Every creation of an audience, and every update that changes its name, mode or filter, is kept
as a version with the key that made it and when (`domain/audience_versions.py`); a restore
sends a version's name, mode and filter again as an update, which makes a new version.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from ...domain.contact_pages import Paging, pagination
from ...domain.use_cases import audience_versions, audiences
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey, SettingsDep
from ..openapi import RULE_ERROR_RESPONSES
from ..schemas.audience_versions import (
    AudienceVersionResponse,
    AudienceVersionsResponse,
    version_view,
)
from ..schemas.audiences import AudienceChangeResponse, SubsQuery
from ..schemas.resources import PageQuery
from ..schemas.views import audience_view

router = APIRouter(prefix="/audiences", tags=["audiences"])
Number = Annotated[int, Path(ge=1, le=2**31 - 1, description="The version's number, from 1.")]
RESTORE_DESCRIPTION = (
    "Sets the audience back to the version's name, mode and filter, as an update sending them "
    "would: the filter is read with the list's custom fields and time zone now, members enter "
    "and leave (events with the cause `audience.updated`), and a new version is recorded "
    "naming the one restored (`restoredFrom`). The experiment stays as it is."
)


@router.get(
    "/{id}/versions",
    response_model=AudienceVersionsResponse,
    summary="List an audience's versions",
    description="Every version of the audience, newest first: its name, mode and filter, the "
    "API key that made the change and when.",
)
def list_versions(
    id: str, query: Annotated[PageQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = audience_versions.page(database, principal.account_id, id, query.page, query.limit)
    views = [version_view(version, found.current, found.labels) for version in found.page.items]
    paging = pagination(found.page.total, query.page, query.limit)
    return data({"versions": views, "pagination": paging})


@router.get(
    "/{id}/versions/{number}",
    response_model=AudienceVersionResponse,
    summary="Retrieve a version of an audience",
)
def get_version(
    id: str, number: Number, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = audience_versions.get(database, principal.account_id, id, number)
    return data({"version": version_view(found.version, found.current, found.labels)})


@router.post(
    "/{id}/versions/{number}/restore",
    response_model=AudienceChangeResponse,
    summary="Restore a version of an audience (a new version)",
    description=RESTORE_DESCRIPTION,
    responses=RULE_ERROR_RESPONSES,
)
def restore_version(
    id: str,
    number: Number,
    query: Annotated[SubsQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    subs = audiences.Subs(Paging(query.page, query.limit, query.sort, query.order), query.filtersAs)
    found = audience_versions.restore(
        database, settings, principal.account_id, id, number, principal.key_id, subs
    )
    view = audience_view(found.audience, found.progress, subs=found.contacts, **found.shown)
    payload = {"audience": view, "pagination": found.pagination, "warnings": found.warnings()}
    return data(payload)
