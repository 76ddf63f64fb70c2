"""One write of a list's contacts, as a pipeline: a PATCH is a batch of one, an import turn a
batch of many.

A PATCH of a contact, a turn of PATCHes (`use_cases/contacts.py`) and an import turn
(`contact_import.py`, JSON or CSV) are one write of different sizes, and used to take three
routes through a dozen free functions that called back into each other. Each now opens a
`ListWrite` (the list's lock taken by the door, `list_lock.py`, and nowhere else) and calls its
stages in one order:

1. **fields**: the batch's rows, already parsed, written (`update_contact` for a PATCH's, or
   `wrote` after `contact_import.py` wrote an import's in bulk);
2. **effects**: their lifecycle events (`contact.created`, `contact.updated`; `events.py`);
3. **judge**: the list's smart audiences judged for the touched contacts (`membership/store.py`
   `judge_contacts`, which decides and writes nothing);
4. **store**: the memberships and what is kept of them, sizes, points, pair counts and their
   notes (`store.store_judged`), with their `audience.entered` / `audience.left` events.

`finish` runs 2 to 4 in that order, once; the handle refuses a stage out of order. A single
write (`single`, a PATCH or a turn of them) gathers its events and its membership's into one
statement (`events.together`); an import turn appends them as it goes (its many rows are
numbered by one advance), or last when it shares the list's lock (`events.appended_last`,
which the caller opens around the turn).

The handle does not live in `list_lock.py`: the door stands below the events and the
membership it would call (an event's append advances the door's counter), so the door takes
the lock and this module, one floor up, opens the handle on it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from ..db.models import List
from ..ground.errors import not_found
from . import custom_fields, events, list_lock, suppression
from .membership import store, written

FIELDS, EFFECTS, JUDGED, STORED = range(4)


@dataclass
class ListWrite:
    """A write of one list under its lock: the session, the list, whether the lock is shared
    (an import turn that only updates contacts: `list_lock.share`), and what the write did so
    far, the contacts created (id, email) and updated (id, the fields written)."""

    session: Session
    lst: List
    shared: bool = False
    single: bool = False
    """A PATCH or a turn of them: its events and its membership's in one statement."""
    created: list[tuple[str, str]] = field(default_factory=list)
    updated: list[tuple[str, list[str]]] = field(default_factory=list)
    _stage: int = FIELDS

    @property
    def list_id(self) -> str:
        return self.lst.id

    def batch(self) -> ListWrite:
        """A new batch of this write, under the same lock: an import turn whose try moved too
        many pairs is undone (a savepoint) and tries fewer rows from the fields stage again."""
        return ListWrite(self.session, self.lst, self.shared, self.single)

    # ---- 1. fields ---------------------------------------------------------------------------

    def update_contact(self, contact_id: str, sent: Mapping[str, Any]) -> None:
        """A PATCH's row: its fields written, read back with what its judgement and answer
        need (`membership/written.py`); a 409 for an e-mail the list suppresses, a 404 for a
        contact deleted before the lock was taken."""
        self._at(FIELDS)
        custom_fields.check_data(self.lst, sent.get("data"))
        values = dict(sent)
        if "email" in values:
            values["emailKey"] = values["email"].lower()
            suppression.refuse_suppressed(self.session, self.list_id, values["email"])
        if values and written.write_contact(self.session, contact_id, values) is None:
            raise not_found("Contact")
        self.updated += [(contact_id, sorted(sent))]

    def wrote(
        self,
        created: Sequence[tuple[str, str]] = (),
        updated: Sequence[tuple[str, Sequence[str]]] = (),
    ) -> None:
        """Rows written by the caller itself (an import's, in bulk: `contact_import.py`)."""
        self._at(FIELDS)
        self.created.extend(created)
        self.updated.extend((contact_id, sorted(fields)) for contact_id, fields in updated)

    # ---- 2 to 4 ------------------------------------------------------------------------------

    def finish(self, cause: str, *, announce: bool = True, most: int | None = None) -> int:
        """Effects, judgement and store of what the fields stage wrote, in that order; the
        (contact, audience) pairs moved. `announce` False writes no event (an import of
        history); `most`: the pairs the batch may move (`store.TooManyMoves` past it, before
        anything of its membership is written)."""
        with events.together(self.session, self.list_id) if self.single else nullcontext():
            self.effects(cause, announce)
            return self.store(self.judge(cause, most), announce)

    def effects(self, cause: str, announce: bool = True) -> None:
        """The lifecycle events of the contacts written: a single write's carry no cause (as a
        PATCH's always did), an import's carry `contact.imported`."""
        self._at(FIELDS, EFFECTS)
        if announce:
            events.append(self.session, self.list_id, self._events(cause))
        elif self.created or self.updated:
            events.unannounced(self.session, self.list_id)  # no event tells a snapshot of them

    def judge(self, cause: str, most: int | None = None) -> list[store.Judged]:
        """The list's smart audiences judged for the contacts written. A single write judges
        the contacts that changed the same fields together, by the audiences reading them
        (each as it would be alone); an import judges all of them by every smart audience."""
        self._at(EFFECTS, JUDGED)
        if not self.single:
            ids = [contact_id for contact_id, _ in [*self.created, *self.updated]]
            return [store.judge_contacts(self.session, self.list_id, ids, cause, most=most)]
        alike: dict[tuple[str, ...], list[str]] = {}
        for contact_id, fields in self.updated:
            alike.setdefault(tuple(fields), []).append(contact_id)
        return [
            store.judge_contacts(self.session, self.list_id, ids, cause, changed=list(fields))
            for fields, ids in alike.items()
        ]

    def store(self, judged: Sequence[store.Judged], announce: bool = True) -> int:
        """The judged moves stored, with their events and the list's kept counts."""
        self._at(JUDGED, STORED)
        last = len(judged) - 1  # a single write's last may ride in its events' statement
        return sum(
            store.store_judged(self.session, each, announce, last=self.single and index == last)
            for index, each in enumerate(judged)
        )

    def _events(self, cause: str) -> list[events.NewEvent]:
        why = None if self.single else cause
        return [
            *(
                events.NewEvent(events.CONTACT_CREATED, cid, cause=why, payload={"email": email})
                for cid, email in self.created
            ),
            *(
                events.NewEvent(events.CONTACT_UPDATED, cid, cause=why, payload={"fields": fields})
                for cid, fields in self.updated
            ),
        ]

    def _at(self, stage: int, then: int | None = None) -> None:
        """Refuses a stage out of order: each follows the one before, once."""
        if self._stage != stage:
            raise RuntimeError(f"a write's stage {then or stage} after stage {self._stage}")
        if then is not None:
            self._stage = then


