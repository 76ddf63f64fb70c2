"""Waitlist positions for one page of contacts, without ranking the whole list.

A contact's position is its rank in its list by points (more first), then sign-up time (earlier
first), then id, counted from the list's `startFrom`; filters and pages never change it.

Ranking every contact of the list for each page (a window over the list) makes a page cost the
list's size. Instead, one statement ranks the page alone: take the page's best-ranked and
worst-ranked contacts (top and bottom); the position of every page contact is

    startFrom + (contacts ahead of top) + (its rank among the contacts from top to bottom) - 1

The count ahead of top is an index range (`points >= top.points`) and the window runs only over
the span from top to bottom, which for a page in rank order (`sort=position`, or the default sort)
is the page itself. A sparse page (a filtered list, a small audience) spans more of the list, at
worst all of it, which is what the whole-list window always cost.

The span and the count bound the order by points and sign-up time alone and leave contacts tied
on both to the window, ordered by the database's own id ordering, so the answer never depends on
Python ordering ids the way the database does.

The statement asks for the page's ids only, passed as one parameter (`db/dialects.py`), and is built
once per dialect.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import BindParameter, Select, bindparam, func, or_, select
from sqlalchemy.orm import Session

from ..db.dialects import IDS, dialect_of, ids_in, per_dialect
from ..db.models import Contact, List


def _rank_key(row: dict[str, Any]) -> tuple[int, Any]:
    return (-row["points"], row["createdAt"])


@per_dialect
def _page_ranks(dialect: str) -> Select[Any]:
    """The ranking statement, with bound parameters (only the values change)."""
    points, created = Contact.points, Contact.createdAt
    list_id: BindParameter[str] = bindparam("list_id")
    ahead = (
        select(func.count())
        .where(
            Contact.listId == list_id,
            points >= bindparam("top_points"),
            or_(points > bindparam("top_points"), created < bindparam("top_time")),
        )
        .scalar_subquery()
    )
    rank = func.row_number().over(order_by=(points.desc(), created.asc(), Contact.id.asc()))
    span = (
        select(Contact.id.label("id"), (ahead + rank).label("rank"))
        .where(
            Contact.listId == list_id,
            points <= bindparam("top_points"),
            points >= bindparam("bottom_points"),
            or_(points < bindparam("top_points"), created >= bindparam("top_time")),
            or_(points > bindparam("bottom_points"), created <= bindparam("bottom_time")),
        )
        .subquery("span")
    )
    return select(span.c.id, span.c.rank).where(ids_in(span.c.id, dialect))


def positions(session: Session, lst: List, rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """`{contact id: position}` for rows of list `lst` (dicts with id, points and createdAt)."""
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
        IDS: [row["id"] for row in rows],
    }
    start = lst.startFrom - 1
    ranks = session.connection().execute(_page_ranks(dialect_of(session)), parameters)
    return {id_: start + rank for id_, rank in ranks}


def rank_order(descending: bool) -> list[Any]:
    """ORDER BY for `sort=position`: the waitlist from the top (asc) or from the bottom (desc)."""
    keys = [Contact.points.desc(), Contact.createdAt.asc(), Contact.id.asc()]
    if descending:
        keys = [Contact.points.asc(), Contact.createdAt.desc(), Contact.id.desc()]
    return keys
