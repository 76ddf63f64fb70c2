"""The request bodies' common ground: strict and closed objects, the contact's profile fields,
and an import's row.

A body is strict (`strict=True`: a JSON boolean is not an integer, a string is not a number)
and closed (`extra="forbid"`: a misspelt field is an error, not silently dropped); an optional
field carries no default in the published schema (`optional`). The API's request schemas
(`api/schemas/`) build on them, and so does the domain, which reads an import's rows itself
(`domain/import_rows.py`): a row is `ContactImportRow`, so it stands here, below both floors,
and the OpenAPI document publishes it from here unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from .fields import (
    Count,
    Data,
    Email,
    Identifier,
    Increase,
    Instant,
    LongText,
    Name,
    Phone,
    Points,
    ShortText,
    Url,
)

MAX_ROW_ACTIONS = 1000
INSTANT_RULE = (
    "ISO 8601 with its offset (`2019-05-01T09:30:00+02:00`), not before 1970 and not more "
    "than 5 minutes ahead of the service's clock"
)


def no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def optional(description: str | None = None) -> Any:
    """An optional body field: absent means unchanged, and the schema shows no default."""
    return Field(default=None, description=description, json_schema_extra=no_default)


class Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class ContactProfile(Body):
    firstName: ShortText | None = optional()
    lastName: ShortText | None = optional()
    phoneNumber: Phone | None = optional()
    name: ShortText | None = optional()
    company: ShortText | None = optional()
    country: ShortText | None = optional()
    city: ShortText | None = optional()
    address: LongText | None = optional()
    website: Url | None = optional()
    socialOne: ShortText | None = optional()
    socialTwo: ShortText | None = optional()
    data: Data = optional()
    points: Points = optional()
    referrals: Count = optional()
    isVerified: bool = optional()
    unsubscribed: bool = optional()
    isGDPR: bool = optional()


class ImportAction(Body):
    """An action of an imported contact, with the instant it happened."""

    name: Name
    increase: Increase
    createdAt: Instant = Field(description=f"When the action happened: {INSTANT_RULE}.")


class ContactImportRow(ContactProfile):
    """One contact of an import: a contact body whose `listId`, if given, is the import's own,
    with its sign-up instant and past actions when the import carries history."""

    email: Email
    listId: Identifier = optional("The import's list, if given at all.")
    createdAt: Instant = optional(f"When the contact signed up: {INSTANT_RULE}. Default: now.")
    actions: Annotated[list[ImportAction], Field(max_length=MAX_ROW_ACTIONS)] = optional(
        "The contact's past actions. Each adds its increase to the points, as `POST "
        "/v4/actions` does, unless the row sends `points` (then the balance, actions "
        "included); one the contact already has (same name, increase and createdAt) is skipped."
    )
