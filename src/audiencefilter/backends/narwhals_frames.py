"""Frames through narwhals: pandas (NumPy or pyarrow dtypes), pyarrow tables, modin, cuDF.

`select_rows(node, schema, frame)` keeps the rows of any eager frame narwhals reads where the
lowered filter is TRUE, in order, and gives back the same kind of frame (a pandas DataFrame
keeps its index); `frame_mask` gives the boolean column itself, FALSE where UNKNOWN. The
`pandas` extra brings narwhals and pandas; polars (the `columnar` extra) does the evaluating.

The decision, and why: narwhals turns one expression into each library's own operations, and
on pandas those follow pandas' rules, not the filter's. A comparison with a missing value is
FALSE there, not UNKNOWN, so `NOT (points > 5)` would select a contact without points; a
NumPy boolean column cannot hold UNKNOWN at all; there is no integer wider than 64 bits for an
exact sum, no `list.eval` for a test of each related row, and string case folding is the
library's own Unicode version. A native adapter would have to refuse or re-derive each of
these per library. So the frame's columns that the filter reads go through Arrow (each
library's own conversion, zero-copy for pyarrow-backed columns) into polars, the frame core's
polars adapter (`columnar.py`) computes the same boolean column it computes for a polars
frame, and narwhals keeps the matching rows of the frame the caller gave. Every rule (Kleene
logic, exact numbers, zones, folding, lists, JSON, relations) is then the polars back-end's,
written once in `frame_core.py` and `columnar.py`.

What pandas itself decides, before any filter runs:
- **Missing values**: `None`, `NaN`, `NaT` and `pd.NA` are all missing (pandas' own rule), so
  a NaN in a float column is a null (UNKNOWN in a comparison), not a NaN.
- **Exact integers**: a NumPy int64 column holds integers exactly, but pandas stores an integer
  column with a missing value as float64, which rounds past 2^53. Keep such a column as
  `object` (Python ints), `Int64` or `int64[pyarrow]`; `pandas_frame_for` builds them so.
- **JSON**: a `json` field's column may hold JSON text or decoded values (dicts, lists,
  numbers); decoded values are written back to JSON text first, so each document keeps its
  own types (Arrow would force one struct type on all rows).

A lazy frame (a DuckDB relation, Dask, Ibis) has no row positions to select by: it is refused
with a `TypeError` naming the SQL back-end (`to_sql(dialect="duckdb")`) that runs there.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Literal

import narwhals.stable.v2 as nw
import polars as pl

from ..errors import FrameError
from ..language.fields import FieldType, Schema
from ..language.nodes import Node, fields_used
from .columnar import frame_for, to_polars


def frame_mask(
    node: Node, schema: Schema, frame: Any, *, columns: Mapping[str, str] | None = None
) -> Any:
    """A boolean column (the frame's own kind: a pandas Series on the frame's index) that is
    TRUE where the lowered filter is TRUE, and FALSE where it is FALSE or UNKNOWN.

    Raises:
        FrameError: a column's type cannot hold its field's values.
        TypeError: the frame is not an eager frame narwhals reads.
    """
    eager = _eager(frame)
    mask = _mask(node, schema, eager, columns or {})
    series = nw.new_series("mask", mask, nw.Boolean(), backend=nw.get_native_namespace(eager))
    native = series.to_native()
    index = getattr(frame, "index", None)
    if index is not None and hasattr(native, "set_axis"):  # pandas-like: the frame's index
        native = native.set_axis(index)
    return native


def select_rows(
    node: Node, schema: Schema, frame: Any, *, columns: Mapping[str, str] | None = None
) -> Any:
    """The rows of `frame` where the lowered filter is TRUE, in order, as the same kind of
    frame (a pandas DataFrame keeps its index and its dtypes)."""
    eager = _eager(frame)
    mask = _mask(node, schema, eager, columns or {})
    series = nw.new_series("mask", mask, nw.Boolean(), backend=nw.get_native_namespace(eager))
    return eager.filter(series).to_native()


def pandas_frame_for(
    records: list[Mapping[str, Any]],
    schema: Schema,
    *,
    dtype_backend: Literal["numpy", "pyarrow"] = "numpy",
) -> Any:
    """Records as a pandas DataFrame with each field's column, a missing key missing.

    The columns are `frame_for`'s (the polars back-end's canonical types) through Arrow:
    with `dtype_backend="pyarrow"` each keeps its Arrow type (`int64[pyarrow]`, a list of
    structs for a relation); with `"numpy"` they are pandas' default dtypes, except that an
    integer column with a missing value holds Python ints (`object`) rather than rounding them
    to float64, and a date column holds `datetime.date`s.
    """
    import pandas as pd

    table = frame_for(records, schema).to_arrow()
    if dtype_backend == "pyarrow":
        return table.to_pandas(types_mapper=pd.ArrowDtype)
    return table.to_pandas(integer_object_nulls=True)


def _eager(frame: Any) -> Any:
    """The frame as a narwhals eager DataFrame, or a `TypeError` saying what runs instead."""
    try:
        return nw.from_native(frame, eager_only=True)
    except TypeError:
        pass
    try:
        nw.from_native(frame)
    except TypeError:
        raise TypeError(
            f"select_frame takes a polars, Spark or pandas frame, or another eager frame that "
            f"narwhals reads (pyarrow, modin, cuDF); got {type(frame).__name__}"
        ) from None
    raise TypeError(
        f"{type(frame).__name__} is a lazy frame, whose rows have no positions to select by: "
        'run the filter where the frame lives (to_sql(dialect="duckdb") for DuckDB, say), or '
        "collect it first"
    )


def _mask(node: Node, schema: Schema, eager: Any, columns: Mapping[str, str]) -> list[bool]:
    """The filter's answer for each row, UNKNOWN as FALSE, by the polars back-end over the
    columns the filter reads."""
    read = _columns_read(node, schema, columns)
    present = [name for name in eager.columns if name in read]
    missing = sorted(read - set(present))
    if missing:
        raise FrameError(f"the frame has no column {missing[0]!r} (of the fields the filter reads)")
    if present:
        frame = _to_polars(eager.select(present), schema, columns)
    else:  # a constant filter reads no column: one answer for every row
        frame = pl.DataFrame({"row": [None] * len(eager)})
    expression = to_polars(node, schema, frame.schema, columns=columns)
    answer = frame.with_columns(expression.fill_null(False).alias(_MASK))[_MASK]
    return [bool(value) for value in answer.to_list()]


_MASK = "__audiencefilter_mask__"
"""The answer's column: `with_columns` spreads a constant answer over every row."""


