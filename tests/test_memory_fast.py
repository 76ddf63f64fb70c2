"""The in-memory and polars accelerators (`backends/memory/fast.py`,
`backends/frames/polars_lists.py`, the inline anniversaries and `matches(record, now=...)` of
`backends/memory/compiler.py`) answer exactly as the plain paths.

Each property compiles a filter twice, with the switch on and off, and runs both on the same
generated records, wrong types included: the same answer, or `RecordError` from both.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.backends.frames import polars_lists as columnar_lists
from audiencefilter.backends.frames.polars import frame_for
from audiencefilter.backends.memory import fast as memory_fast
from audiencefilter.backends.memory import paths as memory_paths
from audiencefilter.backends.memory import relations as memory_relations
from audiencefilter.backends.memory.compiler import compile_node
from audiencefilter.language.anniversary import MonthDays
from audiencefilter.language.nodes import Comparison

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


class _Mapping(Mapping[str, Any]):
    """A mapping that is not a `dict`: the inline walk leaves it to the plain path."""

    def __init__(self, items: dict[str, Any]) -> None:
        self.items_ = items

    def __getitem__(self, key: str) -> Any:
        return self.items_[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.items_)

    def __len__(self) -> int:
        return len(self.items_)


class _Text(str):
    """A `str` subclass: a JSON string, of another class than `str`."""


KEYS = ["plan", "a", "1", "true"]
scalars = st.one_of(
    st.sampled_from(["pro", "Pro", "", "1"]),
    st.builds(_Text, st.sampled_from(["pro", "x"])),
    st.integers(-2, 2),
    st.sampled_from([2**70, float(2**70), -0.0, 0.0, 1.0, 1.5, math.nan, math.inf]),
    st.booleans(),
    st.none(),
)
documents = st.recursive(
    scalars | st.lists(scalars, max_size=2),
    lambda inner: (
        st.dictionaries(
            st.sampled_from(KEYS) | st.sampled_from([1, True, None]), inner, max_size=3
        )  # fmt: skip
        | st.dictionaries(st.sampled_from(KEYS), inner, max_size=2).map(_Mapping)
    ),
    max_leaves=6,
)
path_literals = st.sampled_from(["pro", "1", 1, 0, 2**70, 1.5, -0.0, True, False])


@given(
    document=documents,
    path=st.lists(st.sampled_from(KEYS), min_size=1, max_size=3),
    literal=path_literals,
    negate=st.booleans(),
)
@example(document={"plan": _Text("pro")}, path=["plan"], literal="pro", negate=False)
@example(document={"plan": True}, path=["plan"], literal=1, negate=True)
@example(document={"plan": 1.0}, path=["plan"], literal=1, negate=False)
@example(document={"plan": math.nan}, path=["plan"], literal=1.5, negate=True)
@example(document={"a": None}, path=["a", "plan"], literal="pro", negate=True)
@example(document={1: "pro"}, path=["1"], literal="pro", negate=False)
@example(document=_Mapping({"plan": "pro"}), path=["plan"], literal="pro", negate=False)
def test_data_path_equalities_answer_as_the_plain_path(
    document: Any, path: list[str], literal: Any, negate: bool
) -> None:
    where = {"data": {"path": path, "equals": literal}}
    fast, plain = _both({"NOT": where} if negate else where, af.CONTACT)
    for record in ({"data": document}, {}, {"data": None}):
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
    path = af.parse({"data": {"path": ["plan"], "equals": "pro"}}).lowered
    assert isinstance(path, Comparison) and memory_paths.inlined(path)


def test_a_relation_condition_builds_only_the_loop_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The inlined loops of a related where clause (`count`, `any`, `all`, `at_least`) are
    built the first time one runs: building all four at compile time cost twice the compile."""
    built: list[str] = []
    original = memory_relations._loop

    def counted(node: Any, schema: Any, kind: str, compiler: Any) -> Any:
        built.append(kind)
        return original(node, schema, kind, compiler)

    monkeypatch.setattr(memory_relations, "_loop", counted)
    flt = af.parse({"actions": {"some": {"name": "purchase"}}})
    predicate = compile_node(flt.lowered, flt.schema)
    assert built == []
    rows = [{"name": "refund"}, {"name": "purchase"}]
    assert predicate({"actions": rows}) and not predicate({"actions": rows[:1]})
    assert built == ["any"]


# ---- anniversaries and `matches(record, now=...)` ------------------------------------------

