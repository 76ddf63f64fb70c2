"""An audience's members evaluated before the write that stores them, not under its lock.

Storing a smart audience's members (create, a filter or mode change, a calendar boundary) runs its
filter over every contact of its list, which may take seconds within the filter budgets (a long
`in` list over long strings, hundreds of zoned anniversaries). Under the write transaction that
held the list's lock, and on SQLite the one write lock of the whole database, so every other
account's writes waited for it. So the work is split in two:

1. `evaluate`, in a read transaction and no lock: the list's last event position `P`, what the
   filter reads that no event reports (each contact's `points`, the ids of its actions, when the
   filter reads them), then the ids of the contacts the filter selects. The expensive part.
2. `apply`, in the write transaction, under the list's lock: every contact that may have
   changed since is judged again, now, in memory; every other one takes the snapshot's answer.
   Then the audiences that read this one are refreshed for the contacts whose membership moved.

"May have changed since" is exact because every write of a contact's data appends an event
(`contact.created`, `contact.updated`, `contact.deleted`), every change of a stored membership
too (`audience.entered`, `audience.left`, read by filters over the `audiences` relation), and the
only write that appends none when it changes nothing else, an action, changes what the snapshot
compares: the contact's points, and the set of its action ids. An import that asked for no
event (`events=false`) appends none at all: it counts itself on the list's counter row instead
(`list_lock.unannounced`), read with `P`, and when that count moved every contact of the list
is judged again (before, such an import landing between the snapshot and the store left the
contacts it changed as the snapshot saw them, `tests/service/test_derived_counts.py`). An
action counts itself there too (`list_lock.acted`), so the points and action ids are read a
second time only when an action landed since the snapshot: over 200,000 contacts on PostgreSQL
that reading alone took 54 ms, and without an action it finds nothing.

Events after `P` are exactly the writes committed after the snapshot began (positions follow
commit order, `events.py`); reading `P` first makes any write that lands between the
statements of the snapshot (PostgreSQL reads each statement afresh) one more contact judged
again, never one missed.

**Cost over a big list.** Nothing is brought into Python per contact that a set statement can
do: the selected ids come as one JSON array the database builds, the points as one text
(`id:points,...`) compared whole with a second reading, made only when an action landed
meanwhile (parsed only when they differ), and the difference is stored by
`store.write_changes` in a few `INSERT ... SELECT` statements. A new audience of
14,000 members over 100,000 contacts went from 5.4x the hand-written SQL to about 1.3x
(docs/performance-history-service.md, "A million contacts").

The stored rows come from the snapshot, so the members of a new or changed audience are exact
when its transaction commits, as before, and its events complete; only the time under the lock
changed, from the whole list to the contacts written meanwhile. When the filter in use is no
longer the one evaluated (a concurrent change of the same audience), `refresh` evaluates under
the lock, as before.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, String, cast, select
from sqlalchemy.orm import Session

from .... import Filter
from ...db import dialects
from ...db.engine import Database
from ...db.models import Action, Audience, Contact, Event, Membership
from ...ground import clock
from .. import list_lock, relations
from ..audience_filters import SMART, StoredAudience
from . import judge, store

POINTS = "points"


@dataclass(frozen=True)
class Snapshot:
    """A filter's answer over a list at one position of its outbox, and the inputs no event
    reports, to find the contacts whose answer may have moved since."""

    list_id: str
    filters: str
    fields: str | None  # what `filters` was read with: custom fields and the list's zone
    position: int
    at: datetime
    selected: frozenset[str]
    points: str | None
    actions: frozenset[tuple[str, str]] | None
    unannounced: int | None = None
    """The list's count of writes that appended no event (`list_lock.heads`), read with
    `position`; None: not read (a build started before it was kept), not compared."""
    acted: int | None = None
    """The list's count of actions created or deleted (`list_lock.heads`), read with
    `position`: the points and action ids are read again only when it moved; None: not read
    (a build started before it was kept), so they are always read again."""


def evaluate(
    database: Database, list_id: str, flt: Filter, filters: str, fields: str | None
) -> Snapshot:
    """The ids of the list's contacts `flt` (stored as `filters`, read with `fields`) selects
    now, in a read transaction: no writer of the list, nor on SQLite of the database, waits
    for it."""
    with database.reading() as session:
        heads = list_lock.heads(session, list_id)
        points, actions = unreported(session, list_id, flt)
        at = clock.now()
        condition = relations.condition(flt, at)
        selected = selected_ids(
            session, select(Contact.id).where(Contact.listId == list_id, condition)
        )
        return Snapshot(
            list_id, filters, fields, heads.position, at, selected, points, actions,
            heads.unannounced, heads.acted,
        )  # fmt: skip


def unreported(
    session: Session, list_id: str, flt: Filter
) -> tuple[str | None, frozenset[tuple[str, str]] | None]:
    """What `flt` reads of the list that no event reports: the points reading and the action
    ids, each when the filter reads it (None otherwise)."""
    points = _points(session, list_id) if POINTS in flt.fields else None
    actions = _action_ids(session, list_id) if relations.ACTIONS in flt.fields else None
    return points, actions


def selected_ids(session: Session, statement: Select[Any]) -> frozenset[str]:
    """The ids `statement` selects, as one JSON array the database builds and Python decodes
    at once: half the time of fetching a hundred thousand rows one by one."""
    ids = statement.subquery()
    joined = dialects.json_id_array(ids.c.id, dialects.dialect_of(session))
    if joined is None:
        return frozenset(session.connection().execute(statement).scalars().all())
    text = session.connection().execute(select(joined)).scalar()
    return frozenset(json.loads(text)) if text else frozenset()


def _points(session: Session, list_id: str) -> str:
    """Each contact's id and points as one text (`id:points,...`), read from the rank index
    alone and joined by the database: comparing two readings costs no Python per contact
    unless they differ, which takes a write between the two."""
    entry = Contact.id + ":" + cast(Contact.points, String)
    joined = dialects.joined_text(entry, dialects.dialect_of(session))
    return session.scalar(select(joined).where(Contact.listId == list_id)) or ""


def _points_of(text: str) -> dict[str, str]:
    """`{contact id: points}` of a `_points` reading."""
    return dict(item.rpartition(":")[::2] for item in text.split(",") if item)


def _action_ids(session: Session, list_id: str) -> frozenset[tuple[str, str]]:
    statement = (
        select(Action.subId, Action.id)
        .join(Contact, Contact.id == Action.subId)
        .where(Contact.listId == list_id)
    )
    return frozenset((contact_id, id_) for contact_id, id_ in session.execute(statement))


def refresh(session: Session, audience: Audience, cause: str, snapshot: Snapshot | None) -> int:
    """Brings the audience's stored members up to date from `snapshot` when it evaluated the
    filter in use, else by evaluating it now (`store.refresh_audience`); the number
    of events appended. Call it under the list's lock."""
    if snapshot is None or not current(snapshot, audience):
        return store.refresh_audience(session, audience, cause)
    return apply(session, snapshot, StoredAudience.of(audience), cause)


