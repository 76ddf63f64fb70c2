"""Field types shared by request schemas: bounded, strict, and safe for every database.

Patterns are written so that Python, Rust (pydantic-core) and ECMA-262 (JSON Schema) regex
engines read them alike: explicit code-point ranges, never the whitespace class, whose members
differ between them.
Strings refuse NUL characters and lone surrogates (PostgreSQL rejects both, and a database error
must never be how a bad value is found). Text people read (names, labels, titles, descriptions)
also refuses the other control characters (C0, DEL and C1): they show as nothing or garble a
page, a CSV or a log line; a paragraph (`LongText`) keeps tab and line breaks. Integers are
bounded so sums never overflow a BIGINT: points and referrals stay within JavaScript's safe
range, an action's increase within a billion.
Free-form `data` must be JSON that every back-end stores alike: no NUL in strings or keys
(PostgreSQL's jsonb refuses `\u0000`), integers within 64 bits (beyond, engines round them to
doubles or refuse them, and a filter's answer would depend on the engine), finite numbers,
limited nesting. Emails are NFC-normalised, so composed and decomposed `á` are one address.
"""

from __future__ import annotations

import math
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

from ... import as_utc
from . import clock

MAX_SAFE_INTEGER = 2**53 - 1
MAX_INT32 = 2**31 - 1
MAX_INCREASE = 10**9
MAX_DATA_DEPTH = 32
MIN_INT64, MAX_INT64 = -(2**63), 2**63 - 1
NO_NUL = r"^[^\x00]*$"
ONE_LINE = r"^[^\x00-\x1f\x7f-\x9f]*$"
"""Text of one line: no control character (C0, DEL, C1)."""
LABEL = r"^[^\x00-\x1f\x7f-\x9f]*[^\x00-\x20\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
"""Text of one line holding something besides spaces: a custom field's label."""
PARAGRAPHS = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$"
"""Text of paragraphs: no control character but tab, line feed and carriage return."""
# History sent by a client (a sign-up, an action) happened between these bounds: no computer
# system signed anyone up before 1970, and an exporting system's clock may run a little ahead.
EARLIEST_INSTANT = datetime(1970, 1, 1, tzinfo=UTC)
MAX_CLOCK_SKEW = timedelta(minutes=5)
INSTANT_EXAMPLE = "2019-05-01T09:30:00+02:00"
# What a list lets a public key (a sign-up form) set besides `email`, until it says otherwise.
DEFAULT_PUBLIC_FIELDS = ("firstName", "lastName", "name")


def check_text(value: str) -> str:
    """Column text: no NUL (also stated by the schema's pattern) and no lone surrogates."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return check_unicode(value)


def check_unicode(value: str) -> str:
    if value.isascii():  # no surrogate is ASCII; CPython knows this without a scan
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode (no lone surrogates)") from None
    return value


def _check_json(value: Any, depth: int) -> None:
    if depth > MAX_DATA_DEPTH:
        raise ValueError(f"must not nest deeper than {MAX_DATA_DEPTH} levels")
    if isinstance(value, str):
        _check_data_text(value)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not MIN_INT64 <= value <= MAX_INT64:
            raise ValueError("integers must fit in 64 bits (-2^63 to 2^63-1)")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("numbers must be finite")
    elif isinstance(value, list):
        for item in value:
            _check_json(item, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_data_text(key)
            _check_json(item, depth + 1)
    else:
        raise ValueError("must be JSON")


def _check_data_text(value: str) -> None:
    if "\x00" in value:
        raise ValueError("strings and keys must not contain NUL characters")
    check_unicode(value)


def normalise_email(value: str) -> str:
    """NFC, so one address has one spelling before the uniqueness check and in filters."""
    return unicodedata.normalize("NFC", value)


FAST_JSON = True
"""Whether `check_data` dispatches on the exact JSON types (`_check_json_fast`): `data` is
checked for every row of an import. False checks every value through `_check_json` alone (what
the differential test in tests/service/test_fast_json_check.py compares)."""


def check_data(value: dict[str, Any]) -> dict[str, Any]:
    (_check_json_fast if FAST_JSON else _check_json)(value, 1)
    return value


def _check_json_fast(value: Any, depth: int) -> None:
    """`_check_json` for the exact types `json.loads` gives, by one look at the type; anything
    else is `_check_json`'s: both accept the same values and raise the same first error."""
    if depth > MAX_DATA_DEPTH:
        raise ValueError(f"must not nest deeper than {MAX_DATA_DEPTH} levels")
    kind = type(value)
    if kind is dict:
        _check_object_fast(value, depth)
    elif kind is str:
        _check_data_text(value)
    elif kind is list:
        for item in value:
            _check_json_fast(item, depth + 1)
    elif kind is int:
        if not MIN_INT64 <= value <= MAX_INT64:
            raise ValueError("integers must fit in 64 bits (-2^63 to 2^63-1)")
    elif kind is not bool and value is not None:
        _check_json(value, depth)


