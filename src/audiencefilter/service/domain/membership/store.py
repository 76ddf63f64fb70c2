"""Stored membership: every write that can move a contact into or out of an audience updates
`memberships` in its own transaction and appends the `audience.entered` / `audience.left`
events of the difference (`events.py`).

The rule is one and generic: after a write, evaluate what membership should be with the filter
library (`judge.py`, which decides and writes nothing), compare it with the stored rows, write
the difference and one event per changed row (here).
Two shapes of that rule cover every write:

- **per contact** (`refresh_contacts`): the contacts a write touched, against every smart
  audience of their list, judged by `judge.py` (in memory on the contact's row, or in SQL for
  the audiences over actions); the stored rows are read and the difference written here.
  Contact create, update, bulk import, action create and delete.
- **per audience** (`refresh_audience`): one audience against every contact of its list, as two
  SQL set differences (`Filter.to_sqlalchemy`): the selected contacts without a stored row enter,
  the stored rows no longer selected leave. Audience create, filter change, mode change, manual
  member changes and the scheduler's calendar boundaries. A manual audience "selects" its
  `audience_members`.

Deletions report every stored row as left before the rows go with the cascade
(`remove_contact`, `remove_audience`).

Every write of `memberships` is here, and each moves the pair counts of `audience_overlaps` in
the same transaction (`overlaps.py`): per contact from the stored audiences the judgement read,
per audience in SQL from its entering and leaving sets.

Writers pass the list's door (`list_lock.py`) before reading what they evaluate, so two
writers of one list never compute differences from each other's stale state (on PostgreSQL,
under READ COMMITTED, each statement after the lock sees everything committed before it).

**Time.** A filter with relative date-times (`time_dependent`) changes its answer with no write.
Each judgement of a contact writes the next instant at which time alone changes it
(`due.contacts_judged`), and the scheduler (`use_cases/membership_clock.py`) judges the
pairs due at their instants with the cause `clock`; reads of such audiences stay live (judged at the
moment of the request, as before), so answers are exact and their events follow within a second.

Hooks for what is to come:
- behaviour audiences (filters over a contact's actions): call `refresh_contacts` with
  `CAUSE_ACTION_CREATED` / `CAUSE_ACTION_DELETED` from the action routes (done already: points
  change there); `membership/plan.py` is where a filter's reads are looked at.
- audiences that reference audiences: `dependents` returns the audiences to refresh after an
  audience's membership changed; `refresh_contacts` and `refresh_audience` follow it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, cast

from sqlalchemy import (
    String,
    Table,
    bindparam,
    delete,
    false,
    insert,
    literal,
    select,
    tuple_,
)
from sqlalchemy.orm import Session

from ...db import dialects, driver_path
from ...db.bulk import insert_rows
from ...db.by_ids import ByIds
from ...db.dialects import ids_in
from ...db.models import Audience, Membership
from ...ground import clock
from .. import events, experiments, list_lock, references
from ..audience_filters import (
    StoredAudience,
)
from . import due, judge, overlaps, plan, written
from .judge import chunks

MEMBERSHIPS = cast(Table, Membership.__table__)
_ENTERED_AT = MEMBERSHIPS.c.entered_at.type


def dependents(session: Session, audience_ids: Iterable[str]) -> list[StoredAudience]:
    """Smart audiences whose filters read these audiences (`{"audiences": ...}`), directly or
    through others, each after those it reads: to refresh after these changed."""
    ids = list(audience_ids)
    if not ids:
        return []
    list_id = session.scalar(select(Audience.listId).where(Audience.id == ids[0]))
    if list_id is None:
        return []
    return references.dependents(list(plan.plan_of(session, list_id).smart), ids)


class TooManyMoves(Exception):
    """A write's judgement would move more (contact, audience) pairs than it may in one turn
    (`refresh_contacts(most=)`); raised before anything of the membership is written, so the
    caller can undo its own writes (a savepoint) and take fewer contacts."""

    def __init__(self, moves: int, most: int) -> None:
        super().__init__(f"{moves} pairs would move, at most {most} may")
        self.moves = moves
        self.most = most


def _change_payload(
    audience: StoredAudience, draw: experiments.Draw | None = None
) -> dict[str, Any]:
    """What an `audience.entered` / `audience.left` event says of its audience; an entry into
    or an exit from an audience running an experiment also says the member's draw (`group`,
    `holdout`), so a sender reading the feed can skip the holdout and attribute the exit."""
    payload: dict[str, Any] = {
        "audience": {"id": audience.id, "name": audience.name, "mode": audience.mode}
    }
    if draw is not None:
        payload.update(draw.view())
    return payload


Dated = Mapping[tuple[str, str], datetime]
"""(audience id, contact id) -> the instant its change happened: the clock's, judged late."""


