"""Webhooks: the endpoints of a list that receive its events, their delivery log, redelivery.

An endpoint is created with its URL and the event types it wants, and starts at the list's
outbox head (events committed before it are not its business); a list holds at most
`webhook_max_per_list`, counted under the list's lock. Its signing secret is new at creation and
on rotation, the previous one kept for `webhook_secret_grace_seconds`. Deliveries are made and
sent by the worker (`webhooks/worker.py`); these use cases only read them and ask for
redeliveries. An endpoint of another account is not found, like every other resource.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import Webhook, WebhookAttempt, WebhookDelivery
from ...db.queries import count, owned, owned_list, page_of, plausible_id
from ...ground import clock
from ...ground.errors import Conflict, Invalid, RequestProblem, not_found
from ...settings import Settings
from .. import list_lock
from ..webhooks import dispatch, signing
from .unit import Page, Writes

R = TypeVar("R")
NOT_ENABLED = "This webhook is disabled: enable it (PATCH enabled: true) to redeliver"


@dataclass(frozen=True)
class NewWebhook:
    """An endpoint to create: its list, URL (already checked), description and event types."""

    list_id: str
    url: str
    description: str | None
    event_types: list[str]


@dataclass(frozen=True)
class Rotated:
    """An endpoint after a rotation, and until when its previous secret still signs."""

    webhook: Webhook
    previous_until: datetime | None


@dataclass(frozen=True)
class Delivery:
    """A delivery and its attempts, oldest first."""

    delivery: WebhookDelivery
    attempts: list[WebhookAttempt]


def unique_types(types: Sequence[str]) -> list[str]:
    """The event types, refused when one comes twice."""
    if len(set(types)) != len(types):
        detail = "expected each event type once"
        raise Invalid(
            "Invalid request", errors=[RequestProblem(("eventTypes",), detail)], cited=True
        )
    return list(types)


def _check_room(session: Session, list_id: str, most: int) -> None:
    """One more endpoint, within the list's bound (counted under the list's lock)."""
    held = session.scalar(select(func.count()).where(Webhook.listId == list_id)) or 0
    if held >= most:
        raise Conflict(
            f"The list has {held} webhooks, the most allowed (webhook_max_per_list): delete "
            "one, or send several event types to one endpoint",
        )


def owned_webhook(session: Session, account_id: str, webhook_id: str) -> Webhook:
    return owned(session, account_id, Webhook, webhook_id)[0]


def _insert(session: Session, settings: Settings, account_id: str, new: NewWebhook) -> Webhook:
    lst = owned_list(session, account_id, new.list_id)
    list_lock.take(session, lst.id)  # the position read next is a committed one
    _check_room(session, lst.id, settings.webhook_max_per_list)
    hook = Webhook(
        listId=lst.id,
        url=new.url,
        description=new.description,
        eventTypes=new.event_types,
        secret=signing.new_secret(),
        status=dispatch.ENABLED,
        failureCount=0,
        position=list_lock.head(session, lst.id),
    )
    session.add(hook)
    session.flush()
    return hook


def create(settings: Settings, account_id: str, new: NewWebhook, writes: Writes[Webhook, R]) -> R:
    """A new endpoint of the list, enabled, from the list's next event on."""
    return writes(lambda session: _insert(session, settings, account_id, new))


def page(
    database: Database, account_id: str, list_id: str, number: int, limit: int
) -> Page[Webhook]:
    """The list's endpoints, newest first."""
    with database.reading() as session:
        lst = owned_list(session, account_id, list_id)
        statement = (
            select(Webhook)
            .where(Webhook.listId == lst.id)
            .order_by(Webhook.createdAt.desc(), Webhook.id)
        )
        hooks = session.scalars(page_of(statement, number, limit)).all()
        return Page(hooks, count(session, Webhook, Webhook.listId == lst.id))


def get(database: Database, account_id: str, webhook_id: str) -> Webhook:
    with database.reading() as session:
        return owned_webhook(session, account_id, webhook_id)


