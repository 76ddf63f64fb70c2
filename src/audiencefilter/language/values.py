"""Value rules shared by every reader and back-end: numbers, date-times and case folding.

Each quirk is a small named helper with the reason beside it, mirrored in docs/semantics.md.
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any

from .anniversary import is_anniversary
from .fields import TYPES, FieldType, Op
from .instants import as_utc as as_utc  # re-exported: values take instants in UTC

Scalar = str | int | float | bool | datetime | date
"""A literal a filter compares against."""


def decimal_literal(value: int | float) -> int | Decimal:
    """The exact number a number literal stands for, for a value that is exact itself (an int
    or a `Decimal` of the record, a NUMERIC/DECIMAL column): an integer is itself, a double
    with a fraction is its shortest numeral (`0.3` is 3/10, not the double's binary value
    0.299999999999999988897769753748...), a double without one the integer it holds (`1e23`
    is 99999999999999991611392, as JSON numbers read, docs/semantics.md "Numbers").

    Why the numeral: the literal was written in decimal, and an exact decimal value compares
    with it as written (`Decimal("0.3")` equals `0.3`, `Decimal("0.10")` is not `lt 0.1`), as
    PostgreSQL's, DuckDB's and ClickHouse's decimals and Django's `DecimalField` compare. A
    double value keeps comparing with the literal's double (`holds`): every double equals its
    own shortest numeral's double, so both rules agree on doubles and on integers (no
    integer lies between a fractional double and its shortest numeral).
    """
    if isinstance(value, float):
        return int(value) if value.is_integer() else Decimal(repr(value))
    return value


def decimal_literals(value: Any) -> Any:
    """`decimal_literal` of a number literal, or of each number of a tuple (an `in` list)."""
    if isinstance(value, tuple):
        return tuple(decimal_literal(v) if isinstance(v, float) else v for v in value)
    return decimal_literal(value) if isinstance(value, float) else value


def fractional(value: Any) -> bool:
    """Whether a literal (or a tuple of them) holds a double with a fraction: the only
    literals whose `decimal_literal` is not the double's own value."""
    if isinstance(value, tuple):
        return any(fractional(v) for v in value)
    return isinstance(value, float) and math.isfinite(value) and not value.is_integer()