def _write(
    session: Session,
    list_id: str,
    entering: Sequence[tuple[StoredAudience, str]],
    leaving: Sequence[tuple[StoredAudience, str]],
    cause: str,
    at: datetime,
    announce: bool = True,
    dated: Dated | None = None,
    kept: bool = True,
    before: Mapping[str, Collection[str]] | None = None,
    carry: bool = False,
) -> int:
    """Stores the difference and appends its events (left first, then entered); their count.
    `announce` False stores it without events (an import of history that asked for none);
    `dated`: the instants the events happened at, when not `at` (`_dated_events`); `kept`
    False leaves the pairs' counts to the caller (`write_changes`), else they follow here
    from `before`, each contact's stored audiences (read when not given); `carry`: the
    memberships may ride in the events' statement (`store_judged`)."""
    shift = None
    if kept and (entering or leaving):
        shift = _overlaps_shift(session, entering, leaving, before)
    moved = _move_pairs(session, list_id, entering, leaving, at, dated, shift, carry)
    draws = _left_draws(leaving) + moved
    if announce:
        rows = [(events.LEFT, c, a.id) for a, c in leaving]
        rows += [(events.ENTERED, c, a.id) for a, c in entering]
        keys = [_drawn_key(a.id, d) for a, d in draws]
        payloads = {_drawn_key(a.id, d): _change_payload(a, d) for a, d in draws}
        if dated is None:
            events.append_each(session, list_id, rows, cause, payloads, keys, at)
        else:
            changes = _dated_events(rows, [payloads[k] for k in keys], cause, dated)
            events.append(session, list_id, changes)
    return len(leaving) + len(entering)


def _overlaps_shift(
    session: Session,
    entering: Sequence[tuple[StoredAudience, str]],
    leaving: Sequence[tuple[StoredAudience, str]],
    before: Mapping[str, Collection[str]] | None,
) -> overlaps.Shift:
    """What the kept pairs' counts move by as these contacts move (`overlaps.shift_of`), from
    their stored audiences before the write: given, kept by the contact's own write
    (`written`), else read in one statement per chunk of contacts."""
    entered = _group(entering, by_contact=True)
    left = _group(leaving, by_contact=True)
    if before is None:
        before = _stored_audiences(session, sorted(entered.keys() | left.keys()))
    return overlaps.shift_of(before, entered, left)


def _stored_audiences(session: Session, contact_ids: Sequence[str]) -> dict[str, set[str]]:
    """Every audience each of these contacts is stored in: kept by their own writes
    (`written`), else read by contact (its index), one row per contact with its audiences' ids
    joined by commas (a contact in 30 audiences is one row to fetch, not 30: fetching was
    most of the read)."""
    known = written.all_of(session, contact_ids)
    if known is not None:
        return {each.row["id"]: set(each.stored) for each in known}
    found: dict[str, set[str]] = {}
    statement = _stored_pairs_by_contact(dialects.dialect_of(session))
    for chunk in chunks(contact_ids):
        for contact_id, joined in session.connection().execute(*statement.bound(chunk)):
            found[contact_id] = set(joined.split(","))
    return found


