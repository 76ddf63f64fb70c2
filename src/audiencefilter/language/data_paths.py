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
see it. An object holding two keys JSON writes alike (`"1"` and `1`) has no one reading (its
text holds the key twice, which engines resolve differently): a path through that key raises
`RecordError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import FrameError, RecordError
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
    """The value at `path`; None when a key is missing or a step is not an object.

    Raises:
        RecordError: two keys of an object on the path are written alike in JSON
            (`ambiguity`).
    """
    value = document
    for key in path:
        if not isinstance(value, Mapping):
            return None
        found = value.get(key, _MISSING)
        if not plain_key(key):
            found = _json_key_lookup(value, key, found)
        value = None if found is _MISSING else found
    return value


def plain_key(key: str) -> bool:
    """Whether a missing string `key` is simply missing: only a key spelt like a JSON scalar
    (`1`, `true`, `null`) can stand for a non-string key of a Python mapping."""
    return not (key in _SCALAR_WORDS or key[:1] in _NUMBER_START)


def _json_key_lookup(mapping: Mapping[Any, Any], key: str, found: object) -> object:
    """`mapping[key]` as JSON would find it in a mapping that may hold non-string keys, given
    what the string lookup `found` (`_MISSING` if nothing): the item of the one key written
    `key` in JSON (`1` and `1.0` are one key in Python, `1` and `"1"` are not).

    Raises:
        RecordError: two keys are written `key` (`ambiguity`).
    """
    spelt: list[object] = [] if found is _MISSING else [key]
    for name, item in mapping.items():
        if not isinstance(name, str) and _json_key(name) == key:
            spelt.append(name)
            found = item
    if len(spelt) > 1:
        raise RecordError(ambiguity(key, spelt))
    return found


FIX_KEYS = "write the column with json.dumps of objects whose keys are strings, each once"
"""The fix a frame's refusal of a document with a key twice gives."""


def document_text(document: object, field: str) -> str:
    """The JSON text of a decoded document of field `field`, as a JSON column holds it
    (`json.dumps`): what a frame's JSON column is made of.

    Raises:
        FrameError: two keys of one of its objects are written alike (`ambiguity`), so the
            text would hold a key twice.
    """
    problem = _written_alike(document)
    if problem is not None:
        raise FrameError(f'field "{field}": a cell holds {shown(document)}: {problem}; {FIX_KEYS}')
    return json.dumps(document)


def shown(document: object, most: int = 60) -> str:
    """A cell's document as an error shows it: its `repr`, cut after `most` characters."""
    text = repr(document)
    return text if len(text) <= most else text[:most] + "..."


class KeyTwice(ValueError):
    """JSON text holding one key twice in an object (`decoded`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def decoded(text: str) -> Any:
    """`json.loads(text)`, refusing an object that holds a key twice: SQLite and DuckDB read
    such text as the first, PostgreSQL's `jsonb` and Python's `json` as the last, so it has no
    one reading.

    Raises:
        json.JSONDecodeError: `text` is no JSON.
        KeyTwice: an object of it holds a key twice.
    """
    return _ONCE_KEYED.decode(text)


def _once_keyed(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise KeyTwice(key)
            seen.add(key)
    return document


_ONCE_KEYED = json.JSONDecoder(object_pairs_hook=_once_keyed)


def _written_alike(document: object) -> str | None:
    """`ambiguity` of the first object of `document` (at any depth) holding two keys JSON
    writes alike; None if none does. Only an object with a key that is no string can."""
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if not all(isinstance(name, str) for name in item):
                spelt: dict[str, object] = {}
                for name in item:
                    text = name if isinstance(name, str) else _json_key(name)
                    if text is None:
                        continue  # a key `json.dumps` refuses: no text to hold twice
                    if text in spelt:
                        return ambiguity(text, [spelt[text], name])
                    spelt[text] = name
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def ambiguity(key: str, names: list[object]) -> str:
    """Why an object whose keys `names` are all written `key` in JSON cannot be read: its JSON
    text holds the key twice, and engines keep different ones (SQLite and DuckDB the first,
    PostgreSQL's `jsonb` and Python's `json` the last)."""
    shown = " and ".join(repr(name) for name in names)
    return (
        f"a JSON object holds the keys {shown}, all written {json.dumps(key)} in JSON, where "
        "engines keep different ones of them; give the object one key of that name"
    )


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
