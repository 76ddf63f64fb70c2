"""`Filter.cost`: the static cost model, tested by its structure, never by timings.

What the model promises (docs/performance.md, "The cost model"): every node kind has a cost;
the same filter always costs the same; more work written never costs less (a longer `in`
list, a longer pattern, an added condition, more related rows, case folding); the sizes the
service's budgets read keep their meaning; hostile input gives a finite answer or a
`ValueError` naming what was wrong. The figures (estimate against measured time per record,
and the time of `cost()` itself) are `benchmarks/cost_model.py`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.language import cost as cost_model
from audiencefilter.language.nodes import NODE_TYPES, Node, UnhandledNodeError, walk
from audiencefilter.language.visitor import missing_handlers
from audiencefilter.testing.space import SPACE, every_condition
from audiencefilter.testing.strategies import filters


def units(where: dict[str, Any], rows: float = cost_model.DEFAULT_ROWS) -> float:
    return af.parse(where).cost(rows).units


# ---- every kind, and only known kinds ---------------------------------------------------------

ONE_OF_EACH = {
    "and": {"AND": [{"points": {"gt": 1}}, {"country": "FR"}]},
    "or": {"OR": [{"points": {"gt": 1}}, {"country": "FR"}]},
    "not": {"NOT": {"points": {"gt": 1}}},
    "comparison": {"points": {"gt": 1}},
    "is_null": {"city": None},
    "const": {},
    "quantified": {"actions": {"some": {"name": "buy"}}},
    "aggregated": {"actions": {"count": {"gte": 3}}},
    "blank": {"company": {"blank": True}},
    "field_comparison": {"referrals": {"gt": {"_ref": "points"}}},
    "list_test": {"data": {"path": ["tags"], "array_contains": ["vip"]}},
}


def test_every_node_kind_has_a_cost() -> None:
    assert missing_handlers(cost_model._Costing) == []
    assert set(ONE_OF_EACH) == {kind.kind for kind in NODE_TYPES}
    for kind, where in ONE_OF_EACH.items():
        flt = af.parse(where)
        assert kind in {node.kind for node in walk(flt.root)}, kind
        found = flt.cost()
        assert found.units > cost_model.ENGINES["memory"].record or kind == "const", kind
        assert math.isfinite(found.units) and found.conditions >= 1, kind


@dataclass(frozen=True, slots=True)
class Frob:
    kind: ClassVar[str] = "frob"


@pytest.mark.parametrize("shape", [lambda f: f, lambda f: af.And((af.TRUE, f))])
def test_a_new_node_kind_fails_loudly(shape: Any) -> None:
    flt = af.Filter(cast(Node, shape(Frob())), af.CONTACT)
    with pytest.raises(UnhandledNodeError, match="_Costing does not handle node kind 'frob'"):
        flt.cost()


def test_every_condition_of_the_space_has_a_finite_cost() -> None:
    """One condition per slot and operation of the generated space: every type, placement
    (column, JSON path, declared inside JSON), relation (to-many and to-one) and aggregate."""
    seen = 0
    for _, _, where in every_condition(SPACE):
        found = af.parse(where, SPACE).cost()
        assert math.isfinite(found.units) and found.units > 0, where
        seen += 1
    assert seen > 100


# ---- deterministic -----------------------------------------------------------------------------


@settings(deadline=None, max_examples=60)
@given(filters(max_leaves=10))
def test_the_same_filter_costs_the_same(flt: af.Filter) -> None:
    again = af.parse(flt.to_json())
    assert again.cost() == flt.cost() == flt.cost()
    assert again.cost().units == flt.cost().units


# ---- monotonic ---------------------------------------------------------------------------------


@settings(deadline=None, max_examples=60)
@given(filters(max_leaves=8), filters(max_leaves=4))
def test_an_added_condition_never_costs_less(flt: af.Filter, other: af.Filter) -> None:
    for grown in (af.And((flt.root, other.root)), af.Or((flt.root, other.root)), af.Not(flt.root)):
        for engine in cost_model.ENGINE_NAMES:
            bigger = af.Filter(grown, flt.schema).cost(engine=engine)
            alone = flt.cost(engine=engine)
            assert bigger.units >= alone.units, engine
            assert bigger.conditions > alone.conditions
            assert bigger.depth >= alone.depth


@pytest.mark.parametrize("op", ["in", "notIn"])
def test_a_longer_list_never_costs_less(op: str) -> None:
    for engine in cost_model.ENGINE_NAMES:
        lists = [af.parse({"points": {op: list(range(n))}}) for n in (1, 2, 5, 50, 5000)]
        found = [flt.cost(engine=engine).units for flt in lists]
        assert found == sorted(found) and found[0] < found[-1], engine


def test_a_longer_pattern_and_case_folding_never_cost_less() -> None:
    found = [units({"email": {"contains": "x" * n}}) for n in (1, 10, 100, 1000)]
    assert found == sorted(found) and found[0] < found[-1]
    plain = units({"email": {"startsWith": "ab"}})
    assert units({"email": {"startsWith": "ab", "mode": "insensitive"}}) > plain
    assert plain > units({"email": "ab"})  # a pattern costs more than an equality


def test_more_rows_never_cost_less_and_a_to_one_relation_reads_one_row() -> None:
    where = {"actions": {"count": {"gte": 3}}}
    found = [units(where, rows) for rows in (0, 1, 10, 1000)]
    assert found == sorted(found) and found[0] < found[-1]
    to_one = {"owner": {"is": {"c_number": {"gt": 1}}}}
    one = [af.parse(to_one, SPACE).cost(rows).units for rows in (0, 10, 1000)]
    assert one[0] == one[1] == one[2]


def test_list_tests_references_paths_and_relative_dates_cost_more_than_a_comparison() -> None:
    base = units({"points": {"gt": 1}})
    some = af.parse({"c_string_list": {"hasSome": ["a", "b", "c"]}}, SPACE).cost().units
    assert some > af.parse({"c_string_list": {"has": "a"}}, SPACE).cost().units > base
    assert units({"referrals": {"gt": {"_ref": "points"}}}) > base
    assert units({"data": {"path": ["plan", "tier"], "equals": "pro"}}) > base
    assert units({"createdAt": {"gte": {"ago": "P30D"}}}) > units(
        {"createdAt": {"gte": "2025-01-01T00:00:00Z"}}
    )


# ---- the sizes the budgets read ----------------------------------------------------------------


def test_sizes_count_nodes_values_and_sql_nesting() -> None:
    wide = af.parse({"OR": [{"points": {"equals": i}} for i in range(1000)]}).cost()
    assert (wide.conditions, wide.values, wide.depth) == (1001, 0, 1004)
    assert wide.widest == "OR" and wide.widest_items == 1000
    listed = af.parse({"points": {"in": list(range(7))}, "data": {"path": ["a"], "equals": 1}})
    assert listed.cost().values == 7 + 1
    nested = af.parse({"AND": [{"city": None}, {"OR": [{"points": {"gt": 1}}] * 3}]}).cost()
    assert nested.widest == "AND[1].OR"
    negated = {"NOT": {"OR": [{"points": {"gt": i}} for i in range(3)]}}
    under = af.parse({"AND": [{"city": None}, {"OR": [{"city": "x"}, negated]}]})
    assert under.cost().widest == "AND[1].OR[1].NOT.OR"
    total = wide + nested
    assert total.conditions == wide.conditions + nested.conditions
    assert total.depth == max(wide.depth, nested.depth)


# ---- hostile input -----------------------------------------------------------------------------


def test_hostile_filters_cost_a_finite_amount() -> None:
    huge = {
        "email": {"contains": "x" * 100_000},
        "points": {"in": list(range(10_000))},
        "actions": {"some": {"name": {"in": [str(i) for i in range(10_000)]}}},
    }
    found = af.parse(huge).cost(cost_model.MAX_ROWS)
    assert math.isfinite(found.units) and found.values == 20_000
    deep: dict[str, Any] = {"points": {"gt": 1}}
    for _ in range(30):
        deep = {"NOT": deep}
    assert math.isfinite(af.parse(deep).cost().units)


@pytest.mark.parametrize("rows", [-1, math.inf, math.nan, 1e10, "10", None])
def test_rows_out_of_range_are_refused_by_name(rows: Any) -> None:
    with pytest.raises(ValueError, match="rows per record must be a number from 0 to 1e"):
        af.parse({"actions": {"count": {"gte": 1}}}).cost(rows)


def test_an_unknown_engine_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown engine 'oracle'.*'memory', 'sql'"):
        af.parse({"points": {"gt": 1}}).cost(engine="oracle")


@settings(deadline=None, max_examples=40)
@given(st.floats(min_value=0, max_value=cost_model.MAX_ROWS))
def test_any_rows_in_range_give_a_finite_cost(rows: float) -> None:
    assert math.isfinite(units({"actions": {"sum": {"increase": {"gte": 3}}}}, rows))


def sql_units(where: dict[str, Any], indexed: tuple[str, ...] = ()) -> float:
    return af.parse(where).cost(engine="sql", indexed=indexed).units


RECENT = {"createdAt": {"gte": {"ago": "P30D"}}}


@pytest.mark.parametrize("quantifier", ["some", "none"])
def test_an_index_answers_some_and_none_over_one_range_without_reading_rows(
    quantifier: str,
) -> None:
    """On SQL, `actions none (createdAt >= 30 days ago)` with an index on the contact's key
    then `createdAt` is a seek: it costs less than reading the rows, and no more as the rows
    grow; in memory there is no index and `indexed` changes nothing."""
    where = {"actions": {quantifier: RECENT}}
    indexed = ("actions.createdAt",)
    assert sql_units(where, indexed) < sql_units(where)
    flt = af.parse(where)
    few, many = (flt.cost(rows, engine="sql", indexed=indexed).units for rows in (1, 10_000))
    assert few == many
    assert flt.cost(indexed=indexed) == flt.cost()


@pytest.mark.parametrize(
    "where",
    [
        {"actions": {"every": RECENT}},  # the negation: no single range
        {"actions": {"some": {"name": "share"}}},  # a field the index does not hold
        {"actions": {"some": {"AND": [RECENT, {"name": "share"}]}}},  # rows still read
        {"actions": {"some": {"name": {"equals": "share", "mode": "insensitive"}}}},
        {"actions": {"max": {"createdAt": {"gte": {"ago": "P30D"}}}, "where": {"name": "share"}}},
    ],
)
def test_what_the_index_cannot_answer_reads_the_rows(where: dict[str, Any]) -> None:
    assert sql_units(where, ("actions.createdAt",)) == sql_units(where)


def test_the_last_entry_of_an_index_answers_min_and_max() -> None:
    for function in ("min", "max"):
        where = {"actions": {function: {"createdAt": {"gte": {"ago": "P30D"}}}}}
        assert sql_units(where, ("actions.createdAt",)) < sql_units(where)


def test_an_ands_later_items_weigh_less_than_its_first() -> None:
    """Engines stop an AND at its first FALSE item, so items after the first are reached by a
    share of the records (`Weights.reach`): a relation last costs less than a relation first,
    and still more than nothing."""
    cheap, heavy = {"points": {"gte": 10}}, {"actions": {"some": {"name": "share"}}}
    first, last = units({"AND": [heavy, cheap]}), units({"AND": [cheap, heavy]})
    assert last < first
    assert last > units(cheap)
    assert units({"OR": [heavy, cheap]}) == units({"OR": [cheap, heavy]})
