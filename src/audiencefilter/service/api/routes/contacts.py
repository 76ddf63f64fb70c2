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
audiences (`domain/contact_pages.py`). The use cases are `domain/use_cases/contacts.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from ...db.engine import Database
from ...domain.contact_pages import Paging
from ...domain.use_cases import contacts
from ...ground.errors import ValidationIssue
from ...http.errors import ApiError
from ...http.idempotency import RetryDep
from ...http.responses import JSONResponse, data
from ...settings import Settings
from ..deps import AnyKey, DatabaseDep, Principal, PrivateKey, SettingsDep
from ..openapi import RULE_ERROR_RESPONSES
from ..schemas.resources import (
    MAX_IDS,
    PUBLIC_FORBIDDEN,
    ContactCreate,
    ContactQuery,
    ContactResponse,
    ContactsResponse,
    ContactUpdate,
    SignUpResponse,
)

router = APIRouter(prefix="/contacts", tags=["contacts"])
MATCHED = contacts.TEXT_FILTERS + contacts.FLAG_FILTERS


def _search(query: ContactQuery) -> contacts.ContactSearch:
    matches = {field: getattr(query, field) for field in MATCHED}
    return contacts.ContactSearch(
        list_id=query.listId,
        matches={field: value for field, value in matches.items() if value is not None},
        filters=query.filters,
        filters_text=query.filtersText,
        paging=Paging(query.page, query.limit, query.sort, query.order),
        ids=_ids(query.ids),
    )


def _ids(text: str | None) -> tuple[str, ...]:
    """The `ids` parameter's ids; more than `MAX_IDS` is a 400 naming the limit."""
    ids = tuple(dict.fromkeys(text.split(","))) if text else ()
    if len(ids) > MAX_IDS:
        raise ApiError(400, f"Invalid request: /query/ids: at most {MAX_IDS} ids, found {len(ids)}")
    return ids


def _contact(view: dict[str, Any]) -> Response:
    return data({"contact": view}, 201)


def _signed_up(email: str) -> Callable[[str], Response]:
    """A sign-up's answer, the same whether the contact was new: what was sent, nothing more."""
    return lambda list_id: data({"contact": {"email": email, "listId": list_id}}, 201)


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
    return data(contacts.search(database, settings, principal.account_id, _search(query)))


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
    settings: SettingsDep,
    retry: RetryDep,
) -> Response:
    values = body.model_dump(exclude_unset=True, exclude={"listId"})
    if principal.key_type == "public":
        _refuse_public_fields(body)
        scope = principal.idempotency_scope
        signed_up = retry.once(principal.account_id, body, _signed_up(body.email), scope)
        return contacts.sign_up(principal.account_id, body.listId, values, signed_up)
    writes = retry.once(principal.account_id, body, _contact)
    return contacts.create(settings, principal.account_id, body.listId, values, writes)


@router.get("/{id}", response_model=ContactResponse, summary="Retrieve a contact")
def get_contact(
    id: str, principal: PrivateKey, database: DatabaseDep, settings: SettingsDep
) -> JSONResponse:
    return data({"contact": contacts.get(database, settings, principal.account_id, id)})


@router.patch("/{id}", response_model=ContactResponse, summary="Update a contact")
def update_contact(
    id: str,
    body: ContactUpdate,
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    return updated(principal, database, settings, id, body)


def updated(
    principal: Principal,
    database: Database,
    settings: Settings,
    contact_id: str,
    body: ContactUpdate,
) -> JSONResponse:
    """A PATCH's work and answer, once the key and the body are checked: the route's, and the
    hot route's beside it (`api/hot_routes.py`)."""
    sent = body.model_dump(exclude_unset=True)
    view = contacts.update(database, settings, principal.account_id, contact_id, sent)
    return data({"contact": view})


@router.delete("/{id}", response_model=ContactResponse, summary="Delete a contact")
def delete_contact(
    id: str, principal: PrivateKey, database: DatabaseDep, settings: SettingsDep
) -> JSONResponse:
    return data({"contact": contacts.remove(database, settings, principal.account_id, id)})
