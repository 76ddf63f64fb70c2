"""Response schemas of a contact's export and erasure (`/v4/lists/{listId}/contacts/{id}/...`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from .events import EventOut
from .resources import ActionOut, ContactOut, envelope


class ErasureOut(BaseModel):
    listId: str
    contactId: str
    deleted: bool = Field(
        description="Whether the contact still existed and was deleted by this erasure (false: "
        "it was deleted before, or erased before)."
    )
    events: int = Field(description="Events whose data named the contact's e-mail, redacted.")
    deliveries: int = Field(description="Webhook deliveries of those events, made again.")
    answers: int = Field(
        description="Recorded answers to `Idempotency-Key` retries that held the contact, redacted."
    )


class ErasureData(BaseModel):
    erasure: ErasureOut


class SuppressionIn(BaseModel):
    """An e-mail to look up in, or take off, a list's suppressions (in the body, never in the
    path or the query, which logs and proxies keep)."""

    email: str = Field(min_length=1, max_length=254)


class SuppressionOut(BaseModel):
    listId: str
    suppressed: bool = Field(description="Whether the list suppresses the e-mail now.")
    removed: bool | None = Field(
        default=None, description="For a removal: whether the e-mail was suppressed before it."
    )


class SuppressionData(BaseModel):
    suppression: SuppressionOut


class MembershipOut(BaseModel):
    audienceId: str
    name: str
    enteredAt: datetime
    group: str | None
    holdout: bool


class ContactExportOut(BaseModel):
    listId: str
    contactId: str
    contact: ContactOut | None = Field(
        description="The contact's fields and data; null once it was deleted."
    )
    actions: list[ActionOut]
    memberships: list[MembershipOut] = Field(description="The audiences it is in now.")
    events: list[EventOut] = Field(
        description="Every event of the list's feed naming the contact, in feed order: its "
        "creation, changes (the fields' names), entries into and exits from audiences."
    )


class ContactExportData(BaseModel):
    export: ContactExportOut


SuppressionResponse = envelope("SuppressionResponse", SuppressionData)
ErasureResponse = envelope("ErasureResponse", ErasureData)
ContactExportResponse = envelope("ContactExportResponse", ContactExportData)
