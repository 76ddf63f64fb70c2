"""The CEL reference evaluator (`celpy`, package cel-python) over a record, bound as
docs/interop.md (CEL) says an environment binds one:

- each field of the schema is a variable, null when the record has no value;
- a number is a `double`, a date-time a `timestamp` (text read as ISO 8601, UTC without an
  offset), a date its ISO 8601 text (a `string`), a string a `string`, a boolean a `bool`, a
  list a `list` of those; a JSON column CEL's JSON (an object a `map` with string keys, as
  JSON text stores them, an array a `list`, every number a `double`); fields declared inside
  JSON are read at their path, not bound;
- a to-many relation is a list of rows, each a map holding every field of the row (null when
  missing), empty when the record has none; a to-one relation is its row or null.

A record is in when the expression evaluates to `true`; an evaluation error (celpy raises
`CELEvalError`, or returns one) is not `true`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import celpy
from celpy import celtypes

import audiencefilter as af
from audiencefilter.formats.cel.reader import READ_TYPES
from audiencefilter.language.fields import FieldType

_ENVIRONMENT = celpy.Environment()


@lru_cache(maxsize=4096)
def _program(expression: str) -> Any:
    return _ENVIRONMENT.program(_ENVIRONMENT.compile(expression))


def cel_value(kind: FieldType, value: Any) -> Any:
    """A record's value as the environment binds it."""
    if value is None:
        return None
    if kind.element is not None and isinstance(value, list):
        return celtypes.ListType([cel_value(kind.element, item) for item in value])
    if kind is FieldType.NUMBER and not isinstance(value, bool):
        return celtypes.DoubleType(float(value))
    if kind is FieldType.DATETIME:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
        aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        return celtypes.TimestampType(aware.astimezone(UTC))
    if kind is FieldType.JSON:  # as JSON text stores it (keys are strings), numbers doubles
        return _json(json.loads(value) if isinstance(value, str) else json.loads(json.dumps(value)))
    if kind is FieldType.DATE:  # a day is its ISO 8601 text
        return celtypes.StringType(value if isinstance(value, str) else value.isoformat())
    return celpy.json_to_cel(value)


def _json(value: Any) -> Any:
    """A JSON value as CEL's JSON, every number a double."""
    if isinstance(value, dict):
        return celtypes.MapType({celtypes.StringType(k): _json(v) for k, v in value.items()})
    if isinstance(value, list):
        return celtypes.ListType([_json(item) for item in value])
    if isinstance(value, int | float) and not isinstance(value, bool):
        return celtypes.DoubleType(float(value))
    return celpy.json_to_cel(value)


def activation(record: dict[str, Any], schema: af.Schema) -> dict[str, Any]:
    """The variables of `record`: every field of `schema`, and every relation."""
    bound = {
        f.name: cel_value(f.type, record.get(f.name))
        for f in schema.fields
        if f.type in READ_TYPES and not f.source
    }
    for relation in schema.relations:
        rows = record.get(relation.name)
        if not relation.many:
            row = rows if isinstance(rows, dict) else None
            bound[relation.name] = None if row is None else _row(row, relation.schema)
            continue
        listed = rows if isinstance(rows, list) else []
        bound[relation.name] = celtypes.ListType([_row(row, relation.schema) for row in listed])
    return bound


def _row(row: dict[str, Any], schema: af.Schema) -> Any:
    return celtypes.MapType({celtypes.StringType(k): v for k, v in activation(row, schema).items()})


def cel_matches(expression: Any, record: dict[str, Any], schema: af.Schema = af.CONTACT) -> bool:
    """Whether celpy evaluates `expression` to true over `record`."""
    try:
        result = _program(expression).evaluate(activation(record, schema))
    except (celpy.CELEvalError, TypeError):  # celpy raises TypeError for exists over null
        return False
    return isinstance(result, celtypes.BoolType) and bool(result)


def _double(value: Any) -> bool:
    """Whether `value`, when an integer, is a double as it is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value) == value
    return True


def _numbers(value: Any) -> Any:
    """Every number inside a JSON value."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield value


def exact_doubles(record: dict[str, Any], schema: af.Schema = af.CONTACT) -> bool:
    """Whether every number of `record` (and of its rows) is a double as it is: the environment
    binds a number as a double, so a larger integer is rounded (docs/interop.md, CEL)."""
    for f in schema.fields:
        value = record.get(f.name)
        listed = value if f.type is FieldType.NUMBER_LIST and isinstance(value, list) else []
        if f.type is FieldType.JSON:
            listed = list(_numbers(json.loads(value) if isinstance(value, str) else value))
        if f.type is FieldType.NUMBER or listed:
            if not all(_double(item) for item in [value, *listed]):
                return False
    for relation in schema.relations:
        rows = record.get(relation.name)
        listed = [rows] if isinstance(rows, dict) else rows if isinstance(rows, list) else []
        if not all(exact_doubles(row, relation.schema) for row in listed):
            return False
    return True