def _columns_read(node: Node, schema: Schema, columns: Mapping[str, str]) -> set[str]:
    """The frame columns the lowered filter reads: its fields', a relation's, and the JSON
    column holding a field declared inside one."""
    found = set()
    names = {f.name: f for f in schema.fields}
    for name in fields_used(node):
        field = names.get(name)
        stored = field.source[0] if field is not None and field.source else name
        found.add(columns.get(stored, stored))
    return found


def _to_polars(eager: Any, schema: Schema, columns: Mapping[str, str]) -> pl.DataFrame:
    """The columns as a polars frame through Arrow, decoded JSON documents as JSON text."""
    json_columns = {columns.get(f.name, f.name) for f in schema.fields if f.type is FieldType.JSON}
    backend = nw.get_native_namespace(eager)
    for name in eager.columns:
        if name in json_columns and eager.schema[name] == nw.Object():
            texts = [_json_text(value) for value in eager[name].to_list()]
            eager = eager.with_columns(nw.new_series(name, texts, nw.String(), backend=backend))
    return pl.DataFrame(pl.from_arrow(eager.to_arrow()))


def _json_text(value: Any) -> str | None:
    """A decoded JSON document as JSON text (None for a missing cell, pandas' NaN included);
    text stays as it is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        return value
    if type(value).__name__ == "NAType":  # pd.NA, without importing pandas
        return None
    if hasattr(value, "tolist"):  # a NumPy array or scalar, as pandas hands list cells
        value = value.tolist()
    return json.dumps(value)
