"""What every file of the space test shares: the batches drawn once per process, the sweep,
the operands holding NUL, asking a surface and judging it against the oracle, the known open
families and the tally the summary prints (tests/conftest.py, `_space_summary`).

The space test is split by surface family (tests/test_space*.py) so that each family is one
file a worker runs on its own; the batches, the sweep and the oracle's answers are made once in
each process and shared by every file it runs, so the summary of a run in one process counts
every surface.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

import audiencefilter as af
from audiencefilter.language.fields import FieldType
from audiencefilter.testing.space import (
    SPACE,
    Batch,
    Encoding,
    Operation,
    Slot,
    batches,
    edge_conditions,
    every_condition,
    held_records,
    json_encoded,
)
from audiencefilter.testing.space import _numbered as _numbered
from audiencefilter.testing.space_examples import example_records
from tests.space_surfaces import (
    CLI_SURFACES,
    CLICKHOUSE_SURFACES,
    DJANGO_SURFACES,
    FORMAT_SURFACES,
    MEMORY_SURFACES,
    PANDAS_SURFACES,
    POLARS_SURFACES,
    SPARK_SURFACES,
    SQL_SURFACES,
    Disagreement,
    Surface,
    judge,
    reduce,
)

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
DEEP = PROFILE == "deep"
BATCHES = int(os.environ.get("SPACE_BATCHES", 600 if DEEP else 3))
"""Generated batches (12 filters x 12 records each) every surface is asked."""
SWEEP_CHUNK = 400
"""Conditions of the sweep asked in one batch (one statement per database and way)."""
REDUCED = 40
"""Disagreements per surface reduced to a smaller filter; later ones are reported as found."""


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


def sweep_wheres() -> list[dict[str, Any]]:
    """Every condition of the space (deep); in CI one per type, placement, level (top or in a
    related row), operator and kind of operand: the `mode` and `not` variants and the to-one
    relation's rows are left to the generated batches there."""
    return _one_per_kind(every_condition(SPACE), variants=False) + edge_wheres() + doubles_edges()


DOUBLES_EDGES = frozenset({2**53 + 1, 2**63 - 1, 2**63})
"""Integers an engine reading numbers as doubles holds as another (2^53 + 1 as 2^53, 2^63 - 1
as 2^63) or that only a double holds (2^63)."""


def doubles_edges() -> list[dict[str, Any]]:
    """Every test of a number list (a column or declared inside JSON, at the top and in each
    relation, `not` included) whose operand holds one of `DOUBLES_EDGES`, in CI too: over the
    held records' lists holding each of them, where an engine reading the items as doubles
    (MySQL/MariaDB's and ClickHouse's JSON, DuckDB's `DOUBLE[]`, Spark) answers by the doubles.
    The one-per-kind sweep met almost none of them, and no surface was asked `has 2^53 + 1`
    of a list holding it."""
    number_lists = edge_conditions(
        SPACE, every=True, of=lambda slot: slot.type is FieldType.NUMBER_LIST
    )
    return [where for _, _, where in number_lists if _holds_edge(where)]