# ---- the entrances: the list's lock taken by the door, a handle given ------------------------


def for_contact(session: Session, account_id: str, contact_id: str) -> ListWrite:
    """A PATCH's write: the caller's contact's list, its lock held (`list_lock.contacts_to_write`,
    a turn's door, for one contact); a 404 for another account's contact or none. The contact's
    row is read back by its write, not before: its door reads its id alone (it loaded the whole
    ORM contact, then forgot it, a sixth of a PATCH's CPU on SQLite)."""
    found = list_lock.contacts_to_write(session, account_id, [contact_id])
    if contact_id not in found:
        raise not_found("Contact")
    return ListWrite(session, found[contact_id], single=True)


def for_contacts(
    session: Session, account_id: str, contact_ids: Sequence[str]
) -> dict[str, ListWrite]:
    """A turn of PATCHes: the write of each contact's list (one per list), by contact id, the
    lists' locks held in the order of their ids (`list_lock.contacts_to_write`); a contact not
    found has none."""
    found = list_lock.contacts_to_write(session, account_id, contact_ids)
    writes: dict[str, ListWrite] = {}
    for lst in found.values():
        writes.setdefault(lst.id, ListWrite(session, lst, single=True))
    return {contact_id: writes[lst.id] for contact_id, lst in found.items()}


def for_list(session: Session, account_id: str, list_id: str, *, shared: bool) -> ListWrite | None:
    """An import turn's write: the caller's list, its lock held alone, or shared with other
    turns that only update contacts (`shared`; None where the database has no shared lock)."""
    if not shared:
        return ListWrite(session, list_lock.locked_list(session, account_id, list_id))
    lst = list_lock.shared_list(session, account_id, list_id)
    return None if lst is None else ListWrite(session, lst, shared=True)


@contextmanager
def appending(write: ListWrite) -> Iterator[None]:
    """A shared turn's events held back to its last statements (`events.appended_last`)."""
    with events.appended_last(write.session) if write.shared else nullcontext():
        yield
