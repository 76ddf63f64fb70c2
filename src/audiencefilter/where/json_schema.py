"""A JSON Schema (Draft 2020-12) of the where-clause language for one `Schema` of fields.

For editors, form builders and API documentation: it accepts exactly what `parse` accepts on
structure and types (which keys, which operators per field type, which value types, arrays
without nulls, `in: null` as a null test, `mode` only on strings and never inside `not`). What
JSON Schema cannot express is left to `parse`: date-time syntax beyond "a string", duplicate
keys, and the size and depth limits. A date-time operator also takes a relative value,
`{"ago": "P30D"}`, whose duration is checked by pattern only (its length bound is left to
`parse`), or the start of a calendar unit, `{"startOf": "month"}`; `within` takes a calendar
period. Time zone names are strings here, checked by `parse`.
"""

from __future__ import annotations

from typing import Any

from ..language.conditions import REF, REFERENCE_OPS
from ..language.contact import CONTACT
from ..language.fields import (
    BLANK,
    JSON_STRING_ALIASES,
    LIST_OPS,
    PATTERN_OPS,
    PERIOD_OPS,
    SHORTHAND_OP,
    Field,
    FieldType,
    ListOp,
    Op,
    Schema,
)

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _value(kind: FieldType) -> dict[str, Any]:
    """The JSON Schema of one value of `kind`: the field table's (`TypeEntry.json_schema`)."""
    return dict(kind.entry.json_schema)


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


