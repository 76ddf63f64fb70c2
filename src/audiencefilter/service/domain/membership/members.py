"""Who belongs to which audience, as reads see it: the stored membership (`memberships`).

Every write that can change membership keeps `memberships` exact in its own transaction
(`membership/store.py`), so the members of an audience, their count and the audiences of each
contact of a page are read from it: a page costs one indexed query for its contacts'
memberships, however many audiences the list has and however large their filters.

Smart audiences whose filters hold relative date-times change with time alone; their stored rows
follow the clock at their instants (`membership/due.py`, `use_cases/membership_clock.py`), and reads
judge them live, as before: in SQL (`Filter.to_sqlalchemy(Contact)` and the list condition) for
members and counts, and in memory (each filter compiled once, cached by canonical JSON) on a page's
rows. So every read is exact at the moment of the request. Manual audiences keep their members in
`audience_members` (copied into `memberships`); a manual audience keeps a filter it was given (not
used), and a smart one keeps the members it had as manual (not used either): switching mode back
finds them again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, case, false, func, select
from sqlalchemy.orm import Session

from .... import Filter
from ...db.dialects import IDS, dialect_of, each_id, ids_in, joined_text, per_dialect
from ...db.models import Audience, Contact, Membership
from ...db.queries import ids_of
from ...ground import clock
from .. import relations
from ..audience_filters import filter_of, reads_data, time_dependent
from ..filter_budget import cost_of
from . import plan, written

MANUAL = "manual"
SMART = "smart"
# Bound parameters per statement stay far below SQLite's 32,766 when many filters are summed:
# at most 32 audiences, and at most 10,000 array values (one filter holds at most 5,000).
SIZES_PER_STATEMENT = 32
VALUES_PER_STATEMENT = 10_000


def filter_in_use(mode: str, filters: str | None, fields: str | None) -> Filter | None:
    """The stored filter in use, or None: a manual audience, or none stored (the one rule,
    `audience_filters.filter_of`)."""
    return filter_of(mode, filters, fields)


def audience_filter(audience: Audience) -> Filter | None:
    return filter_in_use(audience.mode, audience.filters, audience.fields)


def live(flt: Filter | None) -> bool:
    """Whether reads judge this filter at the moment of the request rather than from storage."""
    # A filter over related rows reads them from storage (their rows are not on a page), so
    # its answer is the stored one, brought up to the clock by the scheduler at its instants.
    return flt is not None and time_dependent(flt) and not relations.uses(flt)


def member_condition(audience: Audience) -> ColumnElement[bool]:
    """The condition on `contacts` (of the audience's list) that selects its members."""
    flt = audience_filter(audience)
    if audience.mode == SMART and live(flt):
        assert flt is not None
        return relations.condition(flt, clock.now())
    if audience.mode == SMART and flt is None:
        return false()
    members = select(Membership.contactId).where(Membership.audienceId == audience.id)
    return Contact.id.in_(members)


def member_test(audience: Audience) -> ColumnElement[bool]:
    """The stored members' condition as a test of each contact on its own: an `EXISTS` probe
    of the membership's key, kept a probe rather than turned into a join. A page of a
    large audience in the list's rank order then reads the rank index from its end and stops
    at the page's last member, where `member_condition` reads every member to sort them
    (`ContactPages.walk_bound`, which says when). For stored members only."""
    probe = select(Membership.contactId).where(
        Membership.audienceId == audience.id, Membership.contactId == Contact.id
    )
    # An `OFFSET` keeps PostgreSQL from rewriting the `EXISTS`, either into a semi-join or
    # into a hash of every member built first: it probes the key once a contact walked.
    return probe.offset(0).exists()


def stored_members(audience: Audience) -> bool:
    """Whether the audience's members are its stored `memberships` rows (what
    `member_condition` reads), rather than a filter judged at the moment of the request."""
    flt = audience_filter(audience)
    return not (audience.mode == SMART and (flt is None or live(flt)))


@dataclass(frozen=True)
class _Entry:
    item: dict[str, str]
    flt: Filter | None


class ListAudiences:
    """The audiences of one list, ready to say which of them each contact of a page is in."""

    def __init__(self, audiences: Sequence[tuple[str, str, str, str | None, str | None]]) -> None:
        """`audiences`: (id, name, mode, filters, fields) of each audience of the list, in
        order."""
        self.entries = [
            _Entry({"id": id_, "name": name, "mode": mode}, filter_in_use(mode, filters, fields))
            for id_, name, mode, filters, fields in audiences
        ]
        # Only filters that change with time are run on the rows; every other audience is read
        # from the stored memberships.
        self.live = [entry for entry in self.entries if live(entry.flt)]
        # Rows carry `data` as its stored JSON text (see queries.py); decoded only when a live
        # filter reaches into it (`{"data": {"path": [...], ...}}`).
        self.reads_data = any(
            entry.flt is not None and reads_data(entry.flt) for entry in self.live
        )
        # Each audience's place and item: a contact's stored ids put in the list's order.
        self.order = {entry.item["id"]: (n, entry.item) for n, entry in enumerate(self.entries)}

    @classmethod
    def load(cls, session: Session, list_id: str) -> ListAudiences:
        """The list's audiences as prepared once per change of them (`plan.py`)."""
        prepared = plan.plan_of(session, list_id)
        return _PREPARED.get(id(prepared), prepared, lambda: cls(prepared.rows))

    def of_rows(
        self, session: Session, rows: Sequence[dict[str, Any]]
    ) -> list[list[dict[str, str]]]:
        """For each row, the `{id, name, mode}` of every audience of the list it belongs to."""
        if not self.entries or not rows:
            return [[] for _ in rows]
        stored = self._stored_ids(session, rows)
        if not self.live:  # the common case: every audience read from storage
            return [self._in_order(stored.get(row["id"], _NONE)) for row in rows]
        at = clock.frozen()  # one instant for the whole page
        checks = [
            (
                entry.item,
                entry.flt.clock.predicate_at(at) if live(entry.flt) and entry.flt else None,
            )
            for entry in self.entries
        ]
        records: Sequence[dict[str, Any]] = rows
        if self.reads_data:
            records = [{**row, "data": json.loads(row["data"])} for row in rows]
        result = []
        for record in records:
            ids = stored.get(record["id"], _NONE)
            result.append(
                [
                    item
                    for item, predicate in checks
                    if (predicate(record) if predicate is not None else item["id"] in ids)
                ]
            )
        return result

    def _in_order(self, ids: frozenset[str]) -> list[dict[str, str]]:
        """The items of the audiences `ids` (stored ids of this list's audiences), in the
        list's order; an id of an audience this plan does not know is left out."""
        order = self.order
        return [item for _, item in sorted(order[id_] for id_ in ids if id_ in order)]

    def _stored_ids(
        self, session: Session, rows: Sequence[dict[str, Any]]
    ) -> dict[str, frozenset[str]]:
        """`{contact id: ids of the audiences it is stored in}` for the page's contacts: one
        row per contact (the ids joined by commas), not one per membership."""
        if len(self.live) == len(self.entries):
            return {}
        known = written.only(session, ids_of(rows))  # read back by the write itself
        if known is not None:
            return {known.row["id"]: frozenset(known.stored)}
        statement = _page_memberships(dialect_of(session))
        found = session.connection().execute(statement, {IDS: ids_of(rows)}).all()
        return {
            contact_id: frozenset(joined.split(","))
            for contact_id, joined in found
            if joined is not None  # a contact of no stored audience
        }


_NONE: frozenset[str] = frozenset()


@per_dialect
def _page_memberships(dialect: str) -> Select[str, str | None]:
    """Each of the page's ids and its stored audiences' ids joined by commas (NULL: none), read
    on the contact's index once for each id. As a join of the ids and the memberships, the
    planner could choose to scan every membership of the list's audiences instead (PostgreSQL
    did so at 10,000 contacts, 4,021 rows for a page of 100), work that grows with the list."""
    audience_ids = joined_text(Membership.audienceId, dialect)  # ids hold no commas
    contact = each_id(dialect)
    if contact is None:
        return (
            select(Membership.contactId, audience_ids)
            .where(ids_in(Membership.contactId, dialect))
            .group_by(Membership.contactId)
        )
    joined = select(audience_ids).where(Membership.contactId == contact).scalar_subquery()
    return select(contact, joined)


def audience_sizes(session: Session, audiences: Sequence[Audience]) -> dict[str, int]:
    """`{audience id: number of members}`: one grouped count of the stored memberships, and one
    scan per list for up to 32 audiences judged live (relative date-times)."""
    sizes = {audience.id: 0 for audience in audiences}
    judged = [a for a in audiences if a.mode == SMART and live(audience_filter(a))]
    for batch in _batches(judged):
        sizes.update(_smart_sizes(session, batch))
    stored = [a.id for a in audiences if a not in judged]
    if stored:
        statement = (
            select(Membership.audienceId, func.count())
            .where(Membership.audienceId.in_(stored))
            .group_by(Membership.audienceId)
        )
        sizes.update({audience_id: int(n) for audience_id, n in session.execute(statement)})
    return sizes


def _batches(audiences: Sequence[Audience]) -> list[list[Audience]]:
    """Consecutive groups of at most `SIZES_PER_STATEMENT` audiences and, unless one audience
    alone exceeds it (stored before the budgets), `VALUES_PER_STATEMENT` array values."""
    batches: list[list[Audience]] = []
    current: list[Audience] = []
    weight = 0
    for audience in audiences:
        flt = audience_filter(audience)
        values = cost_of(flt).values if flt is not None else 0
        if current and (
            len(current) == SIZES_PER_STATEMENT or weight + values > VALUES_PER_STATEMENT
        ):
            batches.append(current)
            current, weight = [], 0
        current.append(audience)
        weight += values
    if current:
        batches.append(current)
    return batches


def _smart_sizes(session: Session, audiences: Sequence[Audience]) -> dict[str, int]:
    by_list: dict[str, list[Audience]] = {}
    for audience in audiences:
        by_list.setdefault(audience.listId, []).append(audience)
    sizes: dict[str, int] = {}
    for list_id, group in by_list.items():
        sums = [func.coalesce(func.sum(case((member_condition(a), 1), else_=0)), 0) for a in group]
        row = session.execute(select(*sums).where(Contact.listId == list_id)).one()
        sizes.update({a.id: int(n) for a, n in zip(group, row, strict=True)})
    return sizes


class _Prepared:
    """The `ListAudiences` of the plans still held, kept beside them: a page of contacts of a
    list whose audiences did not change since the last one reuses what that page prepared."""

    def __init__(self) -> None:
        self._by_plan: dict[int, tuple[plan.ListPlan, ListAudiences]] = {}
        self._lock = threading.Lock()

    def get(
        self, key: int, prepared: plan.ListPlan, make: Callable[[], ListAudiences]
    ) -> ListAudiences:
        with self._lock:
            held = self._by_plan.get(key)
            if held is not None and held[0] is prepared:
                return held[1]
        made = make()
        with self._lock:
            if len(self._by_plan) >= plan.PLANS_KEPT:
                self._by_plan.clear()
            self._by_plan[key] = (prepared, made)
        return made


_PREPARED = _Prepared()
