"""The audience algebra against brute force on every engine (docs/algebra.md#sound-first).

`tests/test_algebra.py` checks proofs and witnesses with `matches`. Here the same claims are
checked on each engine the project tests against, through the surfaces of the space test
(`tests/space_surfaces.py`: one table or frame per batch, every filter asked in one statement or
Spark job): for each example set, a few random filter pairs over a small finite domain, the
domain of the fields they read enumerated record by record (nulls, missing keys, empty lists,
both instants of Paris' repeated hour), plus every witness the algebra gave and the records of
`af.testing.examples`, all in one batch. A proof (`implies` True, `overlaps`/`can_match` False)
must hold on every record the engine selects; a witness must fall where its verdict says.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.testing.space import Batch
from tests.algebra_space import scalar_conditions, wheres
from tests.space_surfaces import SURFACES, Answer, Outcome, Refusal, Surface

PARIS = ZoneInfo("Europe/Paris")
SCHEMA = af.Schema.of(
    n="number", s="string", b="boolean", tags="string[]", when="datetime", day="date"
).in_zone("Europe/Paris")
NOW = datetime(2025, 10, 26, 9, 0, tzinfo=UTC)
"""The day Paris leaves summer time: 02:00-03:00 local is lived twice (00:00Z-02:00Z)."""
MISSING = object()
DOMAIN: dict[str, tuple[Any, ...]] = {
    "n": (MISSING, None, 1, 2, 3),
    "s": (MISSING, None, "a", "A", "ab"),
    "b": (MISSING, None, True, False),
    "tags": (MISSING, None, [], ["a"], ["a", "b"]),
    "when": (
        MISSING,
        None,
        datetime(2025, 10, 25, 21, 59, tzinfo=UTC),  # 23:59 in Paris, the day before
        datetime(2025, 10, 26, 2, 30, fold=0, tzinfo=PARIS),  # 00:30Z
        datetime(2025, 10, 26, 2, 30, fold=1, tzinfo=PARIS),  # 01:30Z, the repeated hour
        datetime(2025, 10, 26, 23, 0, tzinfo=UTC),  # midnight in Paris, the day after
    ),
    "day": (MISSING, None, date(2025, 10, 25), date(2025, 10, 26)),
}


def _conditions() -> st.SearchStrategy[dict[str, Any]]:
    instant = st.sampled_from(
        ["2025-10-26T00:30:00Z", "2025-10-26T01:30:00Z", "2025-10-25T22:00:00Z"]
    )
    return st.one_of(
        *scalar_conditions(list(DOMAIN), empty_lists=False),
        st.builds(
            lambda op, v: {"when": {op: v}}, st.sampled_from(["gt", "gte", "lt", "equals"]), instant
        ),
        st.builds(lambda op: {"when": {op: {"startOf": "day"}}}, st.sampled_from(["gte", "lt"])),
        st.just({"when": {"within": {"this": "day"}}}),
        st.builds(
            lambda op, v: {"day": {op: v}},
            st.sampled_from(["equals", "gt", "lte"]),
            st.sampled_from(["2025-10-25", "2025-10-26"]),
        ),
        st.builds(lambda op: {"day": {op: {"startOf": "day"}}}, st.sampled_from(["gte", "lt"])),
    )


def _wheres() -> st.SearchStrategy[dict[str, Any]]:
    return wheres(_conditions(), max_leaves=4)


def _domain(filters: list[af.Filter]) -> list[dict[str, Any]]:
    """Every record over the fields the filters read (a field no filter reads cannot change
    an answer), each value of the field's domain, missing keys included."""
    names = sorted({name for flt in filters for name in _fields(flt.to_dict())} & set(DOMAIN))
    return [
        {k: v for k, v in zip(names, values, strict=True) if v is not MISSING}
        for values in itertools.product(*(DOMAIN[name] for name in names))
    ]


def _fields(where: Any) -> set[str]:
    if isinstance(where, list):
        return set().union(*(_fields(item) for item in where)) if where else set()
    if not isinstance(where, dict):
        return set()
    return {k for k in where if k in DOMAIN} | set().union(*(_fields(v) for v in where.values()))


@dataclass(frozen=True)
class Claim:
    """The algebra says record `record` is (`inside`) or is not in filter number `position`."""

    record: str
    position: int
    inside: bool
    said: str