def _dated_events(
    rows: Sequence[tuple[str, str, str]],
    payloads: Sequence[dict[str, Any]],
    cause: str,
    dated: Dated,
) -> list[events.NewEvent]:
    """The events of a judgement the clock made late, each dated at its pair's instant: a
    scheduler that got to a contact seconds after its instant must not make history say it
    stayed that long. A pair without an instant of its own (an audience reading the one that
    was due) is dated at its contact's latest instant, when every cause had happened."""
    instant = _pair_instants(dated)
    return [
        events.NewEvent(kind, c, a, cause, payload, instant(a, c))
        for (kind, c, a), payload in zip(rows, payloads, strict=True)
    ]


def _pair_instants(dated: Dated) -> Callable[[str, str], datetime | None]:
    """The instant of an (audience id, contact id) pair's change: its own, else its contact's
    latest (`_dated_events`); the membership row's `enteredAt` is the same instant."""
    latest: dict[str, datetime] = {}
    for (_, contact_id), instant in dated.items():
        latest[contact_id] = max(instant, latest.get(contact_id, instant))
    return lambda audience_id, contact_id: dated.get(
        (audience_id, contact_id), latest.get(contact_id)
    )


CARRY_IN_EVENTS = True
"""Whether a single write's memberships (and its pairs' note) ride in the `WITH` of its events'
statement where the database lets them (`events.carry`, PostgreSQL): one round trip fewer a
PATCH. Off, they go in a statement of their own before it, as they did (the differential test:
tests/service/test_carried_write.py)."""


def _move_pairs(
    session: Session,
    list_id: str,
    entering: Sequence[tuple[StoredAudience, str]],
    leaving: Sequence[tuple[StoredAudience, str]],
    at: datetime,
    dated: Dated | None,
    shift: overlaps.Shift | None,
    carry: bool = False,
) -> list[tuple[StoredAudience, experiments.Draw | None]]:
    """Deletes the leaving pairs' rows and inserts the entering ones (`_delete_pairs`,
    `_insert_pairs`), and adds `shift` to the kept pairs' counts (`overlaps.add`): where a
    statement may carry other writes (PostgreSQL), all in one, the others in its `WITH`
    (`_pairs_written`; a contact moving in and out of audiences: two round trips fewer), and
    that one in the `WITH` of the events' statement when `carry` and its events take it
    (`events.carry`). The entering pairs' draws."""
    dialect = dialects.dialect_of(session)
    together = dialects.writes_in_with(dialect) and dialects.unpacks(dialect)
    plain = dated is None and not any(a.experiment for a, _ in entering)
    kept = shift is not None and overlaps.moved(shift)
    shape = overlaps.shape_of(dialect, shift) if shift is not None else overlaps.PAIRS
    # Noted contacts' moves first, else counted twice: whenever pairs move and are counted
    # here, even to a sum of nothing (one contact leaving an audience as another enters it),
    # since a noted one among them is counted again from its note when the list settles.
    settles = shift is not None and shape == overlaps.PAIRS and bool(entering or leaving)
    if kept or settles:  # shared turns of one list add to the same pairs: one after another
        list_lock.hold_counts(session, list_id)
    if settles:
        overlaps.settle(session, list_id)
    if not (together and (plain or not entering) and (entering or leaving)):
        if shift is not None:
            overlaps.add(session, list_id, shift)
        _delete_pairs(session, leaving)
        drawn = _insert_pairs(session, entering, at, dated)
        if kept and shape == overlaps.NOTED:
            overlaps.settle_due(session, list_id)  # after the rows it counts are written
        return drawn
    parameters: dict[str, Any] = {}
    if leaving:
        pairs = [(a.id, c) for a, c in leaving]
        parameters |= dialects.rows_parameters(dialect, _PAIRS, pairs, _LEAVING_KEY)
    if entering:
        entered = [(a.id, c) for a, c in entering]
        parameters |= dialects.rows_parameters(dialect, _PAIRS, entered, _PAIRS_KEY)
        parameters[_PAIRS_AT] = at
    if kept and shift is not None:
        parameters |= overlaps.carried_parameters(dialect, list_id, shift)
    noted = kept and shape == overlaps.NOTED
    then = (lambda: overlaps.settle_due(session, list_id)) if noted else None
    if carry and CARRY_IN_EVENTS and shape != overlaps.PAIRS:  # one contact's: it may ride
        ctes = _pairs_carried(dialect, bool(leaving), bool(entering), kept, shape)
        if events.carry(session, list_id, events.Carried(ctes, parameters, then)):
            return [(a, None) for a, _ in entering]
    statement = _pairs_written(dialect, bool(leaving), bool(entering), kept, shape)
    # A batch's pairs (`PAIRS`) are not counted in: such a run is never planned once.
    rows = None if shape == overlaps.PAIRS else len(leaving) + len(entering)
    driver_path.run(session, statement, parameters, unpacked_rows=rows)
    if then is not None:
        then()
    return [(a, None) for a, _ in entering]


