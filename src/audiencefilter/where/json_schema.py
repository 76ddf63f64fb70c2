"""A JSON Schema (Draft 2020-12) of the where-clause language for one `Schema` of fields.

For editors, form builders and API documentation: it accepts exactly what `parse` accepts on
structure and types (which keys, which operators per field type, which value types, arrays
without nulls, `mode` only on strings and never inside `not`). What JSON Schema cannot express is
left to `parse`: date-time syntax beyond "a string", duplicate keys, and the size and depth
limits. A date-time operator also takes a relative value, `{"ago": "P30D"}`, whose duration
is checked by pattern only (its length bound is left to `parse`), or the start of a calendar
unit, `{"startOf": "month"}`; `within` takes a calendar period. Time zone names are strings
here, checked by `parse`.
"""

from __future__ import annotations

from typing import Any

from ..language.fields import CONTACT, PERIOD_OPS, FieldType, Op, Schema

DIALECT = "https://json-schema.org/draft/2020-12/schema"

_VALUE: dict[FieldType, dict[str, Any]] = {
    FieldType.STRING: {"type": "string"},
    FieldType.NUMBER: {"type": "number"},
    FieldType.BOOLEAN: {"type": "boolean"},
    FieldType.DATETIME: {
        "type": "string",
        "description": "ISO 8601 date or date-time; no offset means UTC",
        "examples": ["2025-01-31", "2025-01-31T09:30:00Z"],
    },
}


_AGO: dict[str, Any] = {
    "type": "object",
    "description": "a date-time relative to the moment of evaluation: now minus an ISO 8601 "
    "duration (fractions on seconds only)",
    "properties": {
        "ago": {
            "type": "string",
            "pattern": r"^[Pp](?!$)([0-9]+[Yy])?([0-9]+[Mm])?([0-9]+[Ww])?([0-9]+[Dd])?"
            r"([Tt](?!$)([0-9]+[Hh])?([0-9]+[Mm])?([0-9]+([.,][0-9]{1,6})?[Ss])?)?$",
            "examples": ["P30D", "P1Y6M", "PT12H"],
        }
    },
    "required": ["ago"],
    "additionalProperties": False,
}


_UNIT: dict[str, Any] = {"enum": ["day", "week", "month", "year"]}
_ZONE: dict[str, Any] = {
    "type": "string",
    "description": "an IANA time zone name (checked by parse); default: the schema's zone",
    "examples": ["Europe/Paris", "America/New_York"],
}
_START: dict[str, Any] = {
    "type": "object",
    "description": "the first instant of the day, ISO week, month or year `offset` units "
    "after the current one, in a time zone",
    "properties": {
        "startOf": _UNIT,
        "offset": {"type": "integer", "minimum": -1_000_000, "maximum": 1_000_000},
        "timeZone": _ZONE,
    },
    "required": ["startOf"],
    "additionalProperties": False,
}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": 1_000_000}
_PERIOD: dict[str, Any] = {
    "description": "whole calendar units: the current one (this), the N before it (last) or "
    "the N after it (next), in a time zone",
    "oneOf": [
        {
            "type": "object",
            "properties": {"this": _UNIT, "timeZone": _ZONE},
            "required": ["this"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"last": _COUNT, "unit": _UNIT, "timeZone": _ZONE},
            "required": ["last", "unit"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"next": _COUNT, "unit": _UNIT, "timeZone": _ZONE},
            "required": ["next", "unit"],
            "additionalProperties": False,
        },
    ],
}


def _operand(kind: FieldType) -> dict[str, Any]:
    """What an operator other than `in`/`notIn` compares with: a literal, or for date-times
    also a relative value (`ago`, or the start of a calendar unit)."""
    value: dict[str, Any] = _VALUE[kind]
    return {"oneOf": [value, _AGO, _START]} if kind is FieldType.DATETIME else value


