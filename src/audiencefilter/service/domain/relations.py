"""The contact schema's relations as the service stores them: `actions` and `audiences`.

The library reads a relation condition over related rows: in SQL from a table correlated with
the contact, in memory from a list of mappings under the relation's key. This module is the one
place that says where the service keeps them:

- `actions`: the `actions` table itself (foreign key `sub_id`, `created_at`), given to
  `Filter.to_sqlalchemy` as a Core table since the ORM defines no relationships.
- `audiences`: the audiences a contact is in, read from the stored membership (`memberships`
  joined with `audiences`: manual members are copied there, so they count as related rows).

In memory (`related_rows`) the same rows are loaded for the contacts being refreshed, only for
the relations the filters at hand use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, bindparam, select
from sqlalchemy.dialects import registry
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import FromClause

from ... import Filter, as_utc
from ..db import dialects
from ..db.by_ids import ByIds
from ..db.models import Action, Audience, Contact, Membership

ACTIONS = "actions"
AUDIENCES = "audiences"
RELATIONS = frozenset({ACTIONS, AUDIENCES})
CHUNK = 500


def _contact_audiences() -> FromClause:
    """`contact_audiences(contact_id, id, name, mode)`: one row per stored membership."""
    return (
        select(
            Membership.contactId.label("contact_id"),
            Audience.id.label("id"),
            Audience.name.label("name"),
            Audience.mode.label("mode"),
        )
        .join(Audience, Audience.id == Membership.audienceId)
        .subquery("contact_audiences")
    )


_TABLES: dict[str, FromClause] = {
    ACTIONS: cast(Table, Action.__table__),
    AUDIENCES: _contact_audiences(),
}


def uses(flt: Filter | None) -> frozenset[str]:
    """The relations a filter reads."""
    if flt is None:
        return frozenset()
    return RELATIONS & flt.fields


def decided_in_sql(flt: Filter | None) -> bool:
    """Whether a write decides this filter in SQL on the contacts it wrote: one over a
    contact's actions (and not over its audiences, which a refresh changes as it goes). The
    database counts, sums or finds their actions, and none of the rows is loaded, however
    long a contact's history."""
    used = uses(flt)
    return ACTIONS in used and AUDIENCES not in used


def action_instants(
    session: Session, contact_ids: Sequence[str], since: datetime
) -> dict[str, list[datetime]]:
    """The `createdAt` of the contacts' actions from `since` on: the date-times a duration of
    a filter decided in SQL has yet to meet (older ones are out of its reach for good)."""
    found: dict[str, list[datetime]] = {}
    for start in range(0, len(contact_ids), CHUNK):
        chunk = list(contact_ids[start : start + CHUNK])
        statement, values = _RECENT_ACTIONS.bound(chunk, {"recent_since": since})
        for contact_id, created in session.connection().execute(statement, values):
            found.setdefault(contact_id, []).append(as_utc(created))
    return found


_RECENT_ACTIONS = ByIds(
    lambda contacts: select(Action.subId, Action.createdAt).where(
        contacts, Action.createdAt >= bindparam("recent_since", type_=Action.createdAt.type)
    ),
    Action.subId,
    "recent_contacts",
)
"""`action_instants`' statement, built once (every action written runs it)."""


def condition(flt: Filter, now: datetime) -> ColumnElement[bool]:
    """The filter as a condition on `contacts`, relation conditions over the service's tables."""
    return flt.to_sqlalchemy(Contact, now=now, relations=_TABLES)


STORED_IN = tuple(registry.load(name)() for name in dialects.STORES)
"""The databases the service stores a list in (`dialects.STORES`), as SQLAlchemy compiles for
them."""


def check_answerable(flt: Filter, now: datetime) -> None:
    """Raise the library's `FilterError` where a database the service stores lists in would
    refuse `flt` when its condition is compiled (a literal holding NUL at a custom field's
    path on SQLite, whose JSON functions end a string there; an integer no double holds in an
    equality with a JSON number): decided when the filter is read, before anything is stored
    or asked, and the same on either database, so a filter one deployment keeps another can
    answer. Before, such a filter reached the statement's compilation and failed the request
    with a 500."""
    expression = condition(flt, now)
    for dialect in STORED_IN:
        expression.compile(dialect=dialect)


def bound_condition(flt: Filter, now: datetime) -> ColumnElement[bool]:
    """`condition` with its durations as named parameters (`Filter.sqlalchemy_parameters`):
    the same expression object from one write to the next, so statements over it are built,
    keyed and compiled once. Calendar values are taken at `now`."""
    return flt.to_sqlalchemy(Contact, now=now, relations=_TABLES, bind_durations=True)


def related_rows(
    session: Session, contact_ids: Sequence[str], relations: Iterable[str]
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """`{relation: {contact id: related rows}}` for these contacts, as the library's in-memory
    back-end reads them (a missing contact has none)."""
    wanted = set(relations)
    found: dict[str, dict[str, list[dict[str, Any]]]] = {name: {} for name in wanted}
    for start in range(0, len(contact_ids), CHUNK):
        chunk = contact_ids[start : start + CHUNK]
        if ACTIONS in wanted:
            actions = select(
                Action.subId, Action.id, Action.name, Action.increase, Action.createdAt
            ).where(Action.subId.in_(chunk))
            rows = found[ACTIONS]
            for contact_id, id_, name, increase, created in session.execute(actions):
                if created.tzinfo is None:  # SQLite hands back naive UTC
                    created = created.replace(tzinfo=UTC)
                rows.setdefault(contact_id, []).append(
                    {"id": id_, "name": name, "increase": increase, "createdAt": created}
                )
        if AUDIENCES in wanted:
            audiences = (
                select(Membership.contactId, Audience.id, Audience.name, Audience.mode)
                .join(Audience, Audience.id == Membership.audienceId)
                .where(Membership.contactId.in_(chunk))
            )
            rows = found[AUDIENCES]
            for contact_id, id_, name, mode in session.execute(audiences):
                rows.setdefault(contact_id, []).append({"id": id_, "name": name, "mode": mode})
    return found


def attach(
    records: Sequence[dict[str, Any]], related: Mapping[str, Mapping[str, list[dict[str, Any]]]]
) -> None:
    """Puts each contact's related rows under the relation's key of its record."""
    for record in records:
        for name, by_contact in related.items():
            record[name] = by_contact.get(record["id"], [])
