"""Many contacts in one request: an import's rows, each with its own result, written in turns.

The HTTP floor only decodes the rows (a JSON array or JSON Lines, a CSV file's text); each is
read here once the list's lock is held (`import_rows.read`, or a CSV file's
`csv_rows.CsvFile.read` naming each problem's column): the list's custom fields decide where a
row's fields go and what their values must be. A thousand rows with fifteen actions each write
some 17,000 rows: in one transaction, three such imports at once held another account's write
for 6.3 s on SQLite. So the rows are written in turns (`unit.Turned`), each its own transaction
under the list's lock, of as many rows as fit `membership_turns.PAIRS_PER_TURN`, a row weighing
its contact, its actions and its judgement by the smart audiences of the list
(`contact_import.weight`: the turn's contacts are judged together, twenty pairs judged in
memory weighing one moved). What the rows move is known once they are judged: a turn whose
rows would move more than `PAIRS_PER_TURN` pairs undoes its writes (a savepoint) and takes
fewer rows, before any membership or its event is written. Between two turns other writers,
of this list or of any account, take theirs.

On PostgreSQL a turn whose rows only update contacts already in the list shares the list's lock
with other such turns (`list_lock.share`, the setting `shared_import_turns`): it locks its
contacts' rows first and appends its events last, so the imports of one list run side by side;
a turn that would create a contact takes the lock alone (`_shared` tries, under a savepoint that
undoes its locks when it cannot share).

Each turn writes its rows' contacts and actions, their events and their membership together, so
a reader between two turns sees some rows imported and others not yet, never a contact without
its event. The progress between turns (`_Progress`: the next row, the results so far, the first
result of each email) is plain JSON, so that a request with an `Idempotency-Key` stores it with
its record in each turn (`http/idempotency_turns.py`) and a retry after a crash resumes after the
last turn committed. A contact created meanwhile by another request with an email of the turn
under way is a `Conflict` for that turn; the turns before it stay, and sending the import again
is safe.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...db import list_statistics
from ...db.engine import SHARED_TURNS
from ...db.models import List
from ...ground.errors import Conflict
from .. import contact_import, import_rows, list_lock, list_write
from ..contact_import import ImportRow, InvalidRow
from ..csv_rows import CsvFile
from ..membership import plan
from ..membership.store import TooManyMoves
from . import membership_turns
from .unit import Progress, TurnWrites

R = TypeVar("R")
ImportMode = Literal["create", "upsert"]
Rows = list[ImportRow | InvalidRow]
RACED = "A contact with one of these emails was created meanwhile; send it again"


@dataclass(frozen=True)
class Job:
    """An import as decoded: whose, into which list, its rows (number, raw value), how it
    treats existing contacts and whether it writes events. `seen`: the first results of the
    rows sent before these, for an import sent in parts (a CSV file read a batch at a time), so
    that a row repeating an email of an earlier part is a `duplicate` as in one part; it gains
    this part's once its last turn is written. `file`: the CSV file the rows come from (its
    values, read by its columns), or None for a JSON import's rows."""

    account_id: str
    list_id: str
    rows: Sequence[tuple[int, Any]]
    mode: ImportMode
    events: bool
    seen: contact_import.Seen = field(default_factory=dict)
    file: CsvFile | None = None


