"""Two audiences or filters of one list compared: the relation their definitions prove, with
made-up example contacts as witnesses, and the stored contacts in each region now.

The relation is the library's `compare` (`af.compare`): sound, so `equivalent`, `subset`,
`superset` and `disjoint` are proofs over every contact there could be, and every witness was
checked against both filters before it is returned. Its work is bounded (`filter_budget`:
`ANALYSIS_STEPS` over its five questions): past its steps a question is `unknown`, its reason
saying so. Both filters are read over one schema, the
list's custom fields, as the library compares filters of one schema. A manual audience has no
definition: its relation is `unknown`, its counts are still known.

The counts are the stored membership's when both sides are saved audiences: the pairs kept on
write (`membership/overlaps.py`), three rows read by their key, `a_only` being `a`'s size less
what both share; a filter sent in the request is judged on the list's contacts in SQL: with a
saved audience on the other side, the audience's kept size, and one count of the filter's
matches and of those among them stored in the audience (probed by the membership's key); with
a filter on both sides, one count of the three regions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import Session, aliased

from .... import Filter, compare
from ...db.engine import Database
from ...db.models import Audience, Contact, List, Membership
from ...db.queries import owned_audience, owned_list
from ...ground import clock, processes
from ...ground.errors import Invalid, Location, RequestProblem
from .. import custom_fields, relations
from ..audience_filters import decode_fields, encode_fields, stored_filter
from ..filter_budget import QUESTION_STEPS
from ..list_filters import read_of_list
from ..membership.members import audience_filter
from ..membership.overlaps import kept_counts

REGIONS = ("both", "a_only", "b_only")
NO_DEFINITION = "a manual audience has no definition to compare"
# The previous count of a saved audience and a sent filter, every contact of the list scanned
# with its membership tested twice: kept as a switch, tests/service/test_compare_counts.py
# holds that both answer alike.
SCAN_BOTH = False


@dataclass(frozen=True)
class Side:
    """One side as sent: a saved audience, or a filter in either form."""

    audience_id: str | None = None
    filters: Any = None
    filters_text: str | None = None
    filters_format: str | None = None


@dataclass(frozen=True)
class _Read:
    """A side read: its audience (if saved), its filter (None: a manual audience), the custom
    fields the filter reads."""

    audience: Audience | None
    filter: Filter | None
    fields: dict[str, str]


@dataclass(frozen=True)
class Compared:
    """The relation, its reason, a witness per region (or None), the stored counts per region,
    each side's audience id and canonical filter, and whether each side can select anyone
    (`a`, `b`: holds, reason, witness)."""

    list_id: str
    relation: str
    reason: str
    witnesses: dict[str, dict[str, Any] | None]
    counts: dict[str, int]
    sides: tuple[tuple[str | None, str | None], tuple[str | None, str | None]]
    can_match: dict[str, dict[str, Any]]


def compare_sides(
    database: Database, account_id: str, list_id: str | None, a: Side, b: Side
) -> Compared:
    """The comparison of `a` and `b`, of the caller's list."""
    with database.reading() as session:
        lst = _list_of(session, account_id, list_id, a, b)
        read_a, read_b = (
            _read(session, account_id, lst, a, "a"),
            _read(session, account_id, lst, b, "b"),
        )
        now = clock.now()
        counts = _counts(session, lst.id, read_a, read_b, now)
        zone = lst.timeZone
    pair = _stored_pair(read_a, read_b, zone)
    filters = (_bare(read_a.filter), _bare(read_b.filter))
    if not isinstance(pair, str):
        pair = (Filter(pair[0].root, pair[0].schema), Filter(pair[1].root, pair[1].schema))
    decided = processes.run(_decided, pair, filters, now)
    (relation, reason, witnesses), can_match = decided
    sides = (_shown(read_a), _shown(read_b))
    return Compared(lst.id, relation, reason, witnesses, counts, sides, can_match)


def _decided(
    pair: tuple[Filter, Filter] | str, filters: tuple[Filter | None, Filter | None], now: datetime
) -> tuple[tuple[str, str, dict[str, dict[str, Any] | None]], dict[str, dict[str, Any]]]:
    """The relation and whether each side can match: the algebra, pure CPU, run on the
    request's process lane (`ground/processes.py`), so its arguments and answer pickle."""
    a, b = (_Read(None, flt, {}) for flt in filters)
    return _relation(pair, now), {"a": _can_match(a, now), "b": _can_match(b, now)}


def _bare(flt: Filter | None) -> Filter | None:
    """The filter without what its uses cached on it (compiled SQL, a clock): its value, which
    is what pickles to a worker process."""
    return None if flt is None else Filter(flt.root, flt.schema)


def _list_of(session: Session, account_id: str, list_id: str | None, a: Side, b: Side) -> List:
    """The list compared in: the one named, else the first saved audience's."""
    if list_id:
        return owned_list(session, account_id, list_id)
    for side in (a, b):
        if side.audience_id:
            return owned_audience(session, account_id, side.audience_id)[1]
    raise _invalid(("listId",), "listId is required when neither side is a saved audience")


