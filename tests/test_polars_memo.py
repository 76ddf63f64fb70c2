"""`select_frame` and `to_polars` keep their expression per column types, names and instant.

A frame filtered batch after batch used to rebuild the filter's polars expression on every
call. The expression kept must answer as one built afresh: same rows for every frame, a new
expression when the column types, the column names or the instant differ.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import audiencefilter as af

pl = pytest.importorskip("polars")

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
RECORDS: list[dict[str, Any]] = [
    {"id": f"c{i}", "points": i * 7 % 50, "createdAt": NOW - timedelta(days=i * 3), "city": c}
    for i, c in enumerate(["Paris", "paris", None, "Lyon", "Nice", "PARIS", "Metz", None])
]
WHERES: list[dict[str, Any]] = [
    {"points": {"gte": 20}},
    {"city": {"equals": "paris", "mode": "insensitive"}},
    {"createdAt": {"gte": {"ago": "P10D"}}},
    {"OR": [{"createdAt": {"within": {"this": "month"}}}, {"points": {"lt": 5}}]},
]


def _fresh(where: dict[str, Any], frame: Any, now: datetime, columns: Any = None) -> list[str]:
    """The rows a filter parsed anew (nothing kept) selects."""
    expression = af.parse(where).to_polars(frame.schema, columns=columns, now=now)
    return list(frame.filter(expression)["id"])


@pytest.mark.parametrize("where", WHERES)
def test_kept_expressions_select_what_fresh_ones_select(where: dict[str, Any]) -> None:
    flt = af.parse(where)
    frame = pl.DataFrame(RECORDS)
    for now in [NOW, NOW + timedelta(days=9), NOW, NOW + timedelta(days=40)]:
        for _ in range(2):
            assert list(flt.select_frame(frame, now=now)["id"]) == _fresh(where, frame, now)
            lazy = flt.select_frame(frame.lazy(), now=now).collect()
            assert list(lazy["id"]) == _fresh(where, frame, now)


def test_one_expression_per_types_names_and_instant() -> None:
    flt = af.parse({"points": {"gte": 20}})
    frame = pl.DataFrame(RECORDS)
    first = flt.to_polars(frame.schema)
    assert flt.to_polars(frame.schema) is first
    assert flt.to_polars(frame.schema, columns={"points": "score"}) is not first
    as_floats = frame.with_columns(pl.col("points").cast(pl.Float64))
    assert flt.to_polars(as_floats.schema) is not first
    relative = af.parse({"createdAt": {"gte": {"ago": "P10D"}}})
    at_now = relative.to_polars(frame.schema, now=NOW)
    assert relative.to_polars(frame.schema, now=NOW) is at_now
    assert relative.to_polars(frame.schema, now=NOW + timedelta(seconds=1)) is not at_now


def test_renamed_columns_are_part_of_the_key() -> None:
    flt = af.parse({"points": {"gte": 20}})
    frame = pl.DataFrame(RECORDS)
    renamed = frame.rename({"points": "score"})
    assert list(flt.select_frame(frame)["id"]) == _fresh({"points": {"gte": 20}}, frame, NOW)
    chosen = flt.select_frame(renamed, columns={"points": "score"})
    assert list(chosen["id"]) == list(frame.filter(pl.col("points") >= 20)["id"])