@dataclass(frozen=True)
class _Import:
    """The turns of one import (`unit.Turned`); its progress is `{"next": index of the next
    row, "results": [...], "seen": contact_import.Seen, "listId": ..., "moves": pairs moved
    a row by the turn before, "share": whether the next turn tries to share the list's lock}`.

    A turn that created contacts is likely followed by one that creates more (a new list
    filled, a file of new people): the next turn takes the list's lock alone at once, without
    the try to share it, whose look-up of the rows' contacts it would repeat under the lock.
    A turn that created none lets the next try again."""

    job: Job
    committed: list[Progress] = field(default_factory=list)
    """The progress after the last turn committed (none before the first): each turn starts
    from it, so a turn that fails leaves here what the import wrote."""
    read: dict[int, tuple[Any, ImportRow | InvalidRow]] = field(default_factory=dict)
    """The rows read by a turn's try to share the list's lock, by index, with the list's custom
    fields they were read with: on PostgreSQL a turn that creates contacts reads its rows there
    first, then again under the lock alone, and validating each row twice cost the import a
    third of its time. A row is taken again only if the custom fields are still the same (a
    reader depends on the list's id and custom fields only)."""

    def turn(self, session: Session, progress: Progress | None) -> Progress:
        job = self.job
        self.committed[:] = [] if progress is None else [progress]
        start = 0 if progress is None else int(progress["next"])
        moves = 0.0 if progress is None else float(progress.get("moves", 0.0))
        seen = dict(job.seen if progress is None else progress["seen"])
        tries = progress is None or bool(progress.get("share", True))
        write, rows = self._locked(session, start, moves, seen, tries)
        rows, results, moved = _write(write, rows, job, seen)
        created = any(result["status"] == "created" for result in results)
        if created:
            list_statistics.refresh_if_grown(session, write.list_id)
        results = ([] if progress is None else list(progress["results"])) + results
        if start + len(rows) >= len(job.rows):
            job.seen.update(seen)
        per_row = moved / len(rows) if rows else 0.0
        return {"listId": write.list_id, "next": start + len(rows), "results": results,
                "seen": seen, "moves": per_row, "share": not created}  # fmt: skip

    def _locked(
        self, session: Session, start: int, moves: float, seen: contact_import.Seen, tries: bool
    ) -> tuple[list_write.ListWrite, Rows]:
        """The list's write, its lock held (shared, tried only if `tries`, or alone), and the
        turn's rows."""
        shared = self._shared(session, start, moves, seen) if tries else None
        if shared is not None:
            return shared
        write = list_write.for_list(session, self.job.account_id, self.job.list_id, shared=False)
        assert write is not None
        lst = write.lst
        return write, self._rows(session, lst, start, moves)

    def _shared(
        self, session: Session, start: int, moves: float, seen: contact_import.Seen
    ) -> tuple[list_write.ListWrite, Rows] | None:
        """The list's write and the turn's rows, the list's lock shared and the rows' contacts
        locked, when the turn only updates contacts already there (`list_lock.share`); else
        None, nothing held: a savepoint undoes the try, its locks included."""
        if not session.info.get(SHARED_TURNS, True):
            return None
        try:
            with session.begin_nested():
                return self._share(session, start, moves, seen)
        except _CreatesContacts:
            list_lock.unshare(session, self.job.list_id)
            return None

    def _share(
        self, session: Session, start: int, moves: float, seen: contact_import.Seen
    ) -> tuple[list_write.ListWrite, Rows] | None:
        write = list_write.for_list(session, self.job.account_id, self.job.list_id, shared=True)
        if write is None:
            return None
        lst = write.lst
        rows = self._rows(session, lst, start, moves)
        if not contact_import.lock_existing(session, lst.id, rows, seen):
            raise _CreatesContacts
        return write, rows

    def done(self, progress: Progress) -> bool:
        return int(progress["next"]) >= len(self.job.rows)

    def result(self, progress: Progress) -> dict[str, Any]:
        results: list[dict[str, Any]] = progress["results"]
        summary = {"listId": progress["listId"], "mode": self.job.mode, "rows": len(results)}
        return {**summary, **contact_import.counts(results), "results": results}

    def _rows(self, session: Session, lst: List, start: int, moves: float) -> Rows:
        """The rows of this turn, from `start`: as many as fit a turn, one at least, each
        expected to move `moves` pairs (what a row of the turn before moved)."""
        judging = membership_turns.judging_weight(plan.plan_of(session, lst.id).smart)
        budget: float = membership_turns.PAIRS_PER_TURN
        expected = budget * PLANNED
        taken: Rows = []
        for gone in [index for index in self.read if index < start]:
            del self.read[gone]
        fields = copy.deepcopy(lst.customFields)
        for index in range(start, len(self.job.rows)):
            kept = self.read.get(index)
            if kept is not None and kept[0] == fields:
                row = kept[1]
            else:
                number, value = self.job.rows[index]
                row = self._read(number, value, lst)
                self.read[index] = (fields, row)
            budget -= contact_import.weight(row, judging)
            expected -= moves
            if taken and (budget < 0 or expected < 0):
                break
            taken.append(row)
        return taken

    def _read(self, number: int, value: Any, lst: List) -> ImportRow | InvalidRow:
        """A row read as its import's kind reads it: a CSV file's by its columns."""
        file = self.job.file
        return (
            import_rows.read(number, value, lst) if file is None else file.read(number, value, lst)
        )


class _CreatesContacts(Exception):
    """A turn that would create a contact: it takes the list's lock alone."""


PLANNED = 0.8
"""The share of the pairs a turn may move that its rows are expected to move, and that a turn
cut keeps: rows move unevenly, and a turn that moves too many is undone and written again."""


def _write(
    write: list_write.ListWrite, rows: Rows, job: Job, seen: contact_import.Seen
) -> tuple[Rows, list[dict[str, Any]], int]:
    """Writes the longest start of `rows` whose judgement moves at most `PAIRS_PER_TURN`
    pairs (a single row whatever it moves); the rows written, their results and the pairs they
    moved. A try that would move more is undone and the rows cut in proportion, its next try a
    new batch of the list's write. A write sharing the list's lock appends its events last
    (`list_write.appending`)."""
    while len(rows) > 1:
        tried = dict(seen)
        most = membership_turns.PAIRS_PER_TURN
        batch = write.batch()
        try:
            with write.session.begin_nested(), list_write.appending(batch):
                args = (batch, rows, job.mode, job.events, tried, most)
                results, moved = contact_import.write(*args)
        except TooManyMoves as too_many:
            rows = rows[: max(1, int(len(rows) * PLANNED * too_many.most / too_many.moves))]
            continue
        seen.update(tried)
        return rows, results, moved
    batch = write.batch()
    with list_write.appending(batch):
        results, moved = contact_import.write(batch, rows, job.mode, job.events, seen)
    return rows, results, moved


class PartlyImported(Conflict):
    """A conflict met after some turns committed: `written` is the answer the import would
    give of the rows those turns wrote (its counts and a result per row)."""

    def __init__(self, message: str, written: dict[str, Any]) -> None:
        super().__init__(message)
        self.written = written


def run(job: Job, writes: TurnWrites[dict[str, Any], R]) -> R:
    """Writes the import in turns; its summary, counts and a result per row. A contact created
    meanwhile is a `Conflict`, a `PartlyImported` once turns before it committed."""
    work = _Import(job)
    try:
        return writes(work)
    except IntegrityError:
        if work.committed:
            raise PartlyImported(RACED, work.result(work.committed[0])) from None
        raise Conflict(RACED) from None
