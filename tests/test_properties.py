"""Properties over random filters, records and hostile input (hypothesis)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.testing.strategies import (
    NOW,
    filters,
    record_lists,
    records,
    where_clauses,
    where_noise,
)
from tests.oracle import evaluate


@given(filters())
def test_canonical_json_round_trips(flt: af.Filter) -> None:
    assert af.parse(flt.to_json()) == flt
    assert af.parse(flt.to_dict()) == flt


@given(where_clauses())
def test_canonical_json_is_a_fixed_point(where: dict[str, Any]) -> None:
    canonical = af.parse(where).to_json()
    assert af.parse(canonical).to_json() == canonical


@given(filters(), record_lists(hostile=True))
def test_compiled_predicate_agrees_with_three_valued_oracle(
    flt: af.Filter, rows: list[dict[str, Any]]
) -> None:
    predicate = af.compile(flt, clock=lambda: NOW)
    for row in rows:
        assert predicate(row) is (evaluate(flt, row, NOW) is True)


@given(filters(), records())
def test_not_of_a_filter_never_admits_what_the_filter_admits(
    flt: af.Filter, row: dict[str, Any]
) -> None:
    negated = af.Filter(af.Not(flt.root))
    assert not (flt.matches(row, now=NOW) and negated.matches(row, now=NOW))


_json = where_noise()


@given(_json)
def test_any_json_value_parses_or_raises_filter_error(value: Any) -> None:
    try:
        flt = af.parse(value)
    except af.FilterError as error:
        assert error.errors
        for issue in error.errors:
            assert isinstance(issue.path, str) and issue.message
    else:
        assert af.parse(flt.to_json()) == flt


@given(_json)
def test_any_json_text_parses_or_raises_filter_error(value: Any) -> None:
    try:
        text = json.dumps(value, allow_nan=True)
    except (ValueError, TypeError):
        return
    try:
        af.parse(text)
    except af.FilterError as error:
        for issue in error.errors:
            assert issue.line is None or issue.line >= 1


@given(st.text(max_size=200) | st.binary(max_size=200))
def test_any_text_or_bytes_parses_or_raises_filter_error(text: str | bytes) -> None:
    try:
        af.parse(text)
    except af.FilterError:
        pass