def _enable(session: Session, hook: Webhook, enabled: bool) -> None:
    if enabled and hook.status != dispatch.ENABLED:
        dispatch.enable(session, hook)
    elif not enabled and hook.status == dispatch.ENABLED:
        dispatch.disable(hook, "disabled by a request")


def update(
    database: Database, account_id: str, webhook_id: str, sent: Mapping[str, Any]
) -> Webhook:
    """The endpoint with the fields sent changed (`url` already checked): `url`,
    `eventTypes`, `description`, `enabled`."""
    with database.transaction() as session:
        hook = owned_webhook(session, account_id, webhook_id)
        if "url" in sent:
            hook.url = sent["url"]
        if "eventTypes" in sent:
            hook.eventTypes = unique_types(sent["eventTypes"])
        if "description" in sent:
            hook.description = sent["description"]
        if "enabled" in sent:
            _enable(session, hook, sent["enabled"])
        hook.updatedAt = clock.now()
        session.flush()
    return hook


def remove(database: Database, account_id: str, webhook_id: str) -> Webhook:
    """Deletes the endpoint and its deliveries; the endpoint as it was."""
    with database.transaction() as session:
        hook = owned_webhook(session, account_id, webhook_id)
        session.execute(
            delete(Webhook)
            .where(Webhook.id == webhook_id)
            .execution_options(synchronize_session=False)
        )
    return hook


def _rotate(session: Session, settings: Settings, account_id: str, webhook_id: str) -> Rotated:
    hook = owned_webhook(session, account_id, webhook_id)
    grace = settings.webhook_secret_grace_seconds
    until = clock.now() + timedelta(seconds=grace) if grace > 0 else None
    hook.previousSecret = hook.secret if until is not None else None
    hook.previousSecretUntil = until
    hook.secret = signing.new_secret()
    hook.updatedAt = clock.now()
    session.flush()
    return Rotated(hook, until)


def rotate(settings: Settings, account_id: str, webhook_id: str, writes: Writes[Rotated, R]) -> R:
    """A new signing secret; the previous one signs too until the grace period ends."""
    return writes(lambda session: _rotate(session, settings, account_id, webhook_id))


def deliveries(
    database: Database,
    account_id: str,
    webhook_id: str,
    status: str | None,
    number: int,
    limit: int,
) -> Page[Delivery]:
    """The endpoint's deliveries (of one status, if given), newest event first."""
    with database.reading() as session:
        hook = owned_webhook(session, account_id, webhook_id)
        conditions = [WebhookDelivery.webhookId == hook.id]
        if status is not None:
            conditions.append(WebhookDelivery.status == status)
        statement = (
            select(WebhookDelivery)
            .where(*conditions)
            .order_by(WebhookDelivery.eventPosition.desc(), WebhookDelivery.id)
        )
        rows = session.scalars(page_of(statement, number, limit)).all()
        total = count(session, WebhookDelivery, *conditions)
        attempts = dispatch.attempts_of(session, [row.id for row in rows])
    return Page([Delivery(row, attempts[row.id]) for row in rows], total)


def _again(session: Session, account_id: str, webhook_id: str, delivery_id: str) -> Delivery:
    hook = owned_webhook(session, account_id, webhook_id)
    delivery = (
        session.get(WebhookDelivery, delivery_id, with_for_update=True)
        if plausible_id(delivery_id)
        else None
    )
    if delivery is None or delivery.webhookId != hook.id:
        raise not_found("Delivery")
    if hook.status != dispatch.ENABLED:
        raise Conflict(NOT_ENABLED)
    dispatch.redeliver(delivery)
    session.flush()
    return Delivery(delivery, dispatch.attempts_of(session, [delivery.id])[delivery.id])


def redeliver(account_id: str, webhook_id: str, delivery_id: str, writes: Writes[Delivery, R]) -> R:
    """The delivery sent again by the worker, as soon as it can."""
    return writes(lambda session: _again(session, account_id, webhook_id, delivery_id))