ZONES = ("UTC", "Europe/Paris", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu")
periods = st.builds(
    lambda kind, unit, count, zone: (
        {"this": unit, "timeZone": zone}
        if kind == "this"
        else {kind: count, "unit": unit, "timeZone": zone}
    ),
    st.sampled_from(["this", "last", "next"]),
    st.sampled_from(["day", "week", "month", "year"]),
    st.integers(1, 10),
    st.sampled_from(ZONES),
)
edges = st.sampled_from([datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, tzinfo=UTC)])
instants = st.datetimes(
    min_value=datetime(1999, 12, 25), max_value=datetime(2025, 3, 5), timezones=st.just(UTC)
)
created = st.one_of(
    instants,
    edges,
    st.datetimes(timezones=st.sampled_from([ZoneInfo(z) for z in ZONES])),
    st.datetimes(max_value=datetime(2030, 1, 1)),  # naive
    instants.map(lambda d: d.isoformat()),
    instants.map(lambda d: d.date()),
    st.none(),
    st.just(5),
)


def _anniversaries(where: dict[str, Any], now: datetime) -> list[Callable[[Any], Any]]:
    """The predicate on a clock, the function lowered at `now` and `matches(now=)`, each
    built with the accelerator on, then off."""
    flt = af.parse(where)
    saved = memory_fast.ENABLED
    built: list[Callable[[Any], Any]] = []
    try:
        for enabled in (True, False):
            memory_fast.ENABLED = enabled
            fresh = af.parse(where)
            built.append(af.compile(fresh, clock=lambda: now))
            built.append(compile_node(flt.lowered_at(now), flt.schema))
            built.append(functools.partial(fresh.matches, now=now))  # built while switched
    finally:
        memory_fast.ENABLED = saved
    return built


@given(value=created, period=periods, now=instants, negate=st.booleans())
@example(
    value=datetime(9999, 12, 31, 23, 59, tzinfo=UTC),
    period={"this": "day", "timeZone": "Pacific/Kiritimati"},
    now=datetime(2024, 12, 31, 12, tzinfo=UTC),
    negate=False,
)
@example(
    value=datetime(2023, 3, 1, 5, tzinfo=UTC),
    period={"last": 1, "unit": "day", "timeZone": "Pacific/Pago_Pago"},
    now=datetime(2024, 3, 1, 5, tzinfo=UTC),
    negate=True,
)
def test_anniversaries_answer_as_the_plain_path(
    value: Any, period: dict[str, Any], now: datetime, negate: bool
) -> None:
    where: dict[str, Any] = {"createdAt": {"anniversary": period}}
    fast_clock, fast_lowered, fast_at, *plain = _anniversaries(
        {"NOT": where} if negate else where, now
    )
    record = {"createdAt": value}
    expected = [_outcome(p, record) for p in plain]
    assert len(set(expected)) == 1
    assert [_outcome(f, record) for f in (fast_clock, fast_lowered, fast_at)] == expected


@pytest.mark.parametrize("zone", ZONES)
def test_anniversaries_of_every_day_answer_as_the_plain_path(zone: str) -> None:
    """Every UTC day of a common and a leap year, at its first and last minute and noon,
    against week and day periods around 29 February and the turn of the year."""
    start = datetime(2023, 1, 1, tzinfo=UTC)
    records = [
        {"createdAt": start + timedelta(days=day, minutes=minute)}
        for day in range(731)
        for minute in (0, 720, 1439)
    ]
    for now in (datetime(2024, 2, 29, 12, tzinfo=UTC), datetime(2025, 1, 1, 3, tzinfo=UTC)):
        for unit in ("day", "week"):
            where = {"createdAt": {"anniversary": {"this": unit, "timeZone": zone}}}
            fast, _, _, plain, _, _ = _anniversaries(where, now)
            assert [fast(r) for r in records] == [plain(r) for r in records]


def test_the_anniversary_and_matches_accelerators_are_used() -> None:
    flt = af.parse({"createdAt": {"anniversary": {"this": "week", "timeZone": "Europe/Paris"}}})
    days = flt.clock.instants(datetime(2026, 11, 22, tzinfo=UTC))[0]
    assert isinstance(days, MonthDays) and days.certain < days.covered < days.near | days.certain
    source = flt.evaluator.__code__.co_names
    assert "astimezone" in source and "_anniversary" in source
    record = {"createdAt": datetime(2026, 11, 18, tzinfo=UTC)}
    assert flt.matches(record, now=NOW)
    # `matches` reads the record's keys (record_keys.py), then calls the accelerator.
    assert getattr(flt.matches.__wrapped__, "__name__", None) == "audience_filter_at"
    assert flt.evaluator.at(record, NOW)
    assert flt.evaluator.at.__name__ == "audience_filter_at"
    clocked = af.compile(flt, clock=lambda: NOW)
    assert isinstance(clocked, functools.partial) and clocked(record)
    assert clocked.func.__name__ == "audience_filter_at"