def json_schema(schema: Schema = CONTACT) -> dict[str, Any]:
    """The JSON Schema of where clauses over `schema`'s fields.

    Returns:
        A Draft 2020-12 schema as plain data; the root validates a where object.
    """
    defs: dict[str, Any] = {
        "where": _where(schema),
        "whereOrList": {
            "oneOf": [
                {"$ref": "#/$defs/where"},
                {"type": "array", "items": {"$ref": "#/$defs/where"}},
            ]
        },
    }
    for kind in {f.type for f in schema.fields}:
        defs[f"{kind.value}Filter"] = _field_filter(kind)
        defs[f"{kind.value}Operators"] = _operators(kind, inside_not=False)
        defs[f"{kind.value}NotOperators"] = _operators(kind, inside_not=True)
    return {
        "$schema": DIALECT,
        "$id": f"urn:audiencefilter:where:{schema.name}",
        "title": f"Where clause over {schema.name} fields",
        "$ref": "#/$defs/where",
        "$defs": defs,
    }


def _where(schema: Schema) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "AND": {"$ref": "#/$defs/whereOrList"},
        "OR": {"$ref": "#/$defs/whereOrList"},
        "NOT": {"$ref": "#/$defs/whereOrList"},
    }
    for field in schema.fields:
        properties[field.name] = {"$ref": f"#/$defs/{field.type.value}Filter"}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _json_operators(inside_not: bool) -> dict[str, Any]:
    """A JSON field's object: a path, then operators typed by their literal (the parser also
    checks that an operator fits its literal's type, e.g. no `gt` with a string)."""
    properties: dict[str, Any] = {}
    for op in sorted(Op, key=lambda op: op.value):
        if op in PERIOD_OPS:  # date-time fields only
            continue
        if op in (Op.IN, Op.NOT_IN):
            # One JSON type for all the values: anyOf, since an empty array fits each.
            properties[op.value] = {
                "anyOf": [
                    {"type": "array", "items": {"type": kind}}
                    for kind in ("string", "number", "boolean")
                ]
            }
        elif op is Op.EQUALS:
            properties[op.value] = {"type": ["null", "string", "number", "boolean"]}
        elif op in (Op.CONTAINS, Op.STARTS_WITH, Op.ENDS_WITH):
            properties[op.value] = {"type": "string"}
        else:
            properties[op.value] = {"type": "number"}
    properties["not"] = {
        "oneOf": [
            {"type": ["null", "string", "number", "boolean"]},
            {"$ref": "#/$defs/jsonNotOperators"},
        ]
    }
    result: dict[str, Any] = {"type": "object", "properties": properties}
    if not inside_not:
        properties["mode"] = {"enum": ["insensitive", "default"]}
        properties["path"] = {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "description": "the keys leading to the value, from the JSON object's root",
        }
        result["required"] = ["path"]
    result["additionalProperties"] = False
    return result


def _field_filter(kind: FieldType) -> dict[str, Any]:
    """A literal (shorthand for equals), null (IS NULL), or an operator object."""
    if kind is FieldType.JSON:
        return {"$ref": "#/$defs/jsonOperators"}
    return {
        "oneOf": [
            {"type": "null"},
            _VALUE[kind],
            {"$ref": f"#/$defs/{kind.value}Operators"},
        ]
    }


def _operators(kind: FieldType, inside_not: bool) -> dict[str, Any]:
    if kind is FieldType.JSON:
        return _json_operators(inside_not)
    value = _VALUE[kind]
    operand = _operand(kind)
    ops = sorted((op for op in Op if op in _ops(kind)), key=lambda op: op.value)
    properties: dict[str, Any] = {}
    for op in ops:
        if op in (Op.IN, Op.NOT_IN):
            properties[op.value] = {"type": "array", "items": value}
        elif op is Op.EQUALS:
            properties[op.value] = {"oneOf": [{"type": "null"}, operand]}
        elif op in PERIOD_OPS:
            properties[op.value] = _PERIOD
        else:
            properties[op.value] = operand
    properties["not"] = {
        "oneOf": [
            {"type": "null"},
            value,
            {"$ref": f"#/$defs/{kind.value}NotOperators"},
        ]
    }
    if kind is FieldType.STRING and not inside_not:
        properties["mode"] = {"enum": ["insensitive", "default"]}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _ops(kind: FieldType) -> frozenset[Op]:
    from ..language.fields import OPERATORS

    return OPERATORS[kind]