def _check_object_fast(value: dict[Any, Any], depth: int) -> None:
    """A JSON object's keys and values in their order; a text value within the depth bound is
    checked as text at once, without the dispatch (which would check nothing more)."""
    within = depth < MAX_DATA_DEPTH
    for key, item in value.items():
        _check_data_text(key)
        if within and type(item) is str:
            _check_data_text(item)
        else:
            _check_json_fast(item, depth + 1)


def past_instant(value: Any) -> datetime:
    """An instant of history from ISO 8601 text with its offset, in UTC.

    Without an offset the hour would be a guess, and a date-time filter's answer with it; an
    instant in the future would put contacts into date audiences before their time, so one is
    refused past `MAX_CLOCK_SKEW` ahead of the service's clock.
    """
    moment = _iso_instant(value)
    if moment < EARLIEST_INSTANT:
        raise ValueError("must not be before 1970-01-01T00:00:00Z")
    if moment > clock.now() + MAX_CLOCK_SKEW:
        minutes = int(MAX_CLOCK_SKEW.total_seconds() // 60)
        raise ValueError(f"must not be in the future (more than {minutes} minutes from now)")
    return moment


def _iso_instant(value: Any) -> datetime:
    shape = f"must be an ISO 8601 date-time with its offset, such as {INSTANT_EXAMPLE}"
    if not isinstance(value, str) or len(value) > 64:
        raise ValueError(shape)
    try:
        parsed = datetime.fromisoformat(value.upper())  # RFC 3339 allows "t" and "z"
    except ValueError:
        raise ValueError(shape) from None
    if parsed.tzinfo is None:
        raise ValueError(f"must give its offset from UTC (Z, or +02:00 as in {INSTANT_EXAMPLE})")
    return as_utc(parsed)


def _integral_float(value: Any) -> Any:
    """JSON has one number type: `5.0` is the integer 5 (JSON Schema agrees); `5.5` is not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _strict_query_bool(value: Any) -> Any:
    """Query flags are `true` or `false`; pydantic would also take `yes`, `on`, `1`..."""
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        raise ValueError("must be true or false")
    return value


ShortText = Annotated[
    str, StringConstraints(max_length=255, pattern=ONE_LINE), AfterValidator(check_text)
]
Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=255, pattern=ONE_LINE),
    AfterValidator(check_text),
]
LongText = Annotated[
    str, StringConstraints(max_length=2000, pattern=PARAGRAPHS), AfterValidator(check_text)
]
Label = Annotated[
    str, StringConstraints(min_length=1, max_length=120, pattern=LABEL), AfterValidator(check_text)
]
Code = Annotated[
    str, StringConstraints(max_length=100_000, pattern=NO_NUL), AfterValidator(check_text)
]
Url = Annotated[str, StringConstraints(max_length=2048, pattern=NO_NUL), AfterValidator(check_text)]
RefId = Annotated[str, StringConstraints(max_length=64, pattern=NO_NUL), AfterValidator(check_text)]
Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=NO_NUL), AfterValidator(check_text)
]
Email = Annotated[
    str,
    StringConstraints(
        min_length=3, max_length=254, pattern=r"^[^@\x00-\x20\x7f]+@[^@\x00-\x20\x7f]+$"
    ),
    AfterValidator(check_text),
    AfterValidator(normalise_email),
]
Phone = Annotated[str, StringConstraints(max_length=64, pattern=NO_NUL), AfterValidator(check_text)]
Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")]
Color = Annotated[str, StringConstraints(pattern=r"^#[0-9A-Fa-f]{6}$")]
FIELD_KEY_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
FIELD_KEY_RULE = (
    "a key of 1 to 64 letters (A-Z, a-z), digits and underscores, starting with a letter, "
    "such as birthday or plan_2"
)
"""A custom field's key: a name the text syntax reads as a field, said in words for errors."""
FieldKey = Annotated[str, StringConstraints(pattern=FIELD_KEY_PATTERN)]
Points = Annotated[
    int, Field(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER), BeforeValidator(_integral_float)
]
Count = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER), BeforeValidator(_integral_float)]
Increase = Annotated[
    int, Field(ge=-MAX_INCREASE, le=MAX_INCREASE), BeforeValidator(_integral_float)
]
StartFrom = Annotated[int, Field(ge=0, le=MAX_INT32), BeforeValidator(_integral_float)]
Data = Annotated[dict[str, Any], AfterValidator(check_data)]
QueryBool = Annotated[bool, BeforeValidator(_strict_query_bool)]
# A past instant: ISO 8601 text with an offset (`past_instant`), read as UTC.
Instant = Annotated[datetime, BeforeValidator(past_instant)]
# A filter in a query string; the library bounds it further (256 KiB) and reads it.
FilterText = Annotated[str, StringConstraints(max_length=65536)]
QueryText = Annotated[
    str, StringConstraints(max_length=255, pattern=ONE_LINE), AfterValidator(check_text)
]
