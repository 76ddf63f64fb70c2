"""Pages of contacts of one list, rendered whole: rows, positions, audiences, links.

Every endpoint that returns contacts (the contacts routes, an audience's `subs`, a preview) goes
through `ContactPages`, so every contact anywhere carries its position and its `audiences`, and a
page costs a fixed number of statements: the rows, their total, their positions, the list's
audiences and the page's manual memberships, whatever the page size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from ..db.models import Contact, List
from ..db.queries import contact_row, contact_rows, fetch_rows
from ..domain import ranking
from ..domain.membership.members import ListAudiences
from ..settings import Settings
from .schemas.views import ContactRenderer, pagination

NULLABLE_SORT_KEYS = frozenset({"firstName", "lastName"})


def sort_keys(sort: str | None, order: str) -> list[Any]:
    """The sort key, then sign-up time, then id, all in the requested order (stable pages).

    Without `sort`: points then sign-up time. `position` is the waitlist order itself.
    """
    if sort == "position":
        return ranking.rank_order(descending=order == "desc")
    columns: list[Any]
    if sort is None:
        columns = [Contact.points, Contact.createdAt, Contact.id]
    elif sort == "createdAt":
        columns = [Contact.createdAt, Contact.id]
    else:
        columns = [getattr(Contact, sort), Contact.createdAt, Contact.id]
    keys = [column.asc() if order == "asc" else column.desc() for column in columns]
    if sort in NULLABLE_SORT_KEYS:
        keys[0] = keys[0].nulls_last()
    return keys


class ContactPages:
    """Reads and renders contacts of list `lst` within one session."""

    def __init__(self, session: Session, lst: List, settings: Settings) -> None:
        self.session = session
        self.lst = lst
        self.renderer = ContactRenderer(lst, settings)
        self._audiences: ListAudiences | None = None

    @property
    def audiences(self) -> ListAudiences:
        if self._audiences is None:
            self._audiences = ListAudiences.load(self.session, self.lst.id)
        return self._audiences

    def render(self, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        positions = ranking.positions(self.session, self.lst, rows)
        memberships = self.audiences.of_rows(self.session, rows)
        return [
            self.renderer(row, positions[row["id"]], items)
            for row, items in zip(rows, memberships, strict=True)
        ]

    def page(
        self,
        where: Iterable[ColumnElement[bool]],
        *,
        page: int,
        limit: int,
        sort: str | None = None,
        order: str = "desc",
    ) -> dict[str, Any]:
        """`{"contacts": [...], "pagination": {...}}` for the contacts of the list matching
        `where`; `contacts` may be renamed by the caller."""
        conditions = [Contact.listId == self.lst.id, *where]
        statement = contact_rows(conditions).order_by(*sort_keys(sort, order))
        offset = (page - 1) * limit
        # One row more than the page says whether anything follows it; when nothing does, the
        # total is known without counting (a whole audience in one page, any last page).
        rows = fetch_rows(self.session, statement.limit(limit + 1).offset(offset))
        more = len(rows) > limit
        del rows[limit:]
        known = not more and (rows or page == 1)
        total = offset + len(rows) if known else self.count(conditions)
        return {"contacts": self.render(rows), "pagination": pagination(total, page, limit)}

    def count(self, conditions: Iterable[ColumnElement[bool]]) -> int:
        statement = select(func.count()).select_from(Contact).where(*conditions)
        return int(self.session.connection().execute(statement).scalar_one())

    def one(self, contact_id: str) -> dict[str, Any]:
        return self.render([contact_row(self.session, contact_id)])[0]
