"""Queries shared by the routes: ownership checks and contact rows.

Every lookup joins up to the caller's account, so an id of another tenant is simply not found:
the answer is 404 and never reveals that the id exists. Ids that cannot be ours (wrong length or
characters) are refused before any query.

Pages of contacts are read with a Core `select` of the contact columns, labelled with the
interface's names, and come back as plain dicts: no ORM object is built per contact, so a page
of 20,000 costs one row tuple and one dict each. Those dicts are also the records the filter
library evaluates (its field names are the labels), with `createdAt` made time-zone aware
(SQLite hands back naive UTC). The free-form `data` is read as its stored JSON text and goes
into the response as it is (`api/schemas/views.py`): it is never filtered on, and decoding
20,000 objects to encode them again would be most of the cost of a large page.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC
from functools import cache
from typing import Any, Final, TypeVar

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Select,
    Text,
    and_,
    bindparam,
    case,
    cast,
    func,
    not_,
    select,
)
from sqlalchemy.orm import Session

from ..ground.errors import not_found
from . import dialects
from .models import (
    BAND_SHIFT,
    Action,
    Audience,
    Base,
    Contact,
    List,
    ListPointBand,
    ListPoints,
    ListSize,
    Webhook,
)

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def plausible_id(value: str) -> bool:
    return _ID.fullmatch(value) is not None


Row = TypeVar("Row", bound=Base)

# How a row is reached from its id up to the list whose account owns it: the id column, then
# each join on the way.
_OWNER_PATHS: Final[dict[type[Base], tuple[Any, tuple[tuple[type[Base], Any], ...]]]] = {
    List: (List.id, ()),
    Contact: (Contact.id, ((List, List.id == Contact.listId),)),
    Audience: (Audience.id, ((List, List.id == Audience.listId),)),
    Webhook: (Webhook.id, ((List, List.id == Webhook.listId),)),
    Action: (
        Action.id,
        ((Contact, Contact.id == Action.subId), (List, List.id == Contact.listId)),
    ),
}


def owned(session: Session, account_id: str, model: type[Row], row_id: str) -> tuple[Row, List]:
    """The row of `model` with `row_id` and its list, if that list is the account's.

    One query for every owned kind, so each checks ownership the same way: anything else, an
    implausible id included, is a 404 that does not reveal whether the id exists elsewhere.
    """
    if plausible_id(row_id):
        row = session.execute(_owned_statement(model), {"owned_id": row_id, "owner": account_id})
        found = row.first()
        if found is not None:
            return typing.cast(Row, found[0]), found[1]
    raise not_found(model.__name__)


@cache
def _owned_statement(model: type[Base]) -> Select[Base, List]:
    """`owned`'s statement for `model`, its values bound: built once, not on every request."""
    id_column, joins = _OWNER_PATHS[model]
    statement = select(model, List)  # a list's own row is selected once, read twice
    for target, on in joins:
        statement = statement.join(target, on)
    return statement.where(id_column == bindparam("owned_id"), List.accountId == bindparam("owner"))


def owned_list(session: Session, account_id: str, list_id: str) -> List:
    return owned(session, account_id, List, list_id)[0]


def owned_list_sized(session: Session, account_id: str, list_id: str) -> tuple[List, int | None]:
    """The list, as `owned_list` finds it, and its kept size (`list_sizes`, None if it has
    none) in the same statement: a page of the whole list answers its total from it without a
    statement of its own."""
    if plausible_id(list_id):
        found = session.execute(_LIST_SIZED, {"owned_id": list_id, "owner": account_id})
        row = found.first()
        if row is not None:
            return row[0], row[1]
    raise not_found("List")


_LIST_SIZED = (
    select(List, ListSize.contacts)
    .outerjoin(ListSize, ListSize.listId == List.id)
    .where(List.id == bindparam("owned_id"), List.accountId == bindparam("owner"))
)


def owned_contact(session: Session, account_id: str, contact_id: str) -> tuple[Contact, List]:
    return owned(session, account_id, Contact, contact_id)


def owned_audience(session: Session, account_id: str, audience_id: str) -> tuple[Audience, List]:
    return owned(session, account_id, Audience, audience_id)


def owned_action(session: Session, account_id: str, action_id: str) -> Action:
    return owned(session, account_id, Action, action_id)[0]


def text_filter(column: Any, value: str) -> ColumnElement[bool]:
    """Partial, case-insensitive match; `%`, `_` and the escape character are literal."""
    return func.lower(column).contains(value.lower(), autoescape=True)


def count(session: Session, entity: type[Any], *where: ColumnElement[bool]) -> int:
    return int(session.scalar(select(func.count()).select_from(entity).where(*where)) or 0)


def page_of(statement: Select[Any], page: int, limit: int) -> Select[Any]:
    return statement.limit(limit).offset((page - 1) * limit)


# The columns a rendered contact needs, labelled with the interface's names.
CONTACT_ROW_FIELDS = (
    "id",
    "email",
    "firstName",
    "lastName",
    "phoneNumber",
    "createdAt",
    "points",
    "referrals",
    "listId",
    "isVerified",
    "unsubscribed",
    "data",
    "address",
    "isGDPR",
    "name",
    "socialOne",
    "socialTwo",
    "website",
    "company",
    "country",
    "city",
    "referralCode",
)
_COLUMNS = Contact.__table__.c


def _column(field: str) -> Any:
    column = _COLUMNS[Contact.__mapper__.columns[field].key]
    return cast(column, Text) if field == "data" else column


CONTACT_COLUMNS = tuple(_column(field).label(field) for field in CONTACT_ROW_FIELDS)


_CONTACT_SELECT = select(*CONTACT_COLUMNS)


