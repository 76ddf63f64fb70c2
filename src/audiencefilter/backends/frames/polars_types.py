"""The column types the polars back-end builds frames with, and how records become columns.

Shared by the contact's columns and a relation's struct fields (`frame_for`,
`related_column`), so a value is converted one way wherever it lands.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import polars as pl

from ...errors import FrameError
from ...language.data_paths import document_text
from ...language.fields import FieldType, Schema
from ...language.python_values import plain_value
from ...language.relations import Relation
from ...language.values import accepts, double_exact

INSTANT = pl.Datetime("us", "UTC")
CANONICAL: Mapping[FieldType, Any] = {
    FieldType.STRING: pl.String,
    FieldType.NUMBER: pl.Int64,
    FieldType.BOOLEAN: pl.Boolean,
    FieldType.DATETIME: INSTANT,
    FieldType.DATE: pl.Date,
    FieldType.JSON: pl.String,
    FieldType.STRING_LIST: pl.List(pl.String),
    FieldType.NUMBER_LIST: pl.List(pl.Float64),
    FieldType.BOOLEAN_LIST: pl.List(pl.Boolean),
    FieldType.DATETIME_LIST: pl.List(INSTANT),
    FieldType.DATE_LIST: pl.List(pl.Date),
}
"""The column type of each field type when a frame is built for a schema (`frame_for`)."""


def field_columns(
    records: list[Mapping[str, Any]], schema: Schema
) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Each field's values of `records`, converted, and its column type: the one conversion
    both a frame's columns and a relation's struct fields go through. A field declared inside
    JSON has no column of its own: its value is read from the JSON column, as a user's frame
    holds it."""
    stored = [f for f in schema.fields if not f.source]
    data = {
        f.name: _column_values(f.type, [r.get(f.name) for r in records], f.name) for f in stored
    }
    dtypes = {f.name: CANONICAL[f.type] for f in stored}
    for field in stored:  # a number column holds the one type that holds each value exactly
        if field.type is FieldType.NUMBER:
            dtypes[field.name] = _number_dtype(field.name, data[field.name], "")
            if dtypes[field.name] == pl.Float64:
                data[field.name] = [None if v is None else float(v) for v in data[field.name]]
        elif field.type is FieldType.NUMBER_LIST:
            dtypes[field.name] = number_list_dtype(field.name, data[field.name])
            if dtypes[field.name] == pl.List(pl.Float64):
                # Items as floats (exact: `number_list_dtype` checked), so that polars builds a
                # list of `[1, 2.5]` inside a relation's struct too, not only in a column.
                data[field.name] = [_floats(items) for items in data[field.name]]
    return data, dtypes


def _floats(items: list[Any] | None) -> list[Any] | None:
    return None if items is None else [None if i is None else float(i) for i in items]


def number_list_dtype(name: str, lists: list[Any]) -> Any:
    """The list type that holds every item of a `number[]` field exactly: integers as Int64
    (or Int128), fractions as Float64. Integers a double cannot hold beside fractions fit no
    one polars type, so that is a `FrameError` rather than a silently rounded item."""
    items = [i for items in lists if items for i in items]
    return pl.List(_number_dtype(name, items, "[]"))


def _number_dtype(name: str, numbers: list[Any], suffix: str) -> Any:
    """The one column type that holds every number of a field exactly (nulls left out):
    integers as Int64, or Int128 beyond 64 bits, fractions (and integers beyond 128 bits) as
    Float64; an integer a double cannot hold beside them fits no one polars type, so that is a
    `FrameError` rather than a silently rounded value."""
    present = [n for n in numbers if n is not None]
    integers = [n for n in present if type(n) is int]
    if len(integers) == len(present):
        if all(-(2**63) <= i < 2**63 for i in integers):
            return pl.Int64
        if all(-(2**127) <= i < 2**127 for i in integers):
            return pl.Int128
    inexact = next((i for i in integers if not double_exact(i)), None)
    if inexact is not None:
        raise _rounded(name, inexact, suffix, whole=len(integers) == len(present))
    return pl.Float64


