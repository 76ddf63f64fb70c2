"""Writing the rows of a bulk import, a turn at a time, with a result for every row.

Each row is read and validated by `import_rows.py` (the API only decodes the body); this module
decides what each valid row of a turn does to the list, under the list's lock, so nothing
changes between the look-up of the emails and the writes (`use_cases/imports.py` cuts the
import into turns):

- mode `create` (the default) creates the contacts whose email is new, and answers `exists` for
  the others, which it never changes;
- a row whose e-mail the list suppresses (its person was erased: `suppression.py`) is
  answered `suppressed` and writes nothing;
- mode `upsert` also updates the contacts it finds by email (ignoring case): the fields a row
  sends replace the stored ones, the fields it leaves out stay, and it answers `updated` with
  what changed, or `unchanged` when the contact already was as the row says. Sending the same
  export twice therefore changes nothing the second time.

A row whose email an earlier row of the import has is answered from that first row's result,
kept across turns (`Seen`), never from what the earlier turn wrote: `duplicate`, or `exists`
like the first row when the contact was there before the import. So an import cut into turns
answers exactly as one transaction would.

A row carries history: its `createdAt` (the sign-up instant) and its actions, each with its own
`createdAt`. An action the contact already has (same name, increase and instant) is not added
again, which is what makes a second sync `unchanged`. Points follow one rule: a row that sends
`points` gives the balance, its actions included; a row without it adds the increases of its new
actions, as `POST /v4/actions` does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, bindparam, select
from sqlalchemy.orm import Session

from ... import as_utc
from ..db import dialects
from ..db.bulk import RowMaker, insert_rows, update_by_id
from ..db.models import Action, Contact, json_text, new_id
from ..ground import clock
from ..ground.fields import MAX_SAFE_INTEGER
from . import events, suppression
from .list_write import ListWrite

CREATE = "create"
UPSERT = "upsert"
STATUSES = ("created", "updated", "unchanged", "exists", "duplicate", "suppressed", "invalid")
CHUNK = 500
ACTIONS = cast(Table, Action.__table__)
CONTACT_ROWS = RowMaker(Contact)
POINTS_RANGE = (
    "actions whose increases keep the contact's points within ±(2^53-1); "
    "or send the balance as points"
)

ActionKey = tuple[str, int, datetime]
Seen = dict[str, dict[str, Any]]
"""`{email key: the result of the import's first valid row with that email}` (JSON values)."""


@dataclass(frozen=True)
class ImportedAction:
    """An action of a row: what happened and when."""

    name: str
    increase: int
    createdAt: datetime

    @property
    def key(self) -> ActionKey:
        """What makes two actions of a contact the same one."""
        return (self.name, self.increase, as_utc(self.createdAt))


@dataclass(frozen=True)
class ImportRow:
    """A valid row: the contact's fields as sent (`email` included) and its actions."""

    number: int
    fields: dict[str, Any]
    actions: tuple[ImportedAction, ...] = ()

    @cached_property
    def key(self) -> str:
        """The email as the unique index compares it (asked several times a row: kept)."""
        return str(self.fields["email"]).lower()


@dataclass(frozen=True)
class InvalidRow:
    """A row that is no valid contact, with its problems."""

    number: int
    errors: list[dict[str, Any]]


@dataclass
class _Batch:
    """One import in its transaction: the rows seen so far and what they will write."""

    write: ListWrite
    session: Session
    list_id: str
    mode: str
    existing: dict[str, Contact]
    stored_actions: dict[str, Counter[ActionKey]]
    seen: Seen
    suppressed: set[str] = field(default_factory=set)
    created: list[tuple[dict[str, Any], ImportRow]] = field(default_factory=list)
    updated: list[tuple[str, list[str]]] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    new_actions: list[tuple[str, ImportedAction]] = field(default_factory=list)