def _delete_pairs(session: Session, leaving: Sequence[tuple[StoredAudience, str]]) -> None:
    """Deletes the membership rows of these pairs: one `DELETE ... WHERE (audience, contact)
    IN` over the pairs as one parameter (`dialects.unpacked_rows`); elsewhere one statement
    per audience or per contact, whichever is fewer. A turn of a chain (16 contacts leaving
    30 audiences) ran 16 statements, each keyed and compiled by the ORM anew."""
    if not leaving:
        return
    dialect = dialects.dialect_of(session)
    if dialects.unpacks(dialect):
        pairs = [(a.id, c) for a, c in leaving]
        parameters = dialects.rows_parameters(dialect, _PAIRS, pairs, _LEAVING_KEY)
        driver_path.run(session, _pairs_delete(dialect), parameters, unpacked_rows=len(pairs))
        return
    by_audience = _group(leaving, by_contact=False)
    by_contact = _group(leaving, by_contact=True)
    # One statement per audience (an audience refreshed) or per contact (a contact refreshed).
    if len(by_contact) < len(by_audience):
        for contact_id, audience_ids in by_contact.items():
            for chunk in chunks(audience_ids):
                session.execute(
                    delete(Membership)
                    .where(Membership.contactId == contact_id, Membership.audienceId.in_(chunk))
                    .execution_options(synchronize_session=False)
                )
    else:
        for audience_id, contact_ids in by_audience.items():
            for chunk in chunks(contact_ids):
                session.execute(
                    delete(Membership)
                    .where(Membership.audienceId == audience_id, Membership.contactId.in_(chunk))
                    .execution_options(synchronize_session=False)
                )


def _left_draws(
    leaving: Sequence[tuple[StoredAudience, str]],
) -> list[tuple[StoredAudience, experiments.Draw | None]]:
    """The group each leaving member had, for its `audience.left` event: the draw is a function
    of the seed and the contact id alone and the experiment is fixed once created, so drawing
    again gives the group stored with the row, without reading it before the delete."""
    return [(a, a.experiment.draw(c) if a.experiment else None) for a, c in leaving]


def _drawn_key(audience_id: str, draw: experiments.Draw | None) -> str:
    """The key of an entry's payload: its audience's, and its group's when it drew one."""
    if draw is None:
        return audience_id
    return f"{audience_id}/{'' if draw.holdout else draw.group}/{draw.holdout}"


