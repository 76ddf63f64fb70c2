"""Relations: rows of another table that belong to a contact (its actions, its audiences).

A relation is declared in the schema beside the fields. A filter tests it with a quantifier
(`some`, `every`, `none`; `is`, `isNot` for a to-one relation) over a where clause of the
related fields, or with an aggregate (`count`, `sum`, `min`, `max`) compared like a number or
date-time field. The semantics (docs/semantics-relations.md, "Relations") are decided by the
node kinds in `nodes.py`; this module is plain data, which every reader and back-end reads.

Design choices:
- A relation carries its own `Schema`, so a where clause over related rows is read, checked and
  lowered by exactly the code that reads a contact's where clause. A relation nested inside a
  relation exists only where the related schema declares it.
- The SQL mapping (`table`, `foreign_key`, `key`) is data too: the SQL text back-end writes
  `EXISTS (SELECT 1 FROM <table> AS r WHERE r.<foreign_key> = <contact>.<key> AND W)` (with
  `through`, a link table of a many-to-many relation joined to `<table>`), and the
  SQLAlchemy back-end follows an ORM relationship of the relation's name, or uses a Core table
  given for it. `table` may name a view: the default `audiences` relation reads
  `contact_audiences` (one row per contact and audience, the manual members and the smart
  members alike), which a service defines over its own tables.
"""

from __future__ import annotations

import functools

from ..errors import FilterError
from .fields import (
    COUNT_FIELD,
    TO_MANY,
    TO_ONE,
    Aggregate,
    Field,
    FieldType,
    Quantifier,
    Relation,
    Schema,
)

__all__ = [
    "COUNT_FIELD",
    "TO_MANY",
    "TO_ONE",
    "Aggregate",
    "Quantifier",
    "Relation",
    "aggregate_type",
    "refused",
    "refused_nested",
    "relation_of",
    "rows_schema",
    "value_schema",
    "values_schema",
]


def aggregate_type(function: Aggregate, field_type: FieldType | None) -> FieldType:
    """The type of an aggregate's value (`Aggregate.value_type`)."""
    return function.value_type(field_type)


@functools.cache
def value_schema(relation: Relation, function: Aggregate, field: str) -> Schema:
    """The one-field schema an aggregate's test is read, lowered and compiled against: the
    aggregate's value is compared as a field named `field` of the aggregate's type."""
    declared = None if function is Aggregate.COUNT else relation.schema.get(field)
    kind = aggregate_type(function, None if declared is None else declared.type)
    return Schema((Field(field, kind),), name=f"{function.value}({relation.name})")


def relation_of(schema: Schema, name: str) -> Relation:
    """The relation `name` of `schema`, for a back-end walking a tree read against it."""
    relation = schema.relation(name)
    if relation is None:
        raise KeyError(f"the schema {schema.name!r} has no relation {name!r}")
    return relation


def rows_schema(schema: Schema, relation: Relation) -> Schema:
    """The schema a relation's where clause is lowered, resolved and explained over: the
    related rows' own, in `schema`'s zone. A calendar value inside a relation that names no
    zone (`start of today`, `anniversary within this day`) is in the contact schema's zone, as
    at top level (docs/semantics-relations.md): the one place every walker takes that rule from."""
    return relation.schema.in_zone(schema.time_zone)


def values_schema(schema: Schema, relation: Relation, function: Aggregate, field: str) -> Schema:
    """`value_schema` in `schema`'s zone, as `rows_schema` takes the related rows."""
    return value_schema(relation, function, field).in_zone(schema.time_zone)


def refused(backend: str, relation: str) -> FilterError:
    """The error of a back-end that cannot answer a relation condition faithfully."""
    from ..errors import Issue

    return FilterError(
        [
            Issue(
                path=relation,
                message=f'{backend} does not evaluate relation conditions ("{relation}")',
                suggestion="evaluate this filter in memory, with SQL text or with SQLAlchemy",
            )
        ]
    )


def refused_nested(backend: str, relation: str) -> FilterError:
    """The error of a back-end that cannot answer a relation inside a relation: the same
    words on every such back-end (docs/backends-sql-rules.md)."""
    from ..errors import Issue

    return FilterError(
        [
            Issue(
                path=relation,
                message=f'{backend} does not evaluate a relation inside a relation ("{relation}")',
                suggestion="evaluate this filter in memory, with SQL text or with SQLAlchemy",
            )
        ]
    )
