"""The JSON Schema of relation objects: `{"some": W}`, `{"where": W, "count": N}`, ...

Each relation gets its own where object (over the related fields, under the prefix
`<relation>.`), so a where clause over related rows is validated by the same shapes as the
contact's; an aggregate's value takes the number or date-time filter of its type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..language.fields import FieldType, Schema
from ..language.relations import TO_MANY, TO_ONE, Aggregate, Relation


def relation_kinds(schema: Schema) -> set[FieldType]:
    """The field types of every related schema, nested ones included."""
    kinds: set[FieldType] = {Aggregate.COUNT.value_type()} if schema.relations else set()
    for relation in schema.relations:
        kinds |= {f.type for f in relation.schema.fields} | relation_kinds(relation.schema)
    return kinds


def relation_defs(
    schema: Schema, where: Callable[[Schema, str], dict[str, Any]], prefix: str = ""
) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for relation in schema.relations:
        inner = f"{prefix}{relation.name}."
        defs[f"{inner}where"] = where(relation.schema, inner)
        defs[f"{inner}whereOrList"] = {
            "oneOf": [
                {"$ref": f"#/$defs/{inner}where"},
                {"type": "array", "items": {"$ref": f"#/$defs/{inner}where"}},
            ]
        }
        defs[f"{prefix}{relation.name}.relation"] = _relation(relation, inner)
        defs.update(relation_defs(relation.schema, where, inner))
    return defs


def _relation(relation: Relation, inner: str) -> dict[str, Any]:
    quantified = {"$ref": f"#/$defs/{inner}where"}
    if not relation.many:
        nullable = {"oneOf": [{"type": "null"}, quantified]}
        return {
            "type": "object",
            "properties": {q.value: nullable for q in TO_ONE},
            "additionalProperties": False,
        }
    properties: dict[str, Any] = {q.value: quantified for q in TO_MANY}
    properties["where"] = quantified
    properties[Aggregate.COUNT.value] = {"$ref": "#/$defs/numberFilter"}
    for function in (Aggregate.SUM, Aggregate.MIN, Aggregate.MAX):
        fields = {
            name: {"$ref": f"#/$defs/{relation.schema[name].type.value}Filter"}
            for name in relation.aggregable(function)
        }
        properties[function.value] = {
            "type": "object",
            "properties": fields,
            "additionalProperties": False,
            "minProperties": 1,
            "maxProperties": 1,
        }
    # `where` narrows aggregates: it needs one beside it.
    needs = {"anyOf": [{"required": [a.value]} for a in Aggregate]}
    return {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        "dependentSchemas": {"where": needs},
    }
