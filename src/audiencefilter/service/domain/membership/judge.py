"""Judging membership: which of the contacts a write touched each smart audience selects,
and which (audience, contact) pairs therefore enter or leave. Storing what was decided is
`store.py`'s; this module writes nothing and never imports it.

A contact is judged in memory on its row (`records.py`, the list's `FilterSet` through
`plan.ListPlan.together`), or in SQL for the audiences over actions, each first narrowed by the
contact's own fields (`residuals.py`: a TRUE or FALSE residual needs no query). One audience
over the whole list is a select (`selected`), whose difference with the stored rows `store.py`
takes in SQL.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Integer, Select, case, literal_column, select
from sqlalchemy.orm import Session

from .... import Filter
from ...db.by_ids import ByIds
from ...db.models import AudienceMember, Contact
from .. import relations
from ..audience_filters import MANUAL, StoredAudience
from . import plan, records, residuals

CHUNK = 500
# Audiences judged in one SQL statement on a chunk of contacts (`read`).
SQL_AUDIENCES_PER_STATEMENT = 64


def chunks(values: Sequence[str]) -> Iterable[Sequence[str]]:
    """`values` in slices of at most CHUNK: bound parameters stay within every engine's limit."""
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


@dataclass(frozen=True)
class Read:
    """The contacts as filters read them (`rows`, with the relations `used`), and the ids of
    those each audience judged in SQL selects (`selected`, by audience id)."""

    rows: list[dict[str, Any]]
    used: Collection[str]
    selected: dict[str, set[str]]


def read(
    session: Session, audiences: Sequence[StoredAudience], contact_ids: Sequence[str], at: datetime
) -> Read:
    """Reads the contacts once for the audiences judged in memory, and asks SQL for the others
    (narrowed first by each contact's own fields where residuals are on)."""
    in_sql = [a for a in audiences if a.in_sql]
    in_memory = [a for a in audiences if not a.in_sql]
    narrowed = bool(in_sql) and residuals.enabled(session)
    own = in_sql if narrowed else []
    rows, used = records.audience_records(session, contact_ids, in_memory, own)
    residuals.tally(memory=len(in_memory) * len(rows))
    if narrowed:
        found = _selected_by_residual(session, in_sql, rows, at)
    else:
        residuals.tally(queried=len(in_sql) * len(contact_ids))
        found = _selected_in_sql(session, in_sql, contact_ids, at)
    return Read(rows, used, found)


def _selected_in_sql(
    session: Session, audiences: Sequence[StoredAudience], contact_ids: Sequence[str], at: datetime
) -> dict[str, set[str]]:
    """`{audience id: ids of these contacts its filter selects}`, in SQL."""
    found = _selected_by(session, [_filter(a) for a in audiences], contact_ids, at)
    return {a.id: ids for a, ids in zip(audiences, found, strict=True)}


def _selected_by_residual(
    session: Session,
    audiences: Sequence[StoredAudience],
    rows: Sequence[dict[str, Any]],
    at: datetime,
) -> dict[str, set[str]]:
    """`_selected_in_sql`, each audience's filter narrowed first by each contact's own fields
    (`residuals.py`): a TRUE or FALSE residual decides without SQL, the others are asked of
    the contacts they were left for."""
    split = residuals.split(audiences, rows, at)
    if split.asks:
        split.answer(_selected_by(session, split.residuals(), split.contacts(), at))
    return split.selected


def _selected_by(
    session: Session, filters: Sequence[Filter], contact_ids: Sequence[str], at: datetime
) -> list[set[str]]:
    """The ids of these contacts each filter selects, one statement per chunk of contacts and
    group of filters (bound parameters stay within the list's budget)."""
    selected: list[set[str]] = [set() for _ in filters]
    connection = session.connection()  # Core statements: no ORM step per execution
    for start in range(0, len(filters), SQL_AUDIENCES_PER_STATEMENT):
        group = filters[start : start + SQL_AUDIENCES_PER_STATEMENT]
        conditions = [relations.bound_condition(f, at) for f in group]
        parameters: dict[str, Any] = {}
        for flt in group:
            parameters.update(flt.sqlalchemy_parameters(at))
        statement = _judging_statement(conditions)
        for chunk in chunks(contact_ids):
            _collect(connection.execute(*statement.bound(chunk, parameters)), selected, start)
    return selected


def _collect(rows: Iterable[Any], selected: list[set[str]], first: int) -> None:
    """Each row's contact into the sets of the filters (from `first` on) that said TRUE."""
    for contact_id, *answers in rows:
        for index, answer in enumerate(answers, first):
            if answer:
                selected[index].add(contact_id)


