"""Contacts: search a list's, create (any key), read, update, delete.

Email is unique per list ignoring case, enforced by a unique index on `(list_id, email_key)`: a
duplicate insert fails in the database, even when two requests race, and the transaction rolls
back whole, so a `Conflict` creates nothing.

A public key's sign-up (`sign_up`) answers the same whether the contact was new or already
listed (then left unchanged): no answer tells a page's visitors who is on the list. It may set
only `email` and what its list opens in `publicFields` (`public_fields.py`: profile fields,
`data` or single keys of it); anything else is `Forbidden`, or dropped if the list's
`publicFieldsPolicy` is `ignore`.

Concurrent updates share turns (PostgreSQL, the setting `shared_import_turns`): an update that
arrives while another of its account is being written waits for it in a turn of its own that
later updates join (`_Turns`), then one of them writes the whole turn in one transaction: the
lists' locks taken once, each contact written and read back by its own statement in the
turn's order (so its rank is the one it had once written), the turn's contacts judged together
and their memberships and events written by set statements, one commit; each request then
gets its own answer or its own error (a conflicting email undoes that contact alone, under a
savepoint). A turn writes a contact once: its second update goes in a later turn, so the
events of each write are those it would write alone. If a turn fails before its commit, each of
its updates is written again alone (a failed commit is each one's error, none written twice).
SQLite, whose writers take turns anyway, writes each alone. Alone or in a turn, an update goes
through its list's write (`list_write.py`): a PATCH is a batch of one of the pipeline an import
turn takes, fields, effects, judgement, store.

A search also takes a where clause (`filters`, JSON, or `filtersText`, the text syntax, as
audiences do), read by the filter library and ANDed with the other conditions. Every contact
answered carries its position and its audiences (`contact_pages.py`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import Contact, List
from ...db.queries import owned_contact, text_filter
from ...ground import clock
from ...ground.errors import Conflict, DomainError, not_found
from ...ground.fields import normalise_email
from ...settings import Settings
from .. import (
    custom_fields,
    events,
    list_lock,
    list_write,
    public_fields,
    relations,
    suppression,
    write_effects,
)
from ..audience_filters import read_filters
from ..contact_pages import ContactPages, Paging
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
    ids: tuple[str, ...] = ()
    """Only these contacts (none given: any)."""


def _conditions(search: ContactSearch, lst: List) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = [Contact.id.in_(search.ids)] if search.ids else []
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
        pages = ContactPages.of_list(session, account_id, search.list_id, settings)
        where = _conditions(search, pages.lst)
        return pages.paged(where, search.paging)


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
        suppression.refuse_suppressed(session, lst.id, values["email"])
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
    if session.scalar(known) is not None or suppression.is_suppressed(session, list_id, key):
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
    if database.shared_turns:
        update = _Update(contact_id, dict(sent))
        _turns_of(database).join(account_id, update, partial(_turn, database, settings))
        update.done.wait()
        if not update.alone:
            return update.answer()
    return _update_alone(database, settings, account_id, contact_id, sent)


def _update_alone(
    database: Database,
    settings: Settings,
    account_id: str,
    contact_id: str,
    sent: Mapping[str, Any],
) -> View:
    """A PATCH written by itself: a batch of one through the list's write (`list_write.py`),
    the stages a turn's contacts take."""
    with _unique_email(), database.transaction() as session:
        write = list_write.for_contact(session, account_id, contact_id)
        write.update_contact(contact_id, sent)
        write.finish(events.CAUSE_CONTACT_UPDATED)
        return ContactPages(session, write.lst, settings).one(contact_id)


def remove(database: Database, settings: Settings, account_id: str, contact_id: str) -> View:
    """Deletes the contact; the contact as it was."""
    with database.transaction() as session:
        contact, lst = list_lock.locked_contact(session, account_id, contact_id)
        view = ContactPages(session, lst, settings).one(contact_id)
        write_effects.contact_deleting(session, lst.id, contact_id, contact.email)
        session.delete(contact)
    return view


_LOG = logging.getLogger(__name__)
TURN_MOST = 64
"""The most updates a turn takes: what one transaction holds its lists' locks for."""


@dataclass(eq=False)
class _Update:
    """One update waiting in a turn: what it sends, then its answer or its error. `alone`: the
    turn failed as a whole, so it is written again by itself."""

    contact_id: str
    sent: dict[str, Any]
    view: View | None = None
    error: Exception | None = None
    alone: bool = False
    done: threading.Event = dataclasses.field(default_factory=threading.Event)

    def answer(self) -> View:
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.view is not None
        return self.view