def current(snapshot: Snapshot, audience: Audience) -> bool:
    """Whether the snapshot evaluated the filter this audience uses now: the same text read
    with the same fields and zone. A change of the list's zone rewrites only the zone stored
    beside each filter (`list_zone.py`): the text alone took an answer evaluated in the old
    zone for the filter in the new one."""
    return (
        audience.mode == SMART
        and audience.filters == snapshot.filters
        and audience.fields == snapshot.fields
        and audience.listId == snapshot.list_id
    )


def apply(
    session: Session,
    snapshot: Snapshot,
    audience: StoredAudience,
    cause: str,
    contacts: Collection[str] | None = None,
    since: Written | None = None,
) -> int:
    """Stores the snapshot's answer, judging again the contacts that may have changed since,
    then refreshes the audiences that read this one; the number of events appended.
    `contacts`: only these contacts of the list (one turn, `use_cases/membership_turns.py`),
    rather than all of them; `since`: what the earlier turns read of the writes since."""
    list_id = snapshot.list_id
    members = select(Membership.contactId).where(Membership.audienceId == audience.id)
    selected: Collection[str] = snapshot.selected
    if contacts is None:
        again = _changed_since(session, snapshot)
    else:
        within = set(contacts)
        again = (since or Written(snapshot)).among(session, within)
        selected = snapshot.selected & within
        members = members.where(Membership.contactId.in_(sorted(within)))
    stored = set(session.scalars(members))
    entering = sorted(set(selected) - stored - again)
    leaving = sorted(stored - set(selected) - again)
    written = store.write_changes(session, list_id, audience, entering, leaving, cause, snapshot.at)
    written += store.refresh_contacts(session, list_id, sorted(again), cause, [audience])
    readers = store.dependents(session, [audience.id])
    if readers and (entering or leaving or again):
        moved = sorted({*entering, *leaving, *again})
        written += store.refresh_contacts(session, list_id, moved, cause, readers)
    return written


def candidates(session: Session, snapshot: Snapshot, audience_id: str) -> list[str]:
    """The contacts whose stored membership in the audience may differ from the snapshot's
    answer: those it selects and the audience lacks, those the audience holds and it does not
    select, and those written since it was taken. Read after the audience's filter changed
    (committed), so that every write after this reading judges its contact by the new filter
    itself: the others need no turn."""
    members = select(Membership.contactId).where(Membership.audienceId == audience_id)
    stored = set(session.scalars(members))
    return sorted((snapshot.selected ^ stored) | _changed_since(session, snapshot))


