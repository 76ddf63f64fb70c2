"""Webhooks: endpoints of a list that receive its events, their delivery log, redelivery.

An endpoint is created with its URL and the event types it wants; the answer carries its
signing secret, the only time it is shown (`POST /webhooks/{id}/secret` makes a new one). URLs
are checked (`domain/webhooks/targets.py`): http(s) only, public addresses only unless the
settings allow a network. Deliveries are made and sent by the worker
(`domain/webhooks/worker.py`); this module only reads them and asks for redeliveries.
Everything is scoped like the other resources: an endpoint of another account is a 404.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ...db.models import List, Webhook, WebhookAttempt, WebhookDelivery
from ...db.queries import count, owned_list, page_of, plausible_id
from ...domain import events
from ...domain.webhooks import dispatch, signing, targets
from ...ground import clock
from ...ground.errors import not_found
from ...http.errors import ApiError, ValidationIssue
from ...http.idempotency import RetryDep, once
from ...http.responses import JSONResponse, data
from ...settings import Settings
from ..deps import DatabaseDep, PrivateKey, SettingsDep
from ..schemas.views import pagination
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
NOT_ENABLED = "This webhook is disabled: enable it (PATCH enabled: true) to redeliver"


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


def _check_room(session: Session, list_id: str, most: int) -> None:
    """One more endpoint, within the list's bound (counted under the list's lock)."""
    count = session.scalar(select(func.count()).where(Webhook.listId == list_id)) or 0
    if count >= most:
        raise ApiError(
            409,
            f"The list has {count} webhooks, the most allowed (webhook_max_per_list): delete "
            "one, or send several event types to one endpoint",
        )


def _unique_types(types: list[str]) -> list[str]:
    if len(set(types)) != len(types):
        detail = "expected each event type once"
        raise ApiError(
            400,
            f"Invalid request: /body/eventTypes: {detail}",
            errors=[ValidationIssue(pointer="/body/eventTypes", detail=detail)],
        )
    return types


def owned_webhook(session: Session, account_id: str, webhook_id: str) -> Webhook:
    if plausible_id(webhook_id):
        found = session.scalars(
            select(Webhook)
            .join(List, List.id == Webhook.listId)
            .where(Webhook.id == webhook_id, List.accountId == account_id)
        ).first()
        if found is not None:
            return found
    raise not_found("Webhook")


@router.post("", status_code=201, response_model=WebhookCreatedResponse, summary="Create a webhook")
def create_webhook(
    request: Request,
    body: WebhookCreate,
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
    retry: RetryDep,
) -> Response:
    types = _unique_types(list(body.eventTypes))
    _check_url(body.url, settings)

    def create(session: Session) -> Response:
        lst = owned_list(session, principal.account_id, body.listId)
        events.lock_list(session, lst.id)  # the position read next is a committed one
        _check_room(session, lst.id, settings.webhook_max_per_list)
        hook = Webhook(
            listId=lst.id,
            url=body.url,
            description=body.description,
            eventTypes=types,
            secret=signing.new_secret(),
            status=dispatch.ENABLED,
            failureCount=0,
            position=events.head(session, lst.id),
        )
        session.add(hook)
        session.flush()
        return data({"webhook": {**webhook_view(hook), "secret": hook.secret}}, 201)

    response = once(database, retry.claim(principal.account_id, body), create)
    worker = getattr(request.app.state, "webhook_worker", None)
    if worker is not None:
        worker.wake()
    return response


@router.get("", response_model=WebhooksResponse, summary="List the webhooks of a list")
def list_webhooks(
    query: Annotated[WebhookQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    with database.reading() as session:
        lst = owned_list(session, principal.account_id, query.listId)
        statement = (
            select(Webhook)
            .where(Webhook.listId == lst.id)
            .order_by(Webhook.createdAt.desc(), Webhook.id)
        )
        hooks = session.scalars(page_of(statement, query.page, query.limit)).all()
        total = count(session, Webhook, Webhook.listId == lst.id)
    return data(
        {
            "webhooks": [webhook_view(hook) for hook in hooks],
            "pagination": pagination(total, query.page, query.limit),
        }
    )


@router.get("/{id}", response_model=WebhookResponse, summary="Retrieve a webhook")
def get_webhook(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    with database.reading() as session:
        hook = owned_webhook(session, principal.account_id, id)
    return data({"webhook": webhook_view(hook)})


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
    with database.transaction() as session:
        hook = owned_webhook(session, principal.account_id, id)
        if "url" in sent:
            hook.url = body.url
        if "eventTypes" in sent:
            hook.eventTypes = _unique_types(list(body.eventTypes))
        if "description" in sent:
            hook.description = body.description
        if "enabled" in sent:
            if body.enabled and hook.status != dispatch.ENABLED:
                dispatch.enable(session, hook)
            elif not body.enabled and hook.status == dispatch.ENABLED:
                dispatch.disable(hook, "disabled by a request")
        hook.updatedAt = clock.now()
        session.flush()
        view = webhook_view(hook)
    return data({"webhook": view})


@router.delete("/{id}", response_model=WebhookResponse, summary="Delete a webhook")
def delete_webhook(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    with database.transaction() as session:
        hook = owned_webhook(session, principal.account_id, id)
        view = webhook_view(hook)
        session.execute(
            delete(Webhook).where(Webhook.id == id).execution_options(synchronize_session=False)
        )
    return data({"webhook": view})


@router.post("/{id}/secret", response_model=SecretResponse, summary="Rotate a webhook's secret")
def rotate_secret(
    id: str, principal: PrivateKey, database: DatabaseDep, settings: SettingsDep, retry: RetryDep
) -> Response:
    def rotate(session: Session) -> Response:
        hook = owned_webhook(session, principal.account_id, id)
        grace = settings.webhook_secret_grace_seconds
        until = clock.now() + timedelta(seconds=grace) if grace > 0 else None
        hook.previousSecret = hook.secret if until is not None else None
        hook.previousSecretUntil = until
        hook.secret = signing.new_secret()
        hook.updatedAt = clock.now()
        session.flush()
        answer = {
            "webhook": webhook_view(hook),
            "secret": {"secret": hook.secret, "previousSecretUntil": until},
        }
        return data(answer)

    return once(database, retry.claim(principal.account_id, _NO_BODY), rotate)


@router.get(
    "/{id}/deliveries", response_model=DeliveriesResponse, summary="List a webhook's deliveries"
)
def list_deliveries(
    id: str,
    query: Annotated[DeliveryQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
) -> JSONResponse:
    with database.reading() as session:
        hook = owned_webhook(session, principal.account_id, id)
        conditions = [WebhookDelivery.webhookId == hook.id]
        if query.status is not None:
            conditions.append(WebhookDelivery.status == query.status)
        statement = (
            select(WebhookDelivery)
            .where(*conditions)
            .order_by(WebhookDelivery.eventPosition.desc(), WebhookDelivery.id)
        )
        rows = session.scalars(page_of(statement, query.page, query.limit)).all()
        total = count(session, WebhookDelivery, *conditions)
        attempts = dispatch.attempts_of(session, [row.id for row in rows])
    return data(
        {
            "deliveries": [delivery_view(row, attempts[row.id]) for row in rows],
            "pagination": pagination(total, query.page, query.limit),
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
    database: DatabaseDep,
    retry: RetryDep,
) -> Response:
    def again(session: Session) -> Response:
        hook = owned_webhook(session, principal.account_id, id)
        delivery = (
            session.get(WebhookDelivery, deliveryId, with_for_update=True)
            if plausible_id(deliveryId)
            else None
        )
        if delivery is None or delivery.webhookId != hook.id:
            raise not_found("Delivery")
        if hook.status != dispatch.ENABLED:
            raise ApiError(409, NOT_ENABLED)
        dispatch.redeliver(delivery)
        session.flush()
        view = delivery_view(delivery, dispatch.attempts_of(session, [delivery.id])[delivery.id])
        return data({"delivery": view}, 202)

    return once(database, retry.claim(principal.account_id, _NO_BODY), again)