def _holds_edge(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_edge(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_edge(v) for v in value)
    return type(value) is int and value in DOUBLES_EDGES


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


_NUL: list[dict[str, Any]] = []


def nul_wheres() -> list[dict[str, Any]]:
    """The conditions of the space whose operand holds NUL (alone, inside text, or beside
    another item of a list): PostgreSQL's text and jsonb hold no NUL, SQLite reads a C string
    up to it, so each engine must answer without writing it. Deep, every one of them; in CI
    one per type, placement, relation, function, operator, kind of operand and variant (`not`,
    `mode`), the NUL edges taken in turn, so every placement and variant still meets a NUL."""
    if not _NUL:
        every: list[dict[str, Any]] = []
        kinds: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for slot, operation, where in edge_conditions(SPACE, every=True):
            if "\\u0000" not in json.dumps(where):
                continue
            key = (
                slot.type,
                slot.placement,
                slot.relation,
                slot.function,
                operation.key,
                operation.operand,
                operation.negated,
                operation.insensitive,
            )
            kinds.setdefault(key, []).append(where)
            every.append(where)
        if DEEP:
            _NUL.extend(every)
        else:
            _NUL.extend(found[turn % len(found)] for turn, found in enumerate(kinds.values()))
    return _NUL


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


def surface_params(surfaces: Sequence[Surface]) -> list[Any]:
    """The surfaces of one family as pytest parameters, named and marked as each asks."""
    return [
        pytest.param(
            surface, id=surface.name, marks=[getattr(pytest.mark, m) for m in surface.marks]
        )
        for surface in surfaces
    ]


def runner(surface: Surface, request: pytest.FixtureRequest) -> Callable[..., list[Any]]:
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
        Path(path).write_text(
            json.dumps(TALLY.report(), indent=1, ensure_ascii=True, default=str), encoding="utf-8"
        )


def verdict(surface: Surface, found: list[Disagreement]) -> None:
    save_report()
    unknown = [d for d in found if d.family is None]
    if unknown:
        shown = "\n".join(
            json.dumps(d.repro(), ensure_ascii=True, default=str) for d in unknown[:5]
        )
        pytest.fail(f"{len(unknown)} disagreement(s) with the oracle on {surface.name}:\n{shown}")
    if found:
        families = sorted({d.family for d in found if d.family})
        reasons = "; ".join(f"{f.name}: {f.reason}" for f in KNOWN_FAMILIES if f.name in families)
        pytest.xfail(f"known open families on {surface.name}: {reasons}")


# ---- the three questions every surface is asked -------------------------------------------


def sweep(surface: Surface, request: pytest.FixtureRequest) -> None:
    """Every condition of the sweep on `surface` (every `stride`-th in CI, from its `offset`)."""
    run = runner(surface, request)
    start, stride = (0, 1) if DEEP else (surface.offset, surface.stride)
    found = [
        d
        for batch in sweep_batches()
        for d in ask(surface, run, batch, batch.wheres[start::stride])
    ]
    verdict(surface, found)


def generated(surface: Surface, request: pytest.FixtureRequest) -> None:
    """Every generated batch on `surface`."""
    run = runner(surface, request)
    found = [d for batch in generated_batches() for d in ask(surface, run, batch, batch.wheres)]
    verdict(surface, found)


def operands_holding_nul(surface: Surface, request: pytest.FixtureRequest) -> None:
    """Every condition whose operand holds NUL on `surface`, over the sweep's records and the
    records `af.testing.examples` builds on each condition's edge (`nul_batches`)."""
    run = runner(surface, request)
    found = [d for batch in nul_batches() for d in ask(surface, run, batch, batch.wheres)]
    verdict(surface, found)


_NUL_BATCHES: list[Batch] = []


def nul_batches() -> list[Batch]:
    """`nul_wheres` in chunks, each over the sweep's records and the records built on its
    conditions' edges (ids `n0`, `n1`, ...): records holding the NUL operand itself, in a list's
    item or a related row, which the sweep's records never do. Without them SQLite's reading of
    a list item `"\u0000"` as the empty string went unseen: no record held one."""
    if not _NUL_BATCHES:
        base = sweep_batches()[0]
        wheres = nul_wheres()
        for i in range(0, len(wheres), SWEEP_CHUNK):
            chunk = tuple(wheres[i : i + SWEEP_CHUNK])
            built = example_records(SPACE, base.now, chunk)
            numbered = tuple(_numbered(n, r, f"n{i}.") for n, r in enumerate(built))
            if base.encoding is Encoding.JSON:
                numbered = tuple(json_encoded(r) for r in numbered)
            _NUL_BATCHES.append(replace(base, wheres=chunk, records=base.records + numbered))
    return _NUL_BATCHES


# ---- the families, one test file each ----------------------------------------------------------


def _on(surfaces: Sequence[Surface], *fixtures: str) -> list[Surface]:
    return [s for s in surfaces if s.fixture in fixtures]


FAMILIES: dict[str, list[Surface]] = {
    "memory": MEMORY_SURFACES,
    "text": [*FORMAT_SURFACES, *CLI_SURFACES],
    "frames": [*POLARS_SURFACES, *PANDAS_SURFACES],
    "sql": [
        *_on(SQL_SURFACES, "space_db_sqlite", "space_db_duckdb"),
        *_on(DJANGO_SURFACES, "space_django_sqlite"),
        *CLICKHOUSE_SURFACES,
    ],
    "servers": [
        *_on(SQL_SURFACES, "space_db_postgresql", "space_db_mysql"),
        *_on(DJANGO_SURFACES, "space_django_postgresql"),
    ],
    "spark": SPARK_SURFACES,
}
"""The surfaces of each file of the space test (`tests/test_space_<family>.py`, the memory
surfaces in `tests/test_space.py`): every surface in exactly one."""


FamilyTests = tuple[Callable[..., None], Callable[..., None], Callable[..., None]]


def family_tests(family: str) -> FamilyTests:
    """The three tests each family's file runs over its surfaces (`FAMILIES[family]`), bound by
    that file to their names: the sweep, the generated batches and the operands holding NUL
    (which the command line is not asked: its argument holds no NUL)."""
    params = surface_params(FAMILIES[family])

    @pytest.mark.parametrize("surface", params)
    def test_the_sweep_agrees_with_the_oracle(
        surface: Surface, request: pytest.FixtureRequest
    ) -> None:
        """Every condition of the space (each slot, each operation legal there) on this
        surface."""
        sweep(surface, request)

    @pytest.mark.parametrize("surface", params)
    def test_generated_batches_agree_with_the_oracle(
        surface: Surface, request: pytest.FixtureRequest
    ) -> None:
        """Generated where clauses over generated records, batch after batch, on this
        surface."""
        generated(surface, request)

    @pytest.mark.parametrize("surface", [p for p in params if not p.id.startswith("cli-")])
    def test_operands_holding_nul_agree_with_the_oracle(
        surface: Surface, request: pytest.FixtureRequest
    ) -> None:
        """A list literal holding NUL made PostgreSQL's SQL text raise a bare `ValueError` in
        every placement (a JSON array at a path, a list declared inside JSON, inside a related
        row); the family is every operand holding NUL, on every surface."""
        operands_holding_nul(surface, request)

    return (
        test_the_sweep_agrees_with_the_oracle,
        test_generated_batches_agree_with_the_oracle,
        test_operands_holding_nul_agree_with_the_oracle,
    )
