"""Contacts: list with filters, sorting and pages; create (any key); read, update, delete.

Email is unique per list ignoring case, enforced by a unique index on `(list_id, email_key)`: a
duplicate insert fails in the database, even when two requests race, and the transaction rolls
back whole, so a 409 creates nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Query
from sqlalchemy import ColumnElement
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..deps import AnyKey, DatabaseDep, PrivateKey, SettingsDep
from ..errors import ApiError, ValidationIssue
from ..models import Contact, List
from ..queries import RankedContacts, count, owned_contact, owned_list, page_of, text_filter
from ..responses import JSONResponse, data
from ..schemas import (
    PUBLIC_FORBIDDEN,
    ContactCreate,
    ContactQuery,
    ContactResponse,
    ContactsResponse,
    ContactUpdate,
)
from ..settings import Settings
from ..views import ContactRenderer, pagination

router = APIRouter(prefix="/contacts", tags=["contacts"])

TEXT_FILTERS = (
    "email",
    "firstName",
    "lastName",
    "phoneNumber",
    "name",
    "company",
    "country",
    "city",
    "socialOne",
    "socialTwo",
    "website",
)
FLAG_FILTERS = ("isVerified", "unsubscribed", "isGDPR")
NULLABLE_SORT_KEYS = frozenset({"firstName", "lastName"})
DUPLICATE_EMAIL = "A contact with this email already exists in this list"


def _filters(entity: Any, query: ContactQuery) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = []
    for field in TEXT_FILTERS:
        value = getattr(query, field)
        if value is not None:
            where.append(text_filter(getattr(entity, field), value))
    for field in FLAG_FILTERS:
        value = getattr(query, field)
        if value is not None:
            where.append(getattr(entity, field).is_(value))
    return where


def _sort_keys(ranked: RankedContacts, query: ContactQuery) -> list[Any]:
    """The sort key, then sign-up time, then id, all in the requested order (stable pages)."""
    entity = ranked.entity
    columns: list[Any]
    if query.sort == "position":
        columns = [ranked.rank]
    elif query.sort is None:
        columns = [entity.points, entity.createdAt, entity.id]
    elif query.sort == "createdAt":
        columns = [entity.createdAt, entity.id]
    else:
        columns = [getattr(entity, query.sort), entity.createdAt, entity.id]
    keys = [column.asc() if query.order == "asc" else column.desc() for column in columns]
    if query.sort in NULLABLE_SORT_KEYS:
        keys[0] = keys[0].nulls_last()
    return keys


def _contact_view(
    session: Session, settings: Settings, lst: List, contact_id: str
) -> dict[str, Any]:
    contact, position = RankedContacts(lst).one(session, contact_id)
    return ContactRenderer(lst, settings)(contact, position)


@contextmanager
def _unique_email() -> Iterator[None]:
    try:
        yield
    except IntegrityError:
        raise ApiError(409, DUPLICATE_EMAIL) from None


@router.get("", response_model=ContactsResponse, summary="List contacts")
def list_contacts(
    query: Annotated[ContactQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    with database.reading() as session:
        lst = owned_list(session, principal.account_id, query.listId)
        ranked = RankedContacts(lst)
        statement = ranked.select().where(*_filters(ranked.entity, query))
        statement = statement.order_by(*_sort_keys(ranked, query))
        rows = ranked.fetch(session, page_of(statement, query.page, query.limit))
        total = count(session, Contact, Contact.listId == lst.id, *_filters(Contact, query))
    render = ContactRenderer(lst, settings)
    return data(
        {
            "contacts": [render(contact, position) for contact, position in rows],
            "pagination": pagination(total, query.page, query.limit),
        }
    )


def _refuse_public_fields(body: ContactCreate) -> None:
    refused = [field for field in PUBLIC_FORBIDDEN if field in body.model_fields_set]
    if refused:
        raise ApiError(
            400,
            f"Public keys cannot set: {', '.join(refused)}",
            errors=[
                ValidationIssue(pointer=f"/body/{field}", detail="not allowed with a public key")
                for field in refused
            ],
        )


@router.post("", status_code=201, response_model=ContactResponse, summary="Create a contact")
def create_contact(
    body: ContactCreate, principal: AnyKey, database: DatabaseDep, settings: SettingsDep
) -> JSONResponse:
    if principal.key_type == "public":
        _refuse_public_fields(body)
    values = body.model_dump(exclude_unset=True, exclude={"listId"})
    with _unique_email(), database.transaction() as session:
        lst = owned_list(session, principal.account_id, body.listId)
        contact = Contact(listId=lst.id, emailKey=body.email.lower(), **values)
        session.add(contact)
        session.flush()
        view = _contact_view(session, settings, lst, contact.id)
    return data({"contact": view}, 201)


@router.get("/{id}", response_model=ContactResponse, summary="Retrieve a contact")
def get_contact(
    id: str, principal: PrivateKey, database: DatabaseDep, settings: SettingsDep
) -> JSONResponse:
    with database.reading() as session:
        _, lst = owned_contact(session, principal.account_id, id)
        return data({"contact": _contact_view(session, settings, lst, id)})


@router.patch("/{id}", response_model=ContactResponse, summary="Update a contact")
def update_contact(
    id: str,
    body: ContactUpdate,
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    with _unique_email(), database.transaction() as session:
        contact, lst = owned_contact(session, principal.account_id, id)
        for field, value in body.model_dump(exclude_unset=True).items():
            setattr(contact, field, value)
        if "email" in body.model_fields_set:
            contact.emailKey = contact.email.lower()
        session.flush()
        view = _contact_view(session, settings, lst, id)
    return data({"contact": view})


@router.delete("/{id}", response_model=ContactResponse, summary="Delete a contact")
def delete_contact(
    id: str, principal: PrivateKey, database: DatabaseDep, settings: SettingsDep
) -> JSONResponse:
    with database.transaction() as session:
        contact, lst = owned_contact(session, principal.account_id, id)
        view = _contact_view(session, settings, lst, id)
        session.delete(contact)
    return data({"contact": view})