_BLANK: dict[str, Any] = {
    "type": "boolean",
    "description": "true: null (or missing) or the empty string; false: neither",
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
    value = _value(kind)
    calendar = bool(kind.entry.moment)
    return {"oneOf": [value, _AGO, _START]} if calendar else value


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
    from .json_schema_relations import relation_defs, relation_kinds

    defs.update(relation_defs(schema, _where))
    # An aggregate's value takes the plain filter of its type, which no reference reaches.
    for kind in relation_kinds(schema):
        defs.update(_typed_defs(kind, []))
    defs.update(_schema_defs(schema, ""))
    return {
        "$schema": DIALECT,
        "$id": f"urn:audiencefilter:where:{schema.name}",
        "title": f"Where clause over {schema.name} fields",
        "$ref": "#/$defs/where",
        "$defs": defs,
    }


def _typed_defs(kind: FieldType, columns: list[str]) -> dict[str, Any]:
    """The filter of fields of `kind`; with `columns`, the references they may take."""
    defs = {
        f"{_name(kind)}Filter": _field_filter(kind),
        f"{_name(kind)}Operators": _operators(kind, inside_not=False),
        f"{_name(kind)}NotOperators": _operators(kind, inside_not=True),
    }
    if not kind.entry.document and kind.element is None and columns:
        _add_references(defs, kind, columns)
    return defs


def _schema_defs(schema: Schema, prefix: str) -> dict[str, Any]:
    """The field filters of `schema` under `prefix`, and of each related schema under its own:
    a field reference names a field of the row its where clause reads (semantics.md)."""
    defs: dict[str, Any] = {}
    for kind in {f.type for f in schema.fields}:
        columns = [f.name for f in schema.fields if f.type is kind and not f.source]
        defs.update(_typed_defs(kind, columns))
    for kind in {f.type for f in schema.fields if f.source and f.type.element is not None}:
        defs.update(_json_list_defs(kind))
    named = {f"#/$defs/{name}": f"#/$defs/{prefix}{name}" for name in defs}
    found = {prefix + name: _renamed(value, named) for name, value in defs.items()}
    for relation in schema.relations:
        found.update(_schema_defs(relation.schema, f"{prefix}{relation.name}."))
    return found


def _renamed(value: Any, named: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {
            key: named.get(item, item) if key == "$ref" else _renamed(item, named)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_renamed(item, named) for item in value]
    return value


def _where(schema: Schema, prefix: str = "") -> dict[str, Any]:
    """The where object over `schema`; `prefix` names the defs of a relation's where clause."""
    properties: dict[str, Any] = {
        "AND": {"$ref": f"#/$defs/{prefix}whereOrList"},
        "OR": {"$ref": f"#/$defs/{prefix}whereOrList"},
        "NOT": {"$ref": f"#/$defs/{prefix}whereOrList"},
    }
    for field in schema.fields:
        properties[field.name] = {"$ref": f"#/$defs/{prefix}{_def_name(field)}Filter"}
    for relation in schema.relations:
        properties[relation.name] = {"$ref": f"#/$defs/{prefix}{relation.name}.relation"}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _json_operators(inside_not: bool) -> dict[str, Any]:
    """A JSON field's object: a path, then operators typed by their literal (the parser also
    checks that an operator fits its literal's type, e.g. no `gt` with a boolean)."""
    properties: dict[str, Any] = {}
    for op in sorted(Op, key=lambda op: op.value):
        if op in PERIOD_OPS:  # date-time fields only
            continue
        if op in LIST_OPS:
            # One JSON type for all the values: anyOf, since an empty array fits each; null is
            # a null test, as in Prisma.
            properties[op.value] = {
                "anyOf": [
                    {"type": "null"},
                    *(
                        {"type": "array", "items": {"type": kind}}
                        for kind in ("string", "number", "boolean")
                    ),
                ]
            }
        elif op is SHORTHAND_OP:
            properties[op.value] = {"type": ["null", "string", "number", "boolean"]}
        elif op in PATTERN_OPS:
            properties[op.value] = {"type": "string"}
        else:
            properties[op.value] = {"type": ["string", "number"]}
    # A JSON array at the path (`language/lists.py`): one item, or items that must all be in it.
    item = {"type": ["string", "number", "boolean"]}
    properties[ListOp.ARRAY_CONTAINS.value] = {"oneOf": [item, {"type": "array", "items": item}]}
    properties[ListOp.ARRAY_STARTS_WITH.value] = item
    properties[ListOp.ARRAY_ENDS_WITH.value] = item
    properties[BLANK] = _BLANK
    for alias in JSON_STRING_ALIASES:  # Prisma's names of contains, startsWith, endsWith
        properties[alias] = {"type": "string"}
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
    if kind.entry.document:
        return {"$ref": "#/$defs/jsonOperators"}
    if kind.element is not None:
        return {
            "oneOf": [
                {"type": "null"},
                {"type": "array", "items": _value(kind.element)},
                {"$ref": f"#/$defs/{_name(kind)}Operators"},
            ]
        }
    return {
        "oneOf": [
            {"type": "null"},
            _value(kind),
            {"$ref": f"#/$defs/{kind.value}Operators"},
        ]
    }


def _operators(kind: FieldType, inside_not: bool) -> dict[str, Any]:
    if kind.entry.document:
        return _json_operators(inside_not)
    if kind.element is not None:
        return _list_operators(Field("_", kind), inside_not)
    value = _value(kind)
    operand = _operand(kind)
    ops = sorted((op for op in Op if op in _ops(kind)), key=lambda op: op.value)
    properties: dict[str, Any] = {}
    for op in ops:
        if op in LIST_OPS:  # null is a null test, as in Prisma
            properties[op.value] = {"oneOf": [{"type": "null"}, {"type": "array", "items": value}]}
        elif op is SHORTHAND_OP:
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
    field = Field("_", kind)
    if field.takes_blank:
        properties[BLANK] = _BLANK
    if field.takes_mode and not inside_not:
        properties["mode"] = {"enum": ["insensitive", "default"]}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _add_references(defs: dict[str, Any], kind: FieldType, columns: list[str]) -> None:
    """Let `equals`, `gt`, `gte`, `lt`, `lte` and `not` of `kind`'s fields also take a field
    reference, `{"_ref": "<field of the same type>"}` (the parser also refuses a field stored
    inside JSON on the left)."""
    name = f"{kind.value}Reference"
    defs[name] = {
        "type": "object",
        "description": "a field of the same record, of the same type",
        "properties": {REF: {"enum": columns}},
        "required": [REF],
        "additionalProperties": False,
    }
    ref = {"$ref": f"#/$defs/{name}"}
    ops = REFERENCE_OPS
    for operators in (defs[f"{kind.value}Operators"], defs[f"{kind.value}NotOperators"]):
        properties = operators["properties"]
        for op in ops:
            if op.value in properties:
                properties[op.value] = {"oneOf": [properties[op.value], ref]}
        properties["not"] = {"oneOf": [*properties["not"]["oneOf"], ref]}


def _name(kind: FieldType) -> str:
    """A type's name in `$defs`: `string[]` is `stringList`, so a `$ref` needs no escape."""
    return kind.value.replace("[]", "List")


def _def_name(field: Field) -> str:
    """The `$defs` name of `field`'s filter: its type's, or for a list kept inside JSON its
    own (`stringListInJson`), since it takes fewer operators (`Field.list_operators`)."""
    in_json = field.source and field.type.element is not None
    return _name(field.type) + ("InJson" if in_json else "")


def _json_list_defs(kind: FieldType) -> dict[str, Any]:
    """The filter of lists of `kind` kept inside JSON: a null test or the operators such a
    field takes; no bare list, which is `equals`."""
    field = Field("_", kind, ("data", "_"))
    name = _def_name(field)
    return {
        f"{name}Filter": {"oneOf": [{"type": "null"}, {"$ref": f"#/$defs/{name}Operators"}]},
        f"{name}Operators": _list_operators(field, inside_not=False),
        f"{name}NotOperators": _list_operators(field, inside_not=True),
    }


def _list_operators(field: Field, inside_not: bool) -> dict[str, Any]:
    """A list field's object (`language/lists.py`): the operators the field takes
    (`Field.list_operators`), items of the list's type, no null among them, `isEmpty` a
    boolean, `mode` where the field takes it."""
    element = field.type.element
    assert element is not None
    item = _value(element)
    items = {"type": "array", "items": item}
    operands = {
        ListOp.HAS: item,
        ListOp.HAS_SOME: items,
        ListOp.HAS_EVERY: items,
        ListOp.IS_EMPTY: {"type": "boolean"},
        ListOp.EQUALS: items,
    }
    properties: dict[str, Any] = {op.value: operands[op] for op in field.list_operators}
    negated: list[dict[str, Any]] = [{"type": "null"}]
    if ListOp.EQUALS in field.list_operators:
        negated.append(items)
    negated.append({"$ref": f"#/$defs/{_def_name(field)}NotOperators"})
    properties["not"] = {"oneOf": negated}
    if field.takes_mode and not inside_not:
        properties["mode"] = {"enum": ["insensitive", "default"]}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _ops(kind: FieldType) -> frozenset[Op]:
    from ..language.fields import OPERATORS

    return OPERATORS[kind]