def _insert_pairs(
    session: Session,
    entering: Sequence[tuple[StoredAudience, str]],
    at: datetime,
    dated: Dated | None = None,
) -> list[tuple[StoredAudience, experiments.Draw | None]]:
    """The membership rows of these (audience, contact) pairs: one `INSERT ... SELECT` over
    the pairs as one parameter (`dialects.unpacked_rows`), else the driver's executemany.
    This is where every member enters: an audience running an experiment draws the group of
    each here, stored with its row in the entry's transaction. The draws, pair by pair."""
    draws = [(a, a.experiment.draw(c) if a.experiment else None) for a, c in entering]
    if not entering:
        return draws
    dialect = dialects.dialect_of(session)
    plain = dated is None and not any(a.experiment for a, _ in entering)
    if dialects.unpacks(dialect) and plain:
        pairs = [(a.id, c) for a, c in entering]
        parameters = dialects.rows_parameters(dialect, _PAIRS, pairs, _PAIRS_KEY)
        parameters[_PAIRS_AT] = at
        driver_path.run(session, _pairs_insert(dialect), parameters, unpacked_rows=len(pairs))
        return draws
    # Core inserts (column names), not ORM bulk inserts: a fraction of the Python per row.
    instant = _pair_instants(dated or {})
    rows_in = [
        {"audience_id": a.id, "contact_id": c, "entered_at": instant(a.id, c) or at}
        | _drawn_columns(draw)
        for (a, c), (_, draw) in zip(entering, draws, strict=True)
    ]
    insert_rows(session, MEMBERSHIPS, rows_in)
    return draws


def _drawn_columns(draw: experiments.Draw | None) -> dict[str, Any]:
    found = draw or experiments.NO_DRAW
    return {"group_name": found.group, "holdout": found.holdout}


_PAIRS = ("audience_id", "contact_id")
_PAIRS_KEY = "pairs"
_LEAVING_KEY = "leaving"
_PAIRS_AT = "pairs_entered_at"


@dialects.per_dialect
def _pairs_insert(dialect: str) -> Any:
    """`INSERT INTO memberships SELECT` of `_insert_pairs`, built once per dialect (its values
    are named parameters)."""
    pairs = dialects.unpacked_rows_named(dialect, _PAIRS, _PAIRS_KEY)
    at = bindparam(_PAIRS_AT, type_=_ENTERED_AT)
    rows = select(pairs.c.audience_id, pairs.c.contact_id, at)
    return insert(MEMBERSHIPS).from_select([*_PAIRS, "entered_at"], rows)


@dialects.per_dialect
def _pairs_delete(dialect: str) -> Any:
    """`DELETE FROM memberships WHERE (audience_id, contact_id) IN (pairs)` of
    `_delete_pairs`, built once per dialect; each pair is found by the primary key."""
    pairs = dialects.unpacked_rows_named(dialect, _PAIRS, _LEAVING_KEY)
    both = tuple_(MEMBERSHIPS.c.audience_id, MEMBERSHIPS.c.contact_id)
    return delete(MEMBERSHIPS).where(both.in_(select(pairs.c.audience_id, pairs.c.contact_id)))


@cache
def _pairs_written(dialect: str, leaving: bool, entering: bool, kept: bool, shape: str) -> Any:
    """`_pairs_insert` (when pairs enter) or `_pairs_delete`, carrying in its `WITH` the
    delete (when pairs leave too) and the kept pairs' upsert (`overlaps.carried`, when their
    counts move), built once per dialect and shape: the rows leaving and entering and their
    counts in one statement. The writes touch disjoint rows (the pairs leaving and entering
    are disjoint; the counts are another table), so the order of the writes, which PostgreSQL
    leaves open, does not matter."""
    *carried, (_, last) = _pairs_writes(dialect, leaving, entering, kept, shape)
    return last.add_cte(*(statement.cte(name) for name, statement in carried))


@cache
def _pairs_carried(
    dialect: str, leaving: bool, entering: bool, kept: bool, shape: str
) -> tuple[Any, ...]:
    """`_pairs_written`'s writes all as common table expressions, for the events' statement
    of a single write to carry (`events.carry`): one round trip fewer. Built once per dialect
    and shape, so the statement carrying them is too."""
    return tuple(
        statement.cte(name)
        for name, statement in _pairs_writes(dialect, leaving, entering, kept, shape)
    )