def write(
    lw: ListWrite,
    rows: Sequence[ImportRow | InvalidRow],
    mode: str,
    announce: bool,
    seen: Seen,
    most: int | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Applies the rows of one turn to the list through its write (`list_write.py`: the
    fields stage is here, in bulk); a result per row, in order, and the (contact, audience)
    pairs moved. `seen` holds the first results of the earlier turns and gains this turn's;
    `most`: the pairs the rows may move (`store.TooManyMoves` past it)."""
    session, list_id = lw.session, lw.list_id
    existing = _existing(session, list_id, _keys(rows, seen))
    # Rows without actions can repeat none: then their contacts' actions need no read.
    with_actions = mode == UPSERT and any(isinstance(r, ImportRow) and r.actions for r in rows)
    stored = _stored_actions(session, [c.id for c in existing.values()]) if with_actions else {}
    batch = _Batch(lw, session, list_id, mode, existing, stored, seen)
    batch.suppressed = _suppressed(session, list_id, rows, existing, seen)
    results = [_take(batch, row) for row in rows]
    return results, _finish(batch, announce, most)


def lock_existing(
    session: Session, list_id: str, rows: Sequence[ImportRow | InvalidRow], seen: Seen
) -> bool:
    """Locks the rows of the list's contacts that these rows would write, in the order of
    their ids (a turn sharing its list's lock owns its contacts this way, and two such turns
    never wait for each other in a circle); whether every row found its contact, that is,
    whether the turn creates none."""
    keys = _keys(rows, seen)
    if len(keys) > CHUNK:
        return False
    statement = (
        select(Contact.id)
        .where(Contact.listId == bindparam("list_id"), _key_among(session))
        .order_by(Contact.id)
        .with_for_update(key_share=True)
    )
    found = session.scalars(statement, {"list_id": list_id, dialects.IDS: keys}).all()
    return len(found) == len(keys)


def _suppressed(
    session: Session,
    list_id: str,
    rows: Sequence[ImportRow | InvalidRow],
    existing: dict[str, Contact],
    seen: Seen,
) -> set[str]:
    """The e-mail keys of rows that would create a contact the list suppresses."""
    new = [key for key in _keys(rows, seen) if key not in existing]
    return suppression.suppressed(session, list_id, new) if new else set()


def _keys(rows: Sequence[ImportRow | InvalidRow], seen: Seen) -> list[str]:
    """The emails of the valid rows no earlier row of the import had, as the index has them."""
    return sorted({row.key for row in rows if isinstance(row, ImportRow) and row.key not in seen})


def weight(row: ImportRow | InvalidRow, judging: float) -> float:
    """What a row costs a turn before its judgement moves any pair: its contact, its actions,
    and `judging`, its judgement by the list's smart audiences
    (`membership_turns.judging_weight`)."""
    if isinstance(row, InvalidRow):
        return 1
    return 1 + len(row.actions) + judging


def counts(results: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many rows got each status (every status named, 0 included)."""
    found = Counter(result["status"] for result in results)
    return {status: found[status] for status in STATUSES}


def _existing(session: Session, list_id: str, keys: list[str]) -> dict[str, Contact]:
    """`{email key: contact}` of the list's contacts with one of these emails."""
    statement = select(Contact).where(Contact.listId == bindparam("list_id"), _key_among(session))
    keyed = session.scalars(statement, {"list_id": list_id, dialects.IDS: keys})
    return {contact.emailKey: contact for contact in keyed}


def _key_among(session: Session) -> ColumnElement[bool]:
    """`emailKey IN :ids`, the keys one bound parameter (`dialects.ids_in`): an expanding `IN`
    of a turn's 500 keys was bound, sent and parsed by the driver anew each time, a tenth of a
    bulk import's time on PostgreSQL."""
    return dialects.ids_in(Contact.emailKey, dialects.dialect_of(session))


def _stored_actions(session: Session, contact_ids: list[str]) -> dict[str, Counter[ActionKey]]:
    """The actions these contacts have, as keys per contact: what an upsert must not repeat."""
    found: dict[str, Counter[ActionKey]] = {}
    for start in range(0, len(contact_ids), CHUNK):
        statement = select(Action.subId, Action.name, Action.increase, Action.createdAt).where(
            Action.subId.in_(contact_ids[start : start + CHUNK])
        )
        for sub_id, name, increase, created_at in session.execute(statement):
            found.setdefault(sub_id, Counter())[(name, increase, as_utc(created_at))] += 1
    return found


def _take(batch: _Batch, row: ImportRow | InvalidRow) -> dict[str, Any]:
    """What one row does, and its result."""
    if isinstance(row, InvalidRow):
        return {"row": row.number, "status": "invalid", "errors": row.errors}
    first = batch.seen.get(row.key)
    if first is not None:
        return _again(row, first, batch.mode)
    contact = batch.existing.get(row.key)
    if contact is None and row.key in batch.suppressed:
        result = {"row": row.number, "status": "suppressed"}
    elif contact is not None and batch.mode == CREATE:
        result = {"row": row.number, "status": "exists", "id": contact.id}
    elif contact is None:
        result = _create(batch, row)
    else:
        result = _update(batch, row, contact)
    batch.seen[row.key] = _first(result)
    return result


def _first(result: dict[str, Any]) -> dict[str, Any]:
    """What `Seen` keeps of a row's result: its row, status and id (an invalid row has none)."""
    first = {"row": result["row"], "status": result["status"]}
    if "id" in result:
        first["id"] = result["id"]
    return first


def _again(row: ImportRow, first: dict[str, Any], mode: str) -> dict[str, Any]:
    """A row whose email an earlier row of the import has: in mode `create` a contact that
    was there before the import `exists` for every such row (it is never changed); any other
    is a `duplicate` of the first."""
    if mode == CREATE and first["status"] == "exists":
        return {"row": row.number, "status": "exists", "id": first["id"]}
    if first["status"] == "suppressed":
        return {"row": row.number, "status": "suppressed"}
    return {"row": row.number, "status": "duplicate", "sameAsRow": first["row"]}


def _create(batch: _Batch, row: ImportRow) -> dict[str, Any]:
    """A new contact's row, written with the others by `_finish`."""
    values = {**row.fields, "listId": batch.list_id, "emailKey": row.key}
    if "points" not in values and row.actions:
        values["points"] = sum(action.increase for action in row.actions)
    contact = CONTACT_ROWS.row(values)
    batch.created.append((contact, row))
    return {"row": row.number, "status": "created", "id": contact["id"]}


def _update(batch: _Batch, row: ImportRow, contact: Contact) -> dict[str, Any]:
    """An upsert of an existing contact: the fields that differ, and the actions it lacks."""
    actions = _missing_actions(row.actions, batch.stored_actions.get(contact.id, Counter()))
    values = {name: value for name, value in row.fields.items() if name != "email"}
    if "points" not in values and actions:
        values["points"] = contact.points + sum(action.increase for action in actions)
        if abs(values["points"]) > MAX_SAFE_INTEGER:
            return _points_out_of_range(row, values["points"])
    changed = [name for name, value in values.items() if not _same(getattr(contact, name), value)]
    if changed:
        batch.changes.append({"id": contact.id, **{name: values[name] for name in changed}})
    fields = sorted([*changed, *(["actions"] if actions else [])])
    batch.new_actions.extend((contact.id, action) for action in actions)
    if not fields:
        return {"row": row.number, "status": "unchanged", "id": contact.id}
    batch.updated.append((contact.id, fields))
    return {"row": row.number, "status": "updated", "id": contact.id, "fields": fields}


def _missing_actions(
    actions: Sequence[ImportedAction], stored: Counter[ActionKey]
) -> list[ImportedAction]:
    """The row's actions the contact does not have yet (as many times as the row repeats one)."""
    left = Counter(stored)
    missing = []
    for action in actions:
        if left[action.key] > 0:
            left[action.key] -= 1
        else:
            missing.append(action)
    return missing


def _same(stored: Any, sent: Any) -> bool:
    """Whether a stored value already is the sent one: instants compared in UTC, the rest as
    JSON (so `1`, `1.0` and `true` in `data` stay different values, as a filter sees them)."""
    if isinstance(stored, datetime) and isinstance(sent, datetime):
        return as_utc(stored) == as_utc(sent)
    return json_text(stored) == json_text(sent)


def _points_out_of_range(row: ImportRow, points: int) -> dict[str, Any]:
    problem = {
        "pointer": "/actions",
        "detail": f"expected {POINTS_RANGE}, found a balance of {points}",
        "expected": POINTS_RANGE,
        "found": f"a balance of {points}",
    }
    return {"row": row.number, "status": "invalid", "errors": [problem]}


def _finish(batch: _Batch, announce: bool, most: int | None) -> int:
    """The fields stage of the list's write: the updates, the new contacts, their actions;
    then the write's effects, judgement and store (`ListWrite.finish`); the pairs moved."""
    _update_contacts(batch.session, batch.changes)
    insert_rows(batch.session, CONTACT_ROWS.table, [contact for contact, _ in batch.created])
    for contact, row in batch.created:
        batch.new_actions.extend((contact["id"], action) for action in row.actions)
    _insert_actions(batch.session, batch.new_actions)
    created = [(contact["id"], contact["email"]) for contact, _ in batch.created]
    batch.write.wrote(created, batch.updated)
    cause = events.CAUSE_CONTACT_IMPORTED
    return batch.write.finish(cause, announce=announce, most=most)


def _update_contacts(session: Session, changes: list[dict[str, Any]]) -> None:
    """The changed fields of the updated contacts, by primary key, one statement per set of
    fields changed (`update_by_id`): the rows sorted so that alike ones are together, since
    the ORM flush sent one `UPDATE` a contact whenever two contacts in a row changed different
    fields."""
    if changes:
        changes.sort(key=lambda change: sorted(change))
        update_by_id(session, CONTACT_ROWS, changes)


def _insert_actions(session: Session, actions: Sequence[tuple[str, ImportedAction]]) -> None:
    """By column name (`db/bulk.py`): thousands of actions cost no ORM object each."""
    now = clock.now()
    rows = [
        {
            "id": new_id("act"),
            "sub_id": contact_id,
            "name": action.name,
            "increase": action.increase,
            "created_at": action.createdAt,
            "updated_at": now,
        }
        for contact_id, action in actions
    ]
    insert_rows(session, ACTIONS, rows)
