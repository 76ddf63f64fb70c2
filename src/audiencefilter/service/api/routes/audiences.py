"""Audiences: create, list, read, update, delete, and preview a filter without saving it.

The rules of the specification answer its string-form 400s, checked in this order: `name` and
`listId` present, the list is the caller's (404 otherwise), then the filters: both forms given,
invalid, empty or missing for smart mode. `filters` (a JSON string or object) or `filtersText`
(text syntax) are read by the filter library and stored as canonical JSON; a smart audience's
members are stored (`domain/membership/store.py`).

The use cases (`domain/use_cases/audiences.py`) read a new filter and evaluate its members before
the write, which only stores them; writes commit first and the answer is read afterwards: neither
a large evaluation nor a large `subs` is computed while the SQLite write lock is held.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from ...domain.contact_pages import Paging, pagination
from ...domain.use_cases import audiences
from ...http.idempotency import RetryDep
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey, SettingsDep
from ..heavy import HEAVY
from ..openapi import RULE_ERROR_RESPONSES
from ..schemas.audiences import (
    AudienceChangeResponse,
    AudienceCreate,
    AudienceListQuery,
    AudiencePreview,
    AudienceResponse,
    AudiencesResponse,
    AudienceUpdate,
    DeletedAudienceResponse,
    PreviewQuery,
    PreviewResponse,
    SubsQuery,
    WriteQuery,
)
from ..schemas.views import audience_view

router = APIRouter(prefix="/audiences", tags=["audiences"])
BUILD_DESCRIPTION = (
    "A smart audience's members are built within the request, unless its list holds more "
    "contacts than the service's `AUDIENCEFILTER_AUDIENCE_BUILD_BACKGROUND_ABOVE` (20000 by "
    'default): then the answer comes at once with `status: "building"` and `progress` '
    "(`{done, total}`), the members are built in the background (follow with "
    "`GET /v4/audiences/{id}`), and their `audience.entered` events and webhooks are written "
    "when it turns `built`. A change of filter while building restarts the build. "
    "`?wait=true` builds within the request whatever the size."
)


def _subs(query: SubsQuery | PreviewQuery) -> audiences.Subs:
    paging = Paging(query.page, query.limit, query.sort, query.order)
    return audiences.Subs(paging, query.filtersAs)


def _read(found: audiences.Read, status_code: int = 200, warnings: bool = False) -> JSONResponse:
    view = audience_view(found.audience, found.progress, subs=found.contacts, **found.shown)
    payload: dict[str, Any] = {"audience": view, "pagination": found.pagination}
    if warnings:
        payload["warnings"] = found.warnings()
    return data(payload, status_code)


def _change(
    body: AudienceCreate | AudienceUpdate, wait: bool, key_id: str
) -> audiences.AudienceChange:
    cleared = {"filters", "filtersText"} & body.model_fields_set
    return audiences.AudienceChange(
        name=body.name,
        list_id=body.listId if isinstance(body, AudienceCreate) else None,
        mode=body.mode,
        filters=body.filters,
        filters_text=body.filtersText,
        filters_format=body.filtersFormat,
        cleared=bool(cleared) and isinstance(body, AudienceUpdate),
        wait=wait,
        experiment=body.experiment.requested() if body.experiment else None,
        experiment_sent="experiment" in body.model_fields_set,
        key_id=key_id,
    )


@router.post(
    "",
    status_code=201,
    response_model=AudienceChangeResponse,
    summary="Create an audience",
    description=BUILD_DESCRIPTION,
    responses=RULE_ERROR_RESPONSES,
)
def create_audience(
    body: AudienceCreate,
    query: Annotated[WriteQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
    retry: RetryDep,
) -> Response:
    def respond(audience_id: str) -> Response:
        found = audiences.read(database, settings, principal.account_id, audience_id, _subs(query))
        return _read(found, 201, warnings=True)

    writes = retry.once_then(principal.account_id, body, respond)
    change = _change(body, query.wait, principal.key_id)
    return audiences.create(database, settings, principal.account_id, change, writes)


@router.get("", response_model=AudiencesResponse, summary="List the audiences of a list")
def list_audiences(
    query: Annotated[AudienceListQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    listed = audiences.page(database, principal.account_id, query.listId, query.page, query.limit)
    return data(
        {
            "audiences": [
                audience_view(a, listed.progress.get(a.id), subsCount=listed.sizes[a.id])
                for a in listed.page.items
            ],
            "pagination": pagination(listed.page.total, query.page, query.limit),
        }
    )


@router.post(
    "/preview",
    dependencies=[HEAVY],
    response_model=PreviewResponse,
    summary="Preview a smart audience without saving it",
    description="The number of contacts a filter selects now and a page of them (100 by "
    "default), for audience builders.",
    responses=RULE_ERROR_RESPONSES,
)
def preview_audience(
    body: AudiencePreview,
    query: Annotated[PreviewQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    request = audiences.PreviewRequest(
        body.listId,
        body.filters,
        body.filtersText,
        body.filtersFormat,
        body.explainContactId,
        _subs(query),
    )
    found = audiences.preview(database, settings, principal.account_id, request)
    return data(
        {
            "count": found.contacts["pagination"]["total"],
            **found.contacts,
            "filters": found.filter.to_json(),
            "filtersText": found.filter.to_text(),
            **found.shown,
            "warnings": found.warnings,
            "explanation": found.explanation,
        }
    )


@router.get(
    "/{id}",
    response_model=AudienceResponse,
    summary="Retrieve an audience and its contacts",
    description="`subs` lists the contacts in the audience now, by default all of them (up to "
    "20000); `limit`, `page`, `sort` and `order` page through them like the contacts listing.",
)
def get_audience(
    id: str,
    query: Annotated[SubsQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    return _read(audiences.read(database, settings, principal.account_id, id, _subs(query)))


@router.patch(
    "/{id}",
    response_model=AudienceChangeResponse,
    summary="Update an audience",
    description=BUILD_DESCRIPTION,
    responses=RULE_ERROR_RESPONSES,
)
def update_audience(
    id: str,
    body: AudienceUpdate,
    query: Annotated[WriteQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    change, subs = _change(body, query.wait, principal.key_id), _subs(query)
    return _read(
        audiences.update(database, settings, principal.account_id, id, change, subs), warnings=True
    )


@router.delete("/{id}", response_model=DeletedAudienceResponse, summary="Delete an audience")
def delete_audience(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    audience, size, building = audiences.remove(database, principal.account_id, id)
    return data({"audience": audience_view(audience, building, subsCount=size)})
