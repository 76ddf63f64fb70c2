"""The action names a list has seen, for a builder's pick-list of names.

A behaviour condition names its actions (`count(actions where name = "share") >= 3`); typing a
name by hand invites a misspelt one that matches nobody and says nothing. The names the list's
contacts' actions carry, most frequent first, are what a builder offers instead. Names are
bounded (`limit`) so a list with many distinct names answers in one short page.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from ...db.engine import Database
from ...db.models import Action, Contact
from ...db.queries import owned_list

MOST_NAMES = 200
"""The most names answered: a pick-list longer than this is not read, it is searched."""


@dataclass(frozen=True)
class ActionName:
    """One name, and how many of the list's actions carry it (the order of the pick-list)."""

    name: str
    count: int


def seen(database: Database, account_id: str, list_id: str, limit: int) -> list[ActionName]:
    """The distinct names of the list's actions, most frequent first, then by name compared by
    code point: the order is Python's, not the database's collation, so every engine answers
    the same list (PostgreSQL's collation would put `like` before `Purchase`)."""
    with database.reading() as session:
        owned_list(session, account_id, list_id)
        query = (
            select(Action.name, func.count(Action.id))
            .join(Contact, Contact.id == Action.subId)
            .where(Contact.listId == list_id)
            .group_by(Action.name)
        )
        found = [ActionName(name, int(n)) for name, n in session.execute(query)]
    found.sort(key=lambda name: (-name.count, name.name))
    return found[: min(limit, MOST_NAMES)]