def is_number(value: object) -> bool:
    """True for JSON numbers. Booleans are ints in Python but never numbers in a filter."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def decimal_numeral(text: str) -> float:
    """The double a decimal numeral (`0.1`, `2.5e-3`) names: the one every engine and every
    JSON reader compares with (docs/semantics.md, Numbers).

    Raises:
        InexactNumber: the numeral has more precision than a double keeps, so the double would
            move the bound it writes (`100.000000000000001` is the double `100.0`): it must be
            the double's shortest numeral (`0.1`) or its exact value.
    """
    number = float(text)
    if not math.isfinite(number):
        return number
    written = Decimal(text)
    if written == Decimal(repr(number)) or written == Decimal(number):
        return number
    raise InexactNumber(text, number)


class InexactNumber(ValueError):
    """A decimal numeral no double holds as written; its message says which double it
    would be read as, and the fix."""

    def __init__(self, text: str, number: float) -> None:
        self.text = text
        self.number = number
        shown = text if len(text) <= 40 else text[:37] + "..."
        super().__init__(
            f"the number {shown} has more precision than a double keeps: it would be read as "
            f"{number!r}, which moves the bound"
        )

    hint = (
        "write at most 17 significant digits (a double's own numeral), or an integer, which "
        "compares exactly"
    )


_KINDS: dict[type, FieldType] = {
    literal: kind for kind, entry in TYPES.items() for literal in entry.literals
}
_KINDS_IN_ORDER = tuple(_KINDS.items())  # bool before int, datetime before date


def value_key(value: object) -> object:
    """What makes two literals one literal: the type the language gives the value, and the
    value. Literals with equal keys are the same condition wherever they stand.

    Python's `==` and `hash` join literals a filter keeps apart: `True == 1`, `False == 0`,
    `True == 1.0`, `(True,) == (1,)`, and both sides hash alike. A boolean is never a number
    (a number field refuses one, a JSON `true` is no number), so a condition on `true` and
    one on `1` differ. Numbers equal by value are one number (`1`, `1.0`, `-0.0` and `0`), as
    every comparison takes them. A tuple (an `in` list, a list's literals) is the tuple of its
    items' keys; a relative value is its own type.

    Every sharing of literals goes through this key: node equality, so `Filter` equality,
    `simplify`'s duplicates, the distinct conditions of a `FilterSet` and every cache keyed by
    nodes; lowering's "each literal once"; the items of list tests.
    """
    kind = _KINDS.get(value.__class__)
    if kind is not None:
        return kind, value
    if type(value) is tuple:
        return tuple([value_key(item) for item in value])
    for known, found in _KINDS_IN_ORDER:  # a subclass: its base's kind
        if isinstance(value, known):
            return found, value
    return value.__class__, value


def same_value(a: object, b: object) -> bool:
    """Whether two literals (or tuples of literals) are one literal (`value_key`)."""
    return a is b or value_key(a) == value_key(b)


def unique(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """Each value once, in first-seen order, by `value_key`: `1` and `1.0` are one number,
    `true` and `1` two literals."""
    first: dict[object, Any] = {}
    for value in values:
        first.setdefault(value_key(value), value)
    return tuple(first.values())


def parse_datetime(text: str) -> datetime:
    """An ISO 8601 date or date-time as an aware UTC instant, truncated to microseconds.

    A date alone is midnight UTC and a timestamp without an offset is UTC: filters are written by
    people who rarely type offsets, and an instant must not depend on the server's time zone.

    Raises:
        ValueError: the text is not ISO 8601, or the instant is out of range once in UTC.
    """
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"not an ISO 8601 date-time ({exc})") from None
    return as_utc(parsed)


def record_datetime(value: object) -> datetime:
    """A record's date-time value (a `datetime` or an ISO 8601 string) as an aware UTC instant.

    Converted to UTC, not only made aware: Python's `==` and `hash` between date-times of
    different zones are not instant equality (PEP 495: a time in a daylight-saving fold with
    `fold=1`, or in a gap, equals nothing in another zone), so equality and `in` compare UTC
    instants, as the lowered literals are.
    """
    if isinstance(value, datetime):
        if value.tzinfo is UTC:
            return value
        return as_utc(value)
    if isinstance(value, str):
        return parse_datetime(value)
    raise TypeError(f"expected a datetime or an ISO 8601 string, found {type(value).__name__}")


def parse_date(text: str) -> date:
    """An ISO 8601 calendar date, `1990-11-23` (the extended form only).

    A date has no time and no zone: a date-time given for a date field is refused rather than
    cut to a date, because which date it is depends on a zone the text may not name.

    Raises:
        ValueError: the text is not such a date.
    """
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        raise ValueError("not an ISO 8601 date (YYYY-MM-DD)")
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"not an ISO 8601 date ({exc})") from None


def record_date(value: object) -> date:
    """A record's date value: a `datetime.date` (never a `datetime`) or ISO 8601 text."""
    if isinstance(value, datetime):
        raise TypeError("expected a date, found a datetime (give value.date() in its zone)")
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        return parse_date(value)
    raise TypeError(f"expected a date or an ISO 8601 string, found {type(value).__name__}")


def record_value(kind: FieldType, value: object) -> Any:
    """A record's present value as comparisons take it: date-times as UTC instants, dates as
    dates (`record_datetime`, `record_date`), other values as they are."""
    moment = kind.entry.moment
    if moment == "instant":
        return record_datetime(value)
    if moment == "day":
        return record_date(value)
    return value


def accepts(kind: FieldType, value: object) -> bool:
    """Whether a record's non-null value has a type a field of `kind` is compared with: a
    string for strings, an int, float or Decimal (never a bool) for numbers, a bool for
    booleans, a datetime or ISO 8601 text for date-times (the text is checked when read).

    Anything else is a `RecordError` when a comparison reads it, even where Python would
    compare it quietly (`True == 1`, `"1" == 1`): a back-end with typed columns could not hold
    it, so no answer would be the same on every back-end.
    """
    entry = kind.entry
    if not entry.records:  # a JSON document, or a list (read item by item)
        return True
    return isinstance(value, entry.records) and not isinstance(value, entry.refused)


def fold(text: str) -> str:
    """Case folding for case-insensitive matching: Python's `str.lower()`, in every back-end.

    `lower()` rather than `casefold()` because SQL engines have `lower()`, so SQL back-ends can
    agree with memory exactly (`straße` does not match `STRASSE`, as in SQL).
    """
    return text.lower()


_TESTS: dict[Op, Callable[[Any, Any], Any]] = {
    Op.EQUALS: operator.eq,
    Op.GT: operator.gt,
    Op.GTE: operator.ge,
    Op.LT: operator.lt,
    Op.LTE: operator.le,
    Op.CONTAINS: lambda value, literal: literal in value,
    Op.STARTS_WITH: lambda value, literal: value.startswith(literal),
    Op.ENDS_WITH: lambda value, literal: value.endswith(literal),
    Op.IN: lambda value, literal: value in literal,
    Op.NOT_IN: lambda value, literal: value not in literal,
    Op.ANNIVERSARY: lambda value, literal: is_anniversary(value, literal),
}


def holds(op: Op, value: Any, literal: Any, insensitive: bool = False) -> bool:
    """One comparison of a present (non-null) value with a lowered literal: with `insensitive`,
    the value is case-folded, and the literal, folded by lowering, is taken as it is.

    The interpreting evaluators (explain, data paths) share this table; the compiled back-end
    generates the same tests as code.
    """
    if insensitive:
        value = fold(value)
    else:
        literal = met_by(value, literal)
    return bool(_TESTS[op](value, literal))


def met_by(value: object, literal: Any) -> Any:
    """The number a present value meets for a number literal (or a tuple of them): an exact
    value (a `Decimal`) the literal as written (`decimal_literal`), any other the literal
    itself. The one rule of scalar comparisons (`holds`, the compiled `decimal_or_double`)
    and of a list's items (`lists.truth`), so `has 0.3` on `[Decimal("0.3")]` is what
    `equals 0.3` on `Decimal("0.3")` is."""
    return decimal_literals(literal) if isinstance(value, Decimal) else literal


def double_exact(value: object) -> bool:
    """Whether a double (Python's float) holds exactly this number: every float does, most
    integers beyond 2^53 do not. Engines that compare numbers as doubles need to know."""
    if isinstance(value, float):
        return True
    try:
        return bool(int(float(value)) == value)  # type: ignore[arg-type]
    except OverflowError:
        return False


def doubles_around(n: int) -> tuple[float, float]:
    """The doubles just below and just above an integer no double represents, so that
    `x > n` and `x < n` can be written exactly against a column of doubles."""
    try:
        near = float(n)
    except OverflowError:
        return (sys.float_info.max, math.inf) if n > 0 else (-math.inf, -sys.float_info.max)
    if near > n:
        return math.nextafter(near, -math.inf), near
    return near, math.nextafter(near, math.inf)


def double_bound(op: Op, value: int | float) -> tuple[Op, float] | bool:
    """`x op value` for a double x, as `x op' d` with a double d, or a constant: how a value
    held as a double compares with any number exactly, without rounding the number (an
    integer no double holds equals none, and orders like the doubles around it; beyond the
    doubles, `d` is an infinity)."""
    if double_exact(value):
        return op, float(value)
    if op is Op.EQUALS:
        return False
    below, above = doubles_around(int(value))
    if op in (Op.GT, Op.GTE):  # x >= n <=> x > n: no double equals n
        return Op.GT, below
    return Op.LT, above


def rounded_to(value: object) -> int | None:
    """The integer of the double an engine rounds an integer literal to, for an integer no
    double holds (past 2^53, within the doubles' range); None for any other literal.

    Why: a DOUBLE column (PostgreSQL, DuckDB, Spark, Django's `FloatField`) compares with an
    integer literal after rounding it to a double, so `x = 2^60 + 1` would hold for the
    double 2^60. No double lies strictly between the integer and its rounded double, so the
    rounding changes one answer only, the one for that double: lowering adds it back exactly
    (`double_guard`), and a column of integers or decimals, which compares exactly anyway,
    answers the same.
    """
    if value.__class__ is not int or double_exact(value):
        return None
    try:
        return int(float(value))
    except OverflowError:
        return None


def double_guard(op: Op, value: Any) -> tuple[Op, Any, bool] | None:
    """How `x op value` stays exact where `x` is a double the engine compares with the literal
    rounded (`rounded_to`): `(test, operand, holds)` says to AND (`holds` False) or OR (True)
    the comparison with `x test operand`: `x = 2^60 + 1` becomes `x = 2^60 + 1 AND NOT x =
    2^60`, `x > 2^60 - 1` `x > 2^60 - 1 OR x = 2^60`. For `in`/`notIn`, the rounded doubles
    of the list's integers no double holds, unless the list holds them: `x in (...) AND NOT x
    in (doubles)`, `x notIn (...) OR x in (doubles)`. None where rounding changes nothing."""
    if op in (Op.IN, Op.NOT_IN):
        near = [rounded_to(v) for v in value]
        extra = tuple(dict.fromkeys(n for n in near if n is not None and n not in value))
        return (Op.IN, extra, op is Op.NOT_IN) if extra else None
    near_one = rounded_to(value)
    if near_one is None or op not in _TESTS:
        return None
    return Op.EQUALS, near_one, holds(op, near_one, value)


_FLIP_STRICT = {Op.GT: Op.GT, Op.GTE: Op.GT, Op.LT: Op.LTE, Op.LTE: Op.LTE}


def as_integer(value: int | float | Fraction) -> int | None:
    """The integer an exact number is, or None when it has a fraction."""
    exact = Fraction(value)
    return int(exact) if exact.denominator == 1 else None


def integer_bound(op: Op, value: int | float | Fraction) -> tuple[Op, int] | bool:
    """`x op value` for an integer x, as `x op' n` with an integer n, or a constant: how a
    column of integers compares with any number exactly, without converting either."""
    exact = Fraction(value)
    if exact.denominator == 1:
        return op, int(exact)
    if op is Op.EQUALS:
        return False
    return _FLIP_STRICT[op], math.floor(exact)  # x > 2.5 <=> x > 2; x <= 2.5 <=> x <= 2


def out_of_range(op: Op, n: int, low: int, high: int) -> bool | None:
    """The answer of `x op n` for every x in `low..high`, when it does not depend on x."""
    if op is Op.EQUALS:
        return False if n < low or n > high else None
    if op in (Op.GT, Op.GTE):
        first = n + 1 if op is Op.GT else n  # the smallest x that passes
        return False if first > high else True if first <= low else None
    last = n - 1 if op is Op.LT else n  # the largest x that passes
    return False if last < low else True if last >= high else None
