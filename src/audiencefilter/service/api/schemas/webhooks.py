"""Request and response schemas of webhooks (`/v4/webhooks`) and their delivery log."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ...ground.bodies import no_default, optional
from ...ground.fields import MAX_INT32, Identifier, LongText, QueryText, Url
from .resources import envelope

EventType = Literal[
    "audience.entered",
    "audience.left",
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "contact.erased",
    "audience.created",
    "audience.updated",
    "audience.deleted",
]
MAX_TYPES = len(get_args(EventType))
"""An endpoint names each type at most once."""
DeliveryStatus = Literal["pending", "delivered", "failed"]
WebhookStatus = Literal["enabled", "disabled"]
DEFAULT_TYPES: list[EventType] = ["audience.entered", "audience.left"]
MAX_PAGE = 100

_URL = "Where deliveries are POSTed: an http or https URL of a public address."
_TYPES = (
    "The event types this endpoint receives (at least one; no repeats). Default: "
    "`audience.entered` and `audience.left`."
)


class _Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class WebhookCreate(_Body):
    """A new endpoint of a list."""

    listId: Identifier
    url: Url = Field(description=_URL)
    eventTypes: list[EventType] = Field(
        default_factory=lambda: list(DEFAULT_TYPES),
        min_length=1,
        max_length=MAX_TYPES,
        description=_TYPES,
    )
    description: LongText | None = optional("A note for the people who read the list.")


class WebhookUpdate(_Body):
    """Changes the fields sent. `enabled: true` enables a disabled endpoint again (its pending
    deliveries are sent at once); `enabled: false` pauses it."""

    url: Url = optional(_URL)
    eventTypes: list[EventType] = Field(
        default=None,  # type: ignore[arg-type]  # absent: unchanged (null is refused)
        min_length=1,
        max_length=MAX_TYPES,
        description=_TYPES,
        json_schema_extra=no_default,
    )
    description: LongText | None = optional("A note for the people who read the list.")
    enabled: bool = optional("Whether deliveries are sent.")


class WebhookQuery(BaseModel):
    listId: QueryText
    limit: int = Field(default=MAX_PAGE, ge=1, le=MAX_PAGE)
    page: int = Field(default=1, ge=1, le=MAX_INT32)


class DeliveryQuery(BaseModel):
    status: DeliveryStatus | None = Field(
        default=None, description="Only deliveries in this state: pending, delivered or failed."
    )
    limit: int = Field(default=MAX_PAGE, ge=1, le=MAX_PAGE)
    page: int = Field(default=1, ge=1, le=MAX_INT32)


class WebhookOut(BaseModel):
    id: str = Field(description="The endpoint's id (`whk_...`).")
    listId: str
    url: str
    description: str | None
    eventTypes: list[EventType]
    status: WebhookStatus = Field(
        description="`enabled`, or `disabled` (by a PATCH, or by a long run of failures)."
    )
    disabledReason: str | None = Field(description="Why it was disabled, when it is.")
    disabledAt: datetime | None
    failureCount: int = Field(description="Failed attempts since the last successful one.")
    failingSince: datetime | None = Field(description="The first of those failed attempts.")
    createdAt: datetime
    updatedAt: datetime


class WebhookCreated(WebhookOut):
    secret: str = Field(
        description="The signing secret (`whsec_` and base64), shown only in this answer."
    )


class SecretOut(BaseModel):
    secret: str = Field(description="The new signing secret, shown only in this answer.")
    previousSecretUntil: datetime | None = Field(
        description="Until when deliveries are also signed with the previous secret."
    )


class AttemptOut(BaseModel):
    attemptedAt: datetime
    statusCode: int | None = Field(description="The receiver's HTTP status; null when none came.")
    durationMs: int
    error: str | None = Field(description="Why the attempt failed (a non-2xx, a timeout ...).")
    success: bool


class DeliveryOut(BaseModel):
    id: str = Field(description="The delivery's id, sent as `webhook-id` (`msg_...`).")
    webhookId: str
    eventId: str
    eventType: EventType
    status: DeliveryStatus
    attempts: int = Field(description="Attempts since it was made (or redelivered).")
    nextAttemptAt: datetime | None = Field(description="When a pending delivery is tried next.")
    lastStatusCode: int | None
    lastError: str | None
    deliveredAt: datetime | None
    createdAt: datetime
    attemptLog: list[AttemptOut] = Field(description="Every attempt, oldest first.")


class Pagination(BaseModel):
    total: int
    pages: int
    currentPage: int
    perPage: int


class WebhookData(BaseModel):
    webhook: WebhookOut


class WebhookCreatedData(BaseModel):
    webhook: WebhookCreated


class WebhooksData(BaseModel):
    webhooks: list[WebhookOut]
    pagination: Pagination


class SecretData(BaseModel):
    webhook: WebhookOut
    secret: SecretOut


class DeliveriesData(BaseModel):
    deliveries: list[DeliveryOut]
    pagination: Pagination


class DeliveryData(BaseModel):
    delivery: DeliveryOut


WebhookResponse = envelope("WebhookResponse", WebhookData)
WebhookCreatedResponse = envelope("WebhookCreatedResponse", WebhookCreatedData)
WebhooksResponse = envelope("WebhooksResponse", WebhooksData)
SecretResponse = envelope("SecretResponse", SecretData)
DeliveriesResponse = envelope("DeliveriesResponse", DeliveriesData)
DeliveryResponse = envelope("DeliveryResponse", DeliveryData)
