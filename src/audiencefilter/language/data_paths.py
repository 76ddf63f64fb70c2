"""Conditions on keys inside a JSON column (the contact's free-form `data` object).

A condition reaches into JSON in one of two ways, and every back-end asks this module which:
- a `Comparison`/`IsNull` with a non-empty `path` on a JSON-typed field
  (`{"data": {"path": ["plan"], "equals": "pro"}}`), typed by its literal;
- a field the schema declares with a `source` (`plan` stored at `data.plan`), typed by the
  declaration, so that `{"plan": "pro"}` works for a service that knows its custom fields.

The rules are those of the JSON types, whatever the engine: a missing key, a key holding JSON
`null` and a path through something that is not an object are null (UNKNOWN in comparisons); a
present value of another JSON type than the literal's (arrays and objects included) makes the
comparison FALSE, so its `not` is TRUE; booleans are not numbers. `truth` is that rule in
Python, the reference the memory and columnar back-ends run and the SQL back-ends are tested
against.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .fields import FieldType, Op, Schema
from .nodes import Comparison, IsNull
from .values import holds, is_number

Location = tuple[str, tuple[str, ...]]
"""The field (column) holding the JSON, and the keys from its root to the value."""


def location(schema: Schema, node: Comparison | IsNull) -> Location | None:
    """Where `node` reads inside a JSON column, or None for a plain column condition."""
    if node.path:
        return node.field, node.path
    field = schema.get(node.field)
    if field is not None and field.source:
        return field.source[0], field.source[1:]
    return None


def value_type(value: object) -> FieldType:
    """The type a literal (or a list of literals) compares as: its JSON type."""
    if isinstance(value, tuple):
        return value_type(value[0]) if value else FieldType.STRING
    if isinstance(value, bool):
        return FieldType.BOOLEAN
    if isinstance(value, str):
        return FieldType.STRING
    return FieldType.NUMBER


def json_type(value: object) -> FieldType | None:
    """The filter type of a decoded JSON value; None for null, JSON for arrays and objects."""
    if value is None:
        return None
    if isinstance(value, bool):
        return FieldType.BOOLEAN
    if isinstance(value, str):
        return FieldType.STRING
    if is_number(value):
        return FieldType.NUMBER
    return FieldType.JSON


def lookup(document: object, path: tuple[str, ...]) -> object:
    """The value at `path`; None when a key is missing or a step is not an object."""
    value = document
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def truth(node: Comparison | IsNull, document: object, path: tuple[str, ...]) -> bool | None:
    """The three-valued result of `node` on a JSON document: True, False or None (UNKNOWN)."""
    value = lookup(document, path)
    found = json_type(value)
    if isinstance(node, IsNull):
        return found is None
    if node.op in (Op.IN, Op.NOT_IN) and not node.value:
        return node.op is Op.NOT_IN
    if found is None:
        return None
    if found is not value_type(node.value):
        return False
    return compare(node, value)


def compare(node: Comparison, value: Any) -> bool:
    """`node`'s test on a present value of the literal's type."""
    return holds(node.op, value, node.value, node.insensitive)
