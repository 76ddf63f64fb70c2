"""An accelerator of the polars back-end: list tests on a `List(String)` column as native
expressions, where the plain path calls `lists.truth` from Python for each row.

For a case-sensitive `has`, `hasSome`, `hasEvery` or `isEmpty` on a column polars types
`List(String)`, the rules of `language/lists.py` are what polars' list expressions do: a null
list is null (UNKNOWN) whatever the operator, a null item matches no literal, an empty list has
no item. So `hasSome` is `list.eval(element().is_in(W)).list.any()` (any ignores the nulls of
null items), `hasEvery` one `list.contains` per literal, all of them, and `isEmpty`
`list.len() == 0`. Other lists (numbers, whose exact comparison the plain path owns; folded
strings; Object columns) stay on the plain path.

Switch: `ENABLED` (a module attribute, read when an expression is built), initially off when
the environment variable `AUDIENCEFILTER_FAST_POLARS_LISTS` is `0`. `tests/test_memory_fast.py`
compares both paths on generated lists.
"""

from __future__ import annotations

import os
from typing import Any

import polars as pl

from ...language.fields import ListOp
from ...language.nodes import ListTest

ENABLED = os.environ.get("AUDIENCEFILTER_FAST_POLARS_LISTS", "1") != "0"

_NATIVE_OPS = (ListOp.HAS, ListOp.HAS_SOME, ListOp.HAS_EVERY, ListOp.IS_EMPTY)


def native_list_test(node: ListTest, column: pl.Expr, dtype: Any) -> pl.Expr | None:
    """`node` on the list `column` as a native expression, or None where the plain path runs."""
    if not ENABLED or node.path or node.insensitive or node.op not in _NATIVE_OPS:
        return None
    if dtype != pl.List(pl.String):
        return None
    if node.op is ListOp.IS_EMPTY:
        return column.list.len() == 0
    if node.op is ListOp.HAS_EVERY:
        return pl.all_horizontal([column.list.contains(pl.lit(v, pl.String)) for v in node.value])
    wanted = pl.Series(list(node.value), dtype=pl.String).implode()
    return column.list.eval(pl.element().is_in(wanted)).list.any()