_CONTACT_IDS = "judged_contact_ids"
# Written into the statement, not bound: two parameters fewer per audience on every execution.
_TRUE = literal_column("1", Integer)
_FALSE = literal_column("0", Integer)
_STATEMENTS: dict[tuple[int, ...], tuple[tuple[ColumnElement[bool], ...], ByIds[Select[Any]]]] = {}
_STATEMENTS_KEPT = 256
_STATEMENTS_LOCK = threading.Lock()


def _judging_statement(conditions: Sequence[ColumnElement[bool]]) -> ByIds[Select[Any]]:
    """`SELECT id, CASE WHEN c1 THEN 1 ELSE 0 END, ... WHERE id IN (:ids)` over these
    conditions (`WHERE id = :id` for one contact, `ByIds`), kept by their identity: a write
    judging the same audiences again (their expressions are kept by their filters, durations
    bound at execution) reuses the statement, its cache key and its compiled form, instead of
    building 32 CASE columns and keying them anew. The kept conditions are compared by
    identity, so a reused id cannot mislead."""
    key = tuple(map(id, conditions))
    found = _STATEMENTS.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], conditions, strict=True)):
        return found[1]
    tests = [case((condition, _TRUE), else_=_FALSE) for condition in conditions]
    statement = ByIds(select(Contact.id, *tests).where, Contact.id, _CONTACT_IDS)
    with _STATEMENTS_LOCK:
        if len(_STATEMENTS) >= _STATEMENTS_KEPT:  # audiences changed: forget the oldest
            _STATEMENTS.pop(next(iter(_STATEMENTS)))
        _STATEMENTS[key] = (tuple(conditions), statement)
    return statement


def _filter(audience: StoredAudience) -> Filter:
    assert audience.flt is not None  # only smart audiences with a filter in use are refreshed
    return audience.flt


class Judge:
    """Decides, contact by contact, which audiences it enters and leaves.

    Audiences come after those they read, and a contact's `audiences` rows follow each
    decision, so an audience reading another sees its new membership. Those judged in SQL
    (`selected`) and those judged together on the contact's row (`ListPlan.together`) are
    looked up; the others (reading relations) run their own predicate in turn."""

    def __init__(
        self,
        audiences: Sequence[StoredAudience],
        selected: dict[str, set[str]],
        stored: set[tuple[str, str]],
        at: datetime,
        used: Collection[str],
        prepared: plan.ListPlan | None = None,
    ) -> None:
        moment: Callable[[], datetime] = lambda: at  # noqa: E731 - one instant for every contact
        in_memory = [a for a in audiences if a.id not in selected]
        self.together = None if prepared is None else prepared.together(in_memory)
        looked_up = set(selected).union(self.together.ids if self.together else ())
        self.checks = [
            (a, None if a.id in looked_up else _filter(a).clock.predicate_at(moment))
            for a in audiences
        ]
        self.selected: dict[str, set[str]] = {}  # contact id -> audiences selecting it in SQL
        for audience_id, contact_ids in selected.items():
            for contact_id in contact_ids:
                self.selected.setdefault(contact_id, set()).add(audience_id)
        self.at = at
        self.stored = stored
        self.follow = relations.AUDIENCES in used
        self.entering: list[tuple[StoredAudience, str]] = []
        self.leaving: list[tuple[StoredAudience, str]] = []

    def decide(self, record: dict[str, Any]) -> None:
        contact_id = record["id"]
        found = self.selected.get(contact_id, set())
        if self.together is not None:
            found = found | self.together.wanted(record, self.at)
        for audience, predicate in self.checks:
            inside = (audience.id, contact_id) in self.stored
            if predicate is None:
                wanted = audience.id in found
            else:
                wanted = predicate(record)
            if wanted and not inside:
                self.entering.append((audience, contact_id))
                self._follow(record, audience, entered=True)
            elif inside and not wanted:
                self.leaving.append((audience, contact_id))
                self._follow(record, audience, entered=False)

    def _follow(self, record: dict[str, Any], audience: StoredAudience, *, entered: bool) -> None:
        if not self.follow:
            return
        rows = [row for row in record[relations.AUDIENCES] if row["id"] != audience.id]
        if entered:
            rows.append({"id": audience.id, "name": audience.name, "mode": audience.mode})
        record[relations.AUDIENCES] = rows


def selected(audience: StoredAudience, list_id: str, at: datetime) -> Select[str] | None:
    """The ids of the contacts the audience should hold now, as a select (None: nobody)."""
    if audience.mode == MANUAL:
        return select(AudienceMember.contactId.label("id")).where(
            AudienceMember.audienceId == audience.id
        )
    if audience.flt is None:
        return None
    condition = relations.condition(audience.flt, at)
    return select(Contact.id.label("id")).where(Contact.listId == list_id, condition)
