"""The in-memory and polars accelerators (`backends/memory_fast.py`,
`backends/columnar_lists.py`) answer exactly as the plain paths.

Each property compiles a filter twice, with the switch on and off, and runs both on the same
generated records, wrong types included: the same answer, or `RecordError` from both.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
from hypothesis import example, given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.backends import columnar_lists, memory_fast
from audiencefilter.backends.columnar import frame_for

SCHEMA = af.CONTACT.with_fields(tags="string[]", scores="number[]", flags="boolean[]")
WORDS = ["a", "b", "B", "", "a ", "é"]
items = st.one_of(st.sampled_from(WORDS), st.none(), st.integers(-3, 3), st.floats(), st.booleans())
lists = st.one_of(
    st.none(),
    st.lists(items, max_size=5),
    st.lists(st.sampled_from(WORDS), max_size=5).map(tuple),
    st.sampled_from(["ab", 5, {"a": 1}]),
)
list_ops = st.sampled_from(["has", "hasSome", "hasEvery", "isEmpty"])


def _outcome(predicate: Callable[[Any], bool], record: Any) -> Any:
    try:
        return predicate(record)
    except af.RecordError:
        return "RecordError"


def _both(where: dict[str, Any], schema: af.Schema = SCHEMA) -> tuple[Any, Any]:
    saved = memory_fast.ENABLED
    try:
        memory_fast.ENABLED = True
        fast = af.compile(af.parse(where, schema))
        memory_fast.ENABLED = False
        return fast, af.compile(af.parse(where, schema))
    finally:
        memory_fast.ENABLED = saved


def _operand(op: str, field: str, literals: list[Any]) -> dict[str, Any]:
    if op == "isEmpty":
        return {field: {"isEmpty": True}}
    if op == "has":
        return {field: {"has": literals[0]}}
    return {field: {op: literals}}


@given(
    value=lists,
    op=list_ops,
    literals=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    negate=st.booleans(),
)
@example(value=["a", None], op="hasSome", literals=["a"], negate=False)
@example(value=["a", 1], op="hasSome", literals=["a"], negate=False)
@example(value="ab", op="has", literals=["a"], negate=True)
@example(value=("a",), op="hasEvery", literals=["a"], negate=False)
def test_string_lists_answer_as_the_plain_path(
    value: Any, op: str, literals: list[str], negate: bool
) -> None:
    where = _operand(op, "tags", literals)
    fast, plain = _both({"NOT": where} if negate else where)
    record = {"tags": value}
    assert _outcome(fast, record) == _outcome(plain, record)


@given(
    value=lists,
    op=list_ops,
    literals=st.lists(st.integers(-3, 3) | st.sampled_from([0.5, 2.0]), min_size=1, max_size=3),
)
@example(value=[True], op="has", literals=[1])
@example(value=[1.0, 2], op="hasEvery", literals=[1, 2.0])
def test_number_lists_answer_as_the_plain_path(value: Any, op: str, literals: list[Any]) -> None:
    fast, plain = _both(_operand(op, "scores", literals))
    record = {"scores": value}
    assert _outcome(fast, record) == _outcome(plain, record)


NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
actions = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.sampled_from(["share", "login"]),
            "increase": st.one_of(st.integers(-5, 20), st.none(), st.floats(-1, 1), st.just("x")),
            "createdAt": st.integers(0, 60).map(lambda d: NOW - timedelta(days=d)),
        }
    ),
    max_size=6,
)
aggregates = st.sampled_from(
    [
        {"actions": {"count": {"gte": 3}}},
        {"actions": {"count": {"gt": 1.5}}},
        {"actions": {"where": {"name": "share"}, "count": {"gte": 2}}},
        {"NOT": {"actions": {"where": {"name": "share"}, "count": {"gt": 0}}}},
        {"actions": {"count": {"in": [0, 2]}}},
        {"actions": {"sum": {"increase": {"gte": 10}}}},
        {"NOT": {"actions": {"where": {"name": "login"}, "sum": {"increase": 0}}}},
    ]
)


@given(rows=actions | st.none(), where=aggregates)
@example(
    rows=[{"name": "share", "increase": "x", "createdAt": NOW}],
    where={"actions": {"sum": {"increase": {"gte": 10}}}},
)
def test_aggregates_answer_as_the_plain_path(rows: Any, where: dict[str, Any]) -> None:
    fast, plain = _both(where, af.CONTACT)
    record = {"actions": rows}
    assert _outcome(fast, record) == _outcome(plain, record)


def _polars_both(where: dict[str, Any], frame: pl.DataFrame) -> tuple[list[Any], list[Any]]:
    expression = af.parse(where, SCHEMA)
    saved = columnar_lists.ENABLED
    try:
        columnar_lists.ENABLED = True
        fast = frame.select(expression.to_polars(dict(frame.schema))).to_series().to_list()
        columnar_lists.ENABLED = False
        plain = frame.select(expression.to_polars(dict(frame.schema))).to_series().to_list()
    finally:
        columnar_lists.ENABLED = saved
    return fast, plain


@given(
    values=st.lists(st.none() | st.lists(st.none() | st.sampled_from(WORDS), max_size=4)),
    op=list_ops,
    literals=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    negate=st.booleans(),
)
def test_polars_string_lists_answer_as_the_plain_path(
    values: list[Any], op: str, literals: list[str], negate: bool
) -> None:
    frame = frame_for([{"tags": v} for v in values], SCHEMA)
    where = _operand(op, "tags", literals)
    fast, plain = _polars_both({"NOT": where} if negate else where, frame)
    assert fast == plain


def test_the_accelerators_are_used() -> None:
    frame = frame_for([{"tags": ["a"]}], SCHEMA)
    expression = af.parse({"tags": {"hasSome": ["a", "b"]}}, SCHEMA).to_polars(dict(frame.schema))
    assert "map_list" not in str(expression) and "python" not in str(expression).lower()
    assert memory_fast.count_threshold(af.parse({"actions": {"count": {"gt": 2.5}}}).lowered) == 3  # type: ignore[arg-type]
