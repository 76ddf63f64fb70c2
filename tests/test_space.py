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
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

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
    SPACE,
    Batch,
    Encoding,
    Operation,
    Placement,
    Slot,
    batches,
    edge_conditions,
    every_condition,
    held_records,
    json_encoded,
    operations,
    slots,
    space_schema,
)
from audiencefilter.testing.space_examples import example_records
from tests.space_surfaces import SURFACES, Disagreement, Surface, judge, reduce

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
DEEP = PROFILE == "deep"
BATCHES = int(os.environ.get("SPACE_BATCHES", 600 if DEEP else 3))
"""Generated batches (12 filters x 12 records each) every surface is asked."""
SWEEP_CHUNK = 400
REDUCED = 40
"""Disagreements per surface reduced to a smaller filter; later ones are reported as found."""
"""Conditions of the sweep asked in one batch (one statement per database and way)."""


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
    wheres = [where for _, _, where in every_condition(SPACE)]
    quantifiers = {
        q for where in wheres for body in where.values() if isinstance(body, dict) for q in body
    }
    assert {q.value for q in Quantifier} <= quantifiers


# ---- batches ---------------------------------------------------------------------------------

_BATCHES: list[Batch] = []


def generated_batches() -> list[Batch]:
    """The batches of this run, drawn once (derandomised in CI) and shared by every surface."""
    if not _BATCHES:
        drawn: list[Batch] = []

        @settings(
            max_examples=BATCHES,
            phases=[Phase.generate],
            database=None,
            deadline=None,
            derandomize=not DEEP,
            suppress_health_check=list(HealthCheck),
        )
        @given(batches())
        def collect(batch: Batch) -> None:
            drawn.append(batch)

        collect()
        _BATCHES.extend(drawn[:BATCHES])
    return _BATCHES


def _without_ids(record: dict[str, Any]) -> dict[str, Any]:
    """`record` without the ids a batch gives it and its related rows."""
    found = {k: v for k, v in record.items() if k != "id"}
    for key, rows in found.items():
        if isinstance(rows, list) and all(isinstance(r, dict) for r in rows):
            found[key] = [{k: v for k, v in r.items() if k != "id"} for r in rows]
        elif isinstance(rows, dict) and "id" in rows:
            found[key] = {k: v for k, v in rows.items() if k != "id"}
    return found


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


def sweep_wheres() -> list[dict[str, Any]]:
    """Every condition of the space (deep); in CI one per type, placement, level (top or in a
    related row), operator and kind of operand: the `mode` and `not` variants and the to-one
    relation's rows are left to the generated batches there."""
    return _one_per_kind(every_condition(SPACE), variants=False) + edge_wheres()


def edge_wheres() -> list[dict[str, Any]]:
    """The conditions whose operand is an edge literal (`edge_conditions`): in CI one per type,
    placement, level, operator, kind of operand and variant (`not`, `mode`), each with the
    next edge in turn; deep, every slot and operation; `SPACE_EDGES=all`, with every edge."""
    every = os.environ.get("SPACE_EDGES") == "all"
    return _one_per_kind(edge_conditions(SPACE, every=every), variants=True)


def _one_per_kind(
    conditions: Iterable[tuple[Slot, Operation, dict[str, Any]]], *, variants: bool
) -> list[dict[str, Any]]:
    """The conditions' where clauses: all of them deep; in CI the first of each kind (type,
    placement, level, function, operator, operand kind, and the variant when asked)."""
    seen: set[tuple[Any, ...]] = set()
    wheres = []
    for slot, operation, where in conditions:
        key: tuple[Any, ...] = (
            slot.type,
            slot.placement,
            slot.relation is None,
            slot.function,
            operation.key,
            operation.operand,
        )
        if variants:
            key += (operation.negated, operation.insensitive)
        if DEEP or key not in seen:
            seen.add(key)
            wheres.append(where)
    return wheres


