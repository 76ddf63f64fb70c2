"""What a process prepares of a list's audiences once, instead of on every write and page.

A contact write used to load every audience of its list, look each filter up, sort them by
reference and ask each which columns it reads, before judging any: with a thousand audiences
that cost more than the write. A `ListPlan` holds all of it, keyed by the list's
`audiences_stamp`, which every change of an audience renews (`write_effects.py`) in the
transaction that makes it: a write reads one column of one row, and a stamp never names two
sets of audiences (a rolled-back change leaves its random stamp unused).

The plan's index maps each column and relation to the audiences that read it, so a write that
changed `firstName` judges only the audiences reading `firstName` (and those reading other
audiences' memberships, which a judgement may change).

The audiences judged on a contact's row alone (no relation read) are judged together
(`together`): one `audiencefilter.FilterSet` computes each condition they share once per
contact, and looks up equalities and ranges in indexes instead of testing each. It is built
once per plan and set of audiences judged (a write's changed columns choose the set), and kept
with the plan.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from .... import FilterSet
from ...db.models import BUILD_STORING, Audience, AudienceBuild, List
from .. import list_lock, references, relations
from ..audience_filters import SMART, StoredAudience, columns_read, filter_of
from ..experiments import Experiment, stored

PLANS_KEPT = 256
SETS_KEPT = 32  # sets of audiences judged together, per plan
AudienceRow = tuple[str, str, str, "str | None", "str | None"]
"""(id, name, mode, filters, fields) of an audience."""


@dataclass(frozen=True)
class ListPlan:
    """A list's audiences as stored (`rows`, oldest first) and its smart ones ready to judge."""

    rows: tuple[AudienceRow, ...]
    experiments: dict[str, Experiment]  # audience id -> its experiment, for those with one
    smart: tuple[StoredAudience, ...]  # with a filter in use, each after those it reads
    index: dict[str, tuple[int, ...]] = field(default_factory=dict)  # column -> positions
    followers: tuple[int, ...] = ()  # positions of audiences reading audiences
    positions: dict[str, int] = field(default_factory=dict)  # audience id -> position
    _sets: OrderedDict[tuple[int, ...], Together] = field(
        default_factory=OrderedDict, compare=False, repr=False
    )

    def reading(self, changed: Collection[str] | None) -> Sequence[StoredAudience]:
        """The smart audiences a write of the `changed` columns and relations can move: those
        reading one of them and, when any is left, those reading audiences. In refresh
        order. None: every smart audience (a write that may have changed anything)."""
        if changed is None:
            return self.smart
        positions = {p for column in changed for p in self.index.get(column, ())}
        if not positions:
            return []
        positions.update(self.followers)
        return [self.smart[p] for p in sorted(positions)]

    def with_readers(self, audience_ids: Collection[str]) -> list[StoredAudience]:
        """These smart audiences and those reading them, directly or through others, in
        refresh order: what judging a contact again in these audiences may move. Only the
        audiences reading audiences (`followers`) are searched for readers."""
        wanted = set(audience_ids)
        if self.followers:
            readers = references.dependents([self.smart[p] for p in self.followers], wanted)
            wanted.update(reader.id for reader in readers)
        return [audience for audience in self.smart if audience.id in wanted]

    def together(self, audiences: Iterable[StoredAudience]) -> Together:
        """Those of these audiences that can be judged together: this plan's, reading no
        relation (a relation's rows are no column of the contact's row, and the audiences
        relation changes while a contact is judged)."""
        chosen = tuple(p for p in map(self._position, audiences) if p is not None)
        with _LOCK:
            found = self._sets.get(chosen)
        if found is None:
            ids = tuple(self.smart[p].id for p in chosen)
            found = Together(ids, self._filters.among(chosen))
            with _LOCK:
                self._sets[chosen] = found
                while len(self._sets) > SETS_KEPT:
                    self._sets.popitem(last=False)
        return found

    def _position(self, audience: StoredAudience) -> int | None:
        position = self.positions.get(audience.id)
        if position is None or self.smart[position] is not audience:
            return None
        return position if position in self._alone else None

    @cached_property
    def _alone(self) -> frozenset[int]:
        """Positions of the audiences judged on the contact's row alone (no relation read)."""
        return frozenset(p for p, a in enumerate(self.smart) if not a.relations)

    @cached_property
    def _filters(self) -> FilterSet:
        return FilterSet(a.flt for a in self.smart if a.flt is not None)


@dataclass(frozen=True)
class Together:
    """Audiences judged as one `FilterSet`: its filter `k` is that of audience `ids[k]`."""

    ids: tuple[str, ...]
    filters: FilterSet

    def wanted(self, record: Mapping[str, Any], at: datetime) -> set[str]:
        """The ids of these audiences the contact's `record` belongs in at `at`."""
        return {self.ids[k] for k in self.filters.matching(record, now=at)}


