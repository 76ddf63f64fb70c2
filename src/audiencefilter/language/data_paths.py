"""Conditions on keys inside a JSON column (the contact's free-form `data` object).

A condition reaches into JSON in one of two ways:
- a `Comparison`/`IsNull` with a non-empty `path` on a JSON-typed field
  (`{"data": {"path": ["plan"], "equals": "pro"}}`), typed by its literal;
- a field the schema declares with a `source` (`plan` stored at `data.plan`), typed by the
  declaration, so that `{"plan": "pro"}` works for a service that knows its custom fields.
Lowering (`rewrite/lower.py`) turns the second into the first, so the back-ends only ever meet
a `path` on the column that holds the document.

The rules are those of the JSON types, whatever the engine: a missing key, a key holding JSON
`null` and a path through something that is not an object are null (UNKNOWN in comparisons); a
present value of another JSON type than the literal's (arrays and objects included) makes the
comparison FALSE, so its `not` is TRUE; booleans are not numbers. `truth` is that rule in
Python, the reference the memory and columnar back-ends run and the SQL back-ends are tested
against. Keys are strings: a document decoded from JSON has no other kind, so a Python object
given as `data` with a non-string key (`{1: "x"}`) is read as JSON stores it (`json.dumps`
writes the key `1` as `"1"`, `True` as `"true"`, `None` as `"null"`), the way the SQL engines
see it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .anniversary import MonthDays
from .fields import FieldType
from .nodes import Comparison, IsNull
from .values import holds, is_number


def value_type(value: object) -> FieldType:
    """The type a literal (or a list of literals) compares as: its JSON type."""
    if isinstance(value, tuple):
        return value_type(value[0]) if value else FieldType.STRING
    if isinstance(value, MonthDays):  # the anniversary of a date kept as text
        return FieldType.STRING
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


_MISSING = object()
_SCALAR_WORDS = frozenset({"true", "false", "null", "NaN", "Infinity"})
_NUMBER_START = frozenset("-0123456789")


def lookup(document: object, path: tuple[str, ...]) -> object:
    """The value at `path`; None when a key is missing or a step is not an object."""
    value = document
    for key in path:
        if not isinstance(value, Mapping):
            return None
        found = value.get(key, _MISSING)
        if found is _MISSING:
            found = None if plain_key(key) else _json_key_lookup(value, key)
        value = found
    return value


def plain_key(key: str) -> bool:
    """Whether a missing string `key` is simply missing: only a key spelt like a JSON scalar
    (`1`, `true`, `null`) can stand for a non-string key of a Python mapping."""
    return not (key in _SCALAR_WORDS or key[:1] in _NUMBER_START)


def _json_key_lookup(mapping: Mapping[Any, Any], key: str) -> object:
    """`mapping[key]` as JSON would find it in a mapping with non-string keys, once the string
    lookup has failed (so that common path pays nothing). Of two non-string keys with the same
    JSON spelling (`1` and `1.0` are one key in Python, `1` and `"1"` are not), the last wins,
    as when the text `json.dumps` writes is decoded; a string key wins over both."""
    found: object = None
    for name, item in mapping.items():
        if not isinstance(name, str) and _json_key(name) == key:
            found = item
    return found


def _json_key(name: object) -> str | None:
    """The key `json.dumps` writes for a non-string key, or None where it refuses one."""
    if name is None or isinstance(name, bool | int | float):
        return json.dumps(name)  # `1`, `true`, `null`, `1.5`, `NaN`, as for dict keys
    return None


def truth(node: Comparison | IsNull, document: object, path: tuple[str, ...]) -> bool | None:
    """The three-valued result of a lowered `node` on a JSON document: True, False or None
    (UNKNOWN)."""
    value = lookup(document, path)
    found = json_type(value)
    if isinstance(node, IsNull):
        return found is None
    if found is None:
        return None
    if found is not value_type(node.value):
        return False
    return compare(node, value)


def compare(node: Comparison, value: Any) -> bool:
    """A lowered `node`'s test on a present value of the literal's type."""
    return holds(node.op, value, node.value, node.insensitive)
