"""A contact's export (GDPR art. 15) and erasure (art. 17), under the list that holds it.

`GET /v4/lists/{listId}/contacts/{contactId}/export` answers everything the service keeps of
the contact; `POST .../erase` deletes it if it still exists and redacts every copy of its
personal data (events, webhook deliveries, recorded retries). Both name the list so that they
reach a contact deleted earlier, whose events outlive it (`domain/use_cases/erasure.py`).
Erasing again changes nothing and answers the same shape, so a retry is safe without a key.
An erasure suppresses the contact's e-mails in the list (`domain/suppression.py`);
`POST .../suppressions/check` and `.../suppressions/remove` look one up and take it back.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter

from ...domain.use_cases import erasure
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey, SettingsDep
from ..schemas.erasure import (
    ContactExportResponse,
    ErasureResponse,
    SuppressionIn,
    SuppressionResponse,
)
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


@router.post(
    "/{listId}/suppressions/check",
    response_model=SuppressionResponse,
    summary="Whether a list suppresses an e-mail",
    description="An erasure suppresses the e-mails of the erased contact in its list: imports "
    "answer `suppressed` for them, a private create answers 409, a sign-up creates nothing. "
    "The list keeps a keyed hash of each, not the address.",
)
def check_suppression(
    listId: str, body: SuppressionIn, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = erasure.check_suppressed(database, principal.account_id, listId, body.email)
    return data({"suppression": {"listId": listId, "suppressed": found}})


@router.post(
    "/{listId}/suppressions/remove",
    response_model=SuppressionResponse,
    summary="Take an e-mail off a list's suppressions",
    description="After this the list takes the e-mail again (an import or a create makes a "
    "new contact). Logged with the account and the key that asked; removing an e-mail that "
    "is not suppressed changes nothing.",
)
def remove_suppression(
    listId: str, body: SuppressionIn, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    asked_by = f"account {principal.account_id}, key {principal.key_id}"
    removed = erasure.unsuppress(
        database, principal.account_id, listId, body.email, asked_by=asked_by
    )
    view = {"listId": listId, "suppressed": False, "removed": removed}
    return data({"suppression": view})


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
