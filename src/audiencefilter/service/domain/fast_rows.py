"""The fields of an import's row of the ordinary shapes, read without pydantic.

At 100,000 rows pydantic's reading of `ContactImportRow` took an eighth of the import: a row of
the shapes an export writes (known fields of plain types, an email, no `actions`) is read here
field by field, each with the bound and pattern pydantic checks, taken from the model's own JSON
schema, so a bound changed in `ground/fields.py` changes both readers. Anything unsure is left to
pydantic (`import_rows.py`), which also words the problems. `import_rows.FAST_ROWS` and this
module's `FAST_READERS` switch the shortcuts off, for the differential tests
(tests/service/test_import_fast_rows.py, tests/service/test_import_fast_readers.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..ground.bodies import ContactImportRow
from ..ground.fields import NO_NUL, ONE_LINE, check_data, check_text, normalise_email, past_instant


class _NotFast(Exception):
    """A value the fast reader leaves to pydantic."""


Reader = Callable[[Any], Any]


_SCHEMA = ContactImportRow.model_json_schema()["properties"]
"""The row's fields as pydantic checks them: the fast readers take their bounds and patterns
from here, so a bound changed in `ground/fields.py` changes both readers."""


def _string(key: str) -> dict[str, Any]:
    """The string schema of field `key` (of its `anyOf` when it may be null)."""
    schema: dict[str, Any] = _SCHEMA[key]
    return next((s for s in schema.get("anyOf", [schema]) if s.get("type") == "string"), schema)


FAST_READERS = True
"""Whether ASCII text is judged by `_ASCII_RULES` and taken as it is, rather than by the
pattern and `check_text` (whose NUL and surrogate checks ASCII text passes by construction), and
a row's readers are found by its keys' order (`_readers_of`). False reads every row the plain
way (what tests/service/test_import_fast_readers.py compares)."""


def _no_nul(text: str) -> bool:
    return "\x00" not in text


_ASCII_RULES: dict[str, Callable[[str], bool]] = {ONE_LINE: str.isprintable, NO_NUL: _no_nul}
"""For ASCII text, a test that holds exactly when the pattern matches the whole text: ASCII's
printable characters are U+0020 to U+007E, what `ONE_LINE` leaves of it. Both patterns refuse
NUL, and ASCII holds no surrogate, so such text needs no `check_text` either."""


def _text(key: str) -> Reader:
    """A nullable text field, pydantic's bound and pattern matched whole (not `$`: a line feed)."""
    string = _string(key)
    most, compiled = string["maxLength"], re.compile(string["pattern"])
    rule = _ASCII_RULES.get(string["pattern"])

    def read(item: Any) -> Any:
        if item is None:
            return None
        if type(item) is str and len(item) <= most:
            if FAST_READERS and rule is not None and item.isascii():
                if rule(item):
                    return item
            elif compiled.fullmatch(item):
                return check_text(item)
        raise _NotFast

    return read


def _email() -> Reader:
    """The email, NFC (`normalise_email`). An ASCII address the pattern takes is returned as it
    is: the pattern refuses NUL, and ASCII holds no surrogate and is its own NFC."""
    string = _string("email")
    least, most = string["minLength"], string["maxLength"]
    compiled = re.compile(string["pattern"])

    def read(item: Any) -> str:
        if type(item) is str and least <= len(item) <= most and compiled.fullmatch(item):
            if FAST_READERS and item.isascii():
                return item
            return normalise_email(check_text(item))
        raise _NotFast

    return read


def _integer(key: str) -> Reader:
    """Points or referrals: an exact `int` within pydantic's bounds (a float or a bool is
    pydantic's to judge)."""
    least, most = _SCHEMA[key]["minimum"], _SCHEMA[key]["maximum"]

    def read(item: Any) -> int:
        if type(item) is int and least <= item <= most:
            return item
        raise _NotFast

    return read


def _flag(item: Any) -> bool:
    if type(item) is bool:
        return item
    raise _NotFast


def _data(item: Any) -> dict[str, Any]:
    if type(item) is dict and all(type(name) is str for name in item):
        return check_data(dict(item))
    raise _NotFast


def _list_id(item: Any) -> Any:
    """Compared with the import's list by `fast_fields`; left out of the fields."""
    if type(item) is str:
        return item
    raise _NotFast


_TEXTS = ("firstName", "lastName", "name", "company", "country", "city", "socialOne",
          "socialTwo", "phoneNumber", "address", "website")  # fmt: skip
_READERS: dict[str, Reader] = {
    **{key: _text(key) for key in _TEXTS},
    "data": _data,
    "points": _integer("points"),
    "referrals": _integer("referrals"),
    **dict.fromkeys(("isVerified", "unsubscribed", "isGDPR"), _flag),
    "email": _email(),
    "listId": _list_id,
    "createdAt": past_instant,
}
"""`ContactImportRow`'s fields but `actions`, in its order, each read as pydantic reads it."""
_ORDER = tuple(key for key in ContactImportRow.model_fields if key in _READERS)
_READ_IN_ORDER = tuple((key, _READERS[key]) for key in _ORDER)
"""(field, reader) in the model's order, the readers found once rather than once a row."""


_SHAPES: dict[tuple[Any, ...], tuple[tuple[str, Reader], ...]] = {}
"""`_READ_IN_ORDER` cut to the keys of a row, by the row's keys in their order: the rows of an
export share one or a few orders, and each then costs no look-up of the keys it lacks."""
MOST_SHAPES = 256


def _readers_of(value: dict[Any, Any]) -> tuple[tuple[str, Reader], ...]:
    """The (field, reader) pairs of `_READ_IN_ORDER` whose field the row has, in that order."""
    shape = tuple(value)
    readers = _SHAPES.get(shape)
    if readers is None:
        if len(_SHAPES) >= MOST_SHAPES:  # many orders (a client's own doing): start again
            _SHAPES.clear()
        readers = _SHAPES[shape] = _present(value)
    return readers


def _present(value: dict[Any, Any]) -> tuple[tuple[str, Reader], ...]:
    return tuple((key, reader) for key, reader in _READ_IN_ORDER if key in value)


def fast_fields(value: Any, list_id: str) -> dict[str, Any] | None:
    """The fields pydantic's `ContactImportRow` gives a row of the common shapes, or None.

    Anything unsure (a float, a missing email, an unknown key, `actions`, a bad value) is None,
    and pydantic reads the row and words its errors. Fields come in the model's order, as
    `model_dump` gives them.
    """
    if type(value) is not dict or "email" not in value or value.get("listId", list_id) != list_id:
        return None
    readers = _readers_of(value) if FAST_READERS else _present(value)
    try:
        read = {key: reader(value[key]) for key, reader in readers}
    except (ValueError, _NotFast):
        return None
    if len(read) != len(value):
        return None  # an unknown key or `actions`
    read.pop("listId", None)
    return read
