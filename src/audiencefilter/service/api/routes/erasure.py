"""A contact's export (GDPR art. 15) and erasure (art. 17), under the list that holds it.

`GET /v4/lists/{listId}/contacts/{contactId}/export` answers everything the service keeps of
the contact; `POST .../erase` deletes it if it still exists and redacts every copy of its
personal data (events, webhook deliveries, recorded retries). Both name the list so that they
reach a contact deleted earlier, whose events outlive it (`domain/use_cases/erasure.py`).
Erasing again changes nothing and answers the same shape, so a retry is safe without a key.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter

from ...domain.use_cases import erasure
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey, SettingsDep
from ..schemas.erasure import ContactExportResponse, ErasureResponse
from ..schemas.views import action_view

router = APIRouter(prefix="/lists", tags=["contacts"])


@router.post(
    "/{listId}/contacts/{contactId}/erase",
    response_model=ErasureResponse,
    summary="Erase a contact (right to erasure)",
    description="Deletes the contact if it still exists (its exits from audiences and "
    "`contact.deleted` are reported), then redacts its e-mail from the events that named it, "
    "the webhook deliveries made from them (so a redelivery sends nothing erased) and the "
    "recorded answers of `Idempotency-Key` retries, and appends `contact.erased`. Its id "
    "stays in its membership events, so audience sizes and history at earlier instants keep "
    "counting it, as an id that names no one. Works for a contact deleted earlier; erasing "
    "again changes nothing.",
)
def erase_contact(
    listId: str, contactId: str, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    done = erasure.erase(database, principal.account_id, listId, contactId)
    view = {
        "listId": done.list_id,
        "contactId": done.contact_id,
        "deleted": done.deleted,
        **asdict(done.erased),
    }
    return data({"erasure": view})


def _membership(found: erasure.CurrentMembership) -> dict[str, Any]:
    return {
        "audienceId": found.audience_id,
        "name": found.name,
        "enteredAt": found.entered_at,
        "group": found.group,
        "holdout": found.holdout,
    }


@router.get(
    "/{listId}/contacts/{contactId}/export",
    response_model=ContactExportResponse,
    summary="Export a contact's data (right of access)",
    description="Everything the service keeps of the contact: its fields and data (null once "
    "deleted), its actions, the audiences it is in now, and every event naming it (its "
    "membership history among them). Works for a contact deleted earlier.",
)
def export_contact(
    listId: str, contactId: str, principal: PrivateKey, database: DatabaseDep, settings: SettingsDep
) -> JSONResponse:
    found = erasure.export(database, settings, principal.account_id, listId, contactId)
    export = {
        "listId": found.list_id,
        "contactId": found.contact_id,
        "contact": found.contact,
        "actions": [action_view(action) for action in found.actions],
        "memberships": [_membership(m) for m in found.memberships],
        "events": found.events,
    }
    return data({"export": export})
