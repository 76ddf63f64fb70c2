"""Lists (projects): create, list, read, update, delete; `/projects` is the same listing.

A list's `url` is its public identifier (pages and referral links use it), so it is unique across
all accounts; when a new list gives none, one is made from the name and a random suffix.
Deleting a list deletes its contacts, audiences and actions (foreign-key cascades).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import List
from ...db.queries import count, owned_list, page_of
from ...http.errors import ApiError
from ...http.idempotency import RetryDep, once
from ...http.origins import lists_changed
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.resources import (
    ListCreate,
    ListResponse,
    ListsResponse,
    ListUpdate,
    PageQuery,
    ProjectsResponse,
)
from ..schemas.views import list_view, pagination

router = APIRouter(prefix="/lists", tags=["lists"])
projects_router = APIRouter(prefix="/projects", tags=["lists"])

URL_TAKEN = "This list url is already taken"


def slug(name: str) -> str:
    """A url for a new list: the name's ASCII letters and digits, and a random suffix."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40].strip("-")
    return f"{base or 'list'}-{secrets.token_hex(3)}"


@contextmanager
def _unique_url() -> Iterator[None]:
    try:
        yield
    except IntegrityError:
        raise ApiError(409, URL_TAKEN) from None


def _page(database: Database, account_id: str, query: PageQuery, key: str) -> dict[str, Any]:
    statement = (
        select(List).where(List.accountId == account_id).order_by(List.createdAt.desc(), List.id)
    )
    with database.reading() as session:
        lists = session.scalars(page_of(statement, query.page, query.limit)).all()
        total = count(session, List, List.accountId == account_id)
    return {
        key: [list_view(lst) for lst in lists],
        "pagination": pagination(total, query.page, query.limit),
    }


@router.post("", status_code=201, response_model=ListResponse, summary="Create a list")
def create_list(
    body: ListCreate, principal: PrivateKey, database: DatabaseDep, retry: RetryDep
) -> Response:
    values = body.model_dump(exclude_unset=True)
    values.setdefault("url", slug(body.name))

    def create(session: Session) -> Response:
        lst = List(accountId=principal.account_id, **values)
        session.add(lst)
        session.flush()
        return data({"list": list_view(lst)}, 201)

    with _unique_url():
        response = once(database, retry.claim(principal.account_id, body), create)
    lists_changed()
    return response


@router.get("", response_model=ListsResponse, summary="List the account's lists")
def list_lists(
    query: Annotated[PageQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    return data(_page(database, principal.account_id, query, "lists"))


@projects_router.get("", response_model=ProjectsResponse, summary="List projects")
def list_projects(
    query: Annotated[PageQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    return data(_page(database, principal.account_id, query, "projects"))


@router.get("/{id}", response_model=ListResponse, summary="Retrieve a list")
def get_list(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    with database.reading() as session:
        lst = owned_list(session, principal.account_id, id)
    return data({"list": list_view(lst)})


@router.patch("/{id}", response_model=ListResponse, summary="Update a list")
def update_list(
    id: str, body: ListUpdate, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    with _unique_url(), database.transaction() as session:
        lst = owned_list(session, principal.account_id, id)
        for field, value in body.model_dump(exclude_unset=True).items():
            setattr(lst, field, value)
        session.flush()
    lists_changed()
    return data({"list": list_view(lst)})


@router.delete("/{id}", response_model=ListResponse, summary="Delete a list and all it holds")
def delete_list(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    with database.transaction() as session:
        view = list_view(owned_list(session, principal.account_id, id))
        session.execute(
            delete(List).where(List.id == id).execution_options(synchronize_session=False)
        )
    lists_changed()
    return data({"list": view})
