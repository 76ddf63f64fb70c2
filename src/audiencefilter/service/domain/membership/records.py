"""Contacts as the library evaluates them: their columns, their decoded `data`, and the
related rows the filters at hand read. One loader for every in-memory judgement (a write's
refresh, the next instants of time-dependent audiences), so they all see the same record."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy.orm import Session

from .... import Filter
from ...db.by_ids import ByIds
from ...db.models import Contact
from ...db.queries import contact_rows, fetch_rows
from .. import relations
from ..audience_filters import StoredAudience, reads_data
from . import written

CHUNK = 500


def _chunks(values: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def rows(session: Session, contact_ids: Sequence[str], decode: bool) -> list[dict[str, Any]]:
    """The contacts' rows in the order of `contact_ids` (events follow the write's order);
    `decode`: their `data` as JSON values rather than text."""
    known = written.all_of(session, contact_ids)  # read back by the writes themselves
    found: list[dict[str, Any]] = [dict(each.row) for each in known] if known else []
    for chunk in [] if known else _chunks(contact_ids):
        found.extend(fetch_rows(session, *_ROWS.bound(chunk)))
    if decode:
        for row in found:
            row["data"] = json.loads(row["data"])
    order = {contact_id: index for index, contact_id in enumerate(contact_ids)}
    found.sort(key=lambda row: order[row["id"]])
    return found


_ROWS = ByIds(lambda contacts: contact_rows([contacts]), Contact.id, "row_contacts")
"""`rows`' statement, built once (every write judging audiences in memory runs it)."""


def records(
    session: Session,
    contact_ids: Sequence[str],
    filters: Sequence[Filter],
    own: Sequence[Filter] = (),
) -> tuple[list[dict[str, Any]], set[str]]:
    """The contacts' rows with the related rows these filters read, and those relations;
    `own`: filters that read only the rows' own fields here (`data` decoded if they read it)."""
    used: set[str] = set().union(*[relations.uses(f) for f in filters])
    return _related(session, contact_ids, any([reads_data(f) for f in [*filters, *own]]), used)


def audience_records(
    session: Session,
    contact_ids: Sequence[str],
    audiences: Sequence[StoredAudience],
    own: Sequence[StoredAudience] = (),
) -> tuple[list[dict[str, Any]], set[str]]:
    """`records` for the filters of `audiences` (and of `own`), from what each audience keeps
    of its filter (`StoredAudience.decodes`, `.relations`)."""
    used: set[str] = set().union(*[a.relations for a in audiences])
    return _related(session, contact_ids, any([a.decodes for a in [*audiences, *own]]), used)


def _related(
    session: Session, contact_ids: Sequence[str], decode: bool, used: set[str]
) -> tuple[list[dict[str, Any]], set[str]]:
    found = rows(session, contact_ids, decode)
    if used:
        relations.attach(found, relations.related_rows(session, contact_ids, used))
    return found, used
