"""The fields a list's filters may name, described for a client that builds filters.

An audience builder needs, for each filterable field, its key (as filters write it), its type
(the library's `FieldType` value), the operators the library takes for it and a label to show.
This module is the one place that answers it, from the service's filter schema
(`audience_filters.SCHEMA`): the page renders whatever it says, so a field added to the schema,
or a per-list custom field (a field with a `source` inside `data`, flagged `custom`), appears in
the builder without a change to the page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ... import Aggregate, Field, Relation, Schema, zone_names
from ..db.models import List
from .audience_filters import encode_fields, schema_for

LABELS = {
    "createdAt": "Signed up at",
    "isGDPR": "GDPR consent",
    "isVerified": "Verified",
    "data": "Custom data",
}
"""Labels of contact fields that their key does not spell well by itself (a related row's
fields are labelled from their keys alone: an action's `createdAt` is when it happened)."""

_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class FieldEntry:
    """One filterable field as the catalogue shows it, with what the library's filters take
    for it (`Field.operators`, `Field.takes_mode`): a builder offers those and no others, so
    it never offers a test the service would refuse (a list kept inside `data` takes `has`,
    `hasSome`, `hasEvery` and `isEmpty`, not `equals`)."""

    key: str
    type: str
    label: str
    custom: bool
    operators: tuple[str, ...]
    insensitive: bool


@dataclass(frozen=True)
class AggregateEntry:
    """One aggregate of a relation (`count`, `sum`, `min`, `max`) and the values it may be
    of: `count` has one, the number of rows (`count`); the others, each related field they
    take. Each value is described as a field, with the operators its test takes, because the
    library reads an aggregate's test exactly as a field of the aggregate's type."""

    function: str
    fields: tuple[FieldEntry, ...]


@dataclass(frozen=True)
class RelationEntry:
    """One relation (`actions`, `audiences`), the fields of its rows, and its aggregates."""

    key: str
    label: str
    fields: tuple[FieldEntry, ...]
    aggregates: tuple[AggregateEntry, ...]


@dataclass(frozen=True)
class Catalogue:
    """Every filterable field of a list, its relations, and the time zones calendar values
    may name (`timeZone`): the IANA names the library checks a zone against, so a builder's
    zone picker offers exactly those (and `America/New_York` whole), and the zone a value
    naming none is read in."""

    fields: tuple[FieldEntry, ...]
    relations: tuple[RelationEntry, ...]
    timeZones: tuple[str, ...]  # noqa: N815 - the JSON key, as the API spells it
    defaultTimeZone: str  # noqa: N815


def label(key: str, overrides: Mapping[str, str] = LABELS) -> str:
    """A readable label for a field key: `firstName` is "First name", `isGDPR` "GDPR consent"."""
    if key in overrides:
        return overrides[key]
    words = _WORD_BREAK.sub(" ", key).split(" ")
    first, rest = words[0], [w if w.isupper() else w.lower() for w in words[1:]]
    return " ".join([first[:1].upper() + first[1:], *rest])


def _entry(field: Field, overrides: Mapping[str, str]) -> FieldEntry:
    return FieldEntry(
        field.name,
        field.type.value,
        label(field.name, overrides),
        bool(field.source),
        field.operators,
        field.takes_mode,
    )


def _fields(schema: Schema, overrides: Mapping[str, str]) -> tuple[FieldEntry, ...]:
    return tuple(_entry(field, overrides) for field in schema)


def _zones() -> tuple[str, ...]:
    return tuple(sorted(zone_names()))


def _aggregates(relation: Relation) -> tuple[AggregateEntry, ...]:
    """What `count`, `sum`, `min` and `max` may be of (a to-one relation has none)."""
    if not relation.many:
        return ()
    count = _entry(
        Field(Aggregate.COUNT.value, Aggregate.COUNT.value_type()), {"count": "Number of rows"}
    )
    entries = [AggregateEntry(Aggregate.COUNT.value, (count,))]
    for function in (Aggregate.SUM, Aggregate.MIN, Aggregate.MAX):
        names = relation.aggregable(function)
        fields = tuple(_entry(relation.schema[name], {}) for name in names)
        entries.append(AggregateEntry(function.value, fields))
    return tuple(entries)


def _relations(schema: Schema) -> tuple[RelationEntry, ...]:
    return tuple(
        RelationEntry(r.name, label(r.name), _fields(r.schema, {}), _aggregates(r))
        for r in schema.relations
    )


def of_schema(schema: Schema) -> Catalogue:
    """The catalogue of a filter schema: its fields, then each relation's fields."""
    return Catalogue(_fields(schema, LABELS), _relations(schema), _zones(), schema.time_zone)


def of_list(lst: List) -> Catalogue:
    """The fields the filters of `lst` may name: the service's schema with the list's custom
    fields (`custom_fields.py`), each under the label the list gave it."""
    declared = {field["key"]: field["type"] for field in lst.customFields}
    labels = {**LABELS, **{field["key"]: field["label"] for field in lst.customFields}}
    schema = schema_for(encode_fields(declared, lst.timeZone))
    return Catalogue(_fields(schema, labels), _relations(schema), _zones(), schema.time_zone)