@dataclass(frozen=True)
class Proof:
    """The algebra proved that no record is in every filter of `inside` and in none of
    `outside` (positions in the batch's filters)."""

    inside: tuple[int, ...]
    outside: tuple[int, ...]
    said: str


@dataclass
class Question:
    """One batch: the filters, the records (with ids) and what the algebra claims of them."""

    filters: list[af.Filter] = field(default_factory=list)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    proofs: list[Proof] = field(default_factory=list)

    def add(self, flt: af.Filter) -> int:
        self.filters.append(flt)
        return len(self.filters) - 1

    def witness(self, name: str, record: dict[str, Any], sides: dict[int, bool]) -> None:
        self.records[name] = {**record, "id": name}
        self.claims += [Claim(name, p, inside, name) for p, inside in sides.items()]


def question(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> Question:
    """The algebra's verdicts on each pair, and the examples of each filter, as claims."""
    asked = Question()
    for k, (left, right) in enumerate(pairs):
        a, b = af.parse(left, SCHEMA), af.parse(right, SCHEMA)
        i, j = asked.add(a), asked.add(b)
        for name, verdict, sides in (
            ("implies", a.implies(b, now=NOW), (i, j)),
            ("implied", b.implies(a, now=NOW), (j, i)),
        ):
            if verdict.holds is True:
                asked.proofs.append(Proof((sides[0],), (sides[1],), f"pair {k}: {name}"))
            elif verdict.holds is False:
                assert verdict.witness is not None
                sided = {sides[0]: True, sides[1]: False}
                asked.witness(f"p{k}-{name}", verdict.witness, sided)
        shared = a.overlaps(b, now=NOW)
        if shared.holds is False:
            asked.proofs.append(Proof((i, j), (), f"pair {k}: overlaps"))
        elif shared.holds is True:
            assert shared.witness is not None
            asked.witness(f"p{k}-both", shared.witness, {i: True, j: True})
        for position, flt in ((i, a), (j, b)):
            _examples(asked, f"p{k}-f{position}", position, flt)
        for record in _domain([a, b]):
            name = f"d{len(asked.records)}"
            asked.records[name] = {**record, "id": name}
    return asked


def _examples(asked: Question, name: str, position: int, flt: af.Filter) -> None:
    matching = flt.can_match(now=NOW)
    if matching.holds is False:
        asked.proofs.append(Proof((position,), (), f"{name}: can_match"))
    elif matching.holds is True:
        assert matching.witness is not None
        asked.witness(f"{name}-can", matching.witness, {position: True})
    found = af.testing.examples(flt, now=NOW)
    for side, record in (("inside", found.inside), ("outside", found.outside)):
        if record is not None:
            asked.witness(f"{name}-{side}", record, {position: side == "inside"})
    for path, pair in found.conditions.items():
        for side in ("inside", "outside"):
            record = getattr(pair, side)
            if record is not None:
                asked.witness(f"{name}-{path}-{side}", record, {position: side == "inside"})


def wrong(
    asked: Question, outcomes: list[Outcome], stored: set[str] | None = None, surface: str = ""
) -> list[str]:
    """What the engine's answers contradict: a witness on the wrong side, a proved-empty
    region holding a record. A filter the engine refuses is left out; a crash is wrong; a
    record the engine cannot store (`stored`: the ids it holds) is not asked about."""
    chosen: dict[int, frozenset[str]] = {}
    held = set(asked.records) if stored is None else stored
    found = []
    for position, outcome in enumerate(outcomes):
        if isinstance(outcome, Answer) and outcome.selected is not None:
            chosen[position] = outcome.selected
        elif outcome is not None and not isinstance(outcome, Refusal):
            found.append(f"{surface}: {asked.filters[position].to_json()} failed: {outcome}")
    for claim in asked.claims:
        if claim.record not in held or claim.position not in chosen:
            continue
        if (claim.record in chosen[claim.position]) != claim.inside:
            side = "in" if claim.inside else "not in"
            record = asked.records[claim.record]
            flt = asked.filters[claim.position].to_json()
            found.append(f"{surface}: {claim.said} {record} should be {side} {flt}")
    for proof in asked.proofs:
        if not all(p in chosen for p in (*proof.inside, *proof.outside)):
            continue
        ids = held.intersection(*(chosen[p] for p in proof.inside))
        ids -= set().union(*(chosen[p] for p in proof.outside))
        if ids:
            shown = [asked.records[r] for r in sorted(ids)[:3]]
            filters = [asked.filters[p].to_json() for p in (*proof.inside, *proof.outside)]
            found.append(f"{surface}: {proof.said} proved empty, yet holds {shown} ({filters})")
    return found


def ask(
    surface: Surface, run: Callable[..., list[Outcome]], asked: Question
) -> tuple[list[Outcome], set[str]]:
    """The engine's answers on the whole question (one batch, one statement or job), and the
    ids of the records it could store."""
    records = tuple(asked.records.values())
    batch = Batch(NOW, SCHEMA, tuple(f.to_dict() for f in asked.filters), records)
    kept = [r for r in records if surface.stores(r) and _storable(surface, r)]
    return run(batch, asked.filters, kept), {r["id"] for r in kept}


def _storable(surface: Surface, record: dict[str, Any]) -> bool:
    """The test databases hold a number column as BIGINT (tests/sql_engines.py): a witness
    holding 2.5, NaN or an infinity cannot be stored there, and is checked on the others."""
    if surface.fixture is None or not surface.fixture.startswith("space_db_"):
        return True
    number = record.get("n")
    return number is None or (isinstance(number, int) and -(2**63) <= number < 2**63)


ENGINES = {
    "matches": 60,
    "sqlalchemy-sqlite": 60,
    "params-sqlite": 20,
    "sql-duckdb": 40,
    "polars-json": 40,
    "pandas-pyarrow": 20,
    "params-postgresql": 15,
    "sqlalchemy-mysql": 15,
    "spark-sql": 5,
    "pyspark": 5,
}
"""The engines asked and how many example sets each (the same sets on every run: the `ci`
profile is derandomised). Every example set is one batch per engine."""

CI = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci"
"""Whether this run is the `ci` size: there every engine is asked half its example sets (at
least three); `thorough`, `deep` and `search` ask them all."""


def _example_sets(name: str) -> int:
    return max(3, ENGINES[name] // 2) if CI else ENGINES[name]


def _surfaces() -> list[Any]:
    return [
        pytest.param(s, id=s.name, marks=[getattr(pytest.mark, m) for m in s.marks])
        for s in SURFACES
        if s.name in ENGINES
    ]


def _runner(surface: Surface, request: pytest.FixtureRequest) -> Callable[..., list[Outcome]]:
    if surface.fixture is None:
        return surface.run
    resource = request.getfixturevalue(surface.fixture)
    return lambda *args: surface.run(resource, *args)


PAIRS = st.lists(st.tuples(_wheres(), _wheres()), min_size=1, max_size=3)


def test_every_engine_named_is_a_surface() -> None:
    assert set(ENGINES) <= {s.name for s in SURFACES}


@pytest.mark.parametrize("surface", _surfaces())
def test_proofs_and_witnesses_hold_on_the_engine(
    surface: Surface, request: pytest.FixtureRequest
) -> None:
    run = _runner(surface, request)

    @settings(max_examples=_example_sets(surface.name))
    @given(PAIRS)
    def check(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
        asked = question(pairs)
        found = wrong(asked, *ask(surface, run, asked), surface=surface.name)
        assert not found, "\n".join(found[:5])

    check()


CORRUPTED = (
    {"n": {"gte": 2}},
    {"OR": [{"n": {"lt": 2}}, {"s": None}]},
)


@pytest.mark.parametrize("surface", _surfaces())
def test_a_corrupted_witness_or_proof_is_caught_by_the_engine(
    surface: Surface, request: pytest.FixtureRequest
) -> None:
    """The engine check is no formality: a witness moved to the other side, or a proof the
    algebra never gave, is reported by the engine's own answers."""
    run = _runner(surface, request)
    asked = question([CORRUPTED])
    assert not wrong(asked, *ask(surface, run, asked), surface=surface.name)
    both = next(c for c in asked.claims if c.record == "p0-both")
    asked.records["p0-both"] = {"id": "p0-both", "n": 1, "s": "a"}  # in neither filter
    asked.proofs.append(Proof((0, 1), (), "a made-up proof of disjointness"))
    found = wrong(asked, *ask(surface, run, asked), surface=surface.name)
    assert any(f"{both.said} " in line and "should be in" in line for line in found), found
    assert any("a made-up proof" in line for line in found), found
