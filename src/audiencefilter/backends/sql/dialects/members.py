"""Long `in`/`notIn` lists bound as one parameter: the rule of when, and of what kind.

A list of values bound one placeholder each makes a new statement for every length, so a
database's statement cache, prepared statements and SQLAlchemy's compiled cache never see the
same text twice, and a long list costs as many parameters as values. Above `LONG_LIST` values
the SQL writers (`to_sql_params`, SQLAlchemy) bind the list as ONE parameter of one kind
(`Members`), and each dialect spells the test (`Dialect.member_test`: a typed array on
PostgreSQL and DuckDB, JSON text read by `json_each` on SQLite and `JSON_TABLE` on MySQL and
MariaDB) and the driver value (`Dialect.bind_members`). A dialect without a faithful form
(Spark SQL) answers None and keeps one placeholder per value.

The semantics do not move: lowering has already made empty lists constants and each literal
unique, and a list never holds null, so `x IN list` is TRUE, FALSE, or UNKNOWN for a null
`x` exactly as the literal form is, and `notIn` is its negation. Each group is of one kind, so
the engine compares it as the literal form compares each value: numbers are split into
64-bit integers and other numbers (`number_groups`; an integer beyond 64 bits keeps the
literal form, whose exact spelling each dialect owns), strings go through the same `exact`
or `fold` of the column as the literal form.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from enum import Enum
from typing import Any

from ....language.fields import FieldType

LONG_LIST = 32
"""The longest list bound one placeholder per value; a longer one binds as one parameter.
At 32 values one parameter already costs less than the placeholders (and the same value as
the widest AND or OR written side by side, `text.GROUP_WIDTH`)."""

_INT64 = (-(2**63), 2**63 - 1)


class Members(Enum):
    """The kind of the one parameter a long list binds as."""

    TEXT = "text"
    INTEGER = "integer"
    REAL = "real"
    INSTANT = "instant"
    DAY = "day"


def members_of(values: tuple[Any, ...], kind: FieldType) -> Members | None:
    """The kind `values` (one group, of a field of `kind`) bind as, or None when they keep one
    placeholder each: a short list, a number group mixing integers with other numbers, an
    integer beyond 64 bits, or text holding NUL."""
    if len(values) <= LONG_LIST:
        return None
    if kind is FieldType.NUMBER:
        return _numbers(values)
    if kind is FieldType.STRING:
        # SQLite's json_each ends a string at NUL: such a list keeps the literal form.
        return None if any("\x00" in v for v in values) else Members.TEXT
    if kind is FieldType.DATETIME and all(isinstance(v, datetime) for v in values):
        return Members.INSTANT
    if kind is FieldType.DATE and all(type(v) is date for v in values):
        return Members.DAY
    return None


def _numbers(values: tuple[Any, ...]) -> Members | None:
    if all(type(v) is int and _INT64[0] <= v <= _INT64[1] for v in values):
        return Members.INTEGER
    if all(type(v) is float for v in values):
        return Members.REAL
    return None


def json_members(items: Sequence[Any]) -> str:
    """Driver values (text, numbers, date-times already in the engine's text form) as the
    JSON array text an engine reading JSON (`json_each`, `JSON_TABLE`) takes; a float by its
    shortest round-tripping decimal, which the engine reads as the literal form's double."""
    return json.dumps(list(items), ensure_ascii=False, allow_nan=False)