def _changed_since(session: Session, snapshot: Snapshot) -> set[str]:
    """The contacts of the list whose answer may differ from the snapshot's."""
    statement = select(Event.contactId).where(
        Event.listId == snapshot.list_id,
        Event.position > snapshot.position,
        Event.contactId.is_not(None),
    )
    changed = {contact_id for contact_id in session.scalars(statement.distinct()) if contact_id}
    since = _since(session, snapshot)
    if since.unannounced:
        changed.update(
            session.scalars(select(Contact.id).where(Contact.listId == snapshot.list_id))
        )
    if not since.acted:  # no action since: the points and action ids are as read
        return changed
    if snapshot.points is not None:
        points = _points(session, snapshot.list_id)
        if points != snapshot.points:  # else no contact's points moved: nothing to parse
            changed.update(_differing(_points_of(snapshot.points), _points_of(points)))
    if snapshot.actions is not None:
        now = _action_ids(session, snapshot.list_id)
        changed.update(contact_id for contact_id, _ in now ^ snapshot.actions)
    return changed


class Written:
    """The contacts written since a snapshot, read a turn at a time (`apply` with `contacts`).

    Reading every event since the snapshot at each turn read the turns' own events again and
    again (a chain of 30 audiences over 1,000 contacts: 63 turns reading up to 30,000 events
    each), and the points and action ids of the whole list. So each turn reads only the
    events appended since the previous turn's reading, which are all those committed before it
    (positions follow commit order), and the points and action ids of its own contacts."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.position = snapshot.position
        self.contacts: set[str] = set()
        self.unannounced = False
        self.points = None if snapshot.points is None else _points_of(snapshot.points)
        self.actions: dict[str, set[str]] | None = None
        if snapshot.actions is not None:
            self.actions = {}
            for contact_id, action_id in snapshot.actions:
                self.actions.setdefault(contact_id, set()).add(action_id)

    def among(self, session: Session, contacts: set[str]) -> set[str]:
        """Those of these contacts whose answer may differ from the snapshot's."""
        statement = select(Event.position, Event.contactId).where(
            Event.listId == self.snapshot.list_id,
            Event.position > self.position,
            Event.contactId.is_not(None),
        )
        for position, contact_id in session.execute(statement):
            self.position = max(self.position, position)
            if contact_id:
                self.contacts.add(contact_id)
        if self.unannounced:  # seen at an earlier turn: judged again, all of them
            return set(contacts)
        changed = self.contacts & contacts
        since = _since(session, self.snapshot)
        if since.unannounced:
            self.unannounced = True
            return set(contacts)
        if not since.acted:
            return changed
        ids = sorted(contacts)
        if self.points is not None:
            changed.update(_differing(_subset(self.points, contacts), _points_among(session, ids)))
        if self.actions is not None:
            now = _actions_among(session, ids)
            changed.update(c for c in contacts if self.actions.get(c, set()) != now.get(c, set()))
        return changed


@dataclass(frozen=True)
class _Since:
    """What committed since a snapshot that no event after its position reports."""

    unannounced: bool
    """A write of the list that appended no event (an import with `events=false`): no event
    names its contacts, so any may have changed."""
    acted: bool
    """An action created or deleted: the contacts whose points or action ids differ from the
    snapshot's readings may have changed."""


def _since(session: Session, snapshot: Snapshot) -> _Since:
    """The list's counter row read again and compared with the snapshot's (a count the
    snapshot did not read is taken as moved when it decides a reading, not when it would
    judge every contact)."""
    now = list_lock.heads(session, snapshot.list_id)
    unannounced = snapshot.unannounced is not None and now.unannounced != snapshot.unannounced
    return _Since(unannounced, snapshot.acted is None or now.acted != snapshot.acted)


def _subset(values: dict[str, str], keys: set[str]) -> dict[str, str]:
    return {key: values[key] for key in keys if key in values}


def _points_among(session: Session, ids: list[str]) -> dict[str, str]:
    """`{contact id: points}` of these contacts, as `_points` writes them."""
    found: dict[str, str] = {}
    for start in range(0, len(ids), judge.CHUNK):
        chunk = ids[start : start + judge.CHUNK]
        statement = select(Contact.id, cast(Contact.points, String)).where(Contact.id.in_(chunk))
        found.update((contact_id, points) for contact_id, points in session.execute(statement))
    return found


def _actions_among(session: Session, ids: list[str]) -> dict[str, set[str]]:
    """`{contact id: its action ids}` of these contacts."""
    found: dict[str, set[str]] = {}
    for start in range(0, len(ids), judge.CHUNK):
        chunk = ids[start : start + judge.CHUNK]
        statement = select(Action.subId, Action.id).where(Action.subId.in_(chunk))
        for contact_id, action_id in session.execute(statement):
            found.setdefault(contact_id, set()).add(action_id)
    return found


def _differing(before: dict[str, str], after: dict[str, str]) -> Iterable[str]:
    """Contacts whose points differ (or that exist in one reading only)."""
    return (key for key in before.keys() | after.keys() if before.get(key) != after.get(key))
