"""The right to erasure: what the service keeps of a contact, and how each copy is redacted.

Deleting a contact removes its row (and, by cascades, its actions, manual memberships and next
instants) and its stored memberships, but its personal data lives on in copies made while it
existed: the `contact.created` and `contact.deleted` events name its e-mail in the outbox, the
webhook deliveries made from them keep their frozen bodies (and a redelivery sends them again),
and the `Idempotency-Key` records of the requests that created or changed it replay their
answers, the whole contact with its `data`. Erasing finds each copy and redacts it, in one
transaction under the list's lock:

- the events of the contact that carried its e-mail keep their place in the feed (positions
  have no gaps) with `{"email": null, "erased": true}` as their data;
- the deliveries made from those events get their bodies made again from the redacted events,
  so neither a retry nor a redelivery sends what was erased;
- the idempotency records of the account that answered with the contact (its id, or its
  e-mail, as a sign-up's answer holds it) keep replaying an answer, where the contact is now
  `{"id", "listId", "erased": true}` and no string holds the e-mail: a retry of the request
  that created the contact must not create it again, nor answer what was erased.

What stays is the contact's id (`con_` and 80 random bits), which names no one once nothing in
the service maps it to the person: the `audience.entered` / `audience.left` events keep it, so
an audience's members and sizes at any earlier instant are what they were (the erased contact
is counted there as an opaque id), and the `contact.updated` events keep the names of the
fields that changed, never their values.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..db.models import Contact, Event, IdempotencyRecord, Webhook, WebhookDelivery
from . import contact_import, events
from .webhooks.dispatch import body_of

ERASED_PAYLOAD: dict[str, Any] = {"email": None, "erased": True}
"""The data of a `contact.created` or `contact.deleted` event once its contact was erased."""
PERSONAL_EVENTS = (events.CONTACT_CREATED, events.CONTACT_DELETED)
"""The events whose data names the contact's e-mail."""
KEPT_KEYS = ("id", "listId", "subId", "contactId")
"""What an erased contact (or one of its actions) keeps in a replayed answer: ids alone."""
ROW_NUMBER, ROW_STATUS = "row", "status"
"""An import's result for a row of an erased contact keeps its place and what became of it
(`{"row": 3, "status": "created", "id": ..., "erased": true}`): a number and a word of
`contact_import.STATUSES`, which name no one, and a replay without them is no answer to read."""
RECORD_BATCH = 500


@dataclass(frozen=True)
class Erased:
    """What an erasure redacted: how many events, deliveries and replayed answers."""

    events: int
    deliveries: int
    answers: int


def personal_events(session: Session, list_id: str, contact_id: str) -> list[Event]:
    """The contact's events that carry its e-mail, oldest first."""
    statement = (
        select(Event)
        .where(
            Event.listId == list_id,
            Event.contactId == contact_id,
            Event.type.in_(PERSONAL_EVENTS),
        )
        .order_by(Event.position)
    )
    return list(session.scalars(statement))


def known_emails(contact: Contact | None, found: Iterable[Event]) -> set[str]:
    """The e-mails the contact was known by: its row's, and those its events name (a contact
    whose e-mail changed was created under another)."""
    emails = {contact.email} if contact is not None else set()
    for event in found:
        email = (event.payload or {}).get("email")
        if isinstance(email, str):
            emails.add(email)
    return emails


def redact_traces(
    session: Session, account_id: str, list_id: str, contact_id: str, emails: set[str]
) -> Erased:
    """Redacts every copy of the contact's personal data the service keeps (the module's
    list); the contact's row must be gone or going in this transaction."""
    found = personal_events(session, list_id, contact_id)
    for event in found:
        event.payload = dict(ERASED_PAYLOAD)
    session.flush()
    deliveries = _redeliverable(session, list_id, found)
    answers = _redact_answers(session, account_id, contact_id, emails)
    return Erased(len(found), deliveries, answers)


