"""Pages of contacts of one list, rendered whole: rows, positions, audiences, links: the read
model of contacts, which every use case that answers contacts returns.

Every endpoint that returns contacts (the contacts routes, an audience's `subs`, a preview) goes
through `ContactPages`, so every contact anywhere carries its position and its `audiences`, and a
page costs a fixed number of statements: the rows, their total, their positions, the list's
audiences and the page's manual memberships, whatever the page size.

A page of a whole list read by a search (`GET /v4/contacts`, `ContactPages.of_list`) runs four
after its `BEGIN`: the list with its kept size and its audiences' stamp (so neither the total nor
the audiences' plan costs a statement of its own), the rows (a statement built once per order,
only its values bound), their positions (`ranking.py`) and their stored memberships, against the
hand-written page's two (`benchmarks/million.py`; tests/service/test_page_work.py counts them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson
from sqlalchemy import ColumnElement, Select, bindparam, func, select, tuple_
from sqlalchemy.orm import Session

from ..db.models import Contact, List, ListSize
from ..db.queries import contact_row, contact_rows, fetch_rows, owned_list_sized
from ..settings import Settings
from . import ranking
from .membership import plan, written
from .membership.members import ListAudiences

WALK_MARGIN = 4  # a walk of a subset may read this many times the contacts it expects
RANK_COLUMNS = (Contact.points, Contact.createdAt, Contact.id)  # the default order's keys
NULLABLE_SORT_KEYS = frozenset({"firstName", "lastName"})
SUMMARY_FIELDS = ("id", "name", "url", "mode", "referrals", "color", "title", "desc")


class ContactRenderer:
    """Renders contacts of one list; the list summary and link bases are computed once."""

    def __init__(self, lst: List, settings: Settings) -> None:
        self.summary = {field: getattr(lst, field) for field in SUMMARY_FIELDS}
        self.page = f"{settings.pages_base_url}/{lst.url}"

    def __call__(
        self, row: dict[str, Any], position: int, audiences: list[dict[str, str]]
    ) -> dict[str, Any]:
        """The contact of `row` (a dict of `db.queries.fetch_rows`, reused as the view)."""
        code = row.pop("referralCode")
        row["data"] = orjson.Fragment(row["data"])  # the stored JSON text, as it is
        row["list"] = self.summary
        row["audiences"] = audiences
        row["referralLink"] = f"{self.page}?ref={code}"
        row["privateLink"] = f"{self.page}/subscriber/{row['id']}"
        row["position"] = position
        return row


def pagination(total: int, page: int, per_page: int) -> dict[str, int]:
    return {
        "total": total,
        "pages": -(-total // per_page),
        "currentPage": page,
        "perPage": per_page,
    }


def sort_keys(sort: str | None, order: str) -> list[Any]:
    """The sort key, then sign-up time, then id, all in the requested order (stable pages).

    Without `sort`: points then sign-up time. `position` is the waitlist order itself.
    """
    if sort == "position":
        return ranking.rank_order(descending=order == "desc")
    columns: list[Any]
    if sort is None:
        columns = list(RANK_COLUMNS)
    elif sort == "createdAt":
        columns = [Contact.createdAt, Contact.id]
    else:
        columns = [getattr(Contact, sort), Contact.createdAt, Contact.id]
    keys = [column.asc() if order == "asc" else column.desc() for column in columns]
    if sort in NULLABLE_SORT_KEYS:
        keys[0] = keys[0].nulls_last()
    return keys


@cache
def _whole_list_page(sort: str | None, order: str) -> Select[Any]:
    """A page of a whole list in this order, its list, size and offset bound: built once, so
    each page is neither built nor compiled again (only the values change)."""
    statement = contact_rows([Contact.listId == bindparam("page_list")])
    statement = statement.order_by(*sort_keys(sort, order)).limit(bindparam("page_limit"))
    return statement.offset(bindparam("page_offset"))


@dataclass(frozen=True)
class Paging:
    """Which page of contacts a request asks for, and in which order."""

    page: int
    limit: int
    sort: str | None = None
    order: str = "desc"


class ContactPages:
    """Reads and renders contacts of list `lst` within one session."""

    def __init__(
        self, session: Session, lst: List, settings: Settings, size: int | None = None
    ) -> None:
        """`size`: the list's kept size as this transaction read it, if it did."""
        self.session = session
        self.lst = lst
        self.size = size
        self.renderer = ContactRenderer(lst, settings)
        self._audiences: ListAudiences | None = None

    @classmethod
    def of_list(
        cls, session: Session, account_id: str, list_id: str, settings: Settings
    ) -> ContactPages:
        """The pages of the account's list `list_id`, for a read transaction: the list, its
        kept size and its audiences' stamp read by one statement. A read sees one snapshot
        (`db/engine.py`), so the stamp read with the list is the one `plan.plan_of` would read
        again, and the size the one `total` would."""
        lst, size = owned_list_sized(session, account_id, list_id)
        plan.keep_stamp(session, lst.id, lst.audiencesStamp)
        return cls(session, lst, settings, size)

    @property
    def audiences(self) -> ListAudiences:
        if self._audiences is None:
            self._audiences = ListAudiences.load(self.session, self.lst.id)
        return self._audiences

    def render(
        self, rows: Sequence[dict[str, Any]], from_bottom: bool = False
    ) -> list[dict[str, Any]]:
        positions = ranking.positions(self.session, self.lst, rows, from_bottom)
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
        counted: Callable[[], int] | None = None,
        short: Sequence[ColumnElement[bool]] | None = None,
    ) -> dict[str, Any]:
        """`{"contacts": [...], "pagination": {...}}` for the contacts of the list matching
        `where`; `contacts` may be renamed by the caller. `counted`: how many contacts `where`
        matches, when the caller knows a cheaper count than joining them to the list's.
        `short`: conditions selecting the same contacts as `where`, read instead when `where`
        gives the page fewer rows than `counted` says it holds (a walk that met its bound)."""
        narrowing = list(where)
        offset = (page - 1) * limit
        # One row more than the page says whether anything follows it; when nothing does, the
        # total is known without counting (a whole audience in one page, any last page). A page
        # of the whole list builds no expression: its statement is built once, only bound.
        if narrowing:
            keys = sort_keys(sort, order)
            statement = contact_rows(self._conditions(narrowing)).order_by(*keys)
            rows = fetch_rows(self.session, statement.limit(limit + 1).offset(offset))
            if short is not None and counted is not None:
                if len(rows) < min(limit + 1, counted() - offset):
                    narrowing = list(short)
                    statement = contact_rows(self._conditions(narrowing)).order_by(*keys)
                    rows = fetch_rows(self.session, statement.limit(limit + 1).offset(offset))
        else:
            values = {"page_list": self.lst.id, "page_limit": limit + 1, "page_offset": offset}
            rows = fetch_rows(self.session, _whole_list_page(sort, order), values)
        known = len(rows) <= limit and (rows or page == 1)
        del rows[limit:]
        total = offset + len(rows)
        if not known and counted is not None:
            total = counted()
        elif not known:
            total = self.total(narrowing, self._conditions(narrowing))
        contacts = self.render(rows, ranking.bottom_first(sort, order))
        return {"contacts": contacts, "pagination": pagination(total, page, limit)}

    def _conditions(self, narrowing: Sequence[ColumnElement[bool]]) -> list[ColumnElement[bool]]:
        return [Contact.listId == self.lst.id, *narrowing]

    def paged(
        self,
        where: Iterable[ColumnElement[bool]],
        paging: Paging,
        counted: Callable[[], int] | None = None,
        short: Sequence[ColumnElement[bool]] | None = None,
    ) -> dict[str, Any]:
        """`page` for `paging`."""
        return self.page(
            where,
            page=paging.page,
            limit=paging.limit,
            sort=paging.sort,
            order=paging.order,
            counted=counted,
            short=short,
        )

    def total(
        self, where: Sequence[ColumnElement[bool]], conditions: Iterable[ColumnElement[bool]]
    ) -> int:
        """The number of contacts matching: the list's kept size when nothing narrows it (one
        row read, where counting a million contacts took most of the page's time), else a
        count."""
        size = None if where else self.list_size()
        return self.count(conditions) if size is None else size

    def list_size(self) -> int | None:
        """The list's kept number of contacts (read once), or None when none is kept."""
        if self.size is None:
            size = self.session.connection().execute(
                select(ListSize.contacts).where(ListSize.listId == self.lst.id)
            )
            kept = size.scalar_one_or_none()
            self.size = None if kept is None else int(kept)
        return self.size

    def walk_bound(self, paging: Paging, members: int) -> int | None:
        """How many of the list's first contacts, in the page's order, a page of a subset of
        `members` contacts tested one at a time may read before it is sorted instead; None:
        sort it at once. A walk reads about (rows up to the page's end) x list ÷ members
        contacts when the subset is spread over the list, every one before it when the subset
        sits at the other end (an audience of contacts without points, in the default order).
        So a walk is bounded at four times its expected length, and taken when that bound is
        below the subset's size: the page then costs at most twice the sort. Only the default
        order (points, sign-up time, id, one direction) has an index to walk:
        `ix_contacts_list_rank`."""
        size = self.list_size()
        if paging.sort is not None or members == 0 or size is None:
            return None
        bound = WALK_MARGIN * ((paging.page * paging.limit + 1) * size // members + 1)
        return bound if bound < members else None

    def first(self, bound: int, paging: Paging) -> ColumnElement[bool]:
        """The condition of the list's first `bound` contacts in the default order (`paging`'s
        direction): its keys compared with those of the `bound`-th contact, read once, so a
        page walked in that order still stops at its last row. (Their ids `IN` a subquery were
        all read, and sorted, whatever the page needed.)"""
        keys = sort_keys(None, paging.order)
        edge = select(*RANK_COLUMNS).where(Contact.listId == self.lst.id).order_by(*keys)
        last = edge.offset(bound - 1).limit(1).scalar_subquery()
        return tuple_(*RANK_COLUMNS).op(">=" if paging.order == "desc" else "<=")(last)

    def count(self, conditions: Iterable[ColumnElement[bool]]) -> int:
        statement = select(func.count()).select_from(Contact).where(*conditions)
        return int(self.session.connection().execute(statement).scalar_one())

    def one(self, contact_id: str) -> dict[str, Any]:
        """The contact; as its write read it back in this transaction when it did
        (`membership/written.py`), else read."""
        known = written.of(self.session, contact_id)
        if known is None:
            return self.render([contact_row(self.session, contact_id)])[0]
        row = dict(known.row)
        [memberships] = self.audiences.of_rows(self.session, [row])
        return self.renderer(row, self.lst.startFrom + known.ahead, memberships)
