"""`FilterSet` answers as each of its filters alone (`backends/filter_set/many.py`).

Filters are drawn as groups of conditions from a small shared pool, as accounts reuse theirs,
so that the set's shared conditions and indexes are exercised; records come tame, hostile,
wide, and with a value of the wrong type. The set and its filters one by one give the same
positions, or both raise `RecordError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from itertools import product
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.backends.filter_set import graph, many
from audiencefilter.backends.filter_set import graph_fast as memory_graph_fast
from audiencefilter.testing.relation_strategies import relation_wheres
from audiencefilter.testing.strategies import (
    NOW,
    lookalike_conditions,
    lookalike_data,
    records,
    where_clauses,
    wrong_typed_values,
)
from audiencefilter.testing.value_kinds import null_likes
from tests.default_sizes import default_run_examples

DATED = af.Schema.of(
    "contact", createdAt="datetime", points="number", country="string", isVerified="boolean"
)
INDEXED = st.one_of(
    st.builds(lambda c: {"country": c}, st.sampled_from(["FR", "DE", "fr", ""])),
    st.builds(lambda cs: {"country": {"in": cs}}, st.lists(st.sampled_from(["FR", "DE", "JP"]))),
    st.builds(lambda c: {"country": {"equals": c, "mode": "insensitive"}}, st.just("fr")),
    st.builds(
        lambda op, n: {"points": {op: n}},
        st.sampled_from(["gt", "gte", "lt", "lte", "equals"]),
        st.sampled_from([0, 1, 2.5, 100, -1, 2**53 + 1]),
    ),
    st.builds(lambda b: {"isVerified": b}, st.booleans()),
    st.builds(lambda n: {"points": {"in": n}}, st.lists(st.sampled_from([1, 2.0, 100]))),
)


def _outcome(judge: Any) -> Any:
    try:
        return judge()
    except af.RecordError:
        return "RecordError"


def _alone(filters: Sequence[af.Filter], record: Any, now: datetime) -> list[int]:
    return [i for i, flt in enumerate(filters) if flt.matches(record, now=now)]


def _assert_same(filters: Sequence[af.Filter], record: Any, now: datetime = NOW) -> None:
    together = af.FilterSet(filters)
    expected = _outcome(lambda: _alone(filters, record, now))
    assert _outcome(lambda: together.matching(record, now=now)) == expected
    half = list(range(0, len(filters), 2))
    expected_half = _outcome(lambda: _alone([filters[p] for p in half], record, now))
    assert _outcome(lambda: together.among(half).matching(record, now=now)) == expected_half


@contextmanager
def _patterns(indexed: bool) -> Iterator[None]:
    """Sets built inside answer patterns by their index (`many.PATTERNS`) or one by one."""
    switch = many.PATTERNS
    many.PATTERNS = indexed
    try:
        yield
    finally:
        many.PATTERNS = switch


def _pattern_wheres() -> list[dict[str, Any]]:
    return [
        {"city": {op: operand, "mode": mode}}
        for op in ("contains", "startsWith", "endsWith")
        for operand in ("", "a", "Ab", "ß", "İ")
        for mode in ("insensitive", "default")
    ]


@st.composite
def _shared_filters(
    draw: st.DrawFn, schema: af.Schema, pool: st.SearchStrategy[dict[str, Any]]
) -> list[af.Filter]:
    """Filters made of conditions from one small pool, grouped every way."""
    conditions = draw(st.lists(pool, min_size=1, max_size=5))
    picked = st.lists(st.sampled_from(conditions), min_size=1, max_size=4)
    group = st.sampled_from(["AND", "OR", "NOT"])
    wheres = draw(st.lists(st.tuples(group, picked), min_size=1, max_size=8))
    return [af.parse({kind: items}, schema) for kind, items in wheres]


def _pool(schema: af.Schema, **options: bool) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(INDEXED, where_clauses(schema, max_leaves=4, **options))


@default_run_examples(100)
@given(_shared_filters(af.CONTACT, _pool(af.CONTACT)), records())
def test_a_set_answers_as_its_filters_alone(filters: list[af.Filter], record: Any) -> None:
    _assert_same(filters, record)


@default_run_examples(100)
@given(_shared_filters(af.CONTACT, _pool(af.CONTACT, hostile=True)), records(hostile=True))
def test_hostile_values(filters: list[af.Filter], record: Any) -> None:
    _assert_same(filters, record)


@default_run_examples(100)
@given(_shared_filters(af.CONTACT, _pool(af.CONTACT, wide=True)), records(wide=True))
def test_wide_values(filters: list[af.Filter], record: Any) -> None:
    _assert_same(filters, record)


@default_run_examples(100)
@given(
    _shared_filters(af.CONTACT, _pool(af.CONTACT, wide=True)),
    records(kinds=True),
    records(wide=True, kinds=True),
)
def test_values_of_every_python_kind(
    filters: list[af.Filter], record: Any, wide: dict[str, Any]
) -> None:
    """A value, or a null, as any kind of Python value standing for it (`nan`, `pd.NA`,
    `NaT`, NumPy scalars, `Decimal`, `pd.Timestamp`): the set, and a tracker moving from one
    record to the other, read each as the filters alone do."""
    _assert_same(filters, record)
    _assert_same(filters, wide)
    _assert_tracked(filters, [record, wide, record], NOW)


@pytest.mark.parametrize("null", null_likes(), ids=repr)
def test_every_null_like_is_null_in_a_set(null: Any) -> None:
    """`nan`, `pd.NA`, `NaT` are null to the set's null tests as to `Filter.matches`, under
    `not` and inside `OR` too, matched and tracked."""
    wheres: list[dict[str, Any]] = []
    for field in ("points", "createdAt", "email", "isVerified"):
        wheres += [{field: None}, {field: {"not": None}}, {"NOT": {field: None}}]
        wheres += [{"OR": [{field: None}, {"country": "FR"}]}]
    filters = [af.parse(where) for where in wheres]
    for field in ("points", "createdAt", "email", "isVerified"):
        record = {"country": "DE", field: null}
        _assert_same(filters, record)
        _assert_tracked(filters, [record, {"country": "DE"}, record], NOW)


@default_run_examples(100)
@given(
    _shared_filters(af.CONTACT, lookalike_conditions()),
    records(wide=True),
    lookalike_data(),
)
def test_lookalike_literals_are_distinct_conditions(
    filters: list[af.Filter], record: Any, data: dict[str, Any]
) -> None:
    """`true` and `1` at one path are two conditions, though `True == 1` in Python."""
    _assert_same(filters, {**record, "data": data})


@default_run_examples(100)
@given(
    _shared_filters(af.CONTACT, _pool(af.CONTACT)),
    records(),
    st.sampled_from(af.CONTACT.fields),
    st.data(),
)
def test_a_wrong_type_raises_where_a_filter_alone_does(
    filters: list[af.Filter], record: Any, field: af.Field, data: st.DataObject
) -> None:
    if field.type.element is None and field.type is not af.FieldType.JSON:
        record[field.name] = data.draw(wrong_typed_values(field.type))
    _assert_same(filters, record)


@default_run_examples(100)
@given(
    _shared_filters(DATED, _pool(DATED)),
    records(DATED),
    st.sampled_from([NOW, datetime(2024, 1, 1, tzinfo=UTC)]),
)
def test_relative_date_times_at_now(filters: list[af.Filter], record: Any, now: datetime) -> None:
    _assert_same(filters, record, now)


@default_run_examples(100)
@given(
    _shared_filters(af.CONTACT, st.one_of(relation_wheres(), INDEXED)),
    records(),
    st.lists(st.fixed_dictionaries({"name": st.sampled_from(["share", "login"])}), max_size=3),
)
def test_relation_filters_are_judged_alone(
    filters: list[af.Filter], record: Any, actions: list[dict[str, Any]]
) -> None:
    _assert_same(filters, {**record, "actions": actions})


def test_shared_conditions_are_one_leaf_and_equalities_an_index() -> None:
    french = {"country": "FR"}
    filters = [af.parse({"AND": [french, {"points": {"gte": n}}]}) for n in range(50)]
    together = af.FilterSet(filters)
    assert together.matching({"country": "FR", "points": 10}) == list(range(11))
    assert together.matching({"country": "DE", "points": 10}) == []
    assert together.matching({"country": None, "points": 10}) == []


def test_a_record_that_is_no_mapping_raises_as_alone() -> None:
    together = af.FilterSet([af.parse({"country": "FR"})])
    with pytest.raises(af.RecordError):
        together.matching(["not", "a", "record"])  # type: ignore[arg-type]


def test_an_empty_set_matches_nothing() -> None:
    assert af.FilterSet([]).matching({"country": "FR"}) == []


@pytest.mark.parametrize("op", ["gt", "gte", "lt", "lte", "equals", "not"])
def test_bounds_on_and_beside_every_value(op: str) -> None:
    bounds = [-1, 0, 1, 2.5, 3, 3, 100, 2**53 + 1]
    filters = [af.parse({"points": {op: bound}}) for bound in bounds]
    for value in [-2, -1, 0, 1, 2, 3, 4, 99, 100, 101, 2**53, 2**53 + 1, 2.5, None, True]:
        _assert_same(filters, {"points": value})


@pytest.mark.parametrize("op", ["gt", "gte", "lt", "lte", "equals", "not"])
def test_instant_bounds_on_and_beside_every_value(op: str) -> None:
    """Date-time ranges are bisected for a value in UTC; any other value (another zone, a
    fold, naive, text, a date) goes one by one: the same answers either way."""
    paris = ZoneInfo("Europe/Paris")
    base = datetime(2026, 10, 25, 1, 0, tzinfo=UTC)  # 02:00 and 03:00 in Paris, twice
    bounds = [base + timedelta(minutes=m) for m in (-61, -1, 0, 0, 1, 59, 60)]
    bounds += [datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, 999999, UTC)]
    filters = [af.parse({"createdAt": {op: bound.isoformat()}}, DATED) for bound in bounds]
    together = af.FilterSet(filters)
    assert any(type(g).__name__ == "_ByBound" for g in together._plan.groups) is (
        op != "equals" and op != "not"
    )
    values: list[Any] = [
        base + timedelta(minutes=m, microseconds=u) for m in (-61, -1, 0, 1, 60) for u in (-1, 0, 1)
    ]
    values += [v.astimezone(paris) for v in values]
    values += [datetime(2026, 10, 25, 2, 30, tzinfo=paris, fold=f) for f in (0, 1)]
    values += [base.replace(tzinfo=None), base.isoformat(), base.date(), None]
    for value in values:
        _assert_same(filters, {"createdAt": value})


def test_prefixes_of_every_value_and_beside() -> None:
    """Case-sensitive `startsWith` is looked up by the prefixes of the value; any other value
    (a number, a boolean, null) goes one by one, and the insensitive ones stay one by one."""
    operands = ["", "a", "ab", "abc", "b", "A", "ä", "a\x00", "ß", "İ", "ab" * 40]
    filters = [af.parse({"city": {"startsWith": p}}) for p in operands]
    filters += [af.parse({"city": {"startsWith": "a", "mode": "insensitive"}})]
    together = af.FilterSet(filters)
    assert any(type(g).__name__ == "_ByPrefix" for g in together._plan.groups)
    values: list[Any] = ["", "a", "ab", "abc", "abcd", "b", "A", "Ab", "ä", "a\x00b", "ss"]
    values += ["ßx", "İi", "i̇", "ab" * 41, "x" * 1000, None, 1, True]
    for value in values:
        _assert_same(filters, {"city": value})


_OPERANDS = ["", "a", "ab", "b", "A", "ß", "ss", "İ", "i̇", "x" * 12]
_TEXTS: list[Any] = ["", "a", "ab", "bab", "Ab", "xAB", "ß", "SS", "İ", "i̇x", "x" * 13]
_TEXTS += [None, 1, True]  # null, then values of wrong types


def _pattern_filters(operands: Sequence[str]) -> list[af.Filter]:
    return [
        af.parse({"city": {op: operand, "mode": mode}})
        for op in ("contains", "startsWith", "endsWith")
        for operand in operands
        for mode in ("insensitive", "default")
    ]


_TRIPLES = ["".join(letters) for letters in product("abxs", repeat=3)]


@pytest.mark.parametrize("operands", [_OPERANDS[:3], _OPERANDS, [*_OPERANDS, *_TRIPLES]])
def test_patterns_of_every_value_and_beside(operands: list[str]) -> None:
    """`contains`, `endsWith` and case-insensitive `startsWith` are looked up by the pieces of
    the text (`contains` by searching each operand where they are fewer than the pieces):
    with the index and without it, each filter alone says the same; any value other than
    text goes one by one."""
    filters = _pattern_filters(operands)
    for indexed in (True, False):
        with _patterns(indexed):
            together = af.FilterSet(filters)
            assert any(type(g).__name__ == "_ByPattern" for g in together._plan.groups) is indexed
            for value in _TEXTS:
                _assert_same(filters, {"city": value})
            for value in _TEXTS[-3:]:  # the texts, then a value of a wrong type
                _assert_tracked(filters, [{"city": text} for text in (*_TEXTS[:-3], value)], NOW)


@default_run_examples(100)
@given(
    _shared_filters(af.CONTACT, st.one_of(st.sampled_from(_pattern_wheres()), INDEXED)),
    records(),
    st.lists(st.sampled_from(_TEXTS), min_size=1, max_size=4),
)
def test_the_pattern_index_answers_as_the_conditions_one_by_one(
    filters: list[af.Filter], record: dict[str, Any], texts: list[Any]
) -> None:
    """The pattern index on and off, generated filters and texts (wrong types among them,
    after the first state), matched and tracked."""
    states = [record, *({**record, "city": text} for text in texts)]
    for indexed in (True, False):
        with _patterns(indexed):
            _assert_same(filters, states[-1])
            _assert_tracked(filters, states, NOW)


@st.composite
def _sub_trees(draw: st.DrawFn, pool: st.SearchStrategy[dict[str, Any]]) -> list[dict[str, Any]]:
    """A few AND/OR/NOT sub-trees over a few conditions, to be shared by several filters."""
    conditions = draw(st.lists(pool, min_size=1, max_size=4))
    picked = st.lists(st.sampled_from(conditions), min_size=1, max_size=3)
    group = st.sampled_from(["AND", "OR", "NOT"])
    small = draw(st.lists(st.tuples(group, picked), min_size=1, max_size=4))
    return conditions + [{kind: items} for kind, items in small]


@st.composite
def _nested_filters(
    draw: st.DrawFn, schema: af.Schema, pool: st.SearchStrategy[dict[str, Any]]
) -> list[af.Filter]:
    """Filters whose AND/OR/NOT sub-trees repeat across them, in every order and depth."""
    parts = draw(_sub_trees(pool))
    picked = st.lists(st.sampled_from(parts), min_size=1, max_size=3)
    group = st.sampled_from(["AND", "OR", "NOT"])
    middle = draw(st.lists(st.tuples(group, picked), min_size=1, max_size=4))
    parts += [{kind: items} for kind, items in middle]
    top = st.lists(st.tuples(group, st.lists(st.sampled_from(parts), min_size=1, max_size=3)))
    wheres = draw(top.filter(bool).map(lambda found: found[:8]))
    return [af.parse({kind: items}, schema) for kind, items in wheres]


def _changes(record: dict[str, Any], data: st.DataObject, schema: af.Schema) -> list[Any]:
    """The record, then a few states each changing one field (a null, a wrong type among
    them), as a contact is written."""
    states: list[Any] = [dict(record)]
    names = [f.name for f in schema.fields if f.type.element is None]
    for _ in range(data.draw(st.integers(1, 6))):
        state = dict(states[-1])
        name = data.draw(st.sampled_from(names))
        other = data.draw(records(schema)).get(name)
        state[name] = data.draw(st.sampled_from([other, None, other]))
        states.append(state)
    return states


def _assert_tracked(filters: Sequence[af.Filter], states: list[Any], now: datetime) -> None:
    """Every climb follows the states as each filter alone judges them: the plain one and,
    where numpy is installed, the fast one with its waves in numpy only, in Python only, and
    each wave by its size (`graph_fast.FEW`), so that a climb passes between the two; its
    numpy waves compact and not (`graph_fast.COMPACT`)."""
    together = af.FilterSet(filters)
    fast = memory_graph_fast
    switch, few, compact = fast.ENABLED, fast.FEW, fast.COMPACT
    climbs = [(False, few, compact)]
    if fast.np is not None:
        climbs += [(True, edges, on) for edges in (0, 2, few) for on in (False, True)]
        climbs += [(True, 10**9, True)]
    for enabled, edges, on in climbs:
        fast.ENABLED, fast.FEW, fast.COMPACT = enabled, edges, on
        try:
            _assert_followed(together, filters, states, now)
        finally:
            fast.ENABLED, fast.FEW, fast.COMPACT = switch, few, compact


def _assert_followed(
    together: af.FilterSet, filters: Sequence[af.Filter], states: list[Any], now: datetime
) -> None:
    tracked = together.track(states[0], now=now)
    assert tracked.matching == _alone(filters, states[0], now)
    for state in states[1:]:
        before = tracked.matching
        expected = _outcome(lambda state=state: _alone(filters, state, now))
        if expected == "RecordError":
            assert _outcome(lambda state=state: tracked.update(state)) == expected
            return
        entered, left = tracked.update(state)
        assert tracked.matching == expected
        assert entered == sorted(set(expected) - set(before))
        assert left == sorted(set(before) - set(expected))
        assert together.matching(state, now=now) == expected


@default_run_examples(100)
@given(_nested_filters(af.CONTACT, _pool(af.CONTACT)), records(), st.data())
def test_shared_sub_trees_answer_as_alone(
    filters: list[af.Filter], record: dict[str, Any], data: st.DataObject
) -> None:
    _assert_same(filters, record)
    _assert_tracked(filters, _changes(record, data, af.CONTACT), NOW)


@default_run_examples(100)
@given(_nested_filters(DATED, _pool(DATED)), records(DATED), st.data())
def test_a_tracked_record_at_now(
    filters: list[af.Filter], record: dict[str, Any], data: st.DataObject
) -> None:
    _assert_tracked(filters, _changes(record, data, DATED), datetime(2024, 1, 1, tzinfo=UTC))


@default_run_examples(100)
@given(
    _shared_filters(af.CONTACT, _pool(af.CONTACT)),
    records(),
    st.sampled_from(af.CONTACT.fields),
    st.data(),
)
def test_a_tracked_record_given_a_wrong_type(
    filters: list[af.Filter], record: dict[str, Any], field: af.Field, data: st.DataObject
) -> None:
    wrong = dict(record)
    if field.type.element is None and field.type is not af.FieldType.JSON:
        wrong[field.name] = data.draw(wrong_typed_values(field.type))
    _assert_tracked(filters, [record, wrong, record], NOW)


def test_identical_sub_trees_are_one_node() -> None:
    both = {"AND": [{"country": "FR"}, {"isVerified": True}]}
    swapped = {"AND": [{"isVerified": True}, {"country": "FR"}]}
    either = {"OR": [{"country": "FR"}, {"isVerified": True}]}
    filters = [
        af.parse({"OR": [both, {"points": {"gte": 10}}]}),
        af.parse({"NOT": swapped}),
        af.parse(either),
    ]
    together = af.FilterSet(filters)
    distinct, counted, nodes, nodes_counted = together.sharing()
    assert (distinct, counted) == (3, 7)
    assert nodes < nodes_counted
    tracked = together.track({"country": "FR", "isVerified": True, "points": 0})
    assert tracked.matching == [0, 2]
    assert tracked.update({"country": "FR", "isVerified": False, "points": 0}) == ([1], [0])
    assert tracked.update({"country": "DE", "isVerified": False, "points": 11}) == ([0], [2])


def test_identical_filters_enter_and_leave_together() -> None:
    """Filters whose logic is the same node of the graph are rooted there together: the fast
    climb reads a root's one filter in one gather and those of a root shared by several from
    its runs, in numpy's answer and in Python's, and both follow each filter alone."""
    both = {"AND": [{"country": "FR"}, {"OR": [{"isVerified": True}, {"points": {"gt": 5}}]}]}
    swapped = {"AND": [{"OR": [{"points": {"gt": 5}}, {"isVerified": True}]}, {"country": "FR"}]}
    wheres = [both, {"country": "FR"}, swapped, {"NOT": both}, both, {"points": {"gt": 5}}]
    filters = [af.parse(where) for where in wheres]
    values = [("FR", True, 0), ("FR", False, 0), ("FR", False, 6), ("DE", False, 6)]
    values += [("FR", None, None), (None, True, 9), ("FR", True, 9), ("DE", True, 0)]
    states = [{"country": c, "isVerified": v, "points": p} for c, v, p in values]
    _assert_tracked(filters, states + states[::-1], NOW)


def test_a_condition_on_two_fields_that_change_together_moves_once() -> None:
    """The fast climb lays out the conditions of each changed field in turn: a comparison of
    two fields that change in one write is read under both, and must move its parents once."""
    filters = [
        af.parse(where)
        for where in (
            {"referrals": {"gt": {"_ref": "points"}}},
            {"AND": [{"points": {"gte": 5}}, {"referrals": {"lt": {"_ref": "points"}}}]},
            {"OR": [{"NOT": {"referrals": {"equals": {"_ref": "points"}}}}, {"points": 10}]},
            {"NOT": {"AND": [{"referrals": {"lte": {"_ref": "points"}}}, {"referrals": 0}]}},
        )
    ]
    values = [None, 0, 5, 10]
    pairs = [{"referrals": r, "points": p} for r in values for p in values]
    states = [pair for first in pairs for pair in (first, *pairs)]
    _assert_tracked(filters, states, NOW)


SELF_REFERENCES = [
    {field: {op: {"_ref": field}}}
    for field, ops in (
        ("points", ["equals", "not", "lt", "lte", "gt", "gte"]),
        ("createdAt", ["equals", "not", "lt", "lte", "gt", "gte"]),
        ("isVerified", ["equals", "not"]),
        ("country", ["equals", "not", "lt", "lte", "gt", "gte"]),
    )
    for op in ops
]
"""A field compared with itself, on every operator and type a reference takes."""


@pytest.mark.parametrize("where", SELF_REFERENCES, ids=lambda w: json.dumps(w))
def test_a_condition_comparing_a_field_with_itself_moves_once(where: dict[str, Any]) -> None:
    """A condition reads its field twice when it compares the field with itself: it is one
    condition of that field, and a change of the field moves its parents once (the fast climb
    moved them once for each read: an AND over it and a FALSE sibling read UNKNOWN). Beside
    it: under AND, OR and NOT with another condition of the same field and of another, the
    field moving between values, null and absent."""
    (field,) = where
    values: dict[str, list[Any]] = {
        "points": [1, 2, None],
        "createdAt": [datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 1, 2, tzinfo=UTC), None],
        "isVerified": [True, False, None],
        "country": ["FR", "fr", None],
    }
    other = {"email": {"equals": "a@example.com"}}
    same = {field: {"not": None}}
    wheres = [
        where,
        {"NOT": where},
        {"AND": [where, same]},
        {"NOT": {"AND": [where, other, {}]}},
        {"NOT": {"OR": [{"AND": [where, same, {}]}]}},
        {"OR": [where, other]},
        {"NOT": {"OR": [where, {"NOT": other}]}},
    ]
    filters = [af.parse(w) for w in wheres]
    states: list[dict[str, Any]] = [{"email": "a@example.com"}]
    states += [{"email": e, field: v} for e in ("a@example.com", "b@example.com")
               for v in values[field]]  # fmt: skip
    _assert_tracked(filters, [state for first in states for state in (first, *states)], NOW)


def test_a_wave_keeps_each_parent_once_whatever_its_marks_held() -> None:
    """The parents of a wave are made distinct by marks left from earlier waves: a stale mark
    equal to a place must not keep a repeat, nor drop a number."""
    np = pytest.importorskip("numpy")
    stale = np.arange(8, dtype=np.int32)  # places written by an earlier wave
    numbers = np.array([5, 3, 5, 5, 0, 3, 1])
    assert sorted(memory_graph_fast._distinct(numbers, stale).tolist()) == [0, 1, 3, 5]
    places = np.array([9, 2, 7, 4, 0, 6, 1])  # any distinct values: the edges a wave took
    kept = memory_graph_fast._once(numbers, stale, places)
    assert sorted(numbers[kept].tolist()) == [0, 1, 3, 5]


def test_compact_spans_and_tallies_read_as_the_wide_arrays() -> None:
    """The compact waves' span of each number holds its stop and its count of edges, and the
    tallies fall back to 64 bits for a node of `NARROW` children or more, whose counts 16
    bits cannot hold: such a node, and its AND, OR and NOT above, follow the plain climb."""
    np = pytest.importorskip("numpy")
    wide = graph.Graph(40_000)
    big = wide.node(graph.OR, tuple(range(memory_graph_fast.NARROW)))
    top = wide.node(graph.AND, (big, 0, 1))
    wide.node(graph.NOT, (top,))
    arrays = memory_graph_fast.Arrays(wide, {big: [0], top: [1]}, {"f": [0, 1, 2]})
    compact = arrays.compact
    assert not compact.narrow
    spans = compact.spans
    assert (spans >> compact.bits).tolist() == arrays.stops.tolist()
    assert (spans & compact.mask).tolist() == arrays.degrees.tolist()
    changes: list[tuple[int, bool | None]] = [(0, True), (1, True), (0, None), (2, True)]
    changes += [(1, False), (0, False), (5, None), (0, True)]
    for few in (0, memory_graph_fast.FEW):
        climber = memory_graph_fast.Climber(arrays, wide)
        assert climber.compact and climber.tables.dtype is np.int64
        climber.few = few
        truths: list[bool | None] = [False] * wide.size
        climber.start(list(truths))
        plain = graph.Climber(wide, {big: [0], top: [1]})
        plain.start(list(truths))
        for number, truth in changes:
            truths[number] = truth
            expected = plain.climb([number], truths)
            old, new = int(climber.state[number]), memory_graph_fast._CODE[truth]
            climber.state[number] = new
            step = np.array([old * 3 + new], dtype=np.int8)
            assert climber.climb([(np.array([number]), step)]) == expected


def test_codes_convert_each_list_once_and_by_identity() -> None:
    """The fast climb's sink keeps each of the set's lists converted, keyed by identity: a
    list given again writes from its array (a span of it for a range's bounds), and a list
    that takes over a freed one's key is converted anew, never read from the other's."""
    np = pytest.importorskip("numpy")
    scratch = np.zeros(8, dtype=np.int8)
    lists: dict[int, tuple[Sequence[int], Any]] = {}
    codes = memory_graph_fast.Codes(scratch, lists)
    bounds = [1, 4, 6]
    codes.all(bounds, True, 0, 3)
    codes.all(bounds, None, 1, 2)  # a span of the same list: converted once
    assert scratch.tolist() == [0, 1, 0, 0, 2, 0, 1, 0]
    assert len(lists) == 1
    other = [0, 7]
    lists[id(other)] = (bounds, lists[id(bounds)][1])  # a stale entry under its key
    scratch[:] = 0
    codes.all(other, True, 0, 2)
    assert scratch.tolist() == [1, 0, 0, 0, 0, 0, 0, 1]


def test_a_tracked_record_across_range_bounds() -> None:
    """The bounds of a range that hold go to the tracker as a span of the set's sorted list:
    a value moving across, onto and beside every bound, then null, both climbs."""
    filters = [
        af.parse({"points": {op: bound}})
        for op in ("gt", "gte", "lt", "lte")
        for bound in (0, 5, 10, 15)
    ]
    filters.append(af.parse({"AND": [{"points": {"gt": 5}}, {"points": {"lte": 10}}]}))
    values = [-1, 0, 3, 5, 7, 10, 12, 15, 20, None, 10, 0]
    _assert_tracked(filters, [{"points": value} for value in values], NOW)