_SWEEP: list[Batch] = []


def sweep_batches() -> list[Batch]:
    """The sweep: the conditions of `sweep_wheres`, over the records of the first batch (two
    in the deep run), made once so that every surface meets the same batches."""
    if not _SWEEP:
        _SWEEP.extend(_sweep_batches())
    return _SWEEP


def _sweep_batches() -> list[Batch]:
    wheres = sweep_wheres()
    base = generated_batches()[0]
    first = generated_batches()[: 2 if DEEP else 1]
    pool = [r for b in first for r in b.records if b.schema == SPACE]
    pool = pool or list(base.records)
    # and the records in which every placement holds each kind of value in turn
    held = held_records(SPACE, base.now)
    pool += [json_encoded(r) for r in held] if base.encoding is Encoding.JSON else held
    records = tuple({**r, "id": f"s{i}"} for i, r in enumerate(pool))
    return [
        replace(base, schema=SPACE, wheres=tuple(wheres[i : i + SWEEP_CHUNK]), records=records)
        for i in range(0, len(wheres), SWEEP_CHUNK)
    ]


# ---- what has been found ---------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """A kind of disagreement still open: which surfaces, how to tell it, why."""

    name: str
    reason: str
    matches: Callable[[Disagreement], bool]


KNOWN_FAMILIES: list[Family] = [
    # Empty: every family the space has found is closed, each with its own test (the
    # closing commits name them). A new one goes here only with its reason, while it is open.
]
"""Disagreements known and open, one entry per family; a test meeting only these is xfail."""


def family_of(found: Disagreement) -> str | None:
    return next((f.name for f in KNOWN_FAMILIES if f.matches(found)), None)


@dataclass
class Tally:
    """Counts of the run, for the summary: checks, refusals and disagreements per surface."""

    checks: Counter[str]
    refusals: Counter[str]
    disagreements: Counter[str]
    repros: list[dict[str, Any]]

    def report(self) -> dict[str, Any]:
        return {
            "checks": dict(self.checks),
            "refusals": dict(self.refusals),
            "disagreements": dict(self.disagreements),
            "repros": self.repros,
        }


TALLY = Tally(Counter(), Counter(), Counter(), [])


# ---- the surfaces (their databases: tests/space_databases.py) ----------------------------


def _params() -> list[Any]:
    return [
        pytest.param(
            surface, id=surface.name, marks=[getattr(pytest.mark, m) for m in surface.marks]
        )
        for surface in SURFACES
    ]


def _runner(surface: Surface, request: pytest.FixtureRequest) -> Callable[..., list[Any]]:
    if surface.fixture is None:
        return surface.run
    resource = request.getfixturevalue(surface.fixture)
    return lambda *args: surface.run(resource, *args)


def ask(
    surface: Surface,
    run: Callable[..., list[Any]],
    batch: Batch,
    wheres: tuple[dict[str, Any], ...],
) -> list[Disagreement]:
    """The disagreements of one surface on one batch (each reduced), counted in the tally."""
    records = [r for r in batch.records if surface.stores(r)][: surface.records]
    filters = [af.parse(where, batch.schema) for where in wheres]
    outcomes = run(batch, filters, records)
    checks, refusals, found = judge(surface, batch, wheres, records, outcomes)
    TALLY.checks[surface.name] += checks
    TALLY.refusals[surface.name] += refusals
    reduced = []
    for item in _first_per_filter(found):
        if TALLY.disagreements[surface.name] + len(reduced) < REDUCED:
            item = _reduced(surface, run, batch, item)
        reduced.append(replace(item, family=family_of(item)))
    for item in reduced:
        TALLY.disagreements[surface.name] += 1
        TALLY.repros.append(item.repro())
    return reduced