def build(rows: Sequence[AudienceRow], drawn: Mapping[str, str] | None = None) -> ListPlan:
    """`drawn`: the stored experiment of each audience that has one."""
    experiments = {id_: _experiment(text) for id_, text in (drawn or {}).items()}
    found = []
    for id_, name, mode, filters, fields in rows:
        flt = filter_of(mode, filters, fields) if mode == SMART else None
        if flt is not None:
            found.append(StoredAudience(id_, name, mode, flt, experiments.get(id_)))
    smart = tuple(references.ordered(found))
    index: dict[str, list[int]] = {}
    for position, audience in enumerate(smart):
        assert audience.flt is not None
        for column in columns_read(audience.flt):
            index.setdefault(column, []).append(position)
    followers = tuple(index.get(relations.AUDIENCES, ()))
    frozen = {column: tuple(positions) for column, positions in index.items()}
    positions = {audience.id: position for position, audience in enumerate(smart)}
    return ListPlan(tuple(rows), experiments, smart, frozen, followers, positions)


def _experiment(text: str) -> Experiment:
    found = stored(text)
    assert found is not None  # only audiences with one are passed
    return found


_PLANS: OrderedDict[tuple[str, str], ListPlan] = OrderedDict()
_LOCK = threading.Lock()


_STAMP = select(List.audiencesStamp).where(List.id == bindparam("stamp_list"))
"""`plan_of`'s read of the stamp, built once (every write of a contact runs it)."""


def plan_of(session: Session, list_id: str) -> ListPlan:
    """The list's plan as this transaction sees its audiences."""
    stamp = _stamp(session, list_id)
    key = (list_id, stamp)
    with _LOCK:
        plan = _PLANS.get(key)
        if plan is not None:
            _PLANS.move_to_end(key)
            return plan
    # An empty stamp is a list whose audiences predate stamps: never cached.
    rows, drawn = _rows(session, list_id)
    plan = build(rows, drawn)
    if stamp:
        with _LOCK:
            _PLANS[key] = plan
            while len(_PLANS) > PLANS_KEPT:
                _PLANS.popitem(last=False)
    return plan


def _stamp(session: Session, list_id: str) -> str:
    """The list's stamp, read once by a transaction that holds the list's lock: nothing but
    itself changes it then (`audiences_changed` forgets it), so a write and its answer (the
    contact's audiences) read it once. Kept with the lock (`list_lock.kept`): a lock released
    (an import turn's undone try to share it) forgets it."""
    kept = list_lock.kept(session, _STAMPS)
    if list_id in kept:
        return kept[list_id]
    stamp = session.scalar(_STAMP, {"stamp_list": list_id}) or ""
    if list_lock.holds(session, list_id):
        kept[list_id] = stamp
    return stamp


_STAMPS = "plan_stamps"


def keep_stamp(session: Session, list_id: str, stamp: str) -> None:
    """The list's stamp as a write under the list's lock read it with its own statement
    (`written.py`): `_stamp` then reads it no more in this transaction."""
    list_lock.kept(session, _STAMPS)[list_id] = stamp


def _rows(session: Session, list_id: str) -> tuple[list[AudienceRow], dict[str, str]]:
    """The list's audiences in order, and the stored experiment of those that have one."""
    # An audience building in the background (`build.py`) is judged by its build alone, until
    # its members are being stored: then writes judge it again, as in any change in turns.
    building = select(AudienceBuild.audienceId).where(
        AudienceBuild.audienceId == Audience.id, AudienceBuild.cursor != BUILD_STORING
    )
    statement = (
        select(
            Audience.id,
            Audience.name,
            Audience.mode,
            Audience.filters,
            Audience.fields,
            Audience.experiment,
        )
        .where(Audience.listId == list_id, ~building.exists())
        .order_by(Audience.createdAt, Audience.id)
    )
    rows: list[AudienceRow] = []
    drawn: dict[str, str] = {}
    for i, n, m, f, d, experiment in session.execute(statement):
        rows.append((i, n, m, f, d))
        if experiment:
            drawn[i] = experiment
    return rows, drawn


def audiences_changed(session: Session, list_id: str) -> None:
    """Renews the list's stamp: call in the transaction that creates, changes or deletes one
    of its audiences."""
    list_lock.kept(session, _STAMPS).pop(list_id, None)
    session.execute(
        update(List)
        .where(List.id == list_id)
        .values(audiencesStamp=secrets.token_hex(12))
        .execution_options(synchronize_session=False)
    )