def _read(session: Session, account_id: str, lst: List, side: Side, name: str) -> _Read:
    if side.audience_id is None:
        if side.filters is None and side.filters_text is None:
            raise _invalid((name,), f"`{name}` names no audience and no filter")
        flt = read_of_list(session, lst, side.filters, side.filters_text, side.filters_format)
        return _Read(None, flt, custom_fields.declared(lst))
    if side.filters is not None or side.filters_text is not None:
        raise _invalid((name,), f"`{name}` is an audience or a filter, not both")
    audience, of_list = owned_audience(session, account_id, side.audience_id)
    if of_list.id != lst.id:
        raise _invalid((name, "audienceId"), "the two sides must be of one list")
    return _Read(audience, audience_filter(audience), decode_fields(audience.fields))


def _invalid(at: Location, detail: str) -> Invalid:
    issue = RequestProblem(at, detail)
    return Invalid(f"Invalid request: {detail}", errors=[issue])


def _shown(side: _Read) -> tuple[str | None, str | None]:
    return (
        side.audience.id if side.audience else None,
        side.filter.to_json() if side.filter is not None else None,
    )


def _stored_pair(a: _Read, b: _Read, zone: str) -> tuple[Filter, Filter] | str:
    """Both filters read over one schema (the list's custom fields both read, and its zone, as
    the counts read them), or why not."""
    if a.filter is None or b.filter is None:
        return NO_DEFINITION
    common = encode_fields({**a.fields, **b.fields}, zone)
    left, right = (
        stored_filter(a.filter.to_json(), common),
        stored_filter(b.filter.to_json(), common),
    )
    if left is None or right is None:
        return "the filters no longer read over the list's custom fields"
    return left, right


def _relation(
    pair: tuple[Filter, Filter] | str, now: datetime
) -> tuple[str, str, dict[str, dict[str, Any] | None]]:
    """The library's comparison of both filters, witnesses made JSON."""
    if isinstance(pair, str):
        return "unknown", pair, dict.fromkeys(REGIONS)
    found = compare(*pair, now=now, steps=QUESTION_STEPS)
    witnesses = {region: _json(getattr(found, region)) for region in REGIONS}
    return found.relation, found.reason, witnesses


def _can_match(side: _Read, now: datetime) -> dict[str, Any]:
    """Whether the side can select anyone: a proof that it cannot names the conditions that
    cannot hold together, so an editor can say which one to change."""
    if side.filter is None:
        return {"holds": None, "reason": NO_DEFINITION, "witness": None}
    verdict = side.filter.can_match(now=now, steps=QUESTION_STEPS)
    return {"holds": verdict.holds, "reason": verdict.reason, "witness": _json(verdict.witness)}


def _json(value: Any) -> Any:
    """A witness record as JSON: date-times and dates in ISO 8601."""
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def _counts(session: Session, list_id: str, a: _Read, b: _Read, now: datetime) -> dict[str, int]:
    """The stored contacts in both, in `a` only and in `b` only."""
    if a.audience is not None and b.audience is not None:
        ids = list(dict.fromkeys([a.audience.id, b.audience.id]))
        matrix = kept_counts(session, list_id, ids)  # the pairs kept on write
        size_a, size_b, both = matrix[0][0], matrix[-1][-1], matrix[0][-1]
    elif SCAN_BOTH or (a.audience is None and b.audience is None):
        in_a, in_b = _condition(a, now), _condition(b, now)
        size_a, size_b, both = _region_sizes(session, list_id, in_a, in_b)
    else:
        saved, sent = (a, b) if a.audience is not None else (b, a)
        size_saved, size_sent, both = _saved_and_sent(session, list_id, saved, sent, now)
        size_a, size_b = (size_saved, size_sent) if saved is a else (size_sent, size_saved)
    return {"both": both, "a_only": size_a - both, "b_only": size_b - both}


def _saved_and_sent(
    session: Session, list_id: str, saved: _Read, sent: _Read, now: datetime
) -> tuple[int, int, int]:
    """(in the saved audience, in the sent filter, in both): the audience's size kept on write
    (one row read by its key), the filter's matches counted in SQL and, among them only, the
    ones stored in the audience, probed on the membership's key (no scan of its members)."""
    assert saved.audience is not None and sent.filter is not None
    audience_id = saved.audience.id
    [[size_saved]] = kept_counts(session, list_id, [audience_id])
    stored = aliased(Membership, name="stored")
    statement = (
        select(func.count(), func.count(stored.contactId))
        .select_from(Contact)
        .outerjoin(stored, (stored.audienceId == audience_id) & (stored.contactId == Contact.id))
        .where(Contact.listId == list_id, relations.condition(sent.filter, now))
    )
    size_sent, both = session.execute(statement).one()
    return size_saved, int(size_sent), int(both)


def _condition(side: _Read, now: datetime) -> ColumnElement[bool]:
    """The contacts of the side: a saved audience's stored members, or a filter's matches."""
    if side.audience is not None:
        members = select(Membership.contactId).where(Membership.audienceId == side.audience.id)
        return Contact.id.in_(members)
    assert side.filter is not None
    return relations.condition(side.filter, now)


def _region_sizes(
    session: Session, list_id: str, in_a: ColumnElement[bool], in_b: ColumnElement[bool]
) -> tuple[int, int, int]:
    """(in a, in b, in both) among the list's contacts, in one statement."""

    def tally(condition: ColumnElement[bool]) -> Any:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    statement = select(tally(in_a), tally(in_b), tally(in_a & in_b)).where(
        Contact.listId == list_id
    )
    size_a, size_b, both = session.execute(statement).one()
    return int(size_a), int(size_b), int(both)
