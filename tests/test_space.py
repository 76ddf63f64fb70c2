"""One truth, generated: the whole input space through every surface, against the oracle.

`audiencefilter.testing.space` models the space from the library's registries (every field
type in every placement, every operator legal there, edge values, relations, both record
encodings); `tests/oracle.py` says what each filter means from docs/semantics.md alone;
`tests/space_surfaces.py` asks every surface (memory, round trips, formats, the command line,
polars, pandas, SQL on four databases three ways, Django on two, PySpark and Spark SQL) a batch
of filters over a batch of records at once.

Two parts:
- the **sweep**: one condition per slot and operation of the space (`every_condition`), all
  through every surface, so every FieldType x placement x operator is asked everywhere;
- **generated batches**: where clauses of several conditions (groups, relations, aggregates)
  over records of edge values, drawn by hypothesis (`HYPOTHESIS_PROFILE=deep` for hundreds of
  thousands of checks; docs/testing.md).

A disagreement of a family still open (`KNOWN_FAMILIES`) is reported and the test is marked
xfail with the family's reason; any other fails with a reduced repro (filter, record, surface,
expected and got). Counts per surface go to the summary at the end of the session.

This file asks the memory surfaces (`matches`, `compile`, `select`, `FilterSet`, `simplify`,
`residual`, `explain`, the JSON and text round trips) and checks that the space reaches every
registry; each other family of surfaces has a file of its own (`tests/test_space_text.py`,
`_frames`, `_sql`, `_servers`, `_spark`), so that the workers share them out, and
`tests/space_run.py` holds what they share.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.language.fields import (
    ARRAY_OPS,
    JSON_SOURCE_TYPES,
    JSON_VALUE_TYPES,
    LIST_FIELD_OPS,
    OPERATORS,
    Aggregate,
    FieldType,
    Quantifier,
)
from audiencefilter.testing.space import (
    NOWS,
    SPACE,
    Encoding,
    Placement,
    Slot,
    edge_conditions,
    every_condition,
    json_encoded,
    operations,
    slots,
    space_schema,
)
from audiencefilter.testing.space import _numbered as _numbered
from audiencefilter.testing.space_examples import example_records
from tests.space_run import FAMILIES, family_tests, generated_batches
from tests.space_surfaces import SURFACES

# ---- the registries, every one reached --------------------------------------------------------


def _reached() -> set[tuple[str, bool, str, str]]:
    return {
        (slot.type.value, slot.relation is not None, slot.placement.value, op.key)
        for slot in slots(SPACE)
        for op in operations(slot, SPACE)
    }


def _placements(kind: FieldType) -> list[Placement]:
    found = [Placement.COLUMN] if kind is not FieldType.JSON else []
    if kind in JSON_SOURCE_TYPES:
        found.append(Placement.DECLARED)
    if kind in JSON_VALUE_TYPES:
        found.append(Placement.PATH)
    return found


def _registry_operators(kind: FieldType, placement: Placement) -> set[str]:
    if placement is Placement.PATH:
        return {op.value for op in OPERATORS[kind]} | {op.value for op in ARRAY_OPS}
    if kind.element is not None:
        return {op.value for op in LIST_FIELD_OPS}
    return {op.value for op in OPERATORS[kind]}


REFUSED_IN_JSON = {
    "equals": "docs/semantics-json.md, typed fields inside JSON: an array's items are not one type",
}
"""Operators of list types that a list declared inside JSON refuses."""


def test_every_type_placement_and_operator_of_the_registries_is_reached() -> None:
    """Every FieldType in every placement it may take (a column, a field declared inside JSON,
    a path's JSON type), at the top level and in a related row, with every operator the
    registries give it: the generator reaches each, or the library refuses it there for a
    documented reason. A new type, operator or placement lands here first."""
    reached = _reached()
    missing = []
    for kind in FieldType:
        for placement in _placements(kind):
            for related in (False, True):
                for op in _registry_operators(kind, placement):
                    key = (kind.value, related, placement.value, op)
                    refused = placement is Placement.DECLARED and kind.element is not None
                    if key not in reached and not (refused and op in REFUSED_IN_JSON):
                        missing.append(key)
    assert not missing, f"unreachable in the space: {sorted(missing)}"


def test_a_field_declared_inside_json_refuses_what_json_cannot_hold() -> None:
    """Types outside `JSON_SOURCE_TYPES` (date-times, JSON, date and date-time lists) are
    refused inside JSON when the schema is built, so the space has no such slot."""
    for kind in FieldType:
        if kind in JSON_SOURCE_TYPES:
            continue
        with pytest.raises(ValueError, match="inside JSON"):
            af.Schema.of(x=(kind.value, ("data", "x")))


def test_every_relation_kind_is_reached() -> None:
    """Every quantifier (to-many and to-one) and every aggregate is a slot of the space."""
    reached = {(slot.relation, slot.function) for slot in slots(SPACE)}
    functions = {function for _, function in reached if function is not None}
    assert functions == set(Aggregate)
    sweep = list(every_condition(SPACE))
    wheres = [where for _, _, where in sweep]
    quantifiers = {
        q for where in wheres for body in where.values() if isinstance(body, dict) for q in body
    }
    assert {q.value for q in Quantifier} <= quantifiers

    def own(slot: Slot) -> bool:
        return slot.relation is None

    kept = [(slot, where) for slot, _, where in every_condition(SPACE, of=own)]
    assert kept == [(slot, where) for slot, _, where in sweep if own(slot)]
    assert 0 < len(kept) < len(sweep)
    edges = list(edge_conditions(SPACE, every=True, of=own))
    assert edges and all(own(slot) for slot, _, _ in edges)


# ---- batches ---------------------------------------------------------------------------------


def _without_ids(record: dict[str, Any]) -> dict[str, Any]:
    """`record` without the ids the batch gave it and its related rows (`r0`, `r0.0`, `r0.o`);
    an id a related row was built with is its own, and stays."""
    name = record["id"]
    found = {k: v for k, v in record.items() if k != "id"}
    for key, rows in found.items():
        if isinstance(rows, list) and all(isinstance(r, dict) for r in rows):
            found[key] = [_unnumbered(r, f"{name}.{n}") for n, r in enumerate(rows)]
        elif isinstance(rows, dict):
            found[key] = _unnumbered(rows, f"{name}.o")
    return found


def _unnumbered(row: dict[str, Any], number: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if not (k == "id" and v == number)}


def test_the_batches_hold_the_records_examples_builds() -> None:
    """`af.testing.examples` is a record source of the batches: the records it builds for the
    first filters of a batch (inside, outside, each condition's pair) are among the records
    every surface is asked about, ids `e0`, `e1`, ..., and some fall on each side of their
    filter, so the surfaces meet records on a condition's edge."""
    drawn = generated_batches()
    built = [(b, r) for b in drawn for r in b.records if str(r["id"]).startswith("e")]
    assert len(built) == sum(b.notes["examples"] for b in drawn) > 0
    sides: set[bool] = set()
    for batch in drawn:
        wheres = batch.wheres[: batch.notes["example_filters"]]
        expected = list(example_records(batch.schema, batch.now, wheres))
        if batch.encoding is Encoding.JSON:
            expected = json_encoded(expected)
        assert [_without_ids(r) for b, r in built if b is batch] == expected
        for where in wheres:
            flt = af.parse(where, batch.schema)
            sides |= {flt.matches(r, now=batch.now) for b, r in built if b is batch}
    assert sides == {True, False}


@pytest.mark.parametrize(
    ("held", "read"),
    [
        (Decimal("0.1"), 0.1),
        (Decimal("-4611686018427387854.75"), -4611686018427387854.75),
        (Decimal("12345678901234567890123"), 12345678901234567890123),
        (Decimal("5.0"), 5.0),
        (Decimal("1E+2"), 100.0),
        (Decimal("Infinity"), math.inf),
    ],
    ids=str,
)
def test_a_decimal_the_examples_build_reads_back_from_json_as_its_digits(
    held: Decimal, read: float | int
) -> None:
    """`af.testing.examples` builds exact witnesses (`Decimal("0.1")`, the decimal between two
    bounds) at a JSON number's path; a batch drawn in the JSON encoding failed on them
    (`TypeError: Decimal`, found by the space deep). In JSON they are their digits, read back
    as JSON text reads: an `int` when written whole, else the nearest double."""
    where = {"AND": [{"j_number": {"gt": 0.1}}, {"j_number": {"lt": -4611686018427387954}}]}
    built = example_records(SPACE, NOWS[0], [where])
    assert any(isinstance(r["data"]["j_number"], Decimal) for r in built)
    assert [r["data"]["j_number"] for r in json_encoded(built)] == [0.1] * len(built)
    encoded = json_encoded({"data": {"n": held, "list": [held]}})
    assert encoded == {"data": {"n": read, "list": [read]}}
    assert type(encoded["data"]["n"]) is type(read)


def test_a_related_row_keeps_the_id_it_was_built_with() -> None:
    """A related row's `id` is a field like any other: a record `af.testing.examples` built on
    the edge of `owner.is.id` stays on its side once the batch numbers it (the batch gave the
    row its own id before, and the record built inside fell outside)."""
    where = {"owner": {"is": {"id": {"equals": "a a"}}}}
    now = NOWS[0]
    flt = af.parse(where, SPACE)
    built = example_records(SPACE, now, [where])
    numbered = [_numbered(i, record, "e") for i, record in enumerate(built)]
    sides = [flt.matches(record, now=now) for record in built]
    assert True in sides
    assert [flt.matches(record, now=now) for record in numbered] == sides


def test_the_space_schemas_differ_only_by_zone() -> None:
    assert space_schema("Pacific/Kiritimati").fields == SPACE.fields


def test_every_surface_is_asked_by_one_file() -> None:
    """The space test is split by family of surfaces, one file each (`FAMILIES`): a surface
    added to `SURFACES` must land in exactly one of them, or no run would ask it."""
    asked = [s.name for family in FAMILIES.values() for s in family]
    assert sorted(asked) == sorted(s.name for s in SURFACES)


# ---- the memory surfaces ---------------------------------------------------------------------

(
    test_the_sweep_agrees_with_the_oracle,
    test_generated_batches_agree_with_the_oracle,
    test_operands_holding_nul_agree_with_the_oracle,
) = family_tests("memory")
