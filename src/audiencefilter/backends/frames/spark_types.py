"""The column types the Spark back-end reads and builds frames with, and how records become
columns: shared by the contact's columns and a relation's struct fields, so a value is converted
one way wherever it lands.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import types as T

from ...language.data_paths import document_text
from ...language.fields import FieldType, Schema
from ...language.python_values import plain_value
from ...language.relations import Relation

CANONICAL: Mapping[FieldType, Any] = {
    FieldType.STRING: T.StringType(),
    FieldType.NUMBER: T.LongType(),
    FieldType.BOOLEAN: T.BooleanType(),
    FieldType.DATETIME: T.TimestampType(),
    FieldType.DATE: T.DateType(),
    FieldType.JSON: T.StringType(),
    FieldType.STRING_LIST: T.ArrayType(T.StringType()),
    FieldType.NUMBER_LIST: T.ArrayType(T.DoubleType()),
    FieldType.BOOLEAN_LIST: T.ArrayType(T.BooleanType()),
    FieldType.DATETIME_LIST: T.ArrayType(T.TimestampType()),
    FieldType.DATE_LIST: T.ArrayType(T.DateType()),
}
"""The column type each field type is taken to have when no frame schema is given."""

_INT_RANGES: Mapping[type, tuple[int, int]] = {
    T.ByteType: (-(2**7), 2**7 - 1),
    T.ShortType: (-(2**15), 2**15 - 1),
    T.IntegerType: (-(2**31), 2**31 - 1),
    T.LongType: (-(2**63), 2**63 - 1),
}
_DECIMAL_RANGE = (-(10**38) + 1, 10**38 - 1)
"""What DECIMAL(38, 0) holds: the type an integer sum is taken in, so it never overflows."""
EXACT_SUM = T.DecimalType(38, 0)


def field_values(
    records: list[Mapping[str, Any]], schema: Schema
) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Each field's values of `records`, converted, and its column type: the one conversion
    both a frame's columns and a relation's struct fields go through. A field declared inside
    JSON has no column of its own: its value is read from the JSON column. Each value is read
    as `matches` reads it (`language/python_values.py`): a NaN is null, not a DOUBLE NaN that a
    filter compiled without the column types would take for a number."""
    data: dict[str, list[Any]] = {}
    types: dict[str, Any] = {}
    for field in (f for f in schema.fields if not f.source):
        values = [plain_value(record.get(field.name)) for record in records]
        data[field.name], types[field.name] = _converted(field.type, values, field.name)
    return data, types


def _converted(kind: FieldType, values: list[Any], field: str) -> tuple[list[Any], Any]:
    from ...language.values import record_date, record_datetime

    if kind is FieldType.DATETIME:
        values = [None if v is None else record_datetime(v) for v in values]
    elif kind is FieldType.DATE:
        values = [None if v is None else record_date(v) for v in values]
    elif kind is FieldType.DATE_LIST:
        values = [
            None if v is None else [None if i is None else record_date(i) for i in v]
            for v in values
        ]
    elif kind is FieldType.JSON:
        values = [None if v is None else document_text(v, field) for v in values]
    elif kind is FieldType.NUMBER_LIST:
        values = [
            None if v is None else [None if i is None else float(i) for i in v] for v in values
        ]
    elif kind is FieldType.DATETIME_LIST:
        values = [
            None if v is None else [None if i is None else record_datetime(i) for i in v]
            for v in values
        ]
    elif kind is FieldType.NUMBER and any(type(v) is float for v in values):
        return [None if v is None else float(v) for v in values], T.DoubleType()
    return values, CANONICAL[kind]


def related_values(
    records: list[Mapping[str, Any]], relation: Relation
) -> tuple[list[Any], T.DataType]:
    """A relation's values of `records` and its column type, for `frame_for`: each row's fields
    converted as a frame's columns are (`field_values`)."""
    rows_of = []
    for record in records:
        rows = record.get(relation.name)
        rows_of.append(None if rows is None else [rows] if isinstance(rows, Mapping) else rows)
    flat = [row for rows in rows_of if rows for row in rows]
    data, types = field_values(flat, relation.schema)
    names = list(data)
    converted = iter(list(zip(*(data[name] for name in names), strict=True)))
    values = [None if rows is None else [next(converted) for _ in rows] for rows in rows_of]
    struct = T.StructType([T.StructField(name, types[name], True) for name in names])
    return values, T.ArrayType(struct, True)