def _redeliverable(session: Session, list_id: str, found: Sequence[Event]) -> int:
    """Makes the bodies of the deliveries of `found` again from the redacted events."""
    hooks = select(Webhook.id).where(Webhook.listId == list_id)
    changed = 0
    for event in found:
        result = session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.webhookId.in_(hooks), WebhookDelivery.eventId == event.id)
            .values(body=body_of(event).decode())
            .execution_options(synchronize_session=False)
        )
        changed += int(getattr(result, "rowcount", 0) or 0)
    return changed


def _redact_answers(session: Session, account_id: str, contact_id: str, emails: set[str]) -> int:
    """Redacts the account's recorded answers that hold the contact; how many. The records
    live a day (`IDEMPOTENCY_TTL_SECONDS`), so the account's are read whole, a batch at a time:
    an answer may spell the e-mail in any case, or escape it, which no `LIKE` finds alike on
    every engine."""
    folded = {email.casefold() for email in emails}
    changed = 0
    after = ""
    while rows := _records_after(session, account_id, after):
        changed += sum(
            _redact_record(session, account_id, key, body, contact_id, folded) for key, body in rows
        )
        after = rows[-1][0]
    return changed


def _records_after(session: Session, account_id: str, after: str) -> list[Any]:
    """The account's next batch of records (key, body) after the key `after`."""
    statement = (
        select(IdempotencyRecord.key, IdempotencyRecord.body)
        .where(IdempotencyRecord.accountId == account_id, IdempotencyRecord.key > after)
        .order_by(IdempotencyRecord.key)
        .limit(RECORD_BATCH)
    )
    return list(session.execute(statement).all())


def _redact_record(
    session: Session, account_id: str, key: str, body: str, contact_id: str, folded: set[str]
) -> bool:
    """Redacts one recorded answer; whether it held the contact."""
    redacted = redact_answer(body, contact_id, folded)
    if redacted == body:
        return False
    session.execute(
        update(IdempotencyRecord)
        .where(IdempotencyRecord.accountId == account_id, IdempotencyRecord.key == key)
        .values(body=redacted)
        .execution_options(synchronize_session=False)
    )
    return True


def redact_answer(body: str, contact_id: str, folded: set[str]) -> str:
    """A recorded answer with the contact erased from it (the module's rule); the text itself
    when it holds nothing of the contact. An answer that is no JSON (a pending record's id)
    and names the contact is replaced whole by an erased mark."""
    try:
        value = json.loads(body)
    except ValueError:
        named = contact_id in body or any(email in body.casefold() for email in folded)
        return json.dumps({"erased": True}) if named else body
    redacted = _redacted(value, contact_id, folded)
    return body if redacted == value else json.dumps(redacted, ensure_ascii=False)


def _names_contact(value: dict[str, Any], contact_id: str, folded: set[str]) -> bool:
    email = value.get("email")
    if isinstance(email, str) and email.casefold() in folded:
        return True
    return value.get("id") == contact_id or value.get("subId") == contact_id


def _kept(value: dict[str, Any]) -> dict[str, Any]:
    """What a value naming the erased contact keeps: its ids, and an import result's row and
    status."""
    kept = {key: value[key] for key in KEPT_KEYS if isinstance(value.get(key), str)}
    row, status = value.get(ROW_NUMBER), value.get(ROW_STATUS)
    if type(row) is int and status in contact_import.STATUSES:
        kept = {ROW_NUMBER: row, ROW_STATUS: status, **kept}
    return kept


def _redacted(value: Any, contact_id: str, folded: set[str]) -> Any:
    if isinstance(value, dict):
        if _names_contact(value, contact_id, folded):
            return {**_kept(value), "erased": True}
        return {key: _redacted(item, contact_id, folded) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, contact_id, folded) for item in value]
    if isinstance(value, str) and any(email in value.casefold() for email in folded):
        return None
    return value
