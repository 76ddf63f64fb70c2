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
polars adapter (`polars.py`) computes the same boolean column it computes for a polars
frame, and narwhals keeps the matching rows of the frame the caller gave. Every rule (Kleene
logic, exact numbers, zones, folding, lists, JSON, relations) is then the polars back-end's,
written once in `core.py` and `polars.py`.

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
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

import narwhals.stable.v2 as nw
import polars as pl

from ...errors import FrameError
from ...language.data_paths import document_text
from ...language.fields import Field, FieldType, Schema
from ...language.nodes import Node
from ...language.relations import Relation
from .columns import stored_names
from .frame_dtypes import check_frame
from .polars import POLARS, _Expressions, frame_for
from .polars_types import field_columns, related_column


def frame_mask(
    node: Node, schema: Schema, frame: Any, *, columns: Mapping[str, str] | None = None
) -> Any:
    """A boolean column (the frame's own kind: a pandas Series on the frame's index) that is
    TRUE where the lowered filter is TRUE, and FALSE where it is FALSE or UNKNOWN.

    Raises:
        FrameError: a column's type cannot hold its field's values.
        TypeError: the frame is not an eager frame narwhals reads.
    """
    _check_native(node, schema, frame, columns or {})
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
    _check_native(node, schema, frame, columns or {})
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

    table = _within_64_bits(frame_for(records, schema)).to_arrow()
    if dtype_backend == "pyarrow":
        return table.to_pandas(types_mapper=pd.ArrowDtype)
    return table.to_pandas(integer_object_nulls=True)


def _within_64_bits(built: pl.DataFrame) -> pl.DataFrame:
    """`built`, or a `FrameError` naming its field whose integers need polars' Int128."""
    wide = next((name for name, dtype in built.schema.items() if _holds_int128(dtype)), None)
    if wide is not None:
        raise FrameError(
            f'field "{wide}" holds an integer beyond 64 bits, which no pandas or Arrow integer '
            "type holds: keep such values within 64 bits, or build a polars frame (frame_for)"
        )
    return built


def _holds_int128(dtype: Any) -> bool:
    """Whether a column type is or holds polars' Int128, which Arrow cannot take (a list's
    items, a relation's struct fields)."""
    if dtype == pl.Int128:
        return True
    if isinstance(dtype, pl.List):
        return _holds_int128(dtype.inner)
    if isinstance(dtype, pl.Struct):
        return any(_holds_int128(f.dtype) for f in dtype.fields)
    return False


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


def _mask(node: Node, schema: Schema, eager: Any, columns: Mapping[str, str]) -> Any:
    """The filter's answer for each row (a NumPy boolean array), UNKNOWN as FALSE, by the
    polars back-end over the columns the filter reads."""
    read = _columns_read(node, schema, columns)
    present = [name for name in eager.columns if name in read]
    missing = sorted(read - set(present))
    if missing:
        raise FrameError(f"the frame has no column {missing[0]!r} (of the fields the filter reads)")
    if present:
        frame = _to_polars(eager.select(present), schema, columns)
    else:  # a constant filter reads no column: one answer for every row
        frame = pl.DataFrame({"row": [None] * len(eager)})
    walker = _PandasExpressions(POLARS, schema, frame.schema, columns).checked(node)
    expression = walker.visit(node)
    answer = frame.with_columns(expression.fill_null(False).alias(_MASK))[_MASK]
    return answer.to_numpy()  # booleans without nulls: one NumPy array, no Python objects


def _check_native(node: Node, schema: Schema, native: Any, columns: Mapping[str, str]) -> None:
    """Refuse a pandas or pyarrow column whose own dtype the back-ends are not proven exact on
    for its field (`frame_dtypes`), before narwhals reads the frame or Arrow converts it: either
    can fail inside pyarrow or polars, or succeed on a type no test has proven."""
    module = type(native).__module__.partition(".")[0]
    if module == "pandas":
        library, dtype_of = "pandas", _pandas_dtype(native)
    elif module == "pyarrow":
        library, dtype_of = "pyarrow", _arrow_dtype(native)
    else:  # modin, cuDF: their polars columns are checked after the conversion
        return
    wrong = _PandasExpressions(POLARS, schema, {}, columns).wrong_type
    check_frame(library, node, schema, dtype_of, columns, wrong)


def _pandas_dtype(frame: Any) -> Callable[[str], Any]:
    return lambda column: frame.dtypes.get(column)


def _arrow_dtype(table: Any) -> Callable[[str], Any]:
    types = dict(zip(table.schema.names, table.schema.types, strict=True))
    return lambda column: types.get(column)


_LIST_TYPES = frozenset(kind for kind in FieldType if kind.value.endswith("[]"))
_MASK = "__audiencefilter_mask__"
"""The answer's column: `with_columns` spreads a constant answer over every row."""


class _PandasExpressions(_Expressions):
    """The polars adapter, advising a pandas conversion when a column has the wrong type."""

    def conversion(self, kind: FieldType, column: str, dtype: Any) -> str:
        col = f'frame["{column}"]'
        fix = {
            FieldType.NUMBER: f"pd.to_numeric({col})",
            FieldType.BOOLEAN: f'{col} == "true"',
            FieldType.DATETIME: f"pd.to_datetime({col}, utc=True)",
            FieldType.DATE: f"pd.to_datetime({col}).dt.date",
            FieldType.STRING: f'{col}.astype("string")',
        }.get(kind)
        if kind in _LIST_TYPES:
            return "Give it Python lists (an object column of lists) or an Arrow list"
        if fix is None:
            return "Give it JSON text (str) or decoded values (an object column of dicts)"
        return f"Convert it first, e.g. {col} = {fix}"


