"""`simplify` keeps membership exactly and never grows a filter; `is_unsatisfiable` is sound."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.rewrite.simplify import size
from audiencefilter.testing.strategies import (
    filters,
    lookalike_data,
    lookalike_filters,
    record_lists,
)


@given(filters(max_leaves=10), record_lists())
def test_simplified_filter_has_the_same_members(flt: af.Filter, rows: list[dict[str, Any]]) -> None:
    simple = flt.simplify()
    assert [simple.matches(r) for r in rows] == [flt.matches(r) for r in rows]
    assert size(simple.root) <= size(flt.root)
    assert af.parse(simple.to_json()) == simple  # still a filter parse can produce


@given(lookalike_filters(), st.lists(lookalike_data(), max_size=8))
def test_lookalike_literals_keep_their_members(flt: af.Filter, data: list[dict[str, Any]]) -> None:
    """`true`, `1` and `1.0` at one path: duplicates are removed only where they are one
    literal (`1` and `1.0`), never where Python's `==` alone joins them (`true` and `1`)."""
    simple = flt.simplify()
    rows = [{"data": d} for d in data]
    assert [simple.matches(r) for r in rows] == [flt.matches(r) for r in rows]
    assert [flt.is_unsatisfiable() and flt.matches(r) for r in rows] == [False] * len(rows)


@given(filters(max_leaves=10), record_lists())
def test_unsatisfiable_filters_match_nobody(flt: af.Filter, rows: list[dict[str, Any]]) -> None:
    if flt.is_unsatisfiable():
        assert not any(flt.matches(r) for r in rows)


@pytest.mark.parametrize(
    ("where", "simpler"),
    [
        (
            {"AND": [{"AND": [{"points": 1}, {"city": "a"}]}, {"email": "b"}]},
            {"points": 1, "city": "a", "email": "b"},
        ),
        ({"AND": [{"city": "a"}, {"city": "a"}]}, {"city": "a"}),
        ({"OR": [{"OR": []}, {"city": "a"}]}, {"city": "a"}),
        ({"AND": [{}, {"city": "a"}]}, {"city": "a"}),
        ({"OR": [{}, {"city": "a"}]}, {}),
        ({"NOT": {"NOT": {"city": "a"}}}, {"city": "a"}),
        (
            {"points": {"gt": 10, "gte": 20, "lt": 100, "lte": 50}},
            {"points": {"gte": 20, "lte": 50}},
        ),
        ({"points": {"gte": 5, "lte": 5}}, {"points": 5}),
        ({"OR": [{"city": "a"}, {"city": {"in": ["b", "a"]}}]}, {"city": {"in": ["a", "b"]}}),
        ({"city": {"in": ["a"]}}, {"city": "a"}),
        ({"city": {"in": ["a", "a", "b"]}}, {"city": {"in": ["a", "b"]}}),
        (
            {"createdAt": {"gte": "2025-01-01", "gt": "2024-06-01"}},
            {"createdAt": {"gte": "2025-01-01T00:00:00Z"}},
        ),
    ],
)
def test_simplifications(where: dict[str, Any], simpler: dict[str, Any]) -> None:
    assert af.parse(where).simplify() == af.parse(simpler)


@pytest.mark.parametrize(
    "where",
    [
        {"points": {"gt": 10, "lt": 5}},
        {"points": {"gt": 5, "lt": 5}},
        {"country": {"in": []}},
        {"OR": []},
        {"AND": [{"company": None}, {"company": {"contains": "x"}}]},
        {"AND": [{"company": None}, {"company": {"not": None}}]},
        {"createdAt": {"lt": "2024-01-01", "gte": "2024-01-01"}},
        {"OR": [{"points": {"gt": 10, "lt": 5}}, {"country": {"in": []}}]},
    ],
)
def test_unsatisfiable(where: dict[str, Any]) -> None:
    assert af.parse(where).is_unsatisfiable()


def test_contradiction_under_not_is_not_folded() -> None:
    # NOT(points > 10 AND points < 5) is TRUE with points but UNKNOWN without them.
    flt = af.parse({"NOT": {"points": {"gt": 10, "lt": 5}}})
    simple = flt.simplify()
    assert simple.matches({"points": 7}) and not simple.matches({})
    assert not flt.is_unsatisfiable()


@pytest.mark.parametrize(
    "where",
    [{"points": {"gt": 10}}, {"NOT": {"country": {"in": []}}}, {"isVerified": True}],
)
def test_satisfiable(where: dict[str, Any]) -> None:
    assert not af.parse(where).is_unsatisfiable()


def test_booleans_are_not_merged_into_in() -> None:
    flt = af.parse({"OR": [{"isVerified": True}, {"isVerified": False}]})
    assert af.parse(flt.simplify().to_json()) == flt.simplify()


def test_string_orderings_merge_by_code_point_and_folded_ones_stay() -> None:
    merged = af.parse(
        {"AND": [{"email": {"gt": "a"}}, {"email": {"gt": "b"}}, {"email": {"lt": "c"}}]}
    )
    assert merged.simplify().to_text() == 'email > "b" and email < "c"'
    assert af.parse({"email": {"gt": "b", "lt": "B"}}).simplify().to_text() == "false"
    folded = af.parse({"email": {"gt": "b", "lt": "B", "mode": "insensitive"}})
    assert folded.simplify() == folded


@given(filters(max_leaves=10), record_lists())
def test_always_true_filters_match_everybody(flt: af.Filter, rows: list[dict[str, Any]]) -> None:
    if flt.is_always_true():
        assert all(flt.matches(r) for r in rows)


ALWAYS_TRUE = [
    ("json", {}),
    ("json", {"OR": [{"country": "XX"}, {}]}),
    ("json", {"OR": [{"country": "XX"}, {"country": {"notIn": []}}]}),
    ("json", {"NOT": {"AND": [{"country": "XX"}, {"country": {"in": []}}]}}),
    ("json", {"AND": [{}, {"OR": [{"points": {"gt": 3}}, {"AND": []}]}]}),
    ("text", 'country = "XX" or true'),
    ("text", 'not (country = "XX" and false)'),
    ("sql", "country = 'XX' OR TRUE"),
    ("sql", "NOT (country = 'XX' AND FALSE)"),
    ("mongodb", {"$or": [{"country": "XX"}, {}]}),
    ("jsonlogic", {"or": [{"==": [{"var": "country"}, "XX"]}, True]}),
]
NOT_ALWAYS_TRUE = [
    ("json", {"country": "XX"}),
    ("json", {"OR": [{"points": {"gt": 5}}, {"points": {"lte": 5}}]}),  # UNKNOWN for null
    ("json", {"NOT": {"country": "XX"}}),
    ("json", {"OR": [{"country": "XX"}, {"country": {"in": []}}]}),
    ("sql", "country = 'XX' OR FALSE"),
]


def _read(form: str, where: Any) -> af.Filter:
    if form == "text":
        return af.parse_text(where)
    return af.parse(where) if form == "json" else af.from_format(where, form)


@pytest.mark.parametrize(("form", "where"), ALWAYS_TRUE)
def test_what_folds_to_true_is_always_true_in_every_format(form: str, where: Any) -> None:
    flt = _read(form, where)
    assert flt.is_always_true()
    assert flt.matches({}) and flt.matches({"country": None, "points": None})


@pytest.mark.parametrize(("form", "where"), NOT_ALWAYS_TRUE)
def test_a_filter_that_leaves_someone_out_is_not_always_true(form: str, where: Any) -> None:
    assert not _read(form, where).is_always_true()
