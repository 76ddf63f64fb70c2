"""A deliberately naive three-valued evaluator: the oracle the compiled predicate is checked
against. It is written straight from docs/semantics.md with None as UNKNOWN, sharing no code
with the back-ends except the value helpers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from audiencefilter import Ago, And, Blank, Comparison, Const, IsNull, Node, Not, Op, Or
from audiencefilter.language.anniversary import is_anniversary
from audiencefilter.language.calendar import Period, StartOf, local_date
from audiencefilter.language.nodes import FieldComparison
from audiencefilter.language.values import record_date, record_datetime

DATE_FIELDS = frozenset({"birthday", "signup"})
"""Fields the oracle reads as calendar dates (the date schemas of the tests name them so)."""


def evaluate(node: Node, record: dict[str, Any], now: datetime | None = None) -> bool | None:
    """TRUE, FALSE or None (UNKNOWN); relative date-times are taken at `now`."""
    if isinstance(node, Const):
        return node.value
    if isinstance(node, Not):
        inner = evaluate(node.item, record, now)
        return None if inner is None else not inner
    if isinstance(node, And):
        results = [evaluate(item, record, now) for item in node.items]
        if False in results:
            return False
        return None if None in results else True
    if isinstance(node, Or):
        results = [evaluate(item, record, now) for item in node.items]
        if True in results:
            return True
        return None if None in results else False
    if isinstance(node, IsNull):
        return _read(node, record) is None
    if isinstance(node, FieldComparison):  # two fields of one type; null on a side is UNKNOWN
        left, right = record.get(node.field), record.get(node.other)
        if left is None or right is None:
            return None
        if node.field == "createdAt":
            left, right = record_datetime(left), record_datetime(right)
        if node.field in DATE_FIELDS:
            left, right = record_date(left), record_date(right)
        return {
            Op.EQUALS: left == right,
            Op.GT: left > right,
            Op.GTE: left >= right,
            Op.LT: left < right,
            Op.LTE: left <= right,
        }[node.op]
    if isinstance(node, Blank):  # null or the empty string, never UNKNOWN
        blank = _read(node, record)
        return blank is None or blank == ""
    value = _read(node, record)
    if node.path and value is not None and not _same_json_type(value, node.value):
        return False  # a present value of another JSON type, arrays and objects included
    return _compare(node, value, now)


def _read(node: Comparison | IsNull | Blank, record: dict[str, Any]) -> Any:
    """The field's value; for a path, the value at the path (None when any step is missing or
    not an object)."""
    value = record.get(node.field)
    for key in node.path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _same_json_type(value: Any, literal: Any) -> bool:
    if isinstance(literal, tuple):
        if not literal:
            return True
        literal = literal[0]

    def kind(v: Any) -> str:
        if isinstance(v, bool):
            return "boolean"
        if isinstance(v, int | float):
            return "number"
        return "string" if isinstance(v, str) else "other"

    return kind(value) == kind(literal)


def _compare(node: Comparison, value: Any, now: datetime | None) -> bool | None:
    if node.op is Op.IN and node.value == ():
        return False
    if node.op is Op.NOT_IN and node.value == ():
        return True
    if value is None:
        return None
    if node.field == "createdAt":
        value = record_datetime(value)
    if node.field in DATE_FIELDS:
        return _compare_dates(node, record_date(value), now)
    wanted: Any = node.value
    if isinstance(wanted, Ago | StartOf | Period):
        assert now is not None, "a relative date-time needs a now"
    if isinstance(wanted, Period) and node.op is Op.WITHIN:  # [first instant, first after)
        first, after = wanted.bounds
        return bool(first.before(now) <= value < after.before(now))
    if isinstance(wanted, Period):  # an anniversary: the local month-day, any year
        return is_anniversary(value, wanted.before(now))
    if isinstance(wanted, Ago | StartOf):
        wanted = wanted.before(now)
    if node.insensitive:
        value = value.lower()
        wanted = tuple(w.lower() for w in wanted) if isinstance(wanted, tuple) else wanted.lower()
    op = node.op
    if op is Op.EQUALS:
        return bool(value == wanted)
    if op is Op.GT:
        return bool(value > wanted)
    if op is Op.GTE:
        return bool(value >= wanted)
    if op is Op.LT:
        return bool(value < wanted)
    if op is Op.LTE:
        return bool(value <= wanted)
    if op is Op.CONTAINS:
        return wanted in value
    if op is Op.STARTS_WITH:
        return bool(value.startswith(wanted))
    if op is Op.ENDS_WITH:
        return bool(value.endswith(wanted))
    if op is Op.IN:
        return any(value == w for w in wanted)
    return all(value != w for w in wanted)


def _compare_dates(node: Comparison, value: Any, now: datetime | None) -> bool | None:
    """A date against dates: a relative or calendar value is the UTC date it falls on (the
    test schemas' zone), a period the dates from its first day up to the day after."""
    wanted: Any = node.value

    def day(bound: Any) -> Any:
        instant = bound.before(now)
        zone = getattr(bound, "zone", None) or "UTC"
        return local_date(instant, zone)

    if isinstance(wanted, Period) and node.op is Op.WITHIN:
        first, after = wanted.bounds
        return bool(day(first) <= value < day(after))
    if isinstance(wanted, Period):
        return is_anniversary(value, wanted.before(now))
    if isinstance(wanted, Ago | StartOf):
        wanted = day(wanted)
    return {
        Op.EQUALS: lambda: value == wanted,
        Op.GT: lambda: value > wanted,
        Op.GTE: lambda: value >= wanted,
        Op.LT: lambda: value < wanted,
        Op.LTE: lambda: value <= wanted,
        Op.IN: lambda: value in wanted,
        Op.NOT_IN: lambda: value not in wanted,
    }[node.op]()
