"""Frames built from records (`frame_for`, `pandas_frame_for`): each value of a string, number
or boolean field (or of a list of them) is read as the in-memory back-end reads it, or the frame
is refused with a `FrameError` naming the field, never converted without a word.

Found by the space deep (pandas surfaces): a `number[]` list holding 2^63 made polars' Int128
list, which Arrow cannot take (`ArrowInvalid: ... '_pli128'`); then, around it, `frame_for`
raised polars' own `TypeError` for a number column holding 2^63 or `"5"`, and read `True` in a
number list as 1.0, `"1"` as 1.0, and 2^64 + 1 beside 0.5 as the double 2^64.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.backends.frames.polars import frame_for

np = pytest.importorskip("numpy")
pl = pytest.importorskip("polars")
pd = pytest.importorskip("pandas")
narwhals = pytest.importorskip("audiencefilter.backends.frames.narwhals")

SCHEMA = af.Schema.of(
    "frames",
    n="number",
    s="string",
    b="boolean",
    ln="number[]",
    ls="string[]",
    lb="boolean[]",
)
WHERES: dict[str, list[dict[str, Any]]] = {
    "n": [{"n": {"gt": 1}}, {"n": {"equals": 2**64 + 1}}, {"NOT": {"n": {"lte": 2**63}}}],
    "s": [{"s": {"equals": "5"}}, {"s": {"not": None}}],
    "b": [{"b": True}, {"NOT": {"b": False}}],
    "ln": [{"ln": {"has": 1}}, {"ln": {"has": 2**64 + 1}}, {"ln": {"hasSome": [2**63, 0.5]}}],
    "ls": [{"ls": {"has": "1"}}],
    "lb": [{"lb": {"has": True}}],
}
HELD: dict[str, list[Any]] = {
    "n": [
        True, "5", [1], 1.5, Decimal("5"), Decimal("1.5"), Decimal("0.1"), Decimal("Infinity"),
        Decimal("NaN"), Decimal("-0"), np.int64(7),
        np.float64(2.5), float("nan"), 2**63 - 1, 2**63, 2**64 + 1, -(2**63) - 1, 10**40,
    ],
    "s": [5, True, ["a"], "x", np.str_("y")],
    "b": [1, "true", 0, np.bool_(True), False],
    "ln": [
        [True], ["1"], [1, 2.5], [2**63], [2**64 + 1, 0.5], [10**40], 5, np.array([1, 2]),
        [Decimal("0.1")], [float("nan"), 1],
    ],
    "ls": [[1], ["a", None], "a", [True]],
    "lb": [[1], [True, None], [np.bool_(False)]],
}  # fmt: skip
BESIDE: list[Any] = [None, 1, 0.5]
"""What another record holds in the same field (an int, a fraction), which decides the column
type of the field."""


def _beside(field: str, other: Any) -> Any:
    """The other record's value: `other` in a number field, as an item in a number list."""
    if other is None or field not in ("n", "ln"):
        return None
    return other if field == "n" else [other]


def _cases() -> list[Any]:
    return [
        pytest.param(field, value, other, id=f"{field}-{value!r}-{other!r}"[:60])
        for field, values in HELD.items()
        for value in values
        for other in BESIDE
    ]


@pytest.mark.parametrize(("field", "value", "other"), _cases())
@pytest.mark.parametrize("build", ["polars", "pandas-numpy", "pandas-pyarrow"])
def test_a_frame_from_records_reads_each_value_as_memory_or_refuses_it(
    field: str, value: Any, other: Any, build: str
) -> None:
    records = [{"id": "a", field: value}, {"id": "b", field: _beside(field, other)}]
    try:
        if build == "polars":
            frame = frame_for(records, SCHEMA)
        else:
            frame = narwhals.pandas_frame_for(records, SCHEMA, dtype_backend=build[7:])
    except af.FrameError as exc:
        assert f'"{field}"' in str(exc)
        return
    for where in WHERES[field]:
        flt = af.parse(where, SCHEMA)
        try:
            expected = [r["id"] for r in records if flt.matches(r)]
        except af.RecordError:
            pytest.fail(f"memory refuses {value!r} in {field}, the frame was built: {where}")
        if build == "polars":
            got = flt.select_frame(frame.with_columns(id=pl.Series(["a", "b"])))["id"].to_list()
        else:
            mask = flt.frame_mask(frame)
            got = [r["id"] for r, keep in zip(records, list(mask), strict=True) if keep]
        assert got == expected, (where, build)
