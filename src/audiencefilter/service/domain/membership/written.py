"""What one contact's write read back with its `UPDATE ... RETURNING`, kept for its transaction.

A single contact update (`PATCH /v4/contacts/{id}`) needs, after its write: the contact's row
(judged by the list's audiences, then answered), the list's audiences stamp (which plan judges
it), its stored memberships (compared with the judgement, then answered) and its position. Read
apart, those were five statements besides the write; `write_contact` asks for them all in the
write's own `RETURNING`, and the readers (`records.rows`, `store._stored_pairs`,
`ListAudiences.of_rows`, `ContactPages.one`) take them from here while the transaction lasts. The
write holds the list's lock, so what it read stays true until it changes it itself: the stored
memberships follow the judgement's moves (`moved`). A turn of PATCHes written together
(`use_cases/contacts.py`, one contact once a turn) keeps one such read per contact, and the
readers of several contacts take theirs from here when every one was written (`all_of`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, bindparam, func, literal_column, select, update
from sqlalchemy.orm import Session, aliased

from ...db import dialects, driver_path, prepared_cache
from ...db.models import Contact, List, Membership
from ...db.queries import CONTACT_COLUMNS, ranked_beyond, row_dicts
from . import plan

_KEPT = "written_contact"


@dataclass
class Written:
    """One contact as its write left it: its row (`db.queries.fetch_rows`' shape), the list's
    audiences stamp, the ids of the audiences it is stored in, and how many contacts of its
    list rank ahead of it."""

    row: dict[str, Any]
    stamp: str
    stored: set[str]
    ahead: int


def write_contact(session: Session, contact_id: str, values: Mapping[str, Any]) -> Written | None:
    """Writes these fields of the contact and reads back what its judgement and its answer
    need, in one statement; None if the contact is gone. Call it under the list's lock."""
    statement = _setting(dialects.dialect_of(session), tuple(values))
    parameters = {_SET + field: value for field, value in values.items()}
    parameters["written_id"] = contact_id
    result = driver_path.run(session, statement, parameters)
    keys = result.keys
    found = result.first()
    if found is None:
        return None
    row = row_dicts(keys[:-3], [found[:-3]])[0]
    stamp, joined, ahead = found[-3:]
    written = Written(row, stamp or "", set(joined.split(",")) if joined else set(), int(ahead))
    _kept(session)[contact_id] = written
    plan.keep_stamp(session, row["listId"], written.stamp)
    return written


def of(session: Session, contact_id: str) -> Written | None:
    """What the transaction's write of this contact read back, if it wrote it so."""
    kept: dict[str, Written] | None = session.info.get(_KEPT)
    return None if kept is None else kept.get(contact_id)


def keeps(session: Session) -> bool:
    """Whether the transaction kept any contact's write (else `moved` has nothing to follow)."""
    return bool(session.info.get(_KEPT))


def all_of(session: Session, contact_ids: Iterable[str]) -> list[Written] | None:
    """`of` each of `contact_ids`, in their order, when every one was written so; else None."""
    kept: dict[str, Written] | None = session.info.get(_KEPT)
    if not kept:
        return None
    found = [kept.get(contact_id) for contact_id in contact_ids]
    return None if not found or None in found else [w for w in found if w is not None]


def only(session: Session, contact_ids: Iterable[str]) -> Written | None:
    """`of` the one contact of `contact_ids`, when there is exactly one."""
    ids = list(contact_ids)
    return of(session, ids[0]) if len(ids) == 1 else None


def moved(session: Session, contact_id: str, entered: Iterable[str], left: Iterable[str]) -> None:
    """The contact's stored memberships after its judgement entered and left these audiences."""
    written = of(session, contact_id)
    if written is not None:
        written.stored.difference_update(left)
        written.stored.update(entered)


def forget(session: Session) -> None:
    """Forgets the kept writes (anything else may have changed the contacts since)."""
    session.info.pop(_KEPT, None)


def _kept(session: Session) -> dict[str, Written]:
    found: dict[str, Written] = session.info.setdefault(_KEPT, {})
    return found


_SET = "set_"


@lru_cache(maxsize=256)
def _setting(dialect: str, fields: tuple[str, ...]) -> Any:
    """`_statement` setting these fields from parameters named `set_<field>`, built once per
    dialect and fields: a statement made again each write had its cache key computed again, a
    few hundred microseconds of every update."""
    columns = Contact.__mapper__.columns
    return _statement(dialect).values(
        {columns[f]: bindparam(_SET + f, type_=columns[f].type) for f in fields}
    )


@dialects.per_dialect
def _statement(dialect: str) -> Any:
    """`UPDATE contacts ... RETURNING` the row, the list's stamp, the stored memberships
    (joined by commas) and the contacts ranked ahead (`ranking.py`'s order: points, more first,
    then sign-up time, then id), built once per dialect; its values are set per call."""
    # The written row's columns, qualified by hand: SQLite's RETURNING renders columns bare,
    # and a bare name in a subquery is the subquery's own table's.
    mine: dict[str, ColumnElement[Any]] = {
        name: literal_column(f"contacts.{name}") for name in ("id", "list_id", "points")
    }
    stamp = select(List.audiencesStamp).where(List.id == mine["list_id"]).scalar_subquery()
    joined = dialects.joined_text(Membership.audienceId, dialect)
    stored = select(joined).where(Membership.contactId == mine["id"]).scalar_subquery()
    ahead = _ahead(dialect, mine, literal_column("contacts.created_at"))
    return prepared_cache.planned_once(  # found by the contact's primary key
        update(CONTACTS)
        .where(CONTACTS.c.id == bindparam("written_id"))
        .returning(*CONTACT_COLUMNS, stamp, stored, ahead)
    )


def _ahead(dialect: str, mine: dict[str, ColumnElement[Any]], created: ColumnElement[Any]) -> Any:
    """The contacts ranked ahead of the written one. The histogram and the contacts are read
    both before this row's write (PostgreSQL: the statement's snapshot) or both after it
    (SQLite: its trigger runs before the row changes, migration 0016): the contact is taken out
    of the histogram's count with its points as the contacts read them, as the tied count
    leaves it out by its id."""
    other = aliased(Contact)
    mine_id, list_id, points = mine["id"], mine["list_id"], mine["points"]
    itself = select(func.count()).select_from(other)
    itself = itself.where(other.id == mine_id, other.listId == list_id, other.points > points)
    beyond = ranked_beyond(dialect, list_id, points, created, True, other.id < mine_id, other)
    return beyond - itself.scalar_subquery()


CONTACTS = cast(Table, Contact.__table__)
