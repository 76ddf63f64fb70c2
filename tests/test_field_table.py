"""The field table's per-type data (`language/fields.py`, `TYPES`) is what the modules reading
it need: every scalar type has an entry, each entry's facts agree with the rules that use them,
and the shared operator sets say what the readers and writers once spelled op by op.

A new type without an entry, or an entry whose sample its own JSON Schema, record check or
reader refuses, fails here before any module reads a wrong answer from it.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import jsonschema
import pytest

import audiencefilter as af
from audiencefilter.language.fields import (
    ALWAYS_FOLDED,
    CALENDAR_TYPES,
    COMPARISON_OPS,
    LIST_ENTRY,
    OPERATORS,
    OPPOSITE_OPS,
    ORDERING_OPS,
    SHORTHAND_OP,
    TYPES,
    Aggregate,
    FieldType,
    Op,
)
from audiencefilter.language.nodes import Comparison
from audiencefilter.language.value_checks import value_problem
from audiencefilter.language.values import accepts, value_key

SCALARS = [t for t in FieldType if t.element is None]


def test_every_scalar_type_has_an_entry() -> None:
    assert set(TYPES) == set(SCALARS)


@pytest.mark.parametrize("kind", [t for t in FieldType if t.element is not None])
def test_a_list_type_has_no_scalar_facts(kind: FieldType) -> None:
    """A list type is not ordered, no calendar value, no literal class: a rule reading the
    table for a list field never takes it for its items' type (a `date[]` is no date)."""
    assert kind.element is not None
    assert kind.entry is LIST_ENTRY
    assert kind.element.entry is TYPES[kind.element]
    assert accepts(kind, [kind.element.entry.sample])


@pytest.mark.parametrize("kind", [t for t in SCALARS if not TYPES[t].document])
def test_the_sample_is_a_value_of_its_type(kind: FieldType) -> None:
    """The sample passes the type's JSON Schema, a record's check, and reads back as a filter
    on a field of the type."""
    entry = TYPES[kind]
    jsonschema.validate(entry.sample, dict(entry.json_schema))
    assert value_problem(kind, entry.sample) is None
    assert accepts(kind, entry.sample)
    schema = af.Schema.of(f=kind.value)
    assert af.parse({"f": entry.sample}, schema) is not None


@pytest.mark.parametrize("kind", [t for t in SCALARS if not TYPES[t].document])
def test_literal_classes_give_the_type(kind: FieldType) -> None:
    """`value_key` types a literal by the entry's `literals`, a subclass by its base's."""
    for cls in TYPES[kind].literals:
        known: dict[type, Any] = {
            bool: True,
            str: "a",
            datetime: datetime(2020, 1, 1, tzinfo=UTC),
            date: date(2020, 1, 1),
        }
        sample = known[cls] if cls in known else cls(1)
        assert value_key(sample)[0] is kind  # type: ignore[index]


def test_refused_record_classes() -> None:
    """A bool is no number and a datetime no date, though Python's classes say so."""
    assert not accepts(FieldType.NUMBER, True)
    assert not accepts(FieldType.DATE, datetime(2020, 1, 1, tzinfo=UTC))
    assert accepts(FieldType.DATETIME, datetime(2020, 1, 1, tzinfo=UTC))
    assert accepts(FieldType.JSON, object())
    assert accepts(FieldType.STRING_LIST, ["a"])


def test_ordered_types_take_the_orderings() -> None:
    for kind in SCALARS:
        if TYPES[kind].ordered:
            assert ORDERING_OPS <= OPERATORS[kind], kind


def test_moments_are_the_calendar_types() -> None:
    assert {k for k in SCALARS if TYPES[k].moment} == set(CALENDAR_TYPES)
    assert TYPES[FieldType.DATETIME].moment == "instant"
    assert TYPES[FieldType.DATE].moment == "day"


def test_operator_sets() -> None:
    assert COMPARISON_OPS == ORDERING_OPS | {SHORTHAND_OP}
    assert {OPPOSITE_OPS[op] for op in OPPOSITE_OPS} == set(OPPOSITE_OPS)
    assert all(OPPOSITE_OPS[OPPOSITE_OPS[op]] is op for op in OPPOSITE_OPS)
    assert Op.CONTAINS in ALWAYS_FOLDED


def test_the_shorthand_is_the_operator_read() -> None:
    schema = af.Schema.of(email="string")
    short = af.parse({"email": "a@b.c"}, schema)
    spelled = af.parse({"email": {SHORTHAND_OP.value: "a@b.c"}}, schema)
    assert short == spelled


def test_only_at() -> None:
    assert Comparison("f", Op.EQUALS, "a").only_at == ("a",)
    assert Comparison("f", Op.IN, ("a", "b")).only_at == ("a", "b")
    for op in (Op.NOT_IN, Op.GT, Op.CONTAINS):
        value: Any = ("a",) if op is Op.NOT_IN else "a"
        assert Comparison("f", op, value).only_at is None


def test_aggregate_value_type() -> None:
    assert Aggregate.COUNT.value_type() is FieldType.NUMBER
    assert Aggregate.COUNT.value_type(FieldType.DATETIME) is FieldType.NUMBER
    assert Aggregate.SUM.value_type(FieldType.NUMBER) is FieldType.NUMBER
    assert Aggregate.MIN.value_type(FieldType.DATE) is FieldType.DATE
    assert Aggregate.MAX.value_type(None) is FieldType.NUMBER
