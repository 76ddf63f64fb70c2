"""A contact's data, exported (GDPR art. 15) or erased (art. 17), in the list that holds it.

Both take the list and the contact's id, so they also reach a contact deleted earlier, whose
row is gone but whose events (and what was made of them) are not: a deletion is no erasure.
An id of neither a contact nor an event of the list is not found, like any other resource.

The export is everything the service keeps of the contact: its fields and `data` (while it
exists), its actions, the audiences it is in now with the instant it entered and its draw,
and every event of the feed that names it, the history of its memberships among them. The
erasure (`domain/erasure.py` says what it redacts and what it keeps) deletes the contact as a
deletion does, reporting its exits and `contact.deleted` without its e-mail, then appends
`contact.erased`, which tells every consumer of the feed to erase its own copies, and suppresses
the e-mails the contact was known by (`domain/suppression.py`), so no import or sign-up makes
the person again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import Action, Audience, Contact, Event, List, Membership
from ...db.queries import owned_list, plausible_id
from ...ground.errors import not_found
from ...settings import Settings
from .. import erasure, event_feed, list_lock, suppression, write_effects
from ..contact_pages import ContactPages
from ..erasure import Erased

logger = logging.getLogger("audiencefilter.service")


@dataclass(frozen=True)
class Erasure:
    """What erasing a contact did: whether its row was deleted now, and what was redacted."""

    list_id: str
    contact_id: str
    deleted: bool
    erased: Erased


@dataclass(frozen=True)
class CurrentMembership:
    """An audience the contact is in now."""

    audience_id: str
    name: str
    entered_at: datetime
    group: str | None
    holdout: bool


@dataclass(frozen=True)
class ContactRecord:
    """Everything kept of a contact (the module's list); `contact` None once it was deleted."""

    list_id: str
    contact_id: str
    contact: dict[str, Any] | None
    actions: list[Action]
    memberships: list[CurrentMembership]
    events: list[dict[str, Any]]


def _contact(session: Session, lst: List, contact_id: str) -> Contact | None:
    if not plausible_id(contact_id):
        return None
    statement = select(Contact).where(Contact.id == contact_id, Contact.listId == lst.id)
    return session.scalars(statement).first()


def _named(session: Session, list_id: str, contact_id: str) -> bool:
    """Whether an event of the list names the contact (one deleted earlier, say)."""
    statement = select(Event.position).where(Event.listId == list_id, Event.contactId == contact_id)
    return plausible_id(contact_id) and session.scalar(statement.limit(1)) is not None


def erase(database: Database, account_id: str, list_id: str, contact_id: str) -> Erasure:
    """Erases the contact from the list (deleting it first if it still exists), then clears
    the SQLite WAL, whose older frames still hold the contact's rows as they were."""
    done = _erase(database, account_id, list_id, contact_id)
    if not database.truncate_wal():
        logger.warning("the WAL could not be cleared after an erasure: a reader held it")
    return done


def _erase(database: Database, account_id: str, list_id: str, contact_id: str) -> Erasure:
    with database.transaction() as session:
        lst = list_lock.locked_list(session, account_id, list_id)
        contact = _contact(session, lst, contact_id)
        if contact is None and not _named(session, lst.id, contact_id):
            raise not_found("Contact")
        emails = erasure.known_emails(contact, erasure.personal_events(session, lst.id, contact_id))
        if contact is not None:
            write_effects.contact_deleting(session, lst.id, contact_id, contact.email)
            session.delete(contact)
            session.flush()
        write_effects.contact_erased(session, lst.id, contact_id)
        erased = erasure.redact_traces(session, account_id, lst.id, contact_id, emails)
        suppression.suppress(session, lst.id, emails)
        return Erasure(lst.id, contact_id, contact is not None, erased)


def check_suppressed(database: Database, account_id: str, list_id: str, email: str) -> bool:
    """Whether the account's list suppresses this e-mail."""
    with database.reading() as session:
        lst = owned_list(session, account_id, list_id)
        return suppression.is_suppressed(session, lst.id, email)


def unsuppress(
    database: Database, account_id: str, list_id: str, email: str, *, asked_by: str
) -> bool:
    """Takes the e-mail off the list's suppressions (logged); whether it was on them."""
    with database.transaction() as session:
        lst = list_lock.locked_list(session, account_id, list_id)
        return suppression.remove(session, lst.id, email, asked_by=asked_by)


def export(
    database: Database, settings: Settings, account_id: str, list_id: str, contact_id: str
) -> ContactRecord:
    """Everything the service keeps of the contact, read in one transaction."""
    with database.reading() as session:
        lst = owned_list(session, account_id, list_id)
        contact = _contact(session, lst, contact_id)
        if contact is None and not _named(session, lst.id, contact_id):
            raise not_found("Contact")
        view = ContactPages(session, lst, settings).one(contact_id) if contact else None
        actions = _actions(session, contact_id)
        memberships = _memberships(session, contact_id)
        found = _events(session, lst.id, contact_id)
        return ContactRecord(lst.id, contact_id, view, actions, memberships, found)


def _actions(session: Session, contact_id: str) -> list[Action]:
    statement = select(Action).where(Action.subId == contact_id)
    return list(session.scalars(statement.order_by(Action.createdAt, Action.id)))


def _memberships(session: Session, contact_id: str) -> list[CurrentMembership]:
    rows = session.execute(
        select(Membership, Audience.name)
        .join(Audience, Audience.id == Membership.audienceId)
        .where(Membership.contactId == contact_id)
        .order_by(Audience.createdAt, Audience.id)
    ).all()
    return [
        CurrentMembership(row.audienceId, name, row.enteredAt, row.groupName, row.holdout)
        for row, name in rows
    ]


def _events(session: Session, list_id: str, contact_id: str) -> list[dict[str, Any]]:
    statement = (
        select(Event)
        .where(Event.listId == list_id, Event.contactId == contact_id)
        .order_by(Event.position)
    )
    return [event_feed.event_view(event) for event in session.scalars(statement)]
