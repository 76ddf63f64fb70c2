"""Audiences named by name in a filter, resolved to their ids: `audiences some (name = "VIP")`
reads as `audiences some (id = "aud_...")`.

A stored smart filter must name the audiences it reads by id (`references.py`), which made
people copy ids into the text box. So where a filter is read from a request (a preview, a
creation, an update alike: `by_id`), each `audiences` condition's `name = "..."` and
`name in (...)` becomes the id of the list's audience of that name, before anything else
reads the filter: a preview counts what creating the audience would store, and the stored
filter keeps the id, so renaming the audience later changes nothing it selects.

A name no audience of the list has is refused, as is a name two or more of them have (the
candidates' ids in the refusal, to write instead). `ignoring case` matches names case-folded.
Other tests of a name (`name contains "VIP"`, `name != "VIP"`) are left as written: a preview
reads them live, and a stored filter refuses them as unbounded (`references.check`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.orm import Session

from ... import Aggregated, And, Comparison, Filter, Node, Not, Or, Quantified
from ..db.models import Audience
from ..ground.errors import AudienceRuleError
from .audience_filters import FilterInput, read_filters
from .relations import AUDIENCES

UNKNOWN_NAME = "Filters name an audience that is not an audience of this list"
AMBIGUOUS_NAME = "Filters name an audience by a name several audiences of this list have"
Names = Mapping[str, tuple[str, ...]]
"""A list's audience names, each with the ids of the audiences that have it, in id order."""


def by_id(
    session: Session, list_id: str, given: FilterInput, reading: tuple[Mapping[str, str], str]
) -> FilterInput:
    """`given` with the audiences its `audiences` conditions name by name named by id, read
    again as the request's filter would be (`reading`: the list's custom fields and zone);
    `given` itself when it names none. Raises AudienceRuleError for an unknown or ambiguous
    name."""
    flt = given.filter
    if flt is None or not names_audiences(flt):
        return given
    names = _names(session, list_id)
    root = _resolved(flt.root, names, inside=False)
    declared, zone = reading
    return read_filters(Filter(root, flt.schema).to_json(), None, declared, "json", zone=zone)


def names_audiences(flt: Filter | None) -> bool:
    """Whether the filter names an audience by name (`by_id` has something to resolve)."""
    return flt is not None and bool(_names_in(flt.root))


def _names(session: Session, list_id: str) -> Names:
    statement = select(Audience.name, Audience.id).where(Audience.listId == list_id)
    found: dict[str, list[str]] = {}
    for name, id_ in session.execute(statement.order_by(Audience.id)):
        found.setdefault(name, []).append(id_)
    return {name: tuple(ids) for name, ids in found.items()}


def _is_name(node: Node) -> bool:
    """A test of an audience's name that bounds it: `name = "..."` or `name in (...)`."""
    return (
        isinstance(node, Comparison)
        and node.field == "name"
        and not node.path
        and node.only_at is not None
    )


def _names_in(node: Node, inside: bool = False) -> list[Node]:
    """The name tests of the tree's `audiences` conditions."""
    if isinstance(node, Quantified | Aggregated):
        return _names_in(node.where, True) if node.relation == AUDIENCES else []
    if isinstance(node, And | Or):
        return [found for item in node.items for found in _names_in(item, inside)]
    if isinstance(node, Not):
        return _names_in(node.item, inside)
    return [node] if inside and _is_name(node) else []


def _resolved(node: Node, names: Names, inside: bool) -> Node:
    """The tree with each name test of an `audiences` condition an id test."""
    if isinstance(node, Quantified | Aggregated):
        if node.relation != AUDIENCES:
            return node
        return replace(node, where=_resolved(node.where, names, True))
    if isinstance(node, And | Or):
        return replace(node, items=tuple(_resolved(item, names, inside) for item in node.items))
    if isinstance(node, Not):
        return replace(node, item=_resolved(node.item, names, inside))
    if inside and isinstance(node, Comparison) and _is_name(node):
        wanted = node.only_at or ()
        ids = tuple(_id_of(str(name), names, node.insensitive) for name in wanted)
        value = ids if isinstance(node.value, tuple) else ids[0]
        return Comparison("id", node.op, value)
    return node


def _id_of(name: str, names: Names, insensitive: bool) -> str:
    """The id of the list's one audience called `name` (refused when none or several are)."""
    if insensitive:
        folded = name.casefold()
        ids = tuple(i for n, found in names.items() if n.casefold() == folded for i in found)
    else:
        ids = names.get(name, ())
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise AudienceRuleError(
            f'{UNKNOWN_NAME}: "{name}"',
            [_detail(f'no audience of the list is called "{name}"', "name one the list has")],
        )
    listed = ", ".join(ids)
    raise AudienceRuleError(
        f'{AMBIGUOUS_NAME}: "{name}" is the name of {listed}',
        [
            _detail(
                f'"{name}" names {len(ids)} audiences: {listed}', f'name one by id: id = "{ids[0]}"'
            )
        ],
    )


def _detail(message: str, suggestion: str) -> dict[str, str]:
    return {"path": AUDIENCES, "message": message, "suggestion": suggestion}
