"""Every question of the algebra ends within its budget of steps, whatever its filters hold
(docs/algebra.md, "Bounded"): pairs of filters up to the reference service's budget of one
filter (500 conditions and groups), among them long ANDs of two-way ORs, which once made one
compare judge millions of conditions for 15 s and more.

The work is counted apart from the budget that bounds it: every condition judged on a value
(`decide.truth`) and every candidate record judged (`matches`), each at least a step. The count
stops a search that goes past the bound (an exception no `except Exception` of the search
catches), so a search that is not bounded fails here at once instead of running for minutes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.algebra import QUESTION_STEPS, can_match, compare, implies, overlaps
from audiencefilter.language.nodes import Node

decide = importlib.import_module("audiencefilter.algebra.decide")
NOW = datetime(2026, 3, 1, tzinfo=UTC)
SERVICE_CONDITIONS = 500  # the reference service's budget of one filter (filter_budget.py)
Where = dict[str, Any]


class _PastTheBound(BaseException):
    """Raised by the count past the bound: a `BaseException`, so the search's guards against a
    value the oracle refuses (`except Exception`) let it through and the search stops."""


@dataclass
class _Work:
    """Conditions and records judged, and the bound past which the search is stopped."""

    bound: int
    judged: int = 0

    def count(self) -> None:
        self.judged += 1
        if self.judged > self.bound:
            raise _PastTheBound(f"more than {self.bound:,} conditions and records judged")


@dataclass(frozen=True)
class _Counted:
    """A filter as the algebra reads it (`algebra.Audience`), counting each record judged."""

    inner: af.Filter
    work: _Work

    @property
    def schema(self) -> af.Schema:
        return self.inner.schema

    def lowered_at(self, now: datetime | None = None) -> Node:
        return self.inner.lowered_at(now)

    @property
    def matches(self) -> Callable[..., bool]:
        def counted(record: Any, **kwargs: Any) -> bool:
            self.work.count()
            return bool(self.inner.matches(record, **kwargs))

        return counted


@contextmanager
def _counting(work: _Work) -> Iterator[None]:
    """Count every condition the search judges on a representative value."""
    judge = decide.truth

    def counted(atom: Node, schema: af.Schema, record: Any) -> str | None:
        work.count()
        return judge(atom, schema, record)  # type: ignore[no-any-return]

    decide.truth = counted
    try:
        yield
    finally:
        decide.truth = judge


def _compared(a: af.Filter, b: af.Filter, questions: int = 3) -> tuple[af.AudienceComparison, int]:
    """`compare(a, b)` and the work it did, stopped past `questions` budgets."""
    work = _Work(questions * QUESTION_STEPS)
    with _counting(work):
        try:
            found = compare(_Counted(a, work), _Counted(b, work), now=NOW)
        except _PastTheBound as exc:
            pytest.fail(f"the comparison is not bounded: {exc}")
    return found, work.judged


def _ors(count: int) -> af.Filter:
    """`count` two-way ORs on two number fields, each group its own literals."""
    text = " AND ".join(f"(points > {i} OR referrals < {i})" for i in range(count))
    return af.parse_text(text)


@pytest.mark.parametrize("count", [20, 80, 160])
def test_long_ands_of_two_way_ors_are_compared_within_the_bound(count: int) -> None:
    """Eighty two-way ORs (160 conditions, well within the service's budget) against
    `points >= 3`: each field's check as a literal joins a branch judged every representative
    of the field against every literal on it, about three million conditions and 15 s for one
    compare. Now the work stays within three questions' steps, both ways round."""
    wide, small = _ors(count), af.parse_text("points >= 3")
    assert wide.cost().conditions <= SERVICE_CONDITIONS
    for a, b in ((wide, small), (small, wide), (wide, wide)):
        found, judged = _compared(a, b)
        assert judged <= found.steps <= 3 * QUESTION_STEPS
        assert found.relation != "unknown" or "steps" in found.reason or "within" in found.reason


def test_a_question_past_its_steps_says_so() -> None:
    """Past its budget a question is undecided, its reason naming the steps it was given; its
    steps never exceed them."""
    wide, small = _ors(80), af.parse_text("points >= 3")
    for verdict in (
        implies(wide, small, now=NOW, steps=500),
        overlaps(small, wide, now=NOW, steps=500),
        can_match(wide, now=NOW, steps=50),
    ):
        assert verdict.holds is None and verdict.steps <= 500
        assert "too many cases to decide within" in verdict.reason


def _condition() -> st.SearchStrategy[Where]:
    """One condition of the contact model: numbers with many distinct literals (the regions a
    field's check walks), strings with patterns, booleans, `in` lists, null tests."""
    number = st.sampled_from(["points", "referrals"])
    text = st.sampled_from(["country", "city", "email"])
    return st.one_of(
        st.builds(
            lambda f, op, v: {f: {op: v}},
            number,
            st.sampled_from(["equals", "gt", "gte", "lt", "lte"]),
            st.integers(-3, 300),
        ),
        st.builds(
            lambda f, op, v: {f: {op: v}},
            text,
            st.sampled_from(["equals", "startsWith", "contains", "gt", "not"]),
            st.text("abc", max_size=3),
        ),
        st.builds(lambda f, v: {f: {"in": v}}, number, st.lists(st.integers(0, 40), max_size=4)),
        st.builds(lambda v: {"isVerified": v}, st.booleans()),
        st.builds(lambda f: {f: None}, st.sampled_from(["country", "points"])),
    )


@st.composite
def _wide_filters(draw: st.DrawFn) -> Where:
    """A filter of up to the service's 500 conditions and groups: an AND or OR of groups of
    the other kind (or of its own, or negated), each of one to four conditions."""
    per_group = draw(st.integers(1, 4))
    width = draw(st.integers(1, (SERVICE_CONDITIONS - 1) // (per_group + 2)))
    outer, inner = draw(st.sampled_from([("AND", "OR"), ("OR", "AND"), ("AND", "AND")]))
    negate = draw(st.booleans())
    groups: list[Where] = []
    for _ in range(width):
        group: Where = {inner: [draw(_condition()) for _ in range(per_group)]}
        groups.append({"NOT": group} if negate and draw(st.booleans()) else group)
    return {outer: groups}


@settings(max_examples=10, deadline=None)
@given(_wide_filters(), st.one_of(_wide_filters(), _condition()))
def test_any_pair_within_the_service_budget_is_compared_within_the_bound(
    first: Where, second: Where
) -> None:
    """Any pair of filters within the service's budget: the comparison ends within three
    questions' steps (its relation `unknown` past them), counted apart from the budget."""
    a, b = af.parse(first), af.parse(second)
    assert a.cost().conditions <= SERVICE_CONDITIONS
    found, judged = _compared(a, b)
    assert judged <= found.steps <= 3 * QUESTION_STEPS
    verdict = can_match(a, now=NOW)
    assert verdict.steps <= QUESTION_STEPS