def _first_per_filter(found: list[Disagreement]) -> list[Disagreement]:
    seen: set[str] = set()
    kept = []
    for item in found:
        key = repr(item.where)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _reduced(
    surface: Surface, run: Callable[..., list[Any]], batch: Batch, found: Disagreement
) -> Disagreement:
    def still(where: dict[str, Any]) -> Disagreement | None:
        one = replace(batch, wheres=(where,), records=(found.record,))
        outcomes = run(one, [af.parse(where, batch.schema)], [found.record])
        return next(iter(judge(surface, one, (where,), [found.record], outcomes)[2]), None)

    small = reduce(found, still, steps=12 if surface.fixture else 40)
    return replace(small, family=family_of(small))


def save_report() -> None:
    """The tally so far as JSON at `SPACE_REPORT`, after each surface's test: a long deep run
    stopped early still leaves its figures."""
    path = os.environ.get("SPACE_REPORT")
    if path:
        import json
        from pathlib import Path

        Path(path).write_text(
            json.dumps(TALLY.report(), indent=1, ensure_ascii=True, default=str), encoding="utf-8"
        )


def _verdict(surface: Surface, found: list[Disagreement]) -> None:
    save_report()
    unknown = [d for d in found if d.family is None]
    if unknown:
        import json

        shown = "\n".join(
            json.dumps(d.repro(), ensure_ascii=True, default=str) for d in unknown[:5]
        )
        pytest.fail(f"{len(unknown)} disagreement(s) with the oracle on {surface.name}:\n{shown}")
    if found:
        families = sorted({d.family for d in found if d.family})
        reasons = "; ".join(f"{f.name}: {f.reason}" for f in KNOWN_FAMILIES if f.name in families)
        pytest.xfail(f"known open families on {surface.name}: {reasons}")


@pytest.mark.parametrize("surface", _params())
def test_the_sweep_agrees_with_the_oracle(surface: Surface, request: pytest.FixtureRequest) -> None:
    """Every condition of the space (each slot, each operation legal there) on this surface."""
    run = _runner(surface, request)
    stride = 1 if DEEP else surface.stride
    found = [
        d for batch in sweep_batches() for d in ask(surface, run, batch, batch.wheres[::stride])
    ]
    _verdict(surface, found)


@pytest.mark.parametrize("surface", _params())
def test_generated_batches_agree_with_the_oracle(
    surface: Surface, request: pytest.FixtureRequest
) -> None:
    """Generated where clauses over generated records, batch after batch, on this surface."""
    run = _runner(surface, request)
    found = [d for batch in generated_batches() for d in ask(surface, run, batch, batch.wheres)]
    _verdict(surface, found)


def test_the_space_schemas_differ_only_by_zone() -> None:
    assert space_schema("Pacific/Kiritimati").fields == SPACE.fields


def nul_wheres() -> list[dict[str, Any]]:
    """Every condition of the space whose operand holds NUL (alone, inside text, or beside
    another item of a list), in every placement and variant: PostgreSQL's text and jsonb hold
    no NUL, SQLite reads a C string up to it, so each engine must answer without writing it."""
    import json

    return [
        where
        for _, _, where in edge_conditions(SPACE, every=True)
        if "\\u0000" in json.dumps(where)
    ]


@pytest.mark.parametrize("surface", [p for p in _params() if not p.id.startswith("cli-")])
def test_operands_holding_nul_agree_with_the_oracle(
    surface: Surface, request: pytest.FixtureRequest
) -> None:
    """A list literal holding NUL made PostgreSQL's SQL text raise a bare `ValueError` in
    every placement (a JSON array at a path, a list declared inside JSON, inside a related
    row); the family is every operand holding NUL, on every surface."""
    run = _runner(surface, request)
    base = sweep_batches()[0]
    wheres = nul_wheres()
    found = [
        d
        for i in range(0, len(wheres), SWEEP_CHUNK)
        for d in ask(surface, run, base, tuple(wheres[i : i + SWEEP_CHUNK]))
    ]
    _verdict(surface, found)
