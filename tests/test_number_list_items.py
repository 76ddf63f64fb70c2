"""A number list's item meets a literal as the same value in a number field does, in every
in-process back-end.

`has 0.3` on `[Decimal("0.3")]` was FALSE in memory, `FilterSet`, polars and arrow lists,
where `equals 0.3` on the scalar `Decimal("0.3")` is TRUE (docs/semantics.md, "Numbers":
an exact value meets the literal as written), and PostgreSQL's `numeric[]` answered TRUE.
The dimension here is the item's kind (`Decimal`, integers past 2^53, floats, integers)
against number literals beside them: `has`, `hasEvery` and `equals` of a one-item list must
be the scalar `equals`, in memory, in a `FilterSet`, and on polars and arrow list columns of
the item's type. tests/test_pg_double_arrays.py holds the SQL engines' arrays to the same.
"""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

import audiencefilter as af

ITEMS: list[Any] = [
    Decimal("0.3"),
    Decimal("0.30"),
    Decimal("0.1"),
    Decimal(0.3),  # the double nearest 0.3, written exactly: not 0.3
    Decimal(2**53 + 1),
    Decimal("9.99"),
    0.3,
    0.1,
    2.0**53,
    2**53,
    2**53 + 1,
    2**63 - 1,
    5,
]
"""The items, one per list, of each kind a number list holds."""

LITERALS: list[int | float] = [0.3, 0.30000000000000004, 0.1, 9.99, 2**53, 2**53 + 1, 2**63 - 1, 5]

SCALAR = af.Schema.of(id="string", n="number")
LIST = af.Schema.of(id="string", n="number[]")


def _scalar_truth(item: Any, literal: Any) -> bool:
    return af.parse({"n": literal}, SCALAR).matches({"n": item})


def _list_filters(literal: Any) -> list[af.Filter]:
    wheres = [{"has": literal}, {"hasEvery": [literal]}, {"hasSome": [literal, -7]}]
    wheres += [{"equals": [literal]}]
    return [af.parse({"n": where}, LIST) for where in wheres]


def _frame_dtype(item: Any) -> tuple[pl.DataType, pa.DataType]:
    if isinstance(item, Decimal):
        return pl.List(pl.Decimal(38, 20)), pa.list_(pa.decimal128(38, 20))
    if isinstance(item, float):
        return pl.List(pl.Float64), pa.list_(pa.float64())
    return pl.List(pl.Int64), pa.list_(pa.int64())


def _held(item: Any) -> Any:
    """The item as a `Decimal(38, 20)` column gives it back (`Decimal(0.3)` is cut to 20
    places): the value the oracle is asked of."""
    if not isinstance(item, Decimal):
        return item
    return item.quantize(Decimal(10) ** -20, context=Context(prec=38))


@pytest.mark.parametrize("item", ITEMS, ids=repr)
def test_a_list_item_meets_a_literal_as_the_scalar_does(item: Any) -> None:
    held = _held(item)
    polars_type, arrow_type = _frame_dtype(item)
    frame = pl.DataFrame({"id": ["r"], "n": [[held]]}, schema={"id": pl.String, "n": polars_type})
    table = pa.table({"id": ["r"], "n": pa.array([[held]], type=arrow_type)})
    wrong = []
    for literal in LITERALS:
        expected = _scalar_truth(held, literal)
        filters = _list_filters(literal)
        together = af.FilterSet(filters)
        answers = {
            "memory": [f.matches({"n": [held]}) for f in filters],
            "FilterSet": [i in together.matching({"n": [held]}) for i in range(len(filters))],
            "polars": [len(frame.filter(f.to_polars())) == 1 for f in filters],
            "arrow": [f.select_frame(table).num_rows == 1 for f in filters],
        }
        wrong += [
            f"{way} on [{held!r}] with {literal!r}: {got}, the scalar {expected}"
            for way, got in answers.items()
            if got != [expected] * len(filters)
        ]
    assert not wrong, "\n".join(wrong[:10])
