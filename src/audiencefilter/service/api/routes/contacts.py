"""Contacts: list with filters, sorting and pages; create (any key); read, update, delete.

Email is unique per list ignoring case, enforced by a unique index on `(list_id, email_key)`: a
duplicate insert fails in the database, even when two requests race, and the transaction rolls
back whole, so a 409 creates nothing.

A public key's sign-up answers 201 with the email and list it sent, whether the contact was new
or already listed (then left unchanged): no answer tells a page's visitors who is on the list or
which audiences exist. It may set only `email` and the fields its list names in `publicFields`
(the names by default); any other field is a 403, or dropped if the list's
`publicFieldsPolicy` is `ignore`.

The listing also takes a where clause (`filters`, JSON, or `filtersText`, the text syntax, as
audiences do), read by the filter library and ANDed with the other query filters; an invalid one
is a 400 with the library's problems. Every contact returned carries its position and its
audiences (`api/pages.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from sqlalchemy import ColumnElement, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...db.models import Contact, List
from ...db.queries import owned_contact, owned_list, text_filter
from ...domain import changes, custom_fields, relations
from ...domain.audience_filters import read_filters
from ...ground import clock
from ...ground.fields import normalise_email
from ...http.errors import ApiError, ValidationIssue
from ...http.idempotency import RetryDep, once
from ...http.responses import JSONResponse, data
from ...settings import Settings
from ..deps import AnyKey, DatabaseDep, Principal, PrivateKey, SettingsDep
from ..openapi import RULE_ERROR_RESPONSES
from ..pages import ContactPages
from ..schemas.resources import (
    PUBLIC_FORBIDDEN,
    ContactCreate,
    ContactQuery,
    ContactResponse,
    ContactsResponse,
    ContactUpdate,
    SignUpResponse,
)

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
DUPLICATE_EMAIL = "A contact with this email already exists in this list"


def _filters(query: ContactQuery, lst: List) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = []
    for field in TEXT_FILTERS:
        value = getattr(query, field)
        if value is not None:
            if field == "email":
                value = normalise_email(value)
            where.append(text_filter(getattr(Contact, field), value))
    for field in FLAG_FILTERS:
        value = getattr(query, field)
        if value is not None:
            where.append(getattr(Contact, field).is_(value))
    flt = read_filters(query.filters, query.filtersText, custom_fields.declared(lst)).filter
    if flt is not None:
        where.append(relations.condition(flt, clock.now()))
    return where


def _contact_view(
    session: Session, settings: Settings, lst: List, contact_id: str
) -> dict[str, Any]:
    return ContactPages(session, lst, settings).one(contact_id)


@contextmanager
def _unique_email() -> Iterator[None]:
    try:
        yield
    except IntegrityError:
        raise ApiError(409, DUPLICATE_EMAIL) from None


@router.get(
    "",
    response_model=ContactsResponse,
    summary="List contacts",
    responses=RULE_ERROR_RESPONSES,
)
def list_contacts(
    query: Annotated[ContactQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    with database.reading() as session:
        lst = owned_list(session, principal.account_id, query.listId)
        where = _filters(query, lst)
        pages = ContactPages(session, lst, settings)
        result = pages.page(
            where, page=query.page, limit=query.limit, sort=query.sort, order=query.order
        )
    return data(result)


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


@router.post(
    "",
    status_code=201,
    response_model=ContactResponse | SignUpResponse,
    summary="Create a contact",
    description=(
        "With a private key: the contact created, or 409 when the list has its email. With a "
        "public key (a sign-up form): always 201 with the email and list sent, whether the "
        "contact was created or was already there (then it is left unchanged), so the answer "
        "says nothing about the list's contacts or audiences. A public key may set only `email` "
        "and the fields of the list's `publicFields`; any other field is a 403 naming it, or is "
        "dropped when the list's `publicFieldsPolicy` is `ignore`."
    ),
)
def create_contact(
    body: ContactCreate,
    principal: AnyKey,
    database: DatabaseDep,
    settings: SettingsDep,
    retry: RetryDep,
) -> Response:
    values = body.model_dump(exclude_unset=True, exclude={"listId"})
    claim = retry.claim(principal.account_id, body, scope=principal.idempotency_scope)
    if principal.key_type == "public":
        _refuse_public_fields(body)
        return once(database, claim, lambda session: _sign_up(session, principal, body, values))

    def create(session: Session) -> Response:
        lst = changes.locked_list(session, principal.account_id, body.listId)
        custom_fields.check_data(lst, values.get("data"))
        contact = Contact(listId=lst.id, emailKey=body.email.lower(), **values)
        session.add(contact)
        session.flush()
        changes.contacts_created(session, lst.id, [(contact.id, contact.email)])
        return data({"contact": _contact_view(session, settings, lst, contact.id)}, 201)

    with _unique_email():
        return once(database, claim, create)


def _sign_up(
    session: Session, principal: Principal, body: ContactCreate, values: dict[str, Any]
) -> Response:
    """A public key's sign-up: the same answer whether the email was new or already listed.

    A 409 for a known email would make the public key (anyone who reads the page) an oracle of
    who is on the list; the answer repeats what was sent and nothing else. A known contact is
    left as it is: a sign-up form must not be a way to overwrite someone's profile.
    """
    lst = changes.locked_list(session, principal.account_id, body.listId)
    values = _public_values(lst, values)
    custom_fields.check_data(lst, values.get("data"))
    key = body.email.lower()
    known = select(Contact.id).where(Contact.listId == lst.id, Contact.emailKey == key)
    if session.scalar(known) is None:
        contact = Contact(listId=lst.id, emailKey=key, **values)
        try:
            with session.begin_nested():  # a concurrent sign-up of the same email wins quietly
                session.add(contact)
        except IntegrityError:
            return data({"contact": {"email": body.email, "listId": lst.id}}, 201)
        changes.contacts_created(session, lst.id, [(contact.id, contact.email)])
    return data({"contact": {"email": body.email, "listId": lst.id}}, 201)


def _public_values(lst: List, values: dict[str, Any]) -> dict[str, Any]:
    """What a public sign-up may write in this list: `email` and the list's `publicFields`.

    A public key sits in a page anyone can read, so whoever copies it would otherwise choose
    the `data` and profile fields that put a contact into the list's private smart audiences.
    Anything else is refused with a 403 naming it, or dropped when the list's policy says so.
    """
    allowed = {"email", *lst.publicFields}
    refused = [field for field in values if field not in allowed]
    if refused and lst.publicFieldsPolicy != "ignore":
        raise _not_public(refused)
    return {field: value for field, value in values.items() if field in allowed}


def _not_public(refused: list[str]) -> ApiError:
    return ApiError(
        403,
        f"A public key may not set {', '.join(refused)} in this list: add it to the list's "
        'publicFields, or set its publicFieldsPolicy to "ignore"',
        errors=[
            ValidationIssue(pointer=f"/body/{field}", detail="not in the list's publicFields")
            for field in refused
        ],
    )


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
        contact, lst = changes.locked_contact(session, principal.account_id, id)
        sent = body.model_dump(exclude_unset=True)
        custom_fields.check_data(lst, sent.get("data"))
        for field, value in sent.items():
            setattr(contact, field, value)
        if "email" in body.model_fields_set:
            contact.emailKey = contact.email.lower()
        session.flush()
        changes.contact_updated(session, lst.id, id, sent)
        view = _contact_view(session, settings, lst, id)
    return data({"contact": view})


@router.delete("/{id}", response_model=ContactResponse, summary="Delete a contact")
def delete_contact(
    id: str, principal: PrivateKey, database: DatabaseDep, settings: SettingsDep
) -> JSONResponse:
    with database.transaction() as session:
        contact, lst = changes.locked_contact(session, principal.account_id, id)
        view = _contact_view(session, settings, lst, id)
        changes.contact_deleting(session, lst.id, id, contact.email)
        session.delete(contact)
    return data({"contact": view})