def _pairs_writes(
    dialect: str, leaving: bool, entering: bool, kept: bool, shape: str
) -> list[tuple[str, Any]]:
    """The writes of a move, each named, in the order they are carried: the kept pairs'
    upsert (when their counts move), the delete (when pairs leave), the insert (when pairs
    enter)."""
    writes = [("kept", overlaps.carried(dialect, shape))] if kept else []
    if leaving:
        writes.append(("gone", _pairs_delete(dialect)))
    if entering:
        writes.append(("entered", _pairs_entered(dialect)))
    return writes


def _pairs_entered(dialect: str) -> Any:
    """The entering pairs' `INSERT ... SELECT` to carry in a `WITH` or to carry others."""
    pairs = dialects.unpacked_rows_named(dialect, _PAIRS, _PAIRS_KEY)
    at = bindparam(_PAIRS_AT, type_=_ENTERED_AT)
    # The holdout written out: a column's Python default is not filled in under a `WITH`.
    rows = select(pairs.c.audience_id, pairs.c.contact_id, at, false())
    names = [*_PAIRS, "entered_at", "holdout"]
    return insert(MEMBERSHIPS).from_select(names, rows)


def write_changes(
    session: Session,
    list_id: str,
    audience: StoredAudience,
    entering: Sequence[str],
    leaving: Sequence[str],
    cause: str,
    at: datetime,
    kept: bool = True,
) -> int:
    """Stores one audience's difference (contact ids entering and leaving) and its events, as
    `_write` does, in a few set statements whatever its size: each list of ids is one
    parameter (`dialects.unpacked`), so a new audience of a million members costs no Python per
    member. On a database without `dialects.unpacked`, through `_write`. The kept pairs'
    counts follow in SQL (`overlaps.audience_moved`), unless `kept` is False (the audience's
    pairs are deleted with it)."""
    dialect = dialects.dialect_of(session)
    overlaps.settle(session, list_id)  # the noted contacts' moves, before these rows move
    if kept:
        overlaps.audience_moved(session, list_id, audience.id, entering, leaving)
    # An experiment draws each entering member (`_insert_pairs`): row by row, in Python.
    if not dialects.unpacks(dialect) or audience.experiment is not None:
        pairs_in = [(audience, contact_id) for contact_id in entering]
        pairs_out = [(audience, contact_id) for contact_id in leaving]
        return _write(session, list_id, pairs_in, pairs_out, cause, at, kept=False)
    _store_difference(session, dialect, audience.id, entering, leaving, at)
    payload = _change_payload(audience)
    groups = [
        events.Alike(events.LEFT, leaving, audience.id, cause, payload),
        events.Alike(events.ENTERED, entering, audience.id, cause, payload),
    ]
    return events.append_alike(session, list_id, groups, at)


def _store_difference(
    session: Session,
    dialect: str,
    audience_id: str,
    entering: Sequence[str],
    leaving: Sequence[str],
    at: datetime,
) -> None:
    """One audience's rows: the leaving ones deleted, the entering ones inserted, each by one
    statement over one parameter of ids."""
    if leaving:
        session.execute(
            delete(Membership)
            .where(Membership.audienceId == audience_id, ids_in(Membership.contactId, dialect))
            .execution_options(synchronize_session=False),
            {dialects.IDS: list(leaving)},
        )
    if entering:
        ids = dialects.unpacked(dialect, entering)
        rows = select(literal(audience_id, String), ids.c.value, literal(at, _ENTERED_AT))
        names = ["audience_id", "contact_id", "entered_at"]
        session.execute(insert(MEMBERSHIPS).from_select(names, rows))


def _group(
    pairs: Sequence[tuple[StoredAudience, str]], *, by_contact: bool
) -> dict[str, list[str]]:
    """The pairs' contact ids per audience id, or their audience ids per contact id."""
    grouped: dict[str, list[str]] = {}
    for audience, contact_id in pairs:
        key, value = (contact_id, audience.id) if by_contact else (audience.id, contact_id)
        grouped.setdefault(key, []).append(value)
    return grouped