def contact_rows(where: Iterable[ColumnElement[bool]]) -> Select[Any]:
    """A select of the contact columns; run it with `fetch_rows`."""
    return _CONTACT_SELECT.where(*where)


def fetch_rows(
    session: Session, statement: Select[Any], parameters: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Contacts as dicts keyed by interface names, `createdAt` aware (a filter record each);
    `parameters`: the values of the statement's named parameters, if any."""
    result = session.connection().execute(statement, parameters)
    return row_dicts(tuple(result.keys()), result.all())  # one fetch, not one call a row


def stream_rows(
    session: Session, statement: Select[Any], size: int
) -> Iterator[list[dict[str, Any]]]:
    """`fetch_rows` through a server-side cursor, `size` rows at a time: memory holds one
    part, whatever the statement selects. The session's transaction stays open meanwhile. The
    options go on the statement: set on the connection, they would stay on it (SQLAlchemy
    changes a connection's options in place) and stream every later read of the session."""
    streamed = statement.execution_options(stream_results=True, yield_per=size)
    result = session.connection().execute(streamed)
    keys = tuple(result.keys())
    for part in result.partitions(size):
        yield row_dicts(keys, part)


def row_dicts(keys: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
    found = [dict(zip(keys, row, strict=True)) for row in rows]
    for row in found:
        created = row["createdAt"]
        if created.tzinfo is None:
            row["createdAt"] = created.replace(tzinfo=UTC)
    return found


def contact_row(session: Session, contact_id: str) -> dict[str, Any]:
    rows = fetch_rows(session, contact_rows([Contact.id == contact_id]))
    if not rows:
        raise not_found("Contact")
    return rows[0]


def ids_of(rows: Sequence[dict[str, Any]]) -> list[str]:
    return [row["id"] for row in rows]


def ranked_beyond(
    dialect: str,
    list_id: Any,
    points: Any,
    created: Any,
    ahead: bool,
    ranked_first: Any = None,
    contacts: Any = Contact,
) -> Any:
    """The number of contacts of the list ranked before (`ahead`) or after a contact with these
    points and sign-up time (points, more first, then sign-up time): the list's histogram
    summed beyond its points, and only its ties on points counted on the rank index, so the
    count costs those ties, not the contact's rank. `ranked_first`: among ties on time too,
    the rule a contact ranked ahead meets (the id); `contacts`: the table (an alias) they are
    counted on.

    The ties are counted from the end of them the time lies nearer (the middle of their first
    and last sign-up times, two reads of the index's ends): the ties on the far side are the
    histogram's count of the points value less those on the near side, the sign-up time's own
    included. So the count costs the ties on one side, half of them at most when their times
    are spread evenly, and a few for the newest contacts of a large tie (the 0 points most of a
    list holds). Which side is counted changes the cost, never the answer."""
    time = contacts.createdAt
    tie = (contacts.listId == list_id, contacts.points == points)
    counted_near = _counted(contacts, *tie, time < created if ahead else time > created)
    if ranked_first is None:  # the sign-up time's own ties lie on the far side
        counted_far = _counted(contacts, *tie, time >= created if ahead else time <= created)
    else:  # the ties on time too parted by the rule: each count a range of the rank index
        same_time = (*tie, time == created)
        counted_near += _counted(contacts, *same_time, ranked_first)
        counted_far = _counted(contacts, *tie, time > created if ahead else time < created)
        counted_far += _counted(contacts, *same_time, not_(ranked_first))
    first, last = (
        select(time).where(*tie).order_by(order).limit(1).scalar_subquery()
        for order in (time.asc(), time.desc())
    )
    later = dialects.past_middle(dialect, created, first, last)
    valued = (ListPoints.listId == list_id, ListPoints.points == points)
    of_value = select(ListPoints.contacts).where(*valued).scalar_subquery()
    same = case(
        (later if ahead else not_(later), func.coalesce(of_value, 0) - counted_far),
        else_=counted_near,
    )
    return _histogram_beyond(list_id, points, ahead) + same


def _counted(contacts: Any, *conditions: Any) -> Any:
    """The contacts meeting `conditions`, each a bound of the rank index (list, points, time,
    id): a count with no condition to test a row by is the index's range alone, which SQLite
    steps through at about a third of the cost of one testing each row (3,644 ties of a million
    contacts: 176 µs against 422 µs for `time < t OR time = t AND id < i`)."""
    return select(func.count()).select_from(contacts).where(*conditions).scalar_subquery()


def _histogram_beyond(list_id: Any, points: ColumnElement[Any], ahead: bool) -> Any:
    """The list's contacts with more (`ahead`) or fewer points: the bands beyond the points'
    own (`list_point_bands`), and the values of its own band beyond the points (`list_points`,
    at most 64 rows, read on its key: the band's values are a range of it)."""
    band = points.op(">>")(BAND_SHIFT)
    edge = (1 << BAND_SHIFT) - 1
    if ahead:  # the band's last value: its low bits all set
        bands = ListPointBand.band > band
        near = and_(ListPoints.points > points, ListPoints.points <= points.op("|")(edge))
    else:  # the band's first value: its low bits all clear
        bands = ListPointBand.band < band
        near = and_(ListPoints.points < points, ListPoints.points >= points.op("&")(~edge))
    in_bands = select(_summed(ListPointBand.contacts))
    in_bands = in_bands.where(ListPointBand.listId == list_id, bands)
    in_band = select(_summed(ListPoints.contacts)).where(ListPoints.listId == list_id, near)
    return in_bands.scalar_subquery() + in_band.scalar_subquery()


def _summed(contacts: Any) -> Any:
    return cast(func.coalesce(func.sum(contacts), 0), BigInteger)  # not numeric
