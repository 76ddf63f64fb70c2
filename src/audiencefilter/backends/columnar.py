"""Columnar evaluation: a filter as one native polars expression over a DataFrame or LazyFrame.

`to_polars(node, schema)` returns a boolean `pl.Expr` that is TRUE, FALSE, or null for
UNKNOWN; `select_rows(node, schema, frame)` keeps the rows where it is TRUE. `node` is the
lowered tree (`rewrite/lower.py`: `Filter.to_polars` and `Filter.select_rows` lower and call
these). polars is an optional extra (`audiencefilter[columnar]`): nothing imports this module
until a caller does.

Design choices, each keeping the answers identical to the in-memory back-end:
- The expression depends on each column's type, so it is built for the frame's types. A column
  whose type is not given (`Filter.to_polars()` knows no frame) is read through one Python call
  per batch that builds, for the type it meets, the same expression and runs it: the same
  answers and errors, without polars' predicate pushdown.
- A column of a type a field cannot use raises `FrameError` (a `RecordError`, so a
  `TypeError`: the data does not fit the schema, the filter is fine), naming the column, its
  type, the types accepted and a conversion. A column of nulls only (`pl.Null`, as
  `pl.read_ndjson` reads a key that is always null) is accepted for any field: UNKNOWN.
- Three-valued logic is polars' own: comparisons with null are null, `&`/`|` are Kleene (an
  n-ary group becomes a balanced tree of them), `~null` is null, and `filter`
  drops null rows. The place where polars does not follow SQL nulls is avoided: a comparison whose
  answer is the same for every present value (`points > 2**70`) is that constant only where
  the value is present, null elsewhere.
- Numbers are compared exactly, in a type at least as wide as both the column's and the
  literal's; the literal is never rounded to the column's type. Against an integer column a
  float literal becomes the integer bound it is equivalent to (`x > 2.5` is `x > 2`), and a
  literal outside the column's range is such a constant, so no value is ever converted to a
  float and 2**53 + 1 stays itself. A Decimal column is its integers (value times 10^scale)
  compared the same way with the literal times 10^scale. A Float32 column is widened to
  Float64 (exactly; `100.1` stays the Float64 100.1), and against a float column an integer
  that no float can represent becomes the nearest float bound; NaN (which polars orders above
  everything) is FALSE in every comparison, as in Python.
- Date-times are compared as integers: the column's ticks since 1970 UTC (what polars stores
  for a Datetime of any unit, with any zone; a naive one is taken as UTC, as naive record
  values are; a Date counts days, i.e. midnight UTC) against the literal's exact instant in
  those ticks. So nanoseconds are not truncated, and a literal no column value can equal is a
  bound or a constant like any other integer comparison.
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
import operator
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any, TypeVar

import polars as pl

from ..errors import FrameError
from ..language import lists
from ..language.anniversary import MonthDays
from ..language.data_paths import truth
from ..language.fields import ORDERING_OPS, FieldType, Op, Schema
from ..language.nodes import (
    Aggregated,
    And,
    Blank,
    Comparison,
    Const,
    FieldComparison,
    IsNull,
    ListTest,
    Node,
    Not,
    Or,
    Quantified,
    blank_form,
)
from ..language.values import (
    as_integer,
    double_exact,
    doubles_around,
    integer_bound,
    out_of_range,
)
from ..language.visitor import Visitor
from .columnar_relations import aggregated_expression, quantified_expression, related_column
from .columnar_types import CANONICAL, field_columns

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)
Dtypes = Mapping[str, Any]
"""Column name -> polars data type, as `DataFrame.schema` gives it."""


_INT_RANGES = {
    pl.Int8: (-(2**7), 2**7 - 1),
    pl.Int16: (-(2**15), 2**15 - 1),
    pl.Int32: (-(2**31), 2**31 - 1),
    pl.Int64: (-(2**63), 2**63 - 1),
    pl.UInt8: (0, 2**8 - 1),
    pl.UInt16: (0, 2**16 - 1),
    pl.UInt32: (0, 2**32 - 1),
    pl.UInt64: (0, 2**64 - 1),
    pl.Int128: (-(2**127), 2**127 - 1),
}
_TICKS_PER_SECOND = {"ns": 10**9, "us": 10**6, "ms": 10**3}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_ACCEPTED = {
    FieldType.STRING: "String, Categorical or Enum",
    FieldType.NUMBER: "an integer type (Int8..Int128, UInt8..UInt64), Float32, Float64 or Decimal",
    FieldType.BOOLEAN: "Boolean",
    FieldType.DATETIME: "Datetime (any time unit, with any time zone or none) or Date",
    FieldType.JSON: "String (JSON text), Struct or Object",
}
_FEW = 8


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
        dtypes: The frame's column types (`frame.schema`); a column without one has its type
            read when the expression runs (slower, and hidden from predicate pushdown).
        columns: Column names for fields whose column is named differently.

    Raises:
        FrameError: a column's type cannot hold its field's values (a string column for a
            date-time field, say); raised when the expression runs for a column without type.
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
    data, dtypes = field_columns(records, schema)
    for relation in schema.relations:  # a List of Struct, one struct per related row
        data[relation.name], dtypes[relation.name] = related_column(records, relation)
    return pl.DataFrame(data, schema=dtypes)


class _Expressions(Visitor[pl.Expr]):
    def __init__(
        self,
        schema: Schema,
        dtypes: Dtypes,
        columns: Mapping[str, str],
        column_of: Callable[[str], pl.Expr] | None = None,
    ) -> None:
        self.schema = schema
        self.dtypes = dtypes
        self.columns = columns
        self.column_of = column_of

    def visit_and(self, node: And) -> pl.Expr:
        return _balanced([self.visit(item) for item in node.items], operator.and_)

    def visit_or(self, node: Or) -> pl.Expr:
        return _balanced([self.visit(item) for item in node.items], operator.or_)

    def visit_not(self, node: Not) -> pl.Expr:
        return ~self.visit(node.item)

    def visit_quantified(self, node: Quantified) -> pl.Expr:
        return quantified_expression(self, node)

    def visit_aggregated(self, node: Aggregated) -> pl.Expr:
        return aggregated_expression(self, node)

    def over(self, schema: Schema, dtypes: Dtypes, column_of: Callable[[str], pl.Expr]) -> Any:
        """A walker of this kind whose fields are read by `column_of` (a related row's struct
        field, an aggregate's value): `columnar_relations.FrameWalker.over`."""
        return _Expressions(schema, dtypes, {}, column_of)

    def visit_const(self, node: Const) -> pl.Expr:
        return pl.lit(node.value)

    def visit_field_comparison(self, node: FieldComparison) -> pl.Expr:
        """Two columns of one type (a field reference); null on either side is null."""
        kind = self.schema[node.field].type
        sides = []
        for field in (node.field, node.other):
            column, dtype = self.column(field), self.dtype(field)
            if dtype == pl.Null:
                return _where_present(column, False).and_(pl.lit(None))
            sides.append((field, column, dtype))
        (lname, left, ltype), (rname, right, rtype) = sides
        if kind is FieldType.STRING:
            left, right = (self.text_column(n, c, t) for n, c, t in sides)
            return _compare(left, node.op, right)
        if kind is FieldType.BOOLEAN:
            return left == right
        if kind is FieldType.DATETIME:
            return _compare(
                self.ticks(lname, left, ltype), node.op, self.ticks(rname, right, rtype)
            )
        return self.numbers_compared(sides, node.op)

    def text_column(self, field: str, column: pl.Expr, dtype: Any) -> pl.Expr:
        if dtype in (pl.Categorical, pl.Enum) or isinstance(dtype, pl.Categorical | pl.Enum):
            return column.cast(pl.String)
        if dtype != pl.String:
            raise self.wrong_type(field, dtype)
        return column

    def ticks(self, field: str, column: pl.Expr, dtype: Any) -> pl.Expr:
        """The instants as nanoseconds since 1970 UTC, in Int128: exact for every unit."""
        if isinstance(dtype, pl.Datetime):
            per_second = _TICKS_PER_SECOND[dtype.time_unit]
            return column.to_physical().cast(pl.Int128) * (10**9 // per_second)
        if dtype == pl.Date:
            return column.to_physical().cast(pl.Int128) * (86_400 * 10**9)
        raise self.wrong_type(field, dtype)

    def numbers_compared(self, sides: list[tuple[str, pl.Expr, Any]], op: Op) -> pl.Expr:
        """Integers with integers and floats with floats as they are; an integer with a float
        exactly: as doubles where those differ, else (the float is then integral) as Int128."""
        kinds = []
        for field, _column, dtype in sides:
            if dtype.is_integer():
                kinds.append("int")
            elif dtype.is_float():
                kinds.append("float")
            else:
                raise self.wrong_type(field, dtype)
        (_, left, _), (_, right, _) = sides
        if kinds == ["float", "int"]:
            left, right = right, left
            op = _MIRRORED[op]
        if kinds[0] == kinds[1]:
            result = _compare(left, op, right)
            return _nan_is_false(left, _nan_is_false(right, result)) if "float" in kinds else result
        near = left.cast(pl.Float64)
        exact = _compare(left.cast(pl.Int128), op, right.cast(pl.Int128))
        result = pl.when(near != right).then(_compare(near, op, right)).otherwise(exact)
        return _nan_is_false(right, result)

    def visit_blank(self, node: Blank) -> pl.Expr:  # lowering writes it out; as it does
        return self.visit(blank_form(node))

    def visit_list_test(self, node: ListTest) -> pl.Expr:
        """A list test, row by row by `lists.truth` (null for a null list), as JSON paths are
        read: the answers are the reference's exactly, at the price of a Python call per row.
        A List column holds the items; an Object column Python lists."""
        name = self.columns.get(node.field, node.field)
        dtype = self.dtypes.get(name)
        column = self.column(node.field)
        if dtype == pl.Null:
            return _where_present(column, False)
        if node.path:  # a JSON array inside a JSON column: read as JSON paths are
            if dtype == pl.Object:
                value_test = functools.partial(_array_value_truth, node)
                return column.map_elements(value_test, return_dtype=pl.Boolean, skip_nulls=True)
            if isinstance(dtype, pl.Struct):
                column = column.struct.json_encode()
            elif dtype is not None and dtype != pl.String:
                raise self.wrong_type(node.field, dtype)
            text_test = functools.partial(_array_text_truth, node)
            return column.map_elements(text_test, return_dtype=pl.Boolean, skip_nulls=True)
        if dtype is not None and not isinstance(dtype, pl.List) and dtype != pl.Object:
            raise FrameError(
                f'column "{name}" for field "{node.field}" is {dtype}; expected a List column. '
                "Build the frame with frame_for, or cast the column to a List"
            )
        test = functools.partial(_list_row_truth, node, self.schema[node.field].type)
        return column.map_elements(test, return_dtype=pl.Boolean, skip_nulls=True)

    def visit_is_null(self, node: IsNull) -> pl.Expr:
        if node.path:
            if not self.known(node):
                return self.deferred(node)
            return self.json_condition(node).fill_null(True)
        return self.column(node.field).is_null()

    def visit_comparison(self, node: Comparison) -> pl.Expr:
        if not self.known(node):
            return self.deferred(node)
        if node.path:
            return self.json_condition(node)
        if self.dtype(node.field) == pl.Null:  # a column of nulls only (`pl.read_ndjson`)
            return _where_present(self.column(node.field), False)
        if node.op is Op.ANNIVERSARY:
            return self.anniversary(node)
        kind = self.schema[node.field].type
        if kind is FieldType.STRING:
            return self.string(node)
        if kind is FieldType.NUMBER:
            return self.number(node)
        if kind is FieldType.BOOLEAN:
            dtype = self.dtype(node.field)
            if dtype != pl.Boolean:
                raise self.wrong_type(node.field, dtype)
            column = self.column(node.field)
            return column if node.value is True else ~column
        return self.instant(node)

    def column_name(self, node: Comparison | IsNull) -> str:
        """The frame column a condition reads: its field's, or the JSON column holding it."""
        return self.columns.get(node.field, node.field)

    def known(self, node: Comparison | IsNull) -> bool:
        return self.column_name(node) in self.dtypes

    def deferred(self, node: Comparison | IsNull) -> pl.Expr:
        """The condition on a column whose type is learnt only when the expression runs.

        Each batch builds, once per column type, the expression that type needs and runs it on
        the batch: the answers and the `FrameError`s are those of an expression built with the
        frame's types, and the price is a Python call per batch, with no predicate pushdown.
        """
        name = self.column_name(node)
        built: dict[Any, pl.Expr] = {}

        def run(values: pl.Series) -> pl.Series:
            expr = built.get(values.dtype)
            if expr is None:
                typed = _Expressions(self.schema, {name: values.dtype}, self.columns)
                expr = built[values.dtype] = typed.visit(node).alias(name)
            return values.to_frame(name).select(expr).to_series()

        return pl.col(name).map_batches(run, return_dtype=pl.Boolean, is_elementwise=True)

    def json_condition(self, node: Comparison | IsNull) -> pl.Expr:
        """A condition inside a JSON column, decoded row by row (null for a null cell).

        Python decodes the JSON, so the answers are `data_paths.truth`'s exactly (numbers
        beyond 2^53 included); the price is a Python call per row. A Struct (what
        `pl.read_ndjson` makes of objects) is encoded to JSON text first; an Object column holds
        the decoded values already.
        """
        column_name, path = node.field, node.path
        column = self.column(column_name)
        dtype = self.dtypes.get(self.columns.get(column_name, column_name), pl.String)
        if dtype == pl.Null:
            return _where_present(column, False)
        if dtype == pl.Object:
            value_test = functools.partial(_value_truth, node, path)
            return column.map_elements(value_test, return_dtype=pl.Boolean, skip_nulls=True)
        if isinstance(dtype, pl.Struct):
            column = column.struct.json_encode()
        elif dtype != pl.String:
            raise self.wrong_type(column_name, dtype)
        text_test = functools.partial(_json_text_truth, node, path)
        return column.map_elements(text_test, return_dtype=pl.Boolean, skip_nulls=True)

    def column(self, field: str) -> pl.Expr:
        if self.column_of is not None:
            return self.column_of(field)
        return pl.col(self.columns.get(field, field))

    def dtype(self, field: str) -> Any:
        kind = self.schema[field].type
        found = self.dtypes.get(self.columns.get(field, field))
        return CANONICAL[kind] if found is None else found

    def wrong_type(self, field: str, dtype: Any) -> FrameError:
        column = self.columns.get(field, field)
        kind = self.schema[field].type
        return FrameError(
            f'column "{column}" for field "{field}" is {dtype}; expected {_ACCEPTED[kind]}. '
            f"{_fix(kind, column, dtype)}"
        )

    def string(self, node: Comparison) -> pl.Expr:
        column = self.column(node.field)
        dtype = self.dtype(node.field)
        if dtype in (pl.Categorical, pl.Enum) or isinstance(dtype, pl.Categorical | pl.Enum):
            column = column.cast(pl.String)
        elif dtype != pl.String:
            raise self.wrong_type(node.field, dtype)
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
        if op in ORDERING_OPS:
            # polars orders strings by their UTF-8 bytes: code-point order. With ASCII
            # literals the native fold suffices here too: where it differs from Python's,
            # both folds are non-ASCII, so both order above any ASCII character.
            return _compare(column, op, pl.lit(value, dtype=pl.String))
        if op is Op.CONTAINS:
            return column.str.contains(value, literal=True)
        if op is Op.STARTS_WITH:
            return column.str.starts_with(value)
        return column.str.ends_with(value)

    def number(self, node: Comparison) -> pl.Expr:
        """A number comparison in a type wider than both the column's and the literal's.

        The literal is never rounded to the column's type: a Float32 column is widened to
        Float64 (exactly), and integer and Decimal columns compare their integers with the
        literal's exact value (a Decimal's integer is its value times 10^scale).
        """
        column = self.column(node.field)
        dtype = self.dtype(node.field)
        if dtype in _INT_RANGES:
            low, high = _INT_RANGES[dtype]
            return _integer_comparison(column, dtype, low, high, node.op, node.value)
        if dtype in (pl.Float32, pl.Float64):
            return _float_comparison(column.cast(pl.Float64), node.op, node.value)
        if isinstance(dtype, pl.Decimal):
            units = 10**dtype.scale
            value = _scaled(node.value, units)
            most = 10 ** (dtype.precision or 38) - 1
            return _integer_comparison(column.to_physical(), pl.Int128, -most, most, node.op, value)
        raise self.wrong_type(node.field, dtype)

    def anniversary(self, node: Comparison) -> pl.Expr:
        """The local month-day (`month * 100 + day`) in the period's zone, by polars' own zone
        database (`convert_time_zone`), in the lowered ranges; a naive Datetime is UTC and a
        Date midnight UTC, as for comparisons."""
        days = node.value
        assert isinstance(days, MonthDays), "anniversaries are lowered at a now"
        column = self.column(node.field)
        dtype = self.dtype(node.field)
        if dtype == pl.Date:
            column, dtype = column.cast(pl.Datetime("us")), pl.Datetime("us")
        if not isinstance(dtype, pl.Datetime):
            raise self.wrong_type(node.field, dtype)
        if dtype.time_zone is None:
            column = column.dt.replace_time_zone("UTC")
        local = column.dt.convert_time_zone(days.zone)
        month_day = local.dt.month().cast(pl.Int32) * 100 + local.dt.day().cast(pl.Int32)
        tests = [month_day.is_between(low, high) for low, high in days.ranges]
        return _balanced(tests, operator.or_)

    def instant(self, node: Comparison) -> pl.Expr:
        """A date-time comparison of the column's integers (ticks since 1970 in UTC) with the
        literal's exact instant in those ticks, so no value or literal is ever rounded.

        polars stores a zoned Datetime as UTC ticks, and a naive one is taken as UTC (as naive
        record values are); a Date is midnight UTC.
        """
        column = self.column(node.field)
        dtype = self.dtype(node.field)
        physical: Any
        if isinstance(dtype, pl.Datetime):
            ticks: Fraction = Fraction(_TICKS_PER_SECOND[dtype.time_unit], 10**6)
            physical, (low, high) = pl.Int64, _INT_RANGES[pl.Int64]
        elif dtype == pl.Date:
            ticks = Fraction(1, 86_400 * 10**6)
            physical, (low, high) = pl.Int32, _INT_RANGES[pl.Int32]
        else:
            raise self.wrong_type(node.field, dtype)
        value = _scaled(_microseconds(node.value), ticks)
        return _integer_comparison(column.to_physical(), physical, low, high, node.op, value)


def _fix(kind: FieldType, column: str, dtype: Any) -> str:
    """A conversion that turns a column of `dtype` into one the field can use."""
    col = f'pl.col("{column}")'
    if kind is FieldType.JSON:
        return (
            "Give it JSON text (a String column) or objects (a Struct, as pl.read_ndjson "
            f'reads them; schema_overrides={{"{column}": pl.String}} keeps the text)'
        )
    if kind is FieldType.DATETIME:
        if dtype == pl.String:
            fix = f'{col}.str.to_datetime(time_zone="UTC")'
        elif dtype.is_integer():
            fix = f'pl.from_epoch("{column}", time_unit="ms")'
        else:
            fix = f"{col}.cast(pl.Datetime)"
    elif kind is FieldType.NUMBER:
        fix = f"{col}.str.to_integer()" if dtype == pl.String else f"{col}.cast(pl.Float64)"
    elif kind is FieldType.BOOLEAN:
        fix = f'{col} == "true"' if dtype == pl.String else f"{col}.cast(pl.Boolean)"
    else:
        fix = f"{col}.cast(pl.String)"
    return f"Convert it first, e.g. frame.with_columns({fix})"


def _json_text_truth(node: Comparison | IsNull, path: tuple[str, ...], text: str) -> bool | None:
    return truth(node, json.loads(text), path)


def _value_truth(node: Comparison | IsNull, path: tuple[str, ...], value: Any) -> bool | None:
    return truth(node, value, path)


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


def _integer_comparison(
    column: pl.Expr, dtype: Any, low: int, high: int, op: Op, value: Any
) -> pl.Expr:
    """`column op value` for a column of integers in `low..high` and an exact number (an int,
    float or Fraction, or a tuple of them), without rounding either."""
    if op in (Op.IN, Op.NOT_IN):
        exact = [v for v in (as_integer(x) for x in value) if v is not None and low <= v <= high]
        found = column.is_in(pl.Series(exact, dtype=dtype).implode()) if exact else None
        if found is None:  # no value the column can hold: FALSE where present
            found = _where_present(column, False)
        return found if op is Op.IN else ~found
    bound = integer_bound(op, value)
    if isinstance(bound, bool):
        return _where_present(column, bound)
    op, number = bound
    always = out_of_range(op, number, low, high)
    if always is not None:
        return _where_present(column, always)
    return _compare(column, op, pl.lit(number, dtype=dtype))


def _scaled(value: Any, factor: int | Fraction) -> Any:
    """The exact value (or tuple of values) times `factor`: a literal in a column's units."""
    if isinstance(value, tuple):
        return tuple(Fraction(v) * factor for v in value)
    return Fraction(value) * factor


def _microseconds(value: Any) -> Any:
    """An instant (or tuple of them) as microseconds since 1970-01-01 UTC."""
    if isinstance(value, tuple):
        return tuple(_microseconds(v) for v in value)
    assert isinstance(value, datetime)
    return (value - _EPOCH) // _MICROSECOND


def _float_comparison(column: pl.Expr, op: Op, value: Any) -> pl.Expr:
    """`column op value` for a Float64 column, exactly."""
    if op in (Op.IN, Op.NOT_IN):
        exact = [float(v) for v in value if double_exact(v)]
        found = column.is_in(pl.Series(exact, dtype=pl.Float64).implode()) if exact else None
        if found is None:
            found = _where_present(column, False)
        found = _nan_is_false(column, found)
        return found if op is Op.IN else ~found
    if double_exact(value):
        result = _compare(column, op, pl.lit(float(value), dtype=pl.Float64))
    elif op is Op.EQUALS:
        result = _where_present(column, False)
    else:
        below, above = doubles_around(value)
        if op in (Op.GT, Op.GTE):  # x >= n <=> x > n: no float equals n
            result = column > pl.lit(below, dtype=pl.Float64)
        else:
            result = column < pl.lit(above, dtype=pl.Float64)
    return _nan_is_false(column, result)


def _nan_is_false(column: pl.Expr, result: pl.Expr) -> pl.Expr:
    # polars orders NaN above every number and equal to itself; Python compares it with nothing.
    return pl.when(column.is_nan()).then(pl.lit(False)).otherwise(result)


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


_MIRRORED = {Op.EQUALS: Op.EQUALS, Op.GT: Op.LT, Op.GTE: Op.LTE, Op.LT: Op.GT, Op.LTE: Op.GTE}
"""`a op b` is `b mirrored-op a`."""


def _where_present(column: pl.Expr, answer: bool) -> pl.Expr:
    """`answer` where the value is present, null (UNKNOWN) where it is not."""
    return pl.when(column.is_not_null()).then(pl.lit(answer))


def _list_row_truth(node: ListTest, kind: FieldType, value: Any) -> bool | None:
    """`lists.truth` of one row's list (a Series for a List column); a wrong item type is a
    `FrameError` naming the field, as a wrong column type is."""
    items = value.to_list() if isinstance(value, pl.Series) else value
    try:
        return lists.truth(node, kind, items)
    except (TypeError, ValueError) as exc:
        raise FrameError(f'field "{node.field}": {exc}') from None


def _array_value_truth(node: ListTest, document: Any) -> bool | None:
    return lists.array_truth(node, document)


def _array_text_truth(node: ListTest, text: str) -> bool | None:
    return lists.array_truth(node, json.loads(text))