def _rounded(name: str, inexact: int, suffix: str, *, whole: bool) -> FrameError:
    """The refusal of a number field (`suffix` "[]" for a list) whose integer no column type
    holds beside the other values: beyond 128 bits (`whole`), or beside fractions."""
    kind, held = ("list type", "list ") if suffix else ("type", "")
    beside, both = (
        ("beyond 128 bits", "every value") if whole else ("beside fractional numbers", "both")
    )
    return FrameError(
        f'number{suffix} field "{name}" holds the integer {inexact} {beside}: no polars {kind} '
        f"holds {both} exactly (a Float64 {held}would round it to {float(inexact):.17g}); keep "
        f"such {'lists' if suffix else 'values'} in memory or in SQL"
    )


def _column_values(kind: FieldType, values: list[Any], field: str) -> list[Any]:
    from ...language.values import record_date, record_datetime

    if kind.entry.records or kind.element is not None and kind.element.entry.records:
        values = [_plain(kind, value, field) for value in values]

    if kind is FieldType.DATETIME:
        return [None if v is None else record_datetime(v) for v in values]
    if kind is FieldType.DATE:
        return [None if v is None else record_date(v) for v in values]
    if kind is FieldType.DATE_LIST:
        return [
            None if v is None else [None if i is None else record_date(i) for i in v]
            for v in values
        ]
    if kind is FieldType.JSON:  # JSON text, as a JSON column reads into polars
        return [None if v is None else document_text(v, field) for v in values]
    if kind is FieldType.DATETIME_LIST:
        return [
            None if v is None else [None if i is None else record_datetime(i) for i in v]
            for v in values
        ]
    return values


def _plain(kind: FieldType, value: Any, field: str) -> Any:
    """A record's value of a string, number or boolean field (or a list of them) as the plain
    value `matches` reads (`plain_value`: NumPy and pandas values as theirs, NaN as null), or
    a `FrameError` for a value `matches` refuses (`True` in a number field): polars would
    convert it without a word (`True` as 1) or fail without naming the field."""
    value = plain_value(value)  # a list's items too
    if value is None or kind is FieldType.DATETIME or kind is FieldType.DATE:
        return value
    if kind.element is None:
        return _scalar(kind, value, field, "")
    if not isinstance(value, list | tuple):
        raise FrameError(
            f'{kind.value} field "{field}" holds {type(value).__name__} {value!r}; expected a '
            "list: give each record a list (or null)"
        )
    return [_scalar(kind.element, item, field, "an item ") for item in value]


def _scalar(kind: FieldType, value: Any, field: str, what: str) -> Any:
    if value is None:
        return None
    if not accepts(kind, value):
        raise FrameError(
            f'field "{field}" holds {what}{type(value).__name__} {value!r}; expected '
            f"{kind.value}: convert it (or set it to null) before building the frame"
        )
    return _exact_decimal(value, field, what) if isinstance(value, Decimal) else value


def _exact_decimal(value: Decimal, field: str, what: str) -> int | float:
    """A `Decimal` as the int or the float that holds it exactly, or a `FrameError`."""
    if value.is_infinite():
        return float(value)
    if value.is_finite() and value == value.to_integral_value():
        return int(value)
    if value.is_finite() and Decimal(float(value)) == value:
        return float(value)
    raise FrameError(
        f'field "{field}" holds {what}Decimal {value}, which no polars number type holds '
        "exactly (a Float64 would round it); keep such values in memory or in SQL"
    )


def related_column(
    records: list[Mapping[str, Any]], relation: Relation
) -> tuple[list[Any], pl.DataType]:
    """A relation's values of `records` and its column type, for `frame_for`: each row's fields
    converted as a frame's columns are (`field_columns`), floats where a number field holds one."""
    rows_of = []
    for record in records:
        rows = record.get(relation.name)
        rows_of.append(None if rows is None else [rows] if isinstance(rows, Mapping) else rows)
    flat = [row for rows in rows_of if rows for row in rows]
    data, types = field_columns(flat, relation.schema)
    converted = iter(
        [dict(zip(data, values, strict=True)) for values in zip(*data.values(), strict=True)]
    )
    values = [None if rows is None else [next(converted) for _ in rows] for rows in rows_of]
    return values, pl.List(pl.Struct(types))
