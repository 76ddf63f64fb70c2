"""Webhooks: endpoints of a list that receive its events, their delivery log, redelivery.

An endpoint is created with its URL and the event types it wants; the answer carries its
signing secret, the only time it is shown (`POST /webhooks/{id}/secret` makes a new one). URLs
are checked (`domain/webhooks/targets.py`): http(s) only, public addresses only unless the
settings allow a network. Deliveries are made and sent by the worker
(`domain/webhooks/worker.py`); this module only reads them and asks for redeliveries.
Everything is scoped like the other resources: an endpoint of another account is a 404. The use
cases are `domain/use_cases/webhooks.py`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from ...db.models import Webhook, WebhookAttempt, WebhookDelivery
from ...domain.contact_pages import pagination
from ...domain.use_cases import webhooks
from ...domain.webhooks import dispatch, targets
from ...ground.errors import ValidationIssue
from ...http.errors import ApiError
from ...http.idempotency import RetryDep
from ...http.responses import JSONResponse, data
from ...settings import Settings
from ..deps import DatabaseDep, PrivateKey, SettingsDep
from ..schemas.webhooks import (
    DeliveriesResponse,
    DeliveryQuery,
    DeliveryResponse,
    SecretResponse,
    WebhookCreate,
    WebhookCreatedResponse,
    WebhookQuery,
    WebhookResponse,
    WebhooksResponse,
    WebhookUpdate,
)

router = APIRouter(prefix="/webhooks", tags=["webhooks"])


class _NoBody(BaseModel):
    """The body of the POSTs that take none: the Idempotency-Key covers method and path."""


_NO_BODY = _NoBody()


def webhook_view(hook: Webhook) -> dict[str, Any]:
    return {
        "id": hook.id,
        "listId": hook.listId,
        "url": hook.url,
        "description": hook.description,
        "eventTypes": list(hook.eventTypes),
        "status": hook.status,
        "disabledReason": hook.disabledReason,
        "disabledAt": hook.disabledAt,
        "failureCount": hook.failureCount,
        "failingSince": hook.failingSince,
        "createdAt": hook.createdAt,
        "updatedAt": hook.updatedAt,
    }


def delivery_view(delivery: WebhookDelivery, attempts: list[WebhookAttempt]) -> dict[str, Any]:
    return {
        "id": delivery.id,
        "webhookId": delivery.webhookId,
        "eventId": delivery.eventId,
        "eventType": delivery.eventType,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "nextAttemptAt": delivery.nextAttemptAt if delivery.status == dispatch.PENDING else None,
        "lastStatusCode": delivery.lastStatusCode,
        "lastError": delivery.lastError,
        "deliveredAt": delivery.deliveredAt,
        "createdAt": delivery.createdAt,
        "attemptLog": [
            {
                "attemptedAt": attempt.attemptedAt,
                "statusCode": attempt.statusCode,
                "durationMs": attempt.durationMs,
                "error": attempt.error,
                "success": attempt.success,
            }
            for attempt in attempts
        ],
    }


def _check_url(url: str, settings: Settings) -> None:
    try:
        targets.resolve(url, targets.networks(settings.webhook_allowed_networks))
    except targets.TargetRefused as exc:
        raise ApiError(
            400,
            f"Invalid request: /body/url: {exc}",
            errors=[ValidationIssue(pointer="/body/url", detail=str(exc))],
        ) from None


def _created(hook: Webhook) -> Response:
    return data({"webhook": {**webhook_view(hook), "secret": hook.secret}}, 201)


def _rotated(rotated: webhooks.Rotated) -> Response:
    hook = rotated.webhook
    secret = {"secret": hook.secret, "previousSecretUntil": rotated.previous_until}
    return data({"webhook": webhook_view(hook), "secret": secret})


def _redelivered(found: webhooks.Delivery) -> Response:
    return data({"delivery": delivery_view(found.delivery, found.attempts)}, 202)


@router.post("", status_code=201, response_model=WebhookCreatedResponse, summary="Create a webhook")
def create_webhook(
    request: Request,
    body: WebhookCreate,
    principal: PrivateKey,
    settings: SettingsDep,
    retry: RetryDep,
) -> Response:
    types = webhooks.unique_types(body.eventTypes)
    _check_url(body.url, settings)
    new = webhooks.NewWebhook(body.listId, body.url, body.description, types)
    writes = retry.once(principal.account_id, body, _created)
    response = webhooks.create(settings, principal.account_id, new, writes)
    worker = getattr(request.app.state, "webhook_worker", None)
    if worker is not None:
        worker.wake()
    return response


@router.get("", response_model=WebhooksResponse, summary="List the webhooks of a list")
def list_webhooks(
    query: Annotated[WebhookQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = webhooks.page(database, principal.account_id, query.listId, query.page, query.limit)
    return data(
        {
            "webhooks": [webhook_view(hook) for hook in found.items],
            "pagination": pagination(found.total, query.page, query.limit),
        }
    )


@router.get("/{id}", response_model=WebhookResponse, summary="Retrieve a webhook")
def get_webhook(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    return data({"webhook": webhook_view(webhooks.get(database, principal.account_id, id))})


@router.patch("/{id}", response_model=WebhookResponse, summary="Update a webhook")
def update_webhook(
    id: str,
    body: WebhookUpdate,
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    sent = body.model_fields_set
    for name in ("url", "eventTypes", "enabled"):
        if name in sent and getattr(body, name) is None:
            detail = "expected a value; this field cannot be cleared"
            raise ApiError(
                400,
                f"Invalid request: /body/{name}: {detail}",
                errors=[ValidationIssue(pointer=f"/body/{name}", detail=detail)],
            )
    if "url" in sent:
        _check_url(body.url, settings)
    hook = webhooks.update(database, principal.account_id, id, body.model_dump(include=sent))
    return data({"webhook": webhook_view(hook)})


@router.delete("/{id}", response_model=WebhookResponse, summary="Delete a webhook")
def delete_webhook(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    return data({"webhook": webhook_view(webhooks.remove(database, principal.account_id, id))})


@router.post("/{id}/secret", response_model=SecretResponse, summary="Rotate a webhook's secret")
def rotate_secret(
    id: str, principal: PrivateKey, settings: SettingsDep, retry: RetryDep
) -> Response:
    writes = retry.once(principal.account_id, _NO_BODY, _rotated)
    return webhooks.rotate(settings, principal.account_id, id, writes)


@router.get(
    "/{id}/deliveries", response_model=DeliveriesResponse, summary="List a webhook's deliveries"
)
def list_deliveries(
    id: str,
    query: Annotated[DeliveryQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
) -> JSONResponse:
    found = webhooks.deliveries(
        database, principal.account_id, id, query.status, query.page, query.limit
    )
    return data(
        {
            "deliveries": [delivery_view(d.delivery, d.attempts) for d in found.items],
            "pagination": pagination(found.total, query.page, query.limit),
        }
    )


@router.post(
    "/{id}/deliveries/{deliveryId}/redeliver",
    status_code=202,
    response_model=DeliveryResponse,
    summary="Send a delivery again",
)
def redeliver(
    id: str,
    deliveryId: str,
    principal: PrivateKey,
    retry: RetryDep,
) -> Response:
    writes = retry.once(principal.account_id, _NO_BODY, _redelivered)
    return webhooks.redeliver(principal.account_id, id, deliveryId, writes)
