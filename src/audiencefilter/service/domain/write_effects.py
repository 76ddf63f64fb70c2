"""The effects of each write, in its transaction: its events, and membership following it.

One function per kind of write, named after the moment it runs (before or after the change),
each appending the write's lifecycle event to the outbox (`events.py`) and then storing the
membership it moved with its events (`membership/store.py`). Use cases pass the door first
(`list_lock.py`), before reading what they change.

Hooks: a route that creates or deletes something a filter may read (an action, once filters
can read a contact's actions) calls `contacts_changed` with its cause; an audience whose filter
refers to other audiences is refreshed by `store.dependents`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy.orm import Session

from ..db.models import Audience
from ..ground import clock
from . import events, list_lock
from .audience_filters import StoredAudience
from .membership import build, due, plan, snapshot, store
from .membership.snapshot import Snapshot


def _audience_payload(audience: Audience) -> dict[str, Any]:
    return {"name": audience.name, "mode": audience.mode, "filters": audience.filters}


def contacts_created(session: Session, list_id: str, created: Sequence[tuple[str, str]]) -> None:
    """After contacts (id, email) were inserted and flushed."""
    events.append(
        session,
        list_id,
        [
            events.NewEvent(events.CONTACT_CREATED, contact_id, payload={"email": email})
            for contact_id, email in created
        ],
    )
    ids = [contact_id for contact_id, _ in created]
    store.refresh_contacts(session, list_id, ids, events.CAUSE_CONTACT_CREATED)


ACTION_WRITES = ("actions", "points")
"""What adding or deleting an action changes of its contact: its actions, and its points."""


def contacts_changed(
    session: Session,
    list_id: str,
    contact_ids: Sequence[str],
    cause: str,
    changed: Collection[str] = ACTION_WRITES,
) -> None:
    """After a write that changed `changed` of these contacts (an action: ACTION_WRITES),
    which appends no event of its own: it is counted instead (`list_lock.acted`), under the
    list's exclusive lock the action holds (never a shared turn)."""
    list_lock.acted(session, list_id)
    store.refresh_contacts(session, list_id, contact_ids, cause, changed=changed)


def list_deleting(session: Session, list_id: str) -> None:
    """Before a list is deleted, its lock held: its memberships and events go (what the
    database's cascades delete with the list follows it, the rest is done here)."""
    store.forget_list(session, list_id)
    events.forget_list(session, list_id)


def contact_deleting(session: Session, list_id: str, contact_id: str, email: str) -> None:
    """Before a contact is deleted: it leaves every audience, then is reported deleted."""
    store.remove_contact(session, list_id, contact_id, events.CAUSE_CONTACT_DELETED)
    events.append(
        session,
        list_id,
        [events.NewEvent(events.CONTACT_DELETED, contact_id, payload={"email": email})],
    )


def contact_erased(session: Session, list_id: str, contact_id: str) -> None:
    """When a contact is erased (`domain/erasure.py`), once it is deleted: consumers of the
    feed erase what they keep of it."""
    events.append(session, list_id, [events.NewEvent(events.CONTACT_ERASED, contact_id)])


def audience_created(
    session: Session,
    audience: Audience,
    evaluated: Snapshot | None = None,
    *,
    background: bool = False,
) -> None:
    """After an audience was inserted and flushed; `evaluated`: its members, evaluated before
    the write (`snapshot.py`); `background`: its members are built in the background
    instead (`build.py`), their events written when the build ends."""
    event = events.NewEvent(
        events.AUDIENCE_CREATED, audience_id=audience.id, payload=_audience_payload(audience)
    )
    events.append(session, audience.listId, [event])
    plan.audiences_changed(session, audience.listId)
    if background:
        build.start(session, audience, events.CAUSE_AUDIENCE_CREATED)
        return
    snapshot.refresh(session, audience, events.CAUSE_AUDIENCE_CREATED, evaluated)
    due.audience_changed(session, StoredAudience.of(audience), clock.now())


def audience_updated(
    session: Session,
    audience: Audience,
    *,
    membership: bool,
    evaluated: Snapshot | None = None,
    background: bool = False,
    cause: str = events.CAUSE_AUDIENCE_UPDATED,
) -> bool:
    """After an audience was changed and flushed; `membership`: its mode or filters changed;
    `cause`: why, carried by its events (a change of the list's zone: `list_zone.py`);
    `evaluated`: its new members, evaluated before the write (`snapshot.py`);
    `background`: they are built in the background instead (a build under way restarts, an
    unfinished mark is replaced). True when the evaluated members are left to be stored in
    turns after this transaction (`use_cases/membership_turns.py`), the audience marked
    unfinished meanwhile and any build of it cancelled."""
    why = None if cause == events.CAUSE_AUDIENCE_UPDATED else cause
    payload = _audience_payload(audience)
    event = events.NewEvent(events.AUDIENCE_UPDATED, None, audience.id, why, payload)
    events.append(session, audience.listId, [event])
    plan.audiences_changed(session, audience.listId)
    if not membership:
        return False
    if background:
        # Its unfinished mark, if any, goes too (`due.audience_changed`): turns
        # under way stop at their next turn (`membership_turns`).
        build.start(session, audience, cause)
        return False
    build.cancel(session, audience.id)
    in_turns = evaluated is not None and snapshot.current(evaluated, audience)
    if not in_turns:
        snapshot.refresh(session, audience, cause, evaluated)
    now = clock.now()
    due.audience_changed(session, StoredAudience.of(audience), now)
    if in_turns:
        due.mark_unfinished(session, audience.id, now)
    return in_turns


def audience_deleting(session: Session, audience: Audience) -> None:
    """Before an audience is deleted: every member leaves it, then it is reported deleted."""
    plan.audiences_changed(session, audience.listId)
    store.remove_audience(session, audience, events.CAUSE_AUDIENCE_DELETED)
    event = events.NewEvent(
        events.AUDIENCE_DELETED, audience_id=audience.id, payload=_audience_payload(audience)
    )
    events.append(session, audience.listId, [event])


def members_changed(session: Session, audience: Audience, cause: str) -> None:
    """After a manual audience's `audience_members` changed."""
    store.refresh_audience(session, audience, cause)
