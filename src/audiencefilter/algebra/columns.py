"""Declared fields kept inside JSON, decided as the columns they stand for.

A schema may declare a typed field inside a JSON column (`lifetimeValue` at
`data.lifetimeValue`, a number): a service's custom fields are all such fields. Lowered, a
condition on one reads the JSON column at a path, which the decision procedure treats as
opaque (`decide.py`): `lifetimeValue > 5000 and lifetimeValue < 100` would stay undecided
where `points > 5000 and points < 100` is proved empty. Here such a condition is read as one
on a column of the declared type named like the field, so the representatives of that type
decide it; a witness found that way is written back into the JSON column
(`{"data": {"lifetimeValue": 6000}}`) before the filters check it, so a witness is still
only ever one the in-memory back-end accepts.

Decided so for strings, numbers and booleans, whose conditions at a path read as a column's
do. The premise is the one the declaration states: the value at the path is of the declared
type, or null or missing (a service's custom fields are checked on every write). Dates
(compared as their ISO text) and lists inside JSON stay opaque.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from ..language.fields import Field, FieldType, Schema
from ..language.nodes import And, Blank, Comparison, IsNull, ListTest, Node, Not, Or

COLUMN_TYPES = frozenset({FieldType.STRING, FieldType.NUMBER, FieldType.BOOLEAN})
"""The declared types whose conditions at a JSON path read as a column's of that type."""


@dataclass(frozen=True)
class Columns:
    """The schema the algebra decides over, and the declared fields it reads as columns:
    `(JSON column, path)` to the field's name."""

    schema: Schema
    declared: Mapping[tuple[str, tuple[str, ...]], str]

    def tree(self, node: Node) -> Node:
        """`node` (lowered) with each condition on a declared field read from its column."""
        if not self.declared:
            return node
        if isinstance(node, And | Or):
            return type(node)(tuple(self.tree(item) for item in node.items))
        if isinstance(node, Not):
            return Not(self.tree(node.item))
        if not isinstance(node, Comparison | IsNull | ListTest | Blank):
            return node
        name = self.declared.get((node.field, node.path))
        return node if name is None else replace(node, field=name, path=())

    def stored(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """A record of the columns schema written as the filters read it: each declared
        field's value moved to its path in the JSON column (a null one left out)."""
        found = dict(record)
        for (column, path), name in self.declared.items():
            if name not in found:
                continue
            value = found.pop(name)
            if value is not None:
                found[column] = _placed(found.get(column), path, value)
        return found

    def target(self, target: Callable[[Mapping[str, Any]], bool]) -> Callable[..., bool]:
        """`target` asked of records of the columns schema."""
        return lambda record: target(self.stored(record))


def _placed(document: Any, path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """`document` (a JSON object, or None) with `value` at `path`."""
    placed = dict(document) if isinstance(document, dict) else {}
    head, *rest = path
    placed[head] = _placed(placed.get(head), tuple(rest), value) if rest else value
    return placed


@lru_cache(maxsize=256)
def columns_of(schema: Schema) -> Columns:
    """The declared fields of `schema` inside JSON that are decided as columns, and the
    schema where they are; one per schema, so the decisions over it share their state."""
    declared = {
        (field.source[0], field.source[1:]): field.name
        for field in schema.fields
        if len(field.source) > 1 and field.type in COLUMN_TYPES
    }
    if not declared:
        return Columns(schema, {})
    fields = tuple(
        Field(field.name, field.type) if field.name in declared.values() else field
        for field in schema.fields
    )
    return Columns(replace(schema, fields=fields), declared)