def refresh_contacts(
    session: Session,
    list_id: str,
    contact_ids: Sequence[str],
    cause: str,
    audiences: Sequence[StoredAudience] | None = None,
    announce: bool = True,
    changed: Collection[str] | None = None,
    most: int | None = None,
    dated: Dated | None = None,
) -> int:
    """Brings these contacts' smart memberships up to date, after the write, in its
    transaction; the changes (their events unless `announce` is False). `audiences`: only these
    (in refresh order), not every smart one; `changed`: what the write changed (None: any):
    audiences reading none of it are not judged; `most`: the pairs it may move (`TooManyMoves`
    past it, before writing any); `dated`: the clock's instants (`_write`). Its two halves
    are two stages of a list's write (`list_write.py`)."""
    judged = judge_contacts(session, list_id, contact_ids, cause, audiences, changed, most)
    return store_judged(session, judged, announce, dated)


@dataclass(frozen=True)
class Judged:
    """What `judge_contacts` decided of a write's contacts, for `store_judged` to write: the
    audiences judged, the contacts, the instant, what was read of them and their stored
    audiences before, and the moves (None: no audience reads what the write changed)."""

    list_id: str
    contact_ids: Sequence[str]
    cause: str
    audiences: Sequence[StoredAudience] = ()
    at: datetime | None = None
    found: judge.Read | None = None
    before: Mapping[str, Collection[str]] | None = None
    moves: judge.Judge | None = None


def judge_contacts(
    session: Session,
    list_id: str,
    contact_ids: Sequence[str],
    cause: str,
    audiences: Sequence[StoredAudience] | None = None,
    changed: Collection[str] | None = None,
    most: int | None = None,
) -> Judged:
    """The judgement of `refresh_contacts`, writing nothing (`TooManyMoves` past `most`)."""
    prepared = plan.plan_of(session, list_id)  # one read of the list's stamp per write
    audiences = prepared.reading(changed) if audiences is None else audiences
    if not audiences or not contact_ids:
        return Judged(list_id, contact_ids, cause)
    session.flush()  # the write's own changes, before the Core statements below read
    found = judge.read(session, audiences, contact_ids, at := clock.now())
    before = _stored_audiences(session, contact_ids)
    moves = _decided(prepared, audiences, found, before, at, most)
    return Judged(list_id, contact_ids, cause, audiences, at, found, before, moves)


def _decided(
    prepared: plan.ListPlan,
    audiences: Sequence[StoredAudience],
    found: judge.Read,
    before: Mapping[str, Collection[str]],
    at: datetime,
    most: int | None,
) -> judge.Judge:
    """The moves of the contacts `found`, from their stored audiences `before`."""
    stored = _stored_pairs(before, [a.id for a in audiences])
    moves = judge.Judge(audiences, found.selected, stored, at, found.used, prepared)
    for record in found.rows:
        moves.decide(record)
    if most is not None and len(moves.entering) + len(moves.leaving) > most:
        raise TooManyMoves(len(moves.entering) + len(moves.leaving), most)
    return moves


def store_judged(
    session: Session,
    judged: Judged,
    announce: bool = True,
    dated: Dated | None = None,
    last: bool = False,
) -> int:
    """The moves `judge_contacts` decided, stored with their events (unless `announce` is
    False), the kept counts following, the contacts' next instants due; their number. `last`:
    the last store of a single write's `events.together` block, whose memberships' write may
    then ride in the events' statement (`events.carry`): what follows it here reads none of
    them (the instants due are worked out from the rows the judgement read, `found.rows`)."""
    moves, at, found = judged.moves, judged.at, judged.found
    if moves is None or at is None or found is None:
        return 0
    entering, leaving, before = moves.entering, moves.leaving, judged.before
    args = (judged.list_id, entering, leaving, judged.cause, at, announce, dated)
    count = _write(session, *args, before=before, carry=last)
    if written.keeps(session):  # the writes read back follow their judgement
        entered, left = _group(entering, by_contact=True), _group(leaving, by_contact=True)
        for contact_id in judged.contact_ids:
            written.moved(
                session, contact_id, entered.get(contact_id, []), left.get(contact_id, [])
            )
    due.contacts_judged(session, judged.audiences, judged.contact_ids, at, found.rows)
    return count


