"""Contacts: search a list's, create (any key), read, update, delete.

Email is unique per list ignoring case, enforced by a unique index on `(list_id, email_key)`: a
duplicate insert fails in the database, even when two requests race, and the transaction rolls
back whole, so a `Conflict` creates nothing.

A public key's sign-up (`sign_up`) answers the same whether the contact was new or already
listed (then left unchanged): no answer tells a page's visitors who is on the list. It may set
only `email` and what its list opens in `publicFields` (`public_fields.py`: profile fields,
`data` or single keys of it); anything else is `Forbidden`, or dropped if the list's
`publicFieldsPolicy` is `ignore`.

A search also takes a where clause (`filters`, JSON, or `filtersText`, the text syntax, as
audiences do), read by the filter library and ANDed with the other conditions. Every contact
answered carries its position and its audiences (`contact_pages.py`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import Contact, List
from ...db.queries import owned_contact, owned_list, text_filter
from ...ground import clock
from ...ground.errors import Conflict, not_found
from ...ground.fields import normalise_email
from ...settings import Settings
from .. import custom_fields, list_lock, public_fields, relations, write_effects
from ..audience_filters import read_filters
from ..contact_pages import ContactPages, Paging
from ..membership import written
from .unit import Writes

R = TypeVar("R")
TEXT_FILTERS = (
    "email",
    "firstName",
    "lastName",
    "phoneNumber",
    "name",
    "company",
    "country",
    "city",
    "socialOne",
    "socialTwo",
    "website",
)
FLAG_FILTERS = ("isVerified", "unsubscribed", "isGDPR")
DUPLICATE_EMAIL = "A contact with this email already exists in this list"
View = dict[str, Any]


@dataclass(frozen=True)
class ContactSearch:
    """A search of a list's contacts: partial text matches and flags by field (those of
    `TEXT_FILTERS` and `FLAG_FILTERS` given), a where clause in either form, a page."""

    list_id: str
    matches: Mapping[str, Any]
    filters: Any
    filters_text: str | None
    paging: Paging


def _conditions(search: ContactSearch, lst: List) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = []
    for field, value in search.matches.items():
        if field in FLAG_FILTERS:
            where.append(getattr(Contact, field).is_(value))
        else:
            text = normalise_email(value) if field == "email" else value
            where.append(text_filter(getattr(Contact, field), text))
    declared = custom_fields.declared(lst)
    flt = read_filters(search.filters, search.filters_text, declared, zone=lst.timeZone).filter
    if flt is not None:
        where.append(relations.condition(flt, clock.now()))
    return where


def search(
    database: Database, settings: Settings, account_id: str, search: ContactSearch
) -> dict[str, Any]:
    """`{"contacts": [...], "pagination": {...}}`: the page of the list's contacts found."""
    with database.reading() as session:
        lst = owned_list(session, account_id, search.list_id)
        where = _conditions(search, lst)
        return ContactPages(session, lst, settings).paged(where, search.paging)


@contextmanager
def _unique_email() -> Iterator[None]:
    try:
        yield
    except IntegrityError:
        raise Conflict(DUPLICATE_EMAIL) from None


def create(
    settings: Settings,
    account_id: str,
    list_id: str,
    values: Mapping[str, Any],
    writes: Writes[View, R],
) -> R:
    """A new contact of the list (with a private key); the contact as answered."""

    def work(session: Session) -> View:
        lst = list_lock.locked_list(session, account_id, list_id)
        custom_fields.check_data(lst, values.get("data"))
        contact = Contact(listId=lst.id, emailKey=values["email"].lower(), **values)
        session.add(contact)
        session.flush()
        write_effects.contacts_created(session, lst.id, [(contact.id, contact.email)])
        return ContactPages(session, lst, settings).one(contact.id)

    with _unique_email():
        return writes(work)


def sign_up(account_id: str, list_id: str, values: Mapping[str, Any], writes: Writes[str, R]) -> R:
    """A public key's sign-up: the contact created unless its email is already listed (then
    left as it is); the list's id, the same answer either way.

    A conflict for a known email would make the public key (anyone who reads the page) an
    oracle of who is on the list; a sign-up form must not be a way to overwrite someone's
    profile either.
    """

    def work(session: Session) -> str:
        lst = list_lock.locked_list(session, account_id, list_id)
        allowed = public_fields.public_values(lst, values)
        custom_fields.check_data(lst, allowed.get("data"))
        _add_unless_listed(session, lst.id, allowed)
        return lst.id

    return writes(work)


def _add_unless_listed(session: Session, list_id: str, values: Mapping[str, Any]) -> None:
    key = values["email"].lower()
    known = select(Contact.id).where(Contact.listId == list_id, Contact.emailKey == key)
    if session.scalar(known) is not None:
        return
    contact = Contact(listId=list_id, emailKey=key, **values)
    try:
        with session.begin_nested():  # a concurrent sign-up of the same email wins quietly
            session.add(contact)
    except IntegrityError:
        return
    write_effects.contacts_created(session, list_id, [(contact.id, contact.email)])


def get(database: Database, settings: Settings, account_id: str, contact_id: str) -> View:
    with database.reading() as session:
        _, lst = owned_contact(session, account_id, contact_id)
        return ContactPages(session, lst, settings).one(contact_id)


def update(
    database: Database,
    settings: Settings,
    account_id: str,
    contact_id: str,
    sent: Mapping[str, Any],
) -> View:
    """The contact with the fields sent changed, and only those; as answered."""
    with _unique_email(), database.transaction() as session:
        contact, lst = list_lock.contact_to_write(session, account_id, contact_id)
        custom_fields.check_data(lst, sent.get("data"))
        _write_fields(session, contact, contact_id, dict(sent))
        write_effects.contact_updated(session, lst.id, contact_id, sent)
        return ContactPages(session, lst, settings).one(contact_id)


def _write_fields(
    session: Session, contact: Contact, contact_id: str, values: dict[str, Any]
) -> None:
    """Writes the fields sent, reading back in the same statement what the judgement and the
    answer need (`membership/written.py`), the door having read the row before the lock."""
    if "email" in values:
        values["emailKey"] = values["email"].lower()
    session.expire(contact)  # the row is read back below: the loaded one is past
    if values and written.write_contact(session, contact_id, values) is None:
        raise not_found("Contact")  # deleted before the list's lock was taken


def remove(database: Database, settings: Settings, account_id: str, contact_id: str) -> View:
    """Deletes the contact; the contact as it was."""
    with database.transaction() as session:
        contact, lst = list_lock.locked_contact(session, account_id, contact_id)
        view = ContactPages(session, lst, settings).one(contact_id)
        write_effects.contact_deleting(session, lst.id, contact_id, contact.email)
        session.delete(contact)
    return view
