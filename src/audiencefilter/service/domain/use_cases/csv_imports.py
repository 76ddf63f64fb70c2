"""A CSV import of any length: its rows written a batch at a time, with its progress.

The HTTP floor decodes the file as it streams (`api/csv_import.py`) and hands over its text;
its cells are read by `csv_rows.CsvFile` a row at a time, gathered `BATCH` at a time, and each
batch is written as a JSON import of that many rows is (`imports.run`: in turns, under the
list's lock, each row read there by its columns), so a file of 100,000 rows never has more than
a batch of them parsed in memory. The batches share what the import has seen
(`imports.Job.seen`): a row repeating an earlier email is a `duplicate` whichever batch holds
it. After each batch the import's `Progress` is yielded: the answer streams it to the client.

The counts cover every row; the results listed are those of the rows that were not written
(`invalid`, `exists`, `duplicate`), the first `MAX_LISTED` of them: the others' ids are found
by email, and 100,000 results would make an answer of megabytes nobody reads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from ...db.engine import Database
from ...db.models import List
from .. import contact_import
from ..csv_rows import CsvFile
from . import imports, lists, unit
from .unit import in_turns

BATCH = 1000
"""Rows written as one import (in turns) before the next are read."""
MAX_LISTED = 1000
"""Results of rows not written that an answer lists; the counts cover them all."""
WRITTEN = ("created", "updated", "unchanged")


@dataclass
class Progress:
    """How far a CSV import got: rows read, rows written (created, updated or found
    unchanged), rows rejected (invalid), each status's count and the results listed."""

    list_id: str
    mode: str
    counts: Counter[str] = field(default_factory=Counter)
    listed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def read(self) -> int:
        return sum(self.counts.values())

    def add(self, results: Iterable[dict[str, Any]]) -> None:
        for result in results:
            self.counts[str(result["status"])] += 1
            if result["status"] not in WRITTEN and len(self.listed) < MAX_LISTED:
                self.listed.append(result)

    def summary(self) -> dict[str, Any]:
        """Counts as a JSON import answers them, with `read`, `written` and `rejected`."""
        written = sum(self.counts[status] for status in WRITTEN)
        return {
            "listId": self.list_id,
            "mode": self.mode,
            "rows": self.read,
            "read": self.read,
            "written": written,
            "rejected": self.counts["invalid"],
            **{status: self.counts[status] for status in contact_import.STATUSES},
        }

    def answer(self) -> dict[str, Any]:
        """The summary with the results listed, and how many were left out."""
        unlisted = self.read - sum(self.counts[status] for status in WRITTEN) - len(self.listed)
        return {**self.summary(), "results": self.listed, "resultsNotListed": unlisted}


def target_list(database: Database, account_id: str, list_id: str) -> List:
    """The list the file is imported into (404 when the account has none of that id): its
    custom fields decide how the file's columns read."""
    return lists.get(database, account_id, list_id)


class PartlyWritten(Exception):
    """An import stopped by an error (its `__cause__`) after some of its rows were committed:
    `progress` says which, so the answer reports them rather than an error alone."""

    def __init__(self, progress: Progress) -> None:
        super().__init__(f"the import stopped after {progress.read} rows")
        self.progress = progress


def write(database: Database, job: imports.Job, file: CsvFile) -> Iterator[Progress]:
    """Writes the rows of `file` a batch at a time as imports of `job`'s kind (its own rows
    unused); the progress after each batch, the same object growing. An error once rows are
    committed (a batch's turn refused, the database gone, a row that cannot be read) is
    `PartlyWritten` with them, the turns committed of the batch under way included; before, it
    is itself."""
    progress = Progress(job.list_id, job.mode)
    seen: contact_import.Seen = {}
    turns: list[unit.Progress] = []
    rows = file.values()
    try:
        while batch := list(islice(rows, BATCH)):
            part = imports.Job(job.account_id, job.list_id, batch, job.mode, job.events, seen, file)
            turns.clear()
            result = imports.run(part, in_turns(database, turns.append))
            turns.clear()
            progress.add(result["results"])
            yield progress
    except Exception as exc:
        if turns:  # the batch under way committed some turns before it stopped
            progress.add(turns[-1]["results"])
        if not progress.read:
            raise
        raise PartlyWritten(progress) from exc