def _stored_pairs(
    stored: Mapping[str, Collection[str]], audience_ids: Sequence[str]
) -> set[tuple[str, str]]:
    """The stored (audience id, contact id) rows of these contacts (`_stored_audiences`) in
    these audiences, kept in Python, so a list of a thousand audiences binds no thousand ids
    per statement."""
    wanted = frozenset(audience_ids)
    return {(a, c) for c, audiences in stored.items() for a in audiences if a in wanted}


@dialects.per_dialect
def _stored_pairs_by_contact(dialect: str) -> ByIds[Any]:
    """`_stored_pairs`' statement, built once per dialect (every write judging audiences runs
    it); audience ids hold no commas."""
    joined = dialects.joined_text(Membership.audienceId, dialect)
    return ByIds(
        lambda condition: (
            select(Membership.contactId, joined).where(condition).group_by(Membership.contactId)
        ),
        Membership.contactId,
        "stored_contacts",
    )


def refresh_audience(session: Session, audience: Audience, cause: str) -> int:
    """Brings the stored members of one audience up to date, by two SQL set differences, then
    those of the audiences that read it; the number of events appended."""
    written = _refresh(session, StoredAudience.of(audience), audience.listId, cause)
    if written:
        for dependent in dependents(session, [audience.id]):
            written += _refresh(session, dependent, audience.listId, cause)
    return written


def _refresh(session: Session, stored_audience: StoredAudience, list_id: str, cause: str) -> int:
    at = clock.now()
    selected = judge.selected(stored_audience, list_id, at)
    members = select(Membership.contactId).where(Membership.audienceId == stored_audience.id)
    if selected is None:
        entering_ids: list[str] = []
        leaving_ids = list(session.scalars(members))
    else:
        wanted = selected.subquery()
        entering_ids = list(session.scalars(select(wanted.c.id).where(wanted.c.id.not_in(members))))
        leaving_ids = list(
            session.scalars(members.where(Membership.contactId.not_in(select(wanted.c.id))))
        )
    return write_changes(
        session, list_id, stored_audience, sorted(entering_ids), sorted(leaving_ids), cause, at
    )


def remove_contact(session: Session, list_id: str, contact_id: str, cause: str) -> int:
    """Every audience the contact is in reports it as left; call before deleting it."""
    statement = (
        select(Audience)
        .join(Membership, Membership.audienceId == Audience.id)
        .where(Membership.contactId == contact_id)
        .order_by(Audience.createdAt, Audience.id)
    )
    leaving = [(StoredAudience.of(a), contact_id) for a in session.scalars(statement)]
    before = {contact_id: [a.id for a, _ in leaving]}  # every audience it is in leaves
    return _write(session, list_id, [], leaving, cause, clock.now(), before=before)


def forget_list(session: Session, list_id: str) -> None:
    """Deletes the memberships of every audience of the list, reporting nothing: call under
    the list's lock before deleting the list, whose events go with it (`memberships` has no
    foreign key to cascade from, migration 0012)."""
    audiences = select(Audience.id).where(Audience.listId == list_id)
    session.execute(
        delete(Membership)
        .where(Membership.audienceId.in_(audiences))
        .execution_options(synchronize_session=False)
    )
    overlaps.forget_list(session, list_id)


def remove_audience(session: Session, audience: Audience, cause: str) -> int:
    """Every member of the audience reports it as left; call before deleting it."""
    stored_audience = StoredAudience.of(audience)
    members = session.scalars(
        select(Membership.contactId)
        .where(Membership.audienceId == audience.id)
        .order_by(Membership.contactId)
    )
    count = write_changes(
        session, audience.listId, stored_audience, [], list(members), cause, clock.now(), False
    )
    overlaps.forget_audience(session, audience.id)
    return count
