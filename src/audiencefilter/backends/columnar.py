"""Columnar evaluation: a filter as one native polars expression over a DataFrame or LazyFrame.

`to_polars(node, schema)` returns a boolean `pl.Expr` that is TRUE, FALSE, or null for
UNKNOWN; `select_rows(node, schema, frame)` keeps the rows where it is TRUE. `node` is the
lowered tree (`rewrite/lower.py`: `Filter.to_polars` and `Filter.select_rows` lower and call
these). polars is an optional extra (`audiencefilter[columnar]`): nothing imports this module
until a caller does.

Design choices, each keeping the answers identical to the in-memory back-end:
- Three-valued logic is polars' own: comparisons with null are null, `&`/`|` are Kleene (an
  n-ary group becomes a balanced tree of them), `~null` is null, and `filter`
  drops null rows. The place where polars does not follow SQL nulls is avoided: a comparison whose
  answer is the same for every present value (`points > 2**70`) is that constant only where
  the value is present, null elsewhere.
- Numbers are compared exactly. Against an integer column a float literal becomes the integer
  bound it is equivalent to (`x > 2.5` is `x > 2`), and a literal outside the column's range is
  such a constant, so no value is ever converted to a float and 2**53 + 1 stays itself. Against
  a float column an integer that no float can represent becomes the nearest float bound; NaN
  (which polars orders above everything) is FALSE in every comparison, as in Python.
- Date-times are compared as UTC instants in microseconds (`Datetime("us", "UTC")`); a column
  in another unit or zone, naive, or of type Date is converted first.
- Case folding must be Python's `str.lower()`. polars' `str.to_lowercase` agrees with it for
  every character both Unicode databases know, but the two can be of different Unicode
  versions, so characters new to one of them fold differently (55 do between Python 3.11 and
  polars 2.1), and so can a final sigma next to them. No such character folds to, or from,
  ASCII, so when every folded literal is ASCII the native fold gives the same answers (a match
  of ASCII text cannot start, end or run through a non-ASCII character) and is used; the test
  suite checks that premise over every code point. With a non-ASCII literal the fold runs
  `str.lower()` on the non-ASCII rows of each batch and the native fold on the rest. A
  case-insensitive `contains` of most ASCII needles (`gmail`) needs no fold at all: ASCII
  case-insensitive search gives the same answers (see `_ascii_match_is_exact`) at a quarter
  of the cost.
- `%`, `_` and `\\` are ordinary characters: matching is literal (`contains(..., literal=True)`,
  `starts_with`, `ends_with`), never a pattern.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import sys
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

import polars as pl

from ..language.data_paths import truth
from ..language.fields import FieldType, Op, Schema
from ..language.nodes import And, Comparison, Const, IsNull, Node, Not, Or
from ..language.values import Scalar
from ..language.visitor import Visitor

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)
Dtypes = Mapping[str, Any]
"""Column name -> polars data type, as `DataFrame.schema` gives it."""

INSTANT = pl.Datetime("us", "UTC")
CANONICAL: Mapping[FieldType, Any] = {
    FieldType.STRING: pl.String,
    FieldType.NUMBER: pl.Int64,
    FieldType.BOOLEAN: pl.Boolean,
    FieldType.DATETIME: INSTANT,
    FieldType.JSON: pl.String,
}
"""The column type of each field type when a frame is built for a schema (`frame_for`)."""

_INT_RANGES = {
    pl.Int8: (-(2**7), 2**7 - 1),
    pl.Int16: (-(2**15), 2**15 - 1),
    pl.Int32: (-(2**31), 2**31 - 1),
    pl.Int64: (-(2**63), 2**63 - 1),
    pl.UInt8: (0, 2**8 - 1),
    pl.UInt16: (0, 2**16 - 1),
    pl.UInt32: (0, 2**32 - 1),
    pl.UInt64: (0, 2**64 - 1),
}
_FEW = 8
_FLIP_STRICT = {Op.GT: Op.GT, Op.GTE: Op.GT, Op.LT: Op.LTE, Op.LTE: Op.LTE}


def to_polars(
    node: Node,
    schema: Schema,
    dtypes: Dtypes | None = None,
    *,
    columns: Mapping[str, str] | None = None,
) -> pl.Expr:
    """A lowered filter as a polars boolean expression: TRUE, FALSE, or null where UNKNOWN.

    Args:
        node: The lowered tree, relative date-times already instants (`Filter.lowered_at`):
            the expression holds the instants, so build it again to move with time.
        schema: The schema the filter was validated against.
        dtypes: The frame's column types (`frame.schema`); without them every column is taken
            to have its canonical type (`CANONICAL`).
        columns: Column names for fields whose column is named differently.

    Raises:
        TypeError: a column's type cannot hold its field's values (a string column for a
            date-time field, say).
    """
    return _Expressions(schema, dtypes or {}, columns or {}).visit(node)


def select_rows(
    node: Node, schema: Schema, frame: Frame, *, columns: Mapping[str, str] | None = None
) -> Frame:
    """The rows of `frame` where the lowered filter is TRUE, in order; lazy in, lazy out."""
    dtypes = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    return frame.filter(to_polars(node, schema, dtypes, columns=columns))


def frame_for(records: list[Mapping[str, Any]], schema: Schema) -> pl.DataFrame:
    """Records as a DataFrame with each field's canonical column type; a missing key is null.

    Date-time values may be `datetime`s or ISO 8601 strings, as in records for `Filter.matches`.
    """
    from ..language.values import record_datetime

    data: dict[str, list[Any]] = {}
    for field in schema.fields:
        values = [record.get(field.name) for record in records]
        if field.type is FieldType.DATETIME:
            values = [None if v is None else record_datetime(v) for v in values]
        elif field.type is FieldType.JSON:  # JSON text, as a JSON column reads into polars
            values = [None if v is None else json.dumps(v) for v in values]
        data[field.name] = values
    dtypes = {f.name: CANONICAL[f.type] for f in schema.fields}
    for field in schema.fields:  # a number column with a fractional value must hold floats
        if field.type is FieldType.NUMBER and any(type(v) is float for v in data[field.name]):
            dtypes[field.name] = pl.Float64
    return pl.DataFrame(data, schema=dtypes)


class _Expressions(Visitor[pl.Expr]):
    def __init__(self, schema: Schema, dtypes: Dtypes, columns: Mapping[str, str]) -> None:
        self.schema = schema
        self.dtypes = dtypes
        self.columns = columns

    def visit_and(self, node: And) -> pl.Expr:
        return _balanced([self.visit(item) for item in node.items], operator.and_)

    def visit_or(self, node: Or) -> pl.Expr:
        return _balanced([self.visit(item) for item in node.items], operator.or_)

    def visit_not(self, node: Not) -> pl.Expr:
        return ~self.visit(node.item)

    def visit_const(self, node: Const) -> pl.Expr:
        return pl.lit(node.value)

    def visit_is_null(self, node: IsNull) -> pl.Expr:
        if node.path:
            return self.json_condition(node).fill_null(True)
        return self.column(node.field).is_null()

    def visit_comparison(self, node: Comparison) -> pl.Expr:
        if node.path:
            return self.json_condition(node)
        kind = self.schema[node.field].type
        if kind is FieldType.STRING:
            return self.string(node)
        if kind is FieldType.NUMBER:
            return self.number(node)
        if kind is FieldType.BOOLEAN:
            dtype = self.dtype(node.field)
            if dtype != pl.Boolean:
                raise _wrong_type(node.field, dtype, "a Boolean column")
            column = self.column(node.field)
            return column if node.value is True else ~column
        return self.instant(node)

    def json_condition(self, node: Comparison | IsNull) -> pl.Expr:
        """A condition inside a JSON text column, decoded row by row (null for a null cell).

        Python decodes the JSON, so the answers are `data_paths.truth`'s exactly (numbers
        beyond 2^53 included); the price is a Python call per row.
        """
        column_name, path = node.field, node.path
        column = pl.col(self.columns.get(column_name, column_name))
        dtype = self.dtypes.get(self.columns.get(column_name, column_name), pl.String)
        if isinstance(dtype, pl.Struct):
            column = column.struct.json_encode()
        elif dtype != pl.String:
            raise _wrong_type(column_name, dtype, "a String column of JSON text")
        test = functools.partial(_json_text_truth, node, path)
        return column.map_elements(test, return_dtype=pl.Boolean, skip_nulls=True)

    def column(self, field: str) -> pl.Expr:
        return pl.col(self.columns.get(field, field))

    def dtype(self, field: str) -> Any:
        kind = self.schema[field].type
        found = self.dtypes.get(self.columns.get(field, field))
        return CANONICAL[kind] if found is None else found

    def string(self, node: Comparison) -> pl.Expr:
        column = self.column(node.field)
        dtype = self.dtype(node.field)
        if dtype in (pl.Categorical, pl.Enum) or isinstance(dtype, pl.Categorical | pl.Enum):
            column = column.cast(pl.String)
        elif dtype != pl.String:
            raise _wrong_type(node.field, dtype, "a String column")
        op = node.op
        value: Any = node.value
        if node.insensitive:  # the literals are folded already (lowering): fold the column
            if op is Op.CONTAINS and _ascii_match_is_exact(value):
                return column.str.contains_any([value], ascii_case_insensitive=True)
            literals = value if isinstance(value, tuple) else (value,)
            column = fold_column(column, ascii_only=all(v.isascii() for v in literals))
        if op in (Op.IN, Op.NOT_IN):
            if len(value) <= _FEW and not node.insensitive:
                # A few equalities beat hashing every string (`country in FR, DE, ES`).
                found = pl.any_horizontal([column == pl.lit(v, dtype=pl.String) for v in value])
            else:
                found = column.is_in(pl.Series(value, dtype=pl.String).implode())
            return found if op is Op.IN else ~found
        if op is Op.EQUALS:
            return column == pl.lit(value, dtype=pl.String)
        if op is Op.CONTAINS:
            return column.str.contains(value, literal=True)
        if op is Op.STARTS_WITH:
            return column.str.starts_with(value)
        return column.str.ends_with(value)

    def number(self, node: Comparison) -> pl.Expr:
        column = self.column(node.field)
        dtype = self.dtype(node.field)
        if dtype in _INT_RANGES:
            return _integer_comparison(column, dtype, node.op, node.value)
        if dtype in (pl.Float32, pl.Float64):
            return _float_comparison(column, dtype, node.op, node.value)
        raise _wrong_type(node.field, dtype, "an integer or float column")

    def instant(self, node: Comparison) -> pl.Expr:
        column = _as_instant(self.column(node.field), self.dtype(node.field), node.field)
        if node.op in (Op.IN, Op.NOT_IN):
            assert isinstance(node.value, tuple)
            values = pl.Series(node.value, dtype=INSTANT)
            found = column.is_in(values.implode())
            return found if node.op is Op.IN else ~found
        assert isinstance(node.value, datetime)
        return _compare(column, node.op, pl.lit(node.value, dtype=INSTANT))


def _json_text_truth(node: Comparison | IsNull, path: tuple[str, ...], text: str) -> bool | None:
    return truth(node, json.loads(text), path)


def _balanced(items: list[pl.Expr], combine: Callable[[pl.Expr, pl.Expr], pl.Expr]) -> pl.Expr:
    """`a & b & c & d` as `(a & b) & (c & d)`: binary `&`/`|` run faster than polars'
    horizontal `all`/`any` (both are Kleene), and pairing keeps a 200-branch OR shallow."""
    while len(items) > 1:
        pairs = [combine(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = pairs + items[len(items) - len(items) % 2 :]
    return items[0]


def _ascii_match_is_exact(needle: str) -> bool:
    """Whether ASCII case-insensitive search for `needle` finds it exactly in `str.lower()`.

    Only two non-ASCII characters fold to ASCII: the Kelvin sign (to `k`) and capital I with a
    dot (to `i` and a combining dot, so it can only end a match). A needle in ASCII, without a
    `k` and not ending with `i` cannot meet either, and matching ASCII letters in any case is
    then the same as folding first; it skips building a lowercased copy of every value.
    """
    return needle.isascii() and "k" not in needle and not needle.endswith("i")


def fold_column(column: pl.Expr, *, ascii_only: bool) -> pl.Expr:
    """`str.lower()` of every value, for comparing with literals that are ASCII or not."""
    if ascii_only:
        return column.str.to_lowercase()
    return column.map_batches(_fold_exact, return_dtype=pl.String, is_elementwise=True)


def _fold_exact(values: pl.Series) -> pl.Series:
    lowered = values.str.to_lowercase()
    wide = values.str.len_bytes() != values.str.len_chars()  # rows with non-ASCII text
    if not wide.any():
        return lowered
    rows = wide.arg_true()
    python = [text.lower() for text in values.gather(rows).to_list()]
    return lowered.scatter(rows, pl.Series(python, dtype=pl.String))


def _integer_comparison(column: pl.Expr, dtype: Any, op: Op, value: Any) -> pl.Expr:
    low, high = _INT_RANGES[dtype]
    if op in (Op.IN, Op.NOT_IN):
        exact = [v for v in (_as_integer(x) for x in value) if v is not None and low <= v <= high]
        found = column.is_in(pl.Series(exact, dtype=dtype).implode()) if exact else None
        if found is None:  # no value the column can hold: FALSE where present
            found = _where_present(column, False)
        return found if op is Op.IN else ~found
    bound = _integer_bound(op, value)
    if isinstance(bound, bool):
        return _where_present(column, bound)
    op, number = bound
    always = _out_of_range(op, number, low, high)
    if always is not None:
        return _where_present(column, always)
    return _compare(column, op, pl.lit(number, dtype=dtype))


def _as_integer(value: Scalar) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _integer_bound(op: Op, value: Any) -> tuple[Op, int] | bool:
    """`x op value` for an integer x, as `x op' n` with an integer n, or a constant."""
    if isinstance(value, int):
        return op, value
    if value.is_integer():
        return op, int(value)
    if op is Op.EQUALS:
        return False
    return _FLIP_STRICT[op], math.floor(value)  # x > 2.5 <=> x > 2; x <= 2.5 <=> x <= 2


def _out_of_range(op: Op, n: int, low: int, high: int) -> bool | None:
    """The answer for every value of a column holding `low..high`, when it does not depend on it."""
    if op is Op.EQUALS:
        return False if n < low or n > high else None
    if op in (Op.GT, Op.GTE):
        first = n + 1 if op is Op.GT else n  # the smallest x that passes
        return False if first > high else True if first <= low else None
    last = n - 1 if op is Op.LT else n  # the largest x that passes
    return False if last < low else True if last >= high else None


def _float_comparison(column: pl.Expr, dtype: Any, op: Op, value: Any) -> pl.Expr:
    if op in (Op.IN, Op.NOT_IN):
        exact = [float(v) for v in value if _float_exact(v)]
        found = column.is_in(pl.Series(exact, dtype=dtype).implode()) if exact else None
        if found is None:
            found = _where_present(column, False)
        found = _nan_is_false(column, found)
        return found if op is Op.IN else ~found
    if _float_exact(value):
        result = _compare(column, op, pl.lit(float(value), dtype=dtype))
    elif op is Op.EQUALS:
        result = _where_present(column, False)
    else:
        below, above = _floats_around(value)
        if op in (Op.GT, Op.GTE):  # x >= n <=> x > n: no float equals n
            result = column > pl.lit(below, dtype=pl.Float64)
        else:
            result = column < pl.lit(above, dtype=pl.Float64)
    return _nan_is_false(column, result)


def _float_exact(value: Any) -> bool:
    """Whether a float holds exactly this number (every float does; most big integers do not)."""
    if isinstance(value, float):
        return True
    try:
        return bool(int(float(value)) == value)
    except OverflowError:
        return False


def _floats_around(n: Any) -> tuple[float, float]:
    """The floats just below and just above an integer no float represents."""
    try:
        near = float(n)
    except OverflowError:
        return (sys.float_info.max, math.inf) if n > 0 else (-math.inf, -sys.float_info.max)
    if near > n:
        return math.nextafter(near, -math.inf), near
    return near, math.nextafter(near, math.inf)


def _nan_is_false(column: pl.Expr, result: pl.Expr) -> pl.Expr:
    # polars orders NaN above every number and equal to itself; Python compares it with nothing.
    return pl.when(column.is_nan()).then(pl.lit(False)).otherwise(result)


def _as_instant(column: pl.Expr, dtype: Any, field: str) -> pl.Expr:
    if dtype == INSTANT:
        return column
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is None:
            column = column.dt.replace_time_zone("UTC")
        elif dtype.time_zone != "UTC":
            column = column.dt.convert_time_zone("UTC")
        return column if dtype.time_unit == "us" else column.dt.cast_time_unit("us")
    if dtype == pl.Date:
        return column.cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    raise _wrong_type(field, dtype, "a Datetime or Date column")


def _compare(column: pl.Expr, op: Op, literal: pl.Expr) -> pl.Expr:
    if op is Op.EQUALS:
        return column == literal
    if op is Op.GT:
        return column > literal
    if op is Op.GTE:
        return column >= literal
    if op is Op.LT:
        return column < literal
    return column <= literal


def _where_present(column: pl.Expr, answer: bool) -> pl.Expr:
    """`answer` where the value is present, null (UNKNOWN) where it is not."""
    return pl.when(column.is_not_null()).then(pl.lit(answer))


def _wrong_type(field: str, dtype: Any, expected: str) -> TypeError:
    return TypeError(f'field "{field}" needs {expected}; the frame has {dtype}')