def _columns_read(node: Node, schema: Schema, columns: Mapping[str, str]) -> set[str]:
    """The frame columns the lowered filter reads (`columns.stored_names`)."""
    return {columns.get(name, name) for name in stored_names(node, schema)}


def _to_polars(eager: Any, schema: Schema, columns: Mapping[str, str]) -> pl.DataFrame:
    """The columns as a polars frame: through Arrow, except decoded JSON documents (written as
    JSON text) and relations held as Python lists of dicts, which are converted as `frame_for`
    converts records (Arrow would force one type on every row's values, or learn none from a
    column of empty lists)."""
    json_columns = {columns.get(f.name, f.name) for f in schema.fields if f.type is FieldType.JSON}
    json_columns |= {columns.get(f.source[0], f.source[0]) for f in schema.fields if f.source}
    list_fields = {columns.get(f.name, f.name): f for f in schema.fields if f.type in _LIST_TYPES}
    relations = {columns.get(r.name, r.name): r for r in schema.relations}
    python: dict[str, pl.Series] = {}
    for name in eager.columns:
        if eager.schema[name] != nw.Object():
            continue
        cells = eager[name].to_list()
        if name in json_columns:
            python[name] = pl.Series(name, [_json_text(name, c) for c in cells], dtype=pl.String)
        elif name in relations:
            python[name] = _converted(name, _relation_series, name, relations[name], cells)
        elif name in list_fields:
            python[name] = _converted(name, _list_series, name, list_fields[name], cells)
    arrow = [name for name in eager.columns if name not in python]
    frame = _converted(arrow, _arrow_frame, eager.select(arrow))
    for name, relation in relations.items():  # a column of nulls only: no related rows' types
        if name in frame.columns and frame.schema[name] == pl.Null:
            python[name] = _relation_series(name, relation, [None] * len(frame))
    parts = [frame.drop(list(python), strict=False)] if arrow else []
    return pl.concat([*parts, pl.DataFrame(list(python.values()))], how="horizontal")


T = TypeVar("T")


def _arrow_frame(eager: Any) -> pl.DataFrame:
    return pl.DataFrame(pl.from_arrow(eager.to_arrow()))


def _converted(names: str | list[str], convert: Callable[..., T], *args: Any) -> T:
    """`convert(*args)`, a column that cannot be converted exactly being a `FrameError` naming it
    (Arrow refuses an integer a double cannot hold beside fractions rather than rounding it)."""
    try:
        return convert(*args)
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError) as exc:
        if isinstance(exc, FrameError):
            raise
        named = names if isinstance(names, str) else ", ".join(names)
        raise FrameError(
            f"column(s) {named}: the values cannot be read as one column type exactly ({exc}); "
            "give each column one type (object columns of Python values included)"
        ) from None


def _list_series(name: str, field: Field, cells: list[Any]) -> pl.Series:
    """A list field's cells as `frame_for` converts them: the list type that holds every item
    exactly, or a `FrameError` where none does."""
    stored = Field(field.name, field.type)
    records: list[Mapping[str, Any]] = [{field.name: _rows(c)} for c in cells]
    data, dtypes = field_columns(records, Schema((stored,)))
    return pl.Series(name, data[field.name], dtype=dtypes[field.name])


def _relation_series(name: str, relation: Relation, cells: list[Any]) -> pl.Series:
    """A relation's cells (a list of dicts, one dict, or missing) as `frame_for`'s List of
    Struct column."""
    documents = [f.name for f in relation.schema.fields if f.type is FieldType.JSON]
    records: list[Mapping[str, Any]] = [
        {relation.name: _decoded(_rows(cell), documents)} for cell in cells
    ]
    values, dtype = related_column(records, relation)
    return pl.Series(name, values, dtype=dtype)


def _decoded(rows: Any, documents: list[str]) -> Any:
    """Related rows whose JSON fields hold JSON text (a `str`, as in a JSON column) decoded, so
    that `related_column` writes each document once, as it writes decoded values."""
    if not documents or rows is None:
        return rows
    listed = [rows] if isinstance(rows, Mapping) else rows
    return [
        {k: json.loads(v) if k in documents and isinstance(v, str) else v for k, v in row.items()}
        if isinstance(row, Mapping)
        else row
        for row in listed
    ]


def _rows(cell: Any) -> Any:
    """A relation cell as plain Python values: NumPy arrays (as pandas hands lists back, at
    any depth) as lists, pandas' missing values as None."""
    if isinstance(cell, Mapping):
        return {key: _rows(value) for key, value in cell.items()}
    if isinstance(cell, list | tuple) or hasattr(cell, "tolist"):
        items = cell.tolist() if hasattr(cell, "tolist") else cell
        return [_rows(item) for item in items] if isinstance(items, list) else items
    return None if _missing(cell) else cell


def _missing(value: Any) -> bool:
    """None, NaN or pd.NA: pandas' missing values (pd.NA recognised without importing pandas)."""
    if value is None or type(value).__name__ == "NAType":
        return True
    return isinstance(value, float) and math.isnan(value)


def _json_text(name: str, value: Any) -> str | None:
    """A decoded JSON document of column `name` as JSON text (None for a missing cell); text
    stays as it is."""
    if _missing(value):
        return None
    if isinstance(value, str):
        return value
    if hasattr(value, "tolist"):  # a NumPy array or scalar, as pandas hands list cells
        value = value.tolist()
    return document_text(value, name)
