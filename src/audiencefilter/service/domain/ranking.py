"""Waitlist positions for one page of contacts, without ranking the whole list.

A contact's position is its rank in its list by points (more first), then sign-up time (earlier
first), then id, counted from the list's `startFrom`; filters and pages never change it.

Ranking every contact of the list for each page (a window over the list) makes a page cost the
list's size. Instead, one statement ranks the page alone: take the page's best-ranked and
worst-ranked contacts (top and bottom); the position of every page contact is

    startFrom + (contacts ahead of top) + (its rank among the contacts from top to bottom) - 1

The count ahead of top is a sum over the list's points histogram (`list_points`, kept by the
database: the contacts with more points) and one index range (as many points, signed up earlier),
so it costs the contacts tied with top on points, not top's rank (`db/queries.ranked_beyond`);
the window runs only over the span from top to bottom, which for a page in rank order
(`sort=position`, or the default sort) is the page itself. A sparse page (a filtered list, a small
audience) spans more of the list, at
worst all of it, which is what the whole-list window always cost.

A page from the bottom of the waitlist (`sort=position` descending, `sort=points` ascending)
would count almost the whole list ahead of it; it counts from the bottom instead, with the list's
size the database keeps (`list_sizes`, read in the same statement, so one snapshot answers both):

    position = startFrom + size - (contacts behind bottom) - (contacts in the span) + (its rank
               in the span) - 1

so both ends of the list cost their own page (tests/service/test_page_work.py).

The span and the count bound the order by points and sign-up time alone and leave contacts tied
on both to the window, ordered by the database's own id ordering, so the answer never depends on
Python ordering ids the way the database does.

The statement asks for the page's ids only, passed as one parameter (`db/dialects.py`), and is built
once per dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BindParameter, Select, bindparam, func, select, union_all
from sqlalchemy.orm import Session

from ..db.dialects import IDS, dialect_of, ids_in, per_dialect
from ..db.models import Contact, List, ListSize
from ..db.queries import ranked_beyond

END_OF_TIME = datetime(9999, 12, 31, tzinfo=UTC)


def _rank_key(row: dict[str, Any]) -> tuple[int, Any]:
    return (-row["points"], row["createdAt"])


def _ahead(dialect: str) -> Any:
    """Contacts ranked before the page's top (`db/queries.ranked_beyond`)."""
    top: BindParameter[int] = bindparam("top_points")
    return ranked_beyond(dialect, bindparam("list_id"), top, bindparam("top_time"), ahead=True)


def _behind(dialect: str) -> Any:
    """Contacts ranked after the page's bottom (`db/queries.ranked_beyond`)."""
    bottom: BindParameter[int] = bindparam("bottom_points")
    time: BindParameter[datetime] = bindparam("bottom_time")
    return ranked_beyond(dialect, bindparam("list_id"), bottom, time, ahead=False)


@per_dialect
def _page_ranks(dialect: str) -> Select[Any]:
    """The ranking statement, with bound parameters (only the values change)."""
    return _ranked_span(dialect, lambda rank, _: _ahead(dialect) + rank)


@per_dialect
def _page_ranks_from_bottom(dialect: str) -> Select[Any]:
    """The same ranks counted from the list's kept size and the contacts behind the page
    (NULL ranks when the list has no kept size)."""
    size = select(ListSize.contacts).where(ListSize.listId == bindparam("list_id"))
    return _ranked_span(
        dialect, lambda rank, span: size.scalar_subquery() - _behind(dialect) - span + rank
    )


def _ranked_span(dialect: str, ranked: Callable[[Any, Any], Any]) -> Select[Any]:
    """The rank `ranked(rank in the span, contacts in the span)` of each of the page's ids.

    The span is read as three index ranges: the top's points from its sign-up time on (up to
    `top_until`: the bottom's time when both share their points, else the end of time), the
    bottom's points up to its time, and the points between; one range of points with the times
    checked row by row would read whole groups of tied points (the 0 points of most of a list)."""
    points, created = Contact.points, Contact.createdAt
    columns = (Contact.id.label("id"), points.label("points"), created.label("created"))
    where = Contact.listId == bindparam("list_id")
    top: BindParameter[int] = bindparam("top_points")
    bottom: BindParameter[int] = bindparam("bottom_points")
    ranges = union_all(
        select(*columns).where(
            where,
            points == top,
            created >= bindparam("top_time"),
            created <= bindparam("top_until"),
        ),
        select(*columns).where(
            where, points == bottom, points < top, created <= bindparam("bottom_time")
        ),
        select(*columns).where(where, points > bottom, points < top),
    ).subquery("ranges")
    rank = func.row_number().over(
        order_by=(ranges.c.points.desc(), ranges.c.created.asc(), ranges.c.id.asc())
    )
    span = select(
        ranges.c.id.label("id"), ranked(rank, func.count().over()).label("rank")
    ).subquery("span")
    return select(span.c.id, span.c.rank).where(ids_in(span.c.id, dialect))


def positions(
    session: Session, lst: List, rows: Sequence[dict[str, Any]], from_bottom: bool = False
) -> dict[str, int]:
    """`{contact id: position}` for rows of list `lst` (dicts with id, points and createdAt);
    `from_bottom`: the rows lie toward the bottom of the waitlist, count what is behind them."""
    if not rows:
        return {}
    top = min(rows, key=_rank_key)
    bottom = max(rows, key=_rank_key)
    parameters: dict[str, Any] = {
        "list_id": lst.id,
        "top_points": top["points"],
        "top_time": top["createdAt"],
        "bottom_points": bottom["points"],
        "bottom_time": bottom["createdAt"],
        "top_until": bottom["createdAt"] if top["points"] == bottom["points"] else END_OF_TIME,
        IDS: [row["id"] for row in rows],
    }
    start = lst.startFrom - 1
    connection, dialect = session.connection(), dialect_of(session)
    if from_bottom:
        ranks = connection.execute(_page_ranks_from_bottom(dialect), parameters).all()
        if all(rank is not None for _, rank in ranks):
            return {id_: start + rank for id_, rank in ranks}
    ranks = connection.execute(_page_ranks(dialect), parameters).all()
    return {id_: start + rank for id_, rank in ranks}


def bottom_first(sort: str | None, order: str) -> bool:
    """Whether a page in this order starts from the bottom of the waitlist."""
    return (sort, order) in {("position", "desc"), ("points", "asc")}


def rank_order(descending: bool) -> list[Any]:
    """ORDER BY for `sort=position`: the waitlist from the top (asc) or from the bottom (desc)."""
    keys = [Contact.points.desc(), Contact.createdAt.asc(), Contact.id.asc()]
    if descending:
        keys = [Contact.points.asc(), Contact.createdAt.desc(), Contact.id.desc()]
    return keys
