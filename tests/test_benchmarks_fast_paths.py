"""The fast paths behind the speed targets answer exactly as the general code they shortcut
(the one of `parse` is tested in test_parse_fast.py).

- `compile` builds a fast predicate that lets exact `datetime`s through to date-time
  orderings and hands any record it cannot evaluate to the exact predicate. Both must agree on
  every record, and raise the same `RecordError`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.backends.memory.compiler import _Builder, _diagnose, _function, compile_node
from audiencefilter.testing.strategies import NOW, filters, record_lists


def _exact_predicate(flt: af.Filter) -> Any:
    def record_error(record: Any, instants: Any = ()) -> bool:
        raise af.RecordError(_diagnose(record, flt.lowered, flt.schema))

    return _function(_Builder(flt.schema, flt.lowered, fast=False), flt.lowered, record_error)


def outcome_of_predicate(predicate: Any, record: Any, instants: Any = ()) -> Any:
    try:
        # An absolute filter's function takes the record alone.
        return bool(predicate(record, instants) if instants else predicate(record))
    except af.RecordError as exc:
        return ("RecordError", str(exc))


_PARIS = timezone(timedelta(hours=1))


def _datetime_forms(value: Any, form: int) -> Any:
    """A date-time in another form a record may hold: naive UTC, ISO text, another offset."""
    if not isinstance(value, datetime):
        return value
    utc = value.astimezone(UTC)
    return (utc, utc.replace(tzinfo=None), utc.isoformat(), utc.astimezone(_PARIS))[form % 4]


@given(filters(), record_lists(), st.integers(0, 3))
def test_fast_predicate_equals_the_exact_one(
    flt: af.Filter, records: list[dict[str, Any]], form: int
) -> None:
    fast = compile_node(flt.lowered, flt.schema)
    exact = _exact_predicate(flt)
    instants = flt.clock.instants(NOW)  # those of relative date-times, if any
    for record in records:
        record = {key: _datetime_forms(value, form) for key, value in record.items()}
        fast_outcome = outcome_of_predicate(fast, record, instants)
        assert fast_outcome == outcome_of_predicate(exact, record, instants)


@pytest.mark.parametrize(
    "value",
    [
        datetime(2025, 1, 1),
        datetime(2025, 1, 2, tzinfo=_PARIS),
        "2025-01-01T00:00:00Z",
        "soon",
        20250101,
        datetime(2025, 1, 1).date(),
    ],
)
def test_fast_predicate_hands_odd_date_times_to_the_exact_one(value: Any) -> None:
    flt = af.parse({"createdAt": {"gte": "2025-01-01"}, "points": {"gt": 1}})
    fast = compile_node(flt.lowered, flt.schema)
    record = {"createdAt": value, "points": 2}
    assert outcome_of_predicate(fast, record) == outcome_of_predicate(_exact_predicate(flt), record)


def test_a_field_is_read_once_along_a_conjunction() -> None:
    reads: list[str] = []

    class Counting(dict[str, Any]):
        def get(self, key: str, default: Any = None) -> Any:
            reads.append(key)
            return super().get(key, default)

    flt = af.parse({"points": {"gte": 100, "lt": 1000, "not": 500}})
    assert flt.matches(Counting(points=150))
    assert reads == ["points"]
