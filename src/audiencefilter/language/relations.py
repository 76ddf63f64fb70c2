"""Relations: rows of another table that belong to a contact (its actions, its audiences).

A relation is declared in the schema beside the fields. A filter tests it with a quantifier
(`some`, `every`, `none`; `is`, `isNot` for a to-one relation) over a where clause of the
related fields, or with an aggregate (`count`, `sum`, `min`, `max`) compared like a number or
date-time field. The semantics (docs/semantics.md, "Relations") are decided by the node kinds
in `nodes.py`; this module is plain data, which every reader and back-end reads.

Design choices:
- A relation carries its own `Schema`, so a where clause over related rows is read, checked and
  lowered by exactly the code that reads a contact's where clause. A relation nested inside a
  relation exists only where the related schema declares it.
- The SQL mapping (`table`, `foreign_key`, `key`) is data too: the SQL text back-end writes
  `EXISTS (SELECT 1 FROM <table> AS r WHERE r.<foreign_key> = <contact>.<key> AND W)`, and the
  SQLAlchemy back-end follows an ORM relationship of the relation's name, or uses a Core table
  given for it. `table` may name a view: the default `audiences` relation reads
  `contact_audiences` (one row per contact and audience, the manual members and the smart
  members alike), which a service defines over its own tables.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from ..errors import FilterError

if TYPE_CHECKING:
    from .fields import FieldType, Schema


class Quantifier(StrEnum):
    """How a where clause over related rows decides the contact (spelled as in JSON)."""

    SOME = "some"
    EVERY = "every"
    NONE = "none"
    IS = "is"
    IS_NOT = "isNot"


class Aggregate(StrEnum):
    """A value computed over related rows (spelled as in JSON)."""

    COUNT = "count"
    SUM = "sum"
    MIN = "min"
    MAX = "max"


TO_MANY = (Quantifier.SOME, Quantifier.EVERY, Quantifier.NONE)
TO_ONE = (Quantifier.IS, Quantifier.IS_NOT)

COUNT_FIELD = "count"
"""The name under which a `count`'s value is compared (and named in messages)."""


@dataclass(frozen=True)
class Relation:
    """One relation of a schema.

    Attributes:
        name: The key in filters and in records (`actions`).
        schema: The fields (and nested relations) of a related row.
        many: To-many (a list of rows; `some`/`every`/`none` and aggregates) or to-one (one row
            or none; `is`/`isNot`).
        table: The related table (or view) for SQL text.
        foreign_key: The related table's column holding the contact's key.
        key: The contact's column the foreign key refers to.
        columns: `(field, column)` pairs for related fields whose column is named otherwise
            (`("createdAt", "created_at")`).
    """

    name: str
    schema: Schema
    many: bool = True
    table: str = ""
    foreign_key: str = "contact_id"
    key: str = "id"
    columns: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.table:
            object.__setattr__(self, "table", self.name)

    @property
    def quantifiers(self) -> tuple[Quantifier, ...]:
        return TO_MANY if self.many else TO_ONE

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key valid in this relation's object, for messages and suggestions."""
        if not self.many:
            return tuple(q.value for q in TO_ONE)
        return (*(q.value for q in TO_MANY), *(a.value for a in Aggregate), "where")

    def aggregable(self, function: Aggregate) -> tuple[str, ...]:
        """The related fields `function` takes: numbers for `sum`, numbers and date-times for
        `min` and `max`."""
        from .fields import FieldType

        kinds = {FieldType.NUMBER} if function is Aggregate.SUM else {FieldType.NUMBER}
        if function in (Aggregate.MIN, Aggregate.MAX):
            kinds.add(FieldType.DATETIME)
        return tuple(f.name for f in self.schema if f.type in kinds and not f.source)


def aggregate_type(function: Aggregate, field_type: FieldType | None) -> FieldType:
    """The type of an aggregate's value: a number for `count` and `sum`, else the field's."""
    from .fields import FieldType

    if function is Aggregate.COUNT or field_type is None:
        return FieldType.NUMBER
    return field_type


@functools.cache
def value_schema(relation: Relation, function: Aggregate, field: str) -> Schema:
    """The one-field schema an aggregate's test is read, lowered and compiled against: the
    aggregate's value is compared as a field named `field` of the aggregate's type."""
    from .fields import Field, Schema

    declared = None if function is Aggregate.COUNT else relation.schema.get(field)
    kind = aggregate_type(function, None if declared is None else declared.type)
    return Schema((Field(field, kind),), name=f"{function.value}({relation.name})")


def relation_of(schema: Schema, name: str) -> Relation:
    """The relation `name` of `schema`, for a back-end walking a tree read against it."""
    relation = schema.relation(name)
    if relation is None:
        raise KeyError(f"the schema {schema.name!r} has no relation {name!r}")
    return relation


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
