"""`GET /v4/lists/{listId}/fields`: the field catalogue of a list, for audience builders; and
`GET /v4/lists/{listId}/signup-form`: the fields its sign-up form collects, for public keys too.

A builder (the service's own `/builder` page, or a client's) offers each field with the
operators of its type; it asks here rather than hard-coding the contact model, so the fields it
shows are the ones the service's filters accept (`domain/field_catalogue.py`).
"""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter

from ...domain.use_cases import fields
from ...http.responses import JSONResponse, data
from ..deps import AnyKey, DatabaseDep, PrivateKey
from ..schemas.list_fields import ListFieldsResponse, SignUpFormResponse

router = APIRouter(prefix="/lists", tags=["lists"])


@router.get(
    "/{listId}/fields",
    response_model=ListFieldsResponse,
    summary="The fields a list's filters may name",
    description="Every filterable field of the list's contacts with its type (which decides "
    "the operators that apply) and a label, and the relations (`actions`, `audiences`) with "
    "the fields of their rows: what an audience builder offers.",
)
def list_fields(listId: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    return data(asdict(fields.catalogue(database, principal.account_id, listId)))


@router.get(
    "/{listId}/signup-form",
    response_model=SignUpFormResponse,
    summary="The fields a list's sign-up form collects",
    description="`email` and each field the list's `publicFields` opens, with a label and "
    "the type of its input: what a sign-up form shows, so it sends nothing a public key may "
    "not set. Public keys may call it (the one read they may make): it tells only what the "
    "form shows anyway, nothing of the list's contacts or audiences.",
)
def sign_up_form(listId: str, principal: AnyKey, database: DatabaseDep) -> JSONResponse:
    return data(asdict(fields.sign_up_form(database, principal.account_id, listId)))
