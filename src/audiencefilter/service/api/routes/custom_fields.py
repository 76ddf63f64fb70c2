"""A list's custom fields (`GET /lists/{listId}/fields`, the catalogue of every field, is in
`list_fields.py`).

`POST`, `PATCH` and `DELETE` under `/lists/{listId}/fields` declare, change and remove custom fields
(`domain/custom_fields.py` holds the rules). `GET /lists/{listId}/filter-schema` is the JSON Schema
of the list's where clause, custom fields typed: the OpenAPI document describes the endpoints,
and this document describes each list's filters. The use cases are `domain/use_cases/fields.py`.
"""

from __future__ import annotations

from fastapi import APIRouter

from .... import json_schema
from ...domain.use_cases import fields
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.resources import (
    CustomFieldCreate,
    CustomFieldResponse,
    CustomFieldUpdate,
)

router = APIRouter(prefix="/lists", tags=["custom fields"])


@router.get(
    "/{listId}/filter-schema",
    summary="The JSON Schema of the list's filters",
    description="What `filters` may hold for this list's audiences, its custom fields typed.",
)
def filter_schema(listId: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    schema = fields.filter_schema(database, principal.account_id, listId)
    return data({"schema": json_schema(schema)})


@router.post(
    "/{listId}/fields",
    status_code=201,
    response_model=CustomFieldResponse,
    summary="Declare a custom field",
    description="A typed key of each contact's `data` that the list's filters name directly "
    "(`birthday anniversary within this week`); writes of contacts check its values from now "
    "on. 409 when the key is taken by a custom field, a contact field, a relation or a word "
    "of the filter syntax.",
)
def create_field(
    listId: str, body: CustomFieldCreate, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    field = fields.declare(database, principal.account_id, listId, body.key, body.type, body.label)
    return data({"field": field}, 201)


@router.get(
    "/{listId}/fields/{key}",
    response_model=CustomFieldResponse,
    summary="A custom field",
    description="Its key, type and label.",
)
def get_field(listId: str, key: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    return data({"field": fields.get(database, principal.account_id, listId, key)})


@router.patch(
    "/{listId}/fields/{key}",
    response_model=CustomFieldResponse,
    summary="Change a custom field's type or label",
    description="A type change is refused (409, naming them) while audiences' filters read "
    "the field: their filters were checked against its type.",
)
def update_field(
    listId: str, key: str, body: CustomFieldUpdate, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    field = fields.change(database, principal.account_id, listId, key, body.type, body.label)
    return data({"field": field})


@router.delete(
    "/{listId}/fields/{key}",
    response_model=CustomFieldResponse,
    summary="Remove a custom field",
    description="Refused (409) while audiences' filters read it. Contacts keep the values in "
    "their `data`, which becomes free-form again at that key.",
)
def delete_field(
    listId: str, key: str, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    return data({"field": fields.remove(database, principal.account_id, listId, key)})
