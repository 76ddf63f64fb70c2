"""Queries shared by the routes: ownership checks and waitlist ranking.

Every lookup joins up to the caller's account, so an id of another tenant is simply not found:
the answer is 404 and never reveals that the id exists. Ids that cannot be ours (wrong length or
characters) are refused before any query.

A contact's position is its rank in the list by points (more first), then sign-up time (earlier
first), then id, counted from the list's `startFrom`. It is computed with a window function over
the whole list, so filters and paging do not change anyone's position.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import Session, aliased

from .errors import not_found
from .models import Action, Contact, List

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def plausible_id(value: str) -> bool:
    return _ID.fullmatch(value) is not None


def owned_list(session: Session, account_id: str, list_id: str) -> List:
    if plausible_id(list_id):
        found = session.scalars(
            select(List).where(List.id == list_id, List.accountId == account_id)
        ).first()
        if found is not None:
            return found
    raise not_found("List")


def owned_contact(session: Session, account_id: str, contact_id: str) -> tuple[Contact, List]:
    if plausible_id(contact_id):
        row = session.execute(
            select(Contact, List)
            .join(List, List.id == Contact.listId)
            .where(Contact.id == contact_id, List.accountId == account_id)
        ).first()
        if row is not None:
            return row[0], row[1]
    raise not_found("Contact")


def owned_action(session: Session, account_id: str, action_id: str) -> Action:
    if plausible_id(action_id):
        found = session.scalars(
            select(Action)
            .join(Contact, Contact.id == Action.subId)
            .join(List, List.id == Contact.listId)
            .where(Action.id == action_id, List.accountId == account_id)
        ).first()
        if found is not None:
            return found
    raise not_found("Action")


class RankedContacts:
    """The contacts of one list with their rank, as an aliased entity to filter and sort."""

    def __init__(self, lst: List) -> None:
        rank = func.row_number().over(
            order_by=(Contact.points.desc(), Contact.createdAt.asc(), Contact.id.asc())
        )
        ranked = (
            select(Contact, rank.label("rank")).where(Contact.listId == lst.id).subquery("ranked")
        )
        self.entity = aliased(Contact, ranked)
        self.rank = ranked.c.rank
        self.start = lst.startFrom

    def select(self) -> Select[Any]:
        return select(self.entity, self.rank)

    def fetch(self, session: Session, statement: Select[Any]) -> list[tuple[Contact, int]]:
        """Run a statement built on `select()`: contacts with their positions."""
        return [(row[0], self.start + row[1] - 1) for row in session.execute(statement)]

    def one(self, session: Session, contact_id: str) -> tuple[Contact, int]:
        rows = self.fetch(session, self.select().where(self.entity.id == contact_id))
        if not rows:
            raise not_found("Contact")
        return rows[0]


def text_filter(column: Any, value: str) -> ColumnElement[bool]:
    """Partial, case-insensitive match; `%`, `_` and the escape character are literal."""
    return func.lower(column).contains(value.lower(), autoescape=True)


def count(session: Session, entity: type[Any], *where: ColumnElement[bool]) -> int:
    return int(session.scalar(select(func.count()).select_from(entity).where(*where)) or 0)


def page_of(statement: Select[Any], page: int, limit: int) -> Select[Any]:
    return statement.limit(limit).offset((page - 1) * limit)
