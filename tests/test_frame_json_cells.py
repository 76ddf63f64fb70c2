"""A JSON column's cell that is no JSON text is a `FrameError` naming the field, the text and the
fix, on every frame kind and every condition that reads inside JSON (it was a `TypeError` about
`JSONDecodeError.__init__`, raised from inside polars, naming nothing)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import polars as pl
import pytest

import audiencefilter as af

CELLS = ["{'plan': 'pro'}", "not json", "", "{", "[1, 2", "NaN-ish"]
"""What users' frames hold: a dict's repr (what `DataFrame.to_csv` writes), bad and empty text."""

WHERES: list[dict[str, Any]] = [
    {"data": {"path": ["plan"], "equals": "pro"}},
    {"data": {"path": ["plan"], "not": "pro"}},
    {"data": {"path": ["points"], "gte": 3}},
    {"data": {"path": ["plan"], "string_contains": "pr"}},
    {"data": {"path": ["tags"], "array_contains": "a"}},
    {"data": {"path": ["tags"], "array_starts_with": "a"}},
    {"NOT": {"data": {"path": ["plan"], "equals": "pro"}}},
]


def _frames(cell: str) -> list[Any]:
    columns = {"email": ["a@example.com", "b@example.com"], "data": ['{"plan": "pro"}', cell]}
    return [pl.DataFrame(columns), pd.DataFrame(columns), pd.DataFrame(columns).astype("string")]


@pytest.mark.parametrize("where", WHERES, ids=lambda w: str(w))
@pytest.mark.parametrize("cell", CELLS)
def test_a_cell_that_is_no_json_text_is_a_frame_error_naming_field_text_and_fix(
    where: dict[str, Any], cell: str
) -> None:
    flt = af.parse(where)
    for frame in _frames(cell):
        for run in (flt.frame_mask, flt.select_frame):
            with pytest.raises(af.FrameError) as caught:
                run(frame)
            message = str(caught.value)
            assert 'field "data"' in message
            assert repr(cell) in message
            assert "not JSON text" in message and "json.dumps" in message


def test_json_text_and_null_cells_still_answer() -> None:
    flt = af.parse({"data": {"path": ["plan"], "equals": "pro"}})
    frame = pl.DataFrame({"email": ["a", "b", "c"], "data": ['{"plan": "pro"}', None, "{}"]})
    assert flt.frame_mask(frame).to_list() == [True, False, False]