@dataclass(eq=False)
class _Turn:
    updates: list[_Update] = dataclasses.field(default_factory=list)
    contacts: set[str] = dataclasses.field(default_factory=set)


class _Turns:
    """The turns of one database's updates in this process, by account: at most one open (not
    yet started) per account, which updates join while the one before is written; whoever
    opened a turn writes it, once the turn before of its account is done."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._open: dict[str, _Turn] = {}
        self._writing: dict[str, threading.Lock] = {}

    def join(
        self, account_id: str, update: _Update, write: Callable[[str, list[_Update]], None]
    ) -> None:
        """Puts `update` in the account's open turn, or opens one and writes it; returns when
        the turn is written (then `update.answer()` does not wait) or, for an update that
        joined another's turn, at once."""
        with self._guard:
            turn = self._open.get(account_id)
            opens = (
                turn is None or update.contact_id in turn.contacts or len(turn.updates) >= TURN_MOST
            )
            if turn is None or opens:
                turn = self._open[account_id] = _Turn()
            turn.updates.append(update)
            turn.contacts.add(update.contact_id)
            writing = self._writing.setdefault(account_id, threading.Lock())
        if not opens:
            return
        with writing:
            with self._guard:
                if self._open.get(account_id) is turn:
                    del self._open[account_id]
            try:
                write(account_id, turn.updates)
            finally:
                for each in turn.updates:
                    each.done.set()

    def waiting(self, account_id: str) -> int:
        """How many updates wait in the account's open turn."""
        with self._guard:
            turn = self._open.get(account_id)
            return 0 if turn is None else len(turn.updates)


_TURNS: weakref.WeakKeyDictionary[Database, _Turns] = weakref.WeakKeyDictionary()
_TURNS_GUARD = threading.Lock()


def _turns_of(database: Database) -> _Turns:
    with _TURNS_GUARD:
        found = _TURNS.get(database)
        if found is None:
            found = _TURNS[database] = _Turns()
        return found


def waiting(database: Database, account_id: str) -> int:
    """How many updates of the account wait in this process for the turn being written (what a
    test holds a turn for, to see the next one shared)."""
    return _turns_of(database).waiting(account_id)


def _turn(database: Database, settings: Settings, account_id: str, updates: list[_Update]) -> None:
    """Writes a turn of updates in one transaction (each with its answer or its error). If it
    fails before its commit, nothing of it was written: each update is left to be written
    alone. If its commit fails, whether it was written is not known, as for a write alone: each
    update answers that error, and none is written twice."""
    written: list[bool] = []
    try:
        with database.transaction() as session:
            _write_turn(session, settings, account_id, updates)
            written.append(True)
    except Exception as error:
        _LOG.warning("a turn of %d updates failed", len(updates), exc_info=True)
        for update in updates:
            update.view, update.error = None, error if written else None
            update.alone = not written


def _write_turn(
    session: Session, settings: Settings, account_id: str, updates: list[_Update]
) -> None:
    """The turn's updates through their lists' writes (`list_write.py`, one a list): each
    update's fields, its errors its own; then each list's other stages, and the answers."""
    found = list_write.for_contacts(session, account_id, [u.contact_id for u in updates])
    by_list: dict[str, list[_Update]] = {}
    for update in updates:
        try:
            _written(found, update)
        except DomainError as error:
            update.error = error
            continue
        by_list.setdefault(found[update.contact_id].list_id, []).append(update)
    for written_ in by_list.values():
        pages = _finished(found[written_[0].contact_id], settings)
        for update in written_:
            update.view = pages.one(update.contact_id)


def _finished(write: list_write.ListWrite, settings: Settings) -> ContactPages:
    """The write's other stages, after its fields; the pages that answer its contacts."""
    write.finish(events.CAUSE_CONTACT_UPDATED)
    return ContactPages(write.session, write.lst, settings)


def _written(found: Mapping[str, list_write.ListWrite], update: _Update) -> None:
    """Writes one update of a turn's fields: as `_update_alone`, its errors its own (a
    conflicting email undoes its write alone, under a savepoint)."""
    if update.contact_id not in found:
        raise not_found("Contact")
    write = found[update.contact_id]
    nested = write.session.begin_nested() if "email" in update.sent else nullcontext()
    with _unique_email(), nested:
        write.update_contact(update.contact_id, update.sent)
