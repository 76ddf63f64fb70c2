"""What two-valued formats do with a negation they cannot write."""

from __future__ import annotations

import pytest

import audiencefilter as af


@pytest.mark.parametrize("fmt", ["jsonlogic", "mongodb"])
@pytest.mark.parametrize(
    "where",
    [
        {"NOT": {"actions": {"count": {"gte": 2}}}},
        {"NOT": {"actions": {"sum": {"increase": {"gt": 1}}}}},
        {"NOT": {"actions": {"min": {"increase": {"lt": 1}}}}},
        {"NOT": {"actions": {"max": {"createdAt": {"gte": "2025-01-01T00:00:00Z"}}}}},
        {"OR": [{"points": 1}, {"NOT": {"actions": {"where": {"name": "x"}, "count": 0}}}]},
    ],
)
def test_a_negated_aggregate_is_refused_by_name_not_crashed_on(
    fmt: str, where: dict[str, object]
) -> None:
    """Two-valued writers negate through the null tests that make a condition UNKNOWN; an
    aggregate has none to name, and the format cannot write it anyway: a FilterError saying
    so, never an UnhandledNodeError (found by the generated space, `format-*` surfaces)."""
    with pytest.raises(af.FilterError) as caught:
        af.parse(where).to_format(fmt)
    assert "no faithful" in str(caught.value)
