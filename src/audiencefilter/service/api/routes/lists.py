"""Lists (projects): create, list, read, update, delete; `/projects` is the same listing.

A list's `url` is its public identifier (pages and referral links use it), so it is unique across
all accounts; when a new list gives none, one is made from the name and a random suffix.
Deleting a list deletes its contacts, audiences and actions (foreign-key cascades). The use cases
are `domain/use_cases/lists.py`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from ...db.models import List
from ...domain.contact_pages import pagination
from ...domain.use_cases import lists
from ...domain.use_cases.unit import Page
from ...http.idempotency import RetryDep
from ...http.origins import lists_changed
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey, SettingsDep
from ..schemas.resources import (
    ListCreate,
    ListResponse,
    ListsResponse,
    ListUpdate,
    PageQuery,
    ProjectsResponse,
)
from ..schemas.views import list_view

router = APIRouter(prefix="/lists", tags=["lists"])
projects_router = APIRouter(prefix="/projects", tags=["lists"])


def _page(found: Page[List], query: PageQuery, key: str) -> JSONResponse:
    return data(
        {
            key: [list_view(lst) for lst in found.items],
            "pagination": pagination(found.total, query.page, query.limit),
        }
    )


def _created(lst: List) -> Response:
    return data({"list": list_view(lst)}, 201)


@router.post("", status_code=201, response_model=ListResponse, summary="Create a list")
def create_list(body: ListCreate, principal: PrivateKey, retry: RetryDep) -> Response:
    values = body.model_dump(exclude_unset=True)
    writes = retry.once(principal.account_id, body, _created)
    response = lists.create(principal.account_id, values, writes)
    lists_changed()
    return response


@router.get("", response_model=ListsResponse, summary="List the account's lists")
def list_lists(
    query: Annotated[PageQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = lists.page(database, principal.account_id, query.page, query.limit)
    return _page(found, query, "lists")


@projects_router.get("", response_model=ProjectsResponse, summary="List projects")
def list_projects(
    query: Annotated[PageQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = lists.page(database, principal.account_id, query.page, query.limit)
    return _page(found, query, "projects")


@router.get("/{id}", response_model=ListResponse, summary="Retrieve a list")
def get_list(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    return data({"list": list_view(lists.get(database, principal.account_id, id))})


@router.patch("/{id}", response_model=ListResponse, summary="Update a list")
def update_list(
    id: str, body: ListUpdate, principal: PrivateKey, database: DatabaseDep, settings: SettingsDep
) -> JSONResponse:
    values = body.model_dump(exclude_unset=True)
    above = settings.audience_build_background_above
    lst = lists.update(database, principal.account_id, id, values, above)
    lists_changed()
    return data({"list": list_view(lst)})


@router.delete("/{id}", response_model=ListResponse, summary="Delete a list and all it holds")
def delete_list(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    lst = lists.remove(database, principal.account_id, id)
    lists_changed()
    return data({"list": list_view(lst)})
