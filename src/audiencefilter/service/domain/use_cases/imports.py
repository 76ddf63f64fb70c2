"""Many contacts in one write: an import's rows, each with its own result.

The rows are read by the caller (the HTTP floor reads a JSON array or JSON Lines) and checked
against the list once its lock is held (`read_row`: the list's custom fields decide where a
row's fields go and what their values must be). All rows are written in one transaction
(`contact_import.py`): a contact created meanwhile by another request with one of the emails
is a `Conflict` that creates nothing, and sending the import again is safe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...db.models import List
from ...ground.errors import Conflict
from .. import changes, contact_import
from ..contact_import import ImportRow, InvalidRow
from .unit import Writes

R = TypeVar("R")
ImportMode = Literal["create", "upsert"]
RowReader = Callable[[int, Any, List], ImportRow | InvalidRow]
RACED = "A contact with one of these emails was created meanwhile; send it again"


@dataclass(frozen=True)
class Job:
    """An import as read: whose, into which list, its rows (number, value), how it treats
    existing contacts and whether it writes events."""

    account_id: str
    list_id: str
    rows: Sequence[tuple[int, Any]]
    mode: ImportMode
    events: bool


def _write(session: Session, job: Job, read_row: RowReader) -> dict[str, Any]:
    lst = changes.locked_list(session, job.account_id, job.list_id)
    checked = [read_row(number, value, lst) for number, value in job.rows]
    results = contact_import.write(session, lst.id, checked, job.mode, job.events)
    summary = {"listId": lst.id, "mode": job.mode, "rows": len(results)}
    return {**summary, **contact_import.counts(results), "results": results}


def run(job: Job, read_row: RowReader, writes: Writes[dict[str, Any], R]) -> R:
    """Writes the import; its summary, counts and a result per row."""
    try:
        return writes(lambda session: _write(session, job, read_row))
    except IntegrityError:
        raise Conflict(RACED) from None
