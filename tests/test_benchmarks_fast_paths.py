"""The fast paths behind the speed targets answer exactly as the general code they shortcut.

- `parse` of JSON text first decodes without the duplicate-key hook and rules repeated keys
  out by counting colons (`_read_quick`); whenever it cannot, or the filter has a problem, the
  general path runs. Both must give the same filter, or the same issues at the same places.
- `compile` builds a fast predicate that lets exact `datetime`s through to date-time
  orderings and hands any record it cannot evaluate to the exact predicate. Both must agree on
  every record, and raise the same `RecordError`.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.backends.memory import _Builder, _diagnose, _function, compile_node
from audiencefilter.testing.strategies import NOW, filters, record_lists, where_clauses

parse_module = sys.modules["audiencefilter.where.read"]


def outcome_of_parse(call: Any) -> Any:
    try:
        return call().root
    except af.FilterError as exc:
        return [issue.model_dump() for issue in exc.errors]


def both_parses(text: str) -> tuple[Any, Any]:
    quick = outcome_of_parse(lambda: af.parse(text))
    exact = outcome_of_parse(lambda: parse_module._parse_exact(text, af.CONTACT, af.DEFAULT_LIMITS))
    return quick, exact


def _with_repeats(value: Any, data: st.DataObject, ascii: bool) -> str:
    """JSON text of `value` in which objects sometimes repeat one of their keys."""
    if isinstance(value, dict):
        members = list(value.items())
        if members and data.draw(st.integers(0, 4)) == 0:
            key, _ = data.draw(st.sampled_from(members))
            members.insert(data.draw(st.integers(0, len(members))), (key, None))
        inner = ", ".join(
            json.dumps(k, ensure_ascii=ascii) + ": " + _with_repeats(v, data, ascii)
            for k, v in members
        )
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_with_repeats(v, data, ascii) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii)


@given(where_clauses(), st.data())
def test_quick_parse_equals_the_general_path(where: dict[str, Any], data: st.DataObject) -> None:
    quick, exact = both_parses(_with_repeats(where, data, data.draw(st.booleans())))
    assert quick == exact


@pytest.mark.parametrize(
    "text",
    [
        '{"email": "a", "email": "b"}',
        '{"email": {"equals": "a:b", "equals": "c"}}',
        '{"email": "a:b:c", "city": {"in": ["x:y", "z"]}}',
        '{"createdAt": {"gte": "2025-01-01T00:00:00Z", "gte": "2025-01-01"}}',
        '{"OR": [{"email": "x"}, {"email": "y", "email": "z"}]}',
        '{"email": "a\\u003ab", "city": "x", "city": "y"}',
        '{"email": "a\\":b", "email": "c"}',
        '{"email": {"in": ["a:b", "c"]}, "email": null}',
        '{"email": {"not": {"contains": "a:b", "contains": "c"}}}',
        '{"createdAt": {"gte": "not a date"}}',
        '{"createdAt": {"in": ["2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z"]}}',
        ' {"email": "a"} ',
        '{"email": "a"} x',
        '\ufeff{"email": 1}',
        '{"points": NaN}',
        '{"points": 1e400}',
        '{"email": {"contains": "x", "mode": "insensitive"}}',
        '{"firstName": "Élodie", "firstName": "Élodie"}',
        '{"unknown:field": 1}',
        "[1, 2]",
        '"text"',
        "",
        "{" * 2000,
    ],
)
def test_quick_parse_equals_the_general_path_on_edge_cases(text: str) -> None:
    quick, exact = both_parses(text)
    assert quick == exact


def test_colon_count_shortcut_is_taken_for_plain_filters() -> None:
    text = '{"createdAt": {"gte": "2025-01-01T00:00:00Z"}, "email": "a:b"}'
    assert parse_module._read_quick(text, af.CONTACT, af.DEFAULT_LIMITS) is not None
    repeated = '{"createdAt": {"gte": "2025-01-01T00:00:00Z", "gte": "2025-01-02"}}'
    assert parse_module._read_quick(repeated, af.CONTACT, af.DEFAULT_LIMITS) is None


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
    instants = flt.instants(NOW)  # those of relative date-times, if any
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
