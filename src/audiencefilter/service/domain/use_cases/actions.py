"""Actions: point events of a contact. Creating one adds its increase, deleting takes it back.

Both are single SQL updates (`points = points + :n`) in the same transaction as the action row,
so concurrent requests never lose an update. A delete subtracts only if its own `DELETE` removed
the row, so of two racing deletes of one action one takes the points back and the other finds
nothing. A sum beyond ±(2^53-1), the range every client reads exactly, is `Unprocessable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from sqlalchemy import Update, delete, select, update
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import Action, Contact
from ...db.queries import count, owned_action, owned_contact, page_of
from ...ground.errors import RequestProblem, Unprocessable, not_found
from ...ground.fields import MAX_SAFE_INTEGER
from .. import events, list_lock, write_effects
from .unit import Page, Writes

R = TypeVar("R")
POINTS_OUT_OF_RANGE = (
    "This action would take the contact's points beyond ±(2^53-1), the range every client reads "
    "exactly; the contact's points are unchanged"
)


def _add_points(contact_id: str, amount: int) -> Update:
    """Add `amount` unless the sum would leave ±(2^53-1): the guard is in the statement itself,
    so two concurrent actions cannot cross the bound between a check and the write."""
    total = Contact.points + amount
    return (
        update(Contact)
        .where(Contact.id == contact_id, total <= MAX_SAFE_INTEGER, total >= -MAX_SAFE_INTEGER)
        .values(points=total)
        .execution_options(synchronize_session=False)
    )


def _change_points(session: Session, contact_id: str, amount: int) -> None:
    changed = session.execute(_add_points(contact_id, amount))
    if getattr(changed, "rowcount", 0) != 1:
        raise Unprocessable(
            POINTS_OUT_OF_RANGE,
            errors=[RequestProblem(("increase",), "would overflow points")],
        )


def create(account_id: str, values: Mapping[str, Any], writes: Writes[Action, R]) -> R:
    """A new action of the contact `values["subId"]`, its increase added to its points."""

    def work(session: Session) -> Action:
        contact_id = values["subId"]
        _, lst = list_lock.locked_contact(session, account_id, contact_id)
        action = Action(**values)  # createdAt: now unless sent
        session.add(action)
        _change_points(session, contact_id, values["increase"])
        session.flush()
        write_effects.contacts_changed(session, lst.id, [contact_id], events.CAUSE_ACTION_CREATED)
        return action

    return writes(work)


def page(
    database: Database, account_id: str, contact_id: str, number: int, limit: int
) -> Page[Action]:
    """The contact's actions, newest first."""
    statement = (
        select(Action)
        .where(Action.subId == contact_id)
        .order_by(Action.createdAt.desc(), Action.id.desc())
    )
    with database.reading() as session:
        owned_contact(session, account_id, contact_id)
        actions = session.scalars(page_of(statement, number, limit)).all()
        return Page(actions, count(session, Action, Action.subId == contact_id))


def get(database: Database, account_id: str, action_id: str) -> Action:
    with database.reading() as session:
        return owned_action(session, account_id, action_id)


def remove(database: Database, account_id: str, action_id: str) -> Action:
    """Deletes the action and takes its increase back from its contact's points."""
    with database.transaction() as session:
        action = owned_action(session, account_id, action_id)
        list_id = session.scalar(select(Contact.listId).where(Contact.id == action.subId))
        if list_id is not None:
            list_lock.take(session, list_id)
        removed = session.execute(
            delete(Action)
            .where(Action.id == action_id)
            .execution_options(synchronize_session=False)
        )
        if getattr(removed, "rowcount", 0) != 1:
            raise not_found("Action")  # a concurrent delete got there first
        _change_points(session, action.subId, -action.increase)
        if list_id is not None:
            write_effects.contacts_changed(
                session, list_id, [action.subId], events.CAUSE_ACTION_DELETED
            )
    return action
