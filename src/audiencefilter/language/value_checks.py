"""Whether a stored value can be a field's value: the one check behind the CLI's bad-row report
and the service's validation of custom fields on every write.

A filter never raises for a missing value; it raises a `RecordError` for a present value of the
wrong type (a string in `points`). Applications that store records check them before writing, so
the error reaches the person who sent the value rather than the next reader of the record.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .fields import FieldType
from .values import is_number, record_date, record_datetime


def value_problem(kind: FieldType, value: object) -> str | None:
    """Why `value` cannot be held by a field of type `kind` ("expected a number, found
    \\"12\\""), or None when it can. `None` is always allowed: it means "missing"; a list's
    items may be null for the same reason."""
    if value is None or _holds(kind, value):
        return None
    return f"expected {expected_of(kind)}, found {shown(value)}"


def expected_of(kind: FieldType) -> str:
    """How messages name the values a field of type `kind` holds."""
    element = kind.element
    if element is None:
        return kind.entry.record_noun
    return f"a list of {element.entry.record_nouns}"


def shown(value: object) -> str:
    """A value as JSON, cut to fit a message."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _holds(kind: FieldType, value: object) -> bool:
    element = kind.element
    if element is None:
        return _TESTS[kind](value)
    test = _TESTS[element]
    return isinstance(value, list) and all(v is None or test(v) for v in value)


def _reads(read: Callable[[object], object]) -> Callable[[object], bool]:
    def test(value: object) -> bool:
        try:
            read(value)
        except (TypeError, ValueError):
            return False
        return True

    return test


_TESTS: dict[FieldType, Callable[[Any], bool]] = {
    FieldType.STRING: lambda v: isinstance(v, str),
    FieldType.NUMBER: is_number,
    FieldType.BOOLEAN: lambda v: isinstance(v, bool),
    FieldType.DATETIME: _reads(record_datetime),
    FieldType.DATE: _reads(record_date),
    # A JSON document holds any value: a path into it that finds no object is missing, never
    # an error, so a JSON field cannot hold a wrong-typed value.
    FieldType.JSON: lambda v: True,
}
