"""Request validation problems in the words of the filter errors: where, expected, found, advice.

pydantic reports a failed request in its own terms ("String should match pattern '^[^@...'",
"Input should be a valid dictionary or object to extract fields from", "Extra inputs are not
permitted"). This module turns each of its errors into a `Problem`: what was expected, said for a
person ("an email address such as ann@example.com"), what was found ("the string "nope""), and a
suggestion where one helps: the nearest known field for an unknown one (`did you mean
"email"?`), the nearest allowed value for a misspelt choice. `http/errors.py` puts them in a
request's error body, where a pointer says where; the domain, which reads an import's rows
itself (`domain/import_rows.py`), puts them in a row's result: so this module stands on the
ground floor, below both.

Unknown error types still read well: pydantic's own sentence is kept as what was expected, with
what was found added. Patterns are named here once, by the types that use them (`fields.py`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .fields import (
    FIELD_KEY_RULE,
    LABEL,
    NO_NUL,
    ONE_LINE,
    PARAGRAPHS,
    Color,
    Email,
    FieldKey,
    Slug,
)

_SHOWN = 40
REFUSED_CHOICE = "refused_choice"
"""The error type of a value refused with its reason: `ctx` holds `expected` and `reason`."""
_PATTERNS: dict[str, str] = {}


def _pattern_of(annotated: Any) -> str:
    for constraint in getattr(annotated, "__metadata__", ()):
        pattern = getattr(constraint, "pattern", None)
        if pattern:
            return str(pattern)
    raise LookupError(f"{annotated!r} declares no pattern")


_PATTERNS.update(
    {
        _pattern_of(Email): "an email address such as ann@example.com",
        _pattern_of(Color): "a colour as #rrggbb, such as #3355ff",
        _pattern_of(Slug): "1 to 64 lowercase letters, digits and hyphens (a-z, 0-9, -), "
        "not starting with a hyphen",
        _pattern_of(FieldKey): FIELD_KEY_RULE,
        NO_NUL: "text without NUL characters",
        ONE_LINE: "text without control characters (U+0000-U+001F, U+007F-U+009F)",
        LABEL: "text of one line, not only spaces, without control characters",
        PARAGRAPHS: "text without control characters (U+0000-U+001F, U+007F-U+009F) but tab "
        "and line breaks",
    }
)

SYNONYMS = {"contactId": "subId", "contact_id": "subId", "contactID": "subId"}
"""Names other APIs give a field this one spells differently (an action's contact is its
`subId`): suggested when the object has that field, however far the spellings are apart."""
_TYPES = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "a JSON object",
    "model_type": "a JSON object",
    "model_attributes_type": "a JSON object",
    "list_type": "an array",
    "missing": "a value: the field is required",
}
_BOUNDS = {
    "greater_than_equal": ("a number >= {ge}", "ge"),
    "greater_than": ("a number > {gt}", "gt"),
    "less_than_equal": ("a number <= {le}", "le"),
    "less_than": ("a number < {lt}", "lt"),
    "string_too_short": ("at least {min_length} characters", "min_length"),
    "string_too_long": ("at most {max_length} characters", "max_length"),
    "too_short": ("at least {min_length} items", "min_length"),
    "too_long": ("at most {max_length} items", "max_length"),
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One validation problem: what was expected, what was found, and advice when there is some."""

    expected: str
    found: str
    suggestion: str | None = None

    @property
    def detail(self) -> str:
        text = f"expected {self.expected}, found {self.found}"
        return f"{text}; {self.suggestion}" if self.suggestion else text


def found(value: Any) -> str:
    """A value described as the filter errors describe it: `the string "x"`, `the number 3`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= _SHOWN else value[: _SHOWN - 3] + "..."
        return f"the string {json.dumps(shown, ensure_ascii=not _encodable(shown))}"
    if isinstance(value, list | tuple):
        return f"an array of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, bytes):  # FastAPI hands over a body it did not read as JSON
        return "a body that is not JSON (is its Content-Type application/json?)"
    return type(value).__name__


def _encodable(text: str) -> bool:
    """Whether text holds no lone surrogate (from a `\ud800` escape in a CSV import's JSON
    cell): such text is shown escaped, since no answer holding it raw could be encoded."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _choices(expected: str) -> list[str]:
    return re.findall(r"'((?:[^'\\]|\\.)*)'", expected)


def describe(error: Mapping[str, Any], known_fields: Iterable[str] = ()) -> Problem:
    """The `Problem` for one pydantic error; `known_fields` are the fields of the object the
    error is in (for an unknown field's suggestion)."""
    kind = str(error.get("type", ""))
    context: Mapping[str, Any] = error.get("ctx") or {}
    value = error.get("input")
    location = tuple(error.get("loc", ()))
    if kind == "extra_forbidden":
        name = str(location[-1]) if location else "?"
        known = sorted(known_fields)
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        if SYNONYMS.get(name) in known:
            close = [SYNONYMS[name]]
        if close:
            suggestion = f'did you mean "{close[0]}"?'
        elif known:
            suggestion = "known fields: " + ", ".join(known)
        else:
            suggestion = None
        return Problem("one of the known fields", f'the unknown field "{name}"', suggestion)
    if kind == REFUSED_CHOICE:  # a value some would expect, refused with the reason
        return Problem(str(context.get("expected")), found(value), str(context.get("reason")))
    if kind == "missing":
        return Problem(_TYPES[kind], "nothing")
    if kind == "string_pattern_mismatch":
        pattern = str(context.get("pattern", ""))
        expected = _PATTERNS.get(pattern, f"text matching {pattern}")
        return Problem(expected, found(value))
    if kind == "literal_error":
        options = _choices(str(context.get("expected", "")))
        expected = "one of " + ", ".join(f'"{option}"' for option in options)
        close = difflib.get_close_matches(str(value), options, n=1, cutoff=0.6)
        return Problem(expected, found(value), f'did you mean "{close[0]}"?' if close else None)
    if kind in _BOUNDS:
        template, key = _BOUNDS[kind]
        shown = found(value)
        if kind.startswith("string_too") and isinstance(value, str):
            shown = f"{len(value)} characters"
        elif kind in ("too_short", "too_long") and isinstance(value, list | tuple):
            shown = f"{len(value)} items"
        return Problem(template.format(**{key: context.get(key, "?")}), shown)
    if kind in _TYPES:
        return Problem(_TYPES[kind], found(value))
    message = str(error.get("msg", "a valid value"))
    message = message.removeprefix("Value error, ")
    if kind == "value_error":  # our validators say what the value must be: "must be finite"
        return Problem(
            f"a value that {message}" if message.startswith("must") else message, found(value)
        )
    return Problem(message[:1].lower() + message[1:], found(value))
