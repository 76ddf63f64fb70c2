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
  The types a field can use are `frame_dtypes.py`'s: those a cell of the support matrix
  proves against the in-memory oracle; every other dtype is refused, by name, from the schema.
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
  compared the same way with the literal as written (`values.decimal_literal`: `0.3` is
  3/10) times 10^scale. A Float32 column is widened to
  Float64 (exactly; `100.1` stays the Float64 100.1), and against a float column an integer
  that no float can represent becomes the nearest float bound; NaN (which polars orders above
  everything) is a missing number, null (`core.nan_is_null`).
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
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from fractions import Fraction
from typing import Any, TypeVar

import polars as pl

from ...errors import FrameError, RecordError
from ...language import lists
from ...language.anniversary import MonthDays
from ...language.data_paths import FIX_KEYS, KeyTwice, decoded, shown, truth
from ...language.fields import ORDERING_OPS, FieldType, Op, Schema
from ...language.nodes import (
    TRUE,
    Aggregated,
    Comparison,
    Const,
    IsNull,
    ListTest,
    Node,
    Quantified,
)
from ...language.relations import Aggregate
from ...language.values import decimal_literals
from .core import (
    FrameCore,
    Integers,
    Rows,
    balanced,
    compare,
    integer_comparison,
    where_present,
)
from .frame_dtypes import check_column, check_frame
from .polars_lists import native_list_test
from .polars_types import CANONICAL, field_columns, related_column

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
    FieldType.DATE: "Date (a date field holds days, not instants)",
    FieldType.JSON: "String (JSON text), Struct or Object",
    **{kind: "a List column of the items' type" for kind in FieldType if kind.value.endswith("[]")},
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
    return _Expressions(POLARS, schema, dtypes or {}, columns or {}).checked(node).visit(node)


def select_rows(
    node: Node, schema: Schema, frame: Frame, *, columns: Mapping[str, str] | None = None
) -> Frame:
    """The rows of `frame` where the lowered filter is TRUE, in order; lazy in, lazy out."""
    return frame.filter(to_polars(node, schema, frame_dtypes(frame), columns=columns))


def frame_dtypes(frame: Frame) -> Dtypes:
    """The column types of a DataFrame, or of a LazyFrame (its schema, without running it)."""
    return frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema


def frame_for(records: list[Mapping[str, Any]], schema: Schema) -> pl.DataFrame:
    """Records as a DataFrame with each field's canonical column type; a missing key is null.

    Date-time values may be `datetime`s or ISO 8601 strings, as in records for `Filter.matches`.
    """
    data, dtypes = field_columns(records, schema)
    for relation in schema.relations:  # a List of Struct, one struct per related row
        data[relation.name], dtypes[relation.name] = related_column(records, relation)
    return pl.DataFrame(data, schema=dtypes)


class PolarsAlgebra:
    """The column algebra in polars (`core.ColumnAlgebra`)."""

    def literal(self, value: Any) -> pl.Expr:
        return pl.lit(value)

    def integer(self, value: int, dtype: Any) -> pl.Expr:
        return pl.lit(value, dtype=dtype)

    def double(self, value: float) -> pl.Expr:
        return pl.lit(value, dtype=pl.Float64)

    def unknown(self) -> pl.Expr:
        return pl.lit(None, dtype=pl.Boolean)

    def when(self, condition: pl.Expr, then: pl.Expr, otherwise: pl.Expr | None = None) -> pl.Expr:
        chosen = pl.when(condition).then(then)
        return chosen if otherwise is None else chosen.otherwise(otherwise)

    def is_null(self, column: pl.Expr) -> pl.Expr:
        return column.is_null()

    def is_not_null(self, column: pl.Expr) -> pl.Expr:
        return column.is_not_null()

    def is_nan(self, column: pl.Expr) -> pl.Expr:
        return column.is_nan()

    def coalesce(self, column: pl.Expr, value: Any) -> pl.Expr:
        return column.fill_null(value)

    def is_in(self, column: pl.Expr, values: Sequence[Any], dtype: Any) -> pl.Expr:
        return column.is_in(pl.Series(values, dtype=dtype or pl.Float64).implode())

    def to_double(self, column: pl.Expr) -> pl.Expr:
        return column.cast(pl.Float64)

    def to_wide_integer(self, column: pl.Expr) -> pl.Expr:
        return column.cast(pl.Int128)


POLARS = PolarsAlgebra()


class _Expressions(FrameCore[pl.Expr]):
    """The polars adapter of the frame core: how polars reads each type."""

    engine = "polars"
    canonical = CANONICAL
    rows_type = "a List of Struct"

    def over(
        self, schema: Schema, dtypes: Mapping[str, Any], column_of: Callable[[str], pl.Expr]
    ) -> _Expressions:
        return type(self)(self.a, schema, dtypes, {}, column_of)

    def checked(self, node: Node) -> _Expressions:
        """This walker, once every column `node` reads has a dtype the back-end is proven
        exact on for its field (`frame_dtypes`): refused from the schema, before any value."""
        check_frame("polars", node, self.schema, self.dtypes.get, self.columns, self.wrong_type)
        return self

    def rows(self, node: Quantified | Aggregated) -> Rows[pl.Expr]:
        """The related rows, once each struct field the condition reads has a proven dtype."""
        rows = super().rows(node)
        fields = rows.relation.schema
        check_frame("polars", node.where, fields, rows.dtypes.get, {})
        if isinstance(node, Aggregated) and node.function is not Aggregate.COUNT:
            field = fields[node.field]
            check_column("polars", rows.dtypes[field.name], field, field.name)
        return rows

    def named_column(self, name: str) -> pl.Expr:
        return pl.col(name)

    def all_null(self, field: str) -> bool:
        return bool(self.dtype(field) == pl.Null)

    def before_comparison(self, node: Comparison) -> pl.Expr | None:
        return None if self.known(node) else self.deferred(node)

    def before_relation(self, node: Quantified | Aggregated) -> pl.Expr | None:
        """Without the relation column's type, its struct fields' types are unknown too (a
        `data` Struct or JSON text, integers or floats): the condition is built per batch."""
        name = self.columns.get(node.relation, node.relation)
        if self.column_of is not None or name in self.dtypes:
            return None
        return self.deferred(node, name)

    def text_pair(self, field: str, other: str) -> tuple[pl.Expr, pl.Expr]:
        left, right = (self.text_column(f, self.column(f), self.dtype(f)) for f in (field, other))
        return left, right

    def instant_pair(self, field: str, other: str) -> tuple[pl.Expr, pl.Expr]:
        left, right = (self.ticks(f, self.column(f), self.dtype(f)) for f in (field, other))
        return left, right

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

    def number_kind(self, field: str) -> str:
        dtype = self.dtype(field)
        if dtype.is_integer():
            return "int"
        if dtype.is_float():
            return "float"
        raise self.wrong_type(field, dtype)

    def number_sides(
        self, field: str, other: str
    ) -> tuple[tuple[pl.Expr, str], tuple[pl.Expr, str]]:
        """A Decimal is compared with another column as its integers (value times 10^scale),
        exact where the other side is in the same units: a Decimal of the same scale, or an
        integer column beside a Decimal of scale 0. Other pairs are refused by name."""
        dtypes = (self.dtype(field), self.dtype(other))
        scales = {d.scale for d in dtypes if isinstance(d, pl.Decimal)}
        if not scales:
            return super().number_sides(field, other)
        integral = all(isinstance(d, pl.Decimal) or d in _INT_RANGES for d in dtypes)
        if len(scales) == 1 and (
            integral and scales == {0} or all(isinstance(d, pl.Decimal) for d in dtypes)
        ):
            left, right = (self.column(f) for f in (field, other))
            return (left.to_physical().cast(pl.Int128), "int"), (
                right.to_physical().cast(pl.Int128),
                "int",
            )
        raise FrameError(
            f'fields "{field}" ({dtypes[0]}) and "{other}" ({dtypes[1]}): a Decimal column is '
            "compared with another only of the same scale, or with an integer column at scale "
            f'0; cast both to one Decimal type, e.g. pl.col("{other}").cast({dtypes[0]})'
        )

    def visit_list_test(self, node: ListTest) -> pl.Expr:
        """A list test natively (`columnar_lists`), else row by row by `lists.truth` (null for a
        null list) from a List column or an Object column of Python lists."""
        name = self.columns.get(node.field, node.field)
        dtype = self.dtypes.get(name)
        column = self.column(node.field)
        if dtype == pl.Null:
            return where_present(self.a, column, False)
        if node.path:  # a JSON array inside a JSON column: read as JSON paths are
            return self.json_rows(node, column, dtype, _array_value_truth, _array_text_truth)
        if dtype is not None and not isinstance(dtype, pl.List) and dtype != pl.Object:
            raise FrameError(
                f'column "{name}" for field "{node.field}" is {dtype}; expected a List column. '
                "Build the frame with frame_for, or cast the column to a List"
            )
        native = native_list_test(node, column, dtype)
        if native is not None:  # the accelerator (polars_lists.py)
            return native
        test = functools.partial(_list_row_truth, node, self.schema[node.field].type)
        return column.map_elements(test, return_dtype=pl.Boolean, skip_nulls=True)

    def json_rows(
        self,
        node: Comparison | IsNull | ListTest,
        column: pl.Expr,
        dtype: Any,
        value_test: Callable[..., bool | None],
        text_test: Callable[..., bool | None],
    ) -> pl.Expr:
        """A test of each row's JSON document, decoded by Python (null for a null cell): an
        Object column holds decoded values, a Struct (what `pl.read_ndjson` makes of objects)
        is encoded to JSON text first, a String column is JSON text."""
        if dtype == pl.Object:
            tested = functools.partial(value_test, node)
            return column.map_elements(tested, return_dtype=pl.Boolean, skip_nulls=True)
        if isinstance(dtype, pl.Struct):
            column = column.struct.json_encode()
        elif dtype is not None and dtype != pl.String:
            raise self.wrong_type(node.field, dtype)
        tested = functools.partial(text_test, node)
        return column.map_elements(tested, return_dtype=pl.Boolean, skip_nulls=True)

    def boolean_column(self, field: str) -> pl.Expr:
        dtype = self.dtype(field)
        if dtype != pl.Boolean:
            raise self.wrong_type(field, dtype)
        return self.column(field)

    def column_name(self, node: Comparison | IsNull) -> str:
        """The frame column a condition reads: its field's, or the JSON column holding it."""
        return self.columns.get(node.field, node.field)

    def known(self, node: Comparison | IsNull) -> bool:
        return self.column_name(node) in self.dtypes

    def deferred(self, node: Node, name: str | None = None) -> pl.Expr:
        """The condition on a column (`name`, else the condition's field's) whose type is learnt
        only when the expression runs.

        Each batch builds, once per column type, the expression that type needs and runs it on
        the batch: the answers and the `FrameError`s are those of an expression built with the
        frame's types, and the price is a Python call per batch, with no predicate pushdown.
        """
        if name is None:
            assert isinstance(node, Comparison | IsNull), "a field's condition names its column"
            name = self.column_name(node)
        built: dict[Any, pl.Expr] = {}

        def run(values: pl.Series) -> pl.Series:
            expr = built.get(values.dtype)
            if expr is None:
                typed = type(self)(self.a, self.schema, {name: values.dtype}, self.columns)
                typed.checked(node)
                expr = built[values.dtype] = typed.visit(node).alias(name)
            return values.to_frame(name).select(expr).to_series()

        return pl.col(name).map_batches(run, return_dtype=pl.Boolean, is_elementwise=True)

    def json_condition(self, node: Comparison | IsNull) -> pl.Expr:
        """A condition inside a JSON column, decoded row by row (null for a null cell): the
        answers are `data_paths.truth`'s exactly (numbers beyond 2^53 included), at the price
        of a Python call per row. A missing key is null, so `isNull` is TRUE there."""
        if not self.known(node):
            return self.deferred(node)
        column = self.column(node.field)
        dtype = self.dtypes.get(self.column_name(node), pl.String)
        if dtype == pl.Null:
            tested = where_present(self.a, column, False)
        else:
            tested = self.json_rows(node, column, dtype, _value_truth, _json_text_truth)
        return tested.fill_null(True) if isinstance(node, IsNull) else tested

    def conversion(self, kind: FieldType, column: str, dtype: Any) -> str:
        """The advice closing a `FrameError`: a conversion of the frame's column (a pandas
        frame's adapter, `narwhals.py`, advises pandas code)."""
        return _fix(kind, column, dtype)

    def wrong_type(self, field: str, dtype: Any) -> FrameError:
        column = self.columns.get(field, field)
        kind = self.schema[field].type
        return FrameError(
            f'column "{column}" for field "{field}" is {dtype}; expected {_ACCEPTED[kind]}. '
            f"{self.conversion(kind, column, dtype)}"
        )

    def string(self, node: Comparison) -> pl.Expr:
        column = self.text_column(node.field, self.column(node.field), self.dtype(node.field))
        op = node.op
        value: Any = node.value
        if node.insensitive:  # the literals are folded already (lowering): fold the column
            if op is Op.CONTAINS and _ascii_match_is_exact(value):
                return column.str.contains_any([value], ascii_case_insensitive=True)
            literals = value if isinstance(value, tuple) else (value,)
            column = fold_column(column, ascii_only=all(v.isascii() for v in literals))
        if op in (Op.IN, Op.NOT_IN):
            found = _string_in(column, value, few=not node.insensitive)
            return found if op is Op.IN else ~found
        if op in ORDERING_OPS or op is Op.EQUALS:
            # polars orders strings by their UTF-8 bytes: code-point order. With ASCII
            # literals the native fold suffices here too: where it differs from Python's,
            # both folds are non-ASCII, so both order above any ASCII character.
            return compare(column, op, pl.lit(value, dtype=pl.String))
        if op is Op.CONTAINS:
            return column.str.contains(value, literal=True)
        if op is Op.STARTS_WITH:
            return column.str.starts_with(value)
        return column.str.ends_with(value)

    def number_column(self, field: str, value: Any) -> tuple[pl.Expr, Integers | None, Any]:
        """A Float32 column is widened to Float64 (exactly); a Decimal is compared as its
        integers (value times 10^scale) with the literal times 10^scale."""
        column = self.column(field)
        dtype = self.dtype(field)
        if dtype in _INT_RANGES:
            return column, Integers(dtype, *_INT_RANGES[dtype]), value
        if dtype in (pl.Float32, pl.Float64):
            return column.cast(pl.Float64), None, value
        if isinstance(dtype, pl.Decimal):
            most = 10 ** (dtype.precision or 38) - 1
            scaled = _scaled(decimal_literals(value), 10**dtype.scale)  # as written
            return column.to_physical(), Integers(pl.Int128, -most, most), scaled
        raise self.wrong_type(field, dtype)

    def anniversary(self, node: Comparison) -> pl.Expr:
        """The local month-day (`month * 100 + day`) in the period's zone, by polars' own zone
        database (`convert_time_zone`), in the lowered ranges; a naive Datetime is UTC and a
        Date midnight UTC, as for comparisons."""
        days = node.value
        assert isinstance(days, MonthDays), "anniversaries are lowered at a now"
        if self.schema[node.field].type is FieldType.DATE:
            local = self.date_column(node.field)  # a date is its own day, in no zone
        else:
            local = self.local_datetime(node.field, days.zone)
        month_day = local.dt.month().cast(pl.Int32) * 100 + local.dt.day().cast(pl.Int32)
        tests = [month_day.is_between(low, high) for low, high in days.ranges]
        return balanced(tests, operator.or_)

    def local_datetime(self, field: str, zone: str) -> pl.Expr:
        """The date-times in `zone`: a naive Datetime is UTC and a Date midnight UTC."""
        column, dtype = self.column(field), self.dtype(field)
        if dtype == pl.Date:
            column, dtype = column.cast(pl.Datetime("us")), pl.Datetime("us")
        if not isinstance(dtype, pl.Datetime):
            raise self.wrong_type(field, dtype)
        if dtype.time_zone is None:
            column = column.dt.replace_time_zone("UTC")
        return column.dt.convert_time_zone(zone)

    def date_column(self, field: str) -> pl.Expr:
        dtype = self.dtype(field)
        if dtype != pl.Date:
            raise self.wrong_type(field, dtype)
        return self.column(field)

    def day(self, node: Comparison) -> pl.Expr:
        """A Date column's days since 1970 against the literal's, as integers."""
        column = self.date_column(node.field).to_physical()
        integers = Integers(pl.Int32, *_INT_RANGES[pl.Int32])
        return integer_comparison(self.a, column, integers, node.op, _days(node.value))

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
            physical = pl.Int64
        elif dtype == pl.Date:
            ticks, physical = Fraction(1, 86_400 * 10**6), pl.Int32
        else:
            raise self.wrong_type(node.field, dtype)
        value = _scaled(_microseconds(node.value), ticks)
        integers = Integers(physical, *_INT_RANGES[physical])
        return integer_comparison(self.a, column.to_physical(), integers, node.op, value)

    # ---- relations: a List of Struct, one struct per related row ----------------------------

    def struct_fields(self, dtype: Any) -> Mapping[str, Any] | None:
        inner = getattr(dtype, "inner", None)
        if not isinstance(dtype, pl.List) or not isinstance(inner, pl.Struct):
            return None
        return {f.name: f.dtype for f in inner.fields}

    def element_test(self, rows: Rows[pl.Expr], where: Node) -> pl.Expr:
        """W for each list element (`pl.element()`), TRUE or FALSE."""
        if isinstance(where, Const):  # an element-wise constant, never null
            element = pl.element().is_null()
            return (element | True) if where.value else (element & False)
        return self.row_test(rows, where, _struct_field)

    def rows_any(self, rows: Rows[pl.Expr], where: Node) -> pl.Expr:
        return rows.column.list.eval(self.element_test(rows, where)).list.any()

    def rows_all(self, rows: Rows[pl.Expr], where: Node) -> pl.Expr:
        return rows.column.list.eval(self.element_test(rows, where)).list.all()

    def rows_count(self, rows: Rows[pl.Expr], where: Node) -> tuple[pl.Expr, Any]:
        counted = rows.column.list.eval(self.element_test(rows, where)).list.sum()
        return counted.fill_null(0).cast(pl.Int64), pl.Int64

    def rows_aggregate(
        self, rows: Rows[pl.Expr], where: Node, function: Aggregate, field: str | None
    ) -> tuple[pl.Expr, Any]:
        assert field is not None, "sum, min and max read a field"
        dtype, value = rows.dtypes[field], _struct_field(field)
        if function is Aggregate.SUM and dtype.is_integer():
            dtype = _exact_sum_type(dtype)
            value = value.cast(dtype)
        if where != TRUE:  # every row counts without a where clause: no `when` per element
            value = pl.when(self.element_test(rows, where)).then(value)
        listed = rows.column.list.eval(value)
        if function is Aggregate.SUM:
            return listed.list.sum().fill_null(0), dtype
        return (listed.list.min() if function is Aggregate.MIN else listed.list.max()), dtype


def _exact_sum_type(dtype: Any) -> Any:
    """The integer type a sum of `dtype` values is exact in, without wrapping: Int64 for
    integers of 32 bits or fewer (a list would need 2^31 items to overflow it), Int128 for
    64-bit ones (which costs more per element: only there is it needed)."""
    narrow = dtype in _INT_RANGES and _INT_RANGES[dtype][1] <= 2**32 - 1
    return pl.Int64 if narrow else pl.Int128


def _struct_field(name: str) -> pl.Expr:
    return pl.element().struct.field(name)


def _string_in(column: pl.Expr, values: tuple[str, ...], *, few: bool) -> pl.Expr:
    if few and len(values) <= _FEW:
        # A few equalities beat hashing every string (`country in FR, DE, ES`).
        return pl.any_horizontal([column == pl.lit(v, dtype=pl.String) for v in values])
    return column.is_in(pl.Series(values, dtype=pl.String).implode())


def _fix(kind: FieldType, column: str, dtype: Any) -> str:
    """A conversion that turns a column of `dtype` into one the field can use."""
    col = f'pl.col("{column}")'
    if kind.value.endswith("[]"):
        return "Build the frame with frame_for, or cast the column to a List"
    if kind is FieldType.JSON:
        return (
            "Give it JSON text (a String column) or objects (a Struct, as pl.read_ndjson "
            f'reads them; schema_overrides={{"{column}": pl.String}} keeps the text)'
        )
    if kind is FieldType.DATE:
        fix = f"{col}.str.to_date()" if dtype == pl.String else f"{col}.dt.date()"
    elif kind is FieldType.DATETIME:
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


def _json_text_truth(node: Comparison | IsNull, text: str) -> bool | None:
    return truth(node, _json_document(node.field, text), node.path)


def _json_document(field: str, text: str) -> Any:
    """A JSON cell's document. A cell that is no JSON text (a dict's repr, as
    `DataFrame.to_csv` writes one; an empty string) is a `FrameError` naming the field, the
    text and the fix: a `JSONDecodeError` raised inside polars' `map_elements` cannot be
    rebuilt by polars and surfaces as an unrelated `TypeError`."""
    try:
        return decoded(text)
    except KeyTwice as twice:
        raise FrameError(
            f'field "{field}": a cell holds {_cut(text)!r}, whose object holds the key '
            f"{json.dumps(twice.key)} twice, which engines read differently (the first or the "
            f"last); {FIX_KEYS}"
        ) from None
    except json.JSONDecodeError as exc:
        raise FrameError(
            f'field "{field}": a cell holds {_cut(text)!r}, which is not JSON text ({exc.msg} at '
            f'column {exc.colno}); expected a JSON document such as {{"plan": "pro"}}. '
            "Write the column as JSON (json.dumps each value, or DataFrame.to_json rather than "
            "to_csv), or set the cell to null"
        ) from None


def _cut(text: str) -> str:
    """A cell's text as a refusal shows it: its first 40 characters."""
    return text if len(text) <= 40 else text[:40] + "..."


def _value_truth(node: Comparison | IsNull, value: Any) -> bool | None:
    try:
        return truth(node, value, node.path)
    except RecordError as exc:  # a document with two keys written alike (`data_paths.lookup`)
        raise FrameError(f'field "{node.field}": a cell holds {shown(value)}: {exc}') from None


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


def _scaled(value: Any, factor: int | Fraction) -> Any:
    """The exact value (or tuple of values) times `factor`: a literal in a column's units."""
    if isinstance(value, tuple):
        return tuple(Fraction(v) * factor for v in value)
    return Fraction(value) * factor


def _days(value: Any) -> Any:
    """A date (or tuple of them) as days since 1970-01-01."""
    if isinstance(value, tuple):
        return tuple(_days(v) for v in value)
    assert isinstance(value, date) and not isinstance(value, datetime)
    return (value - _EPOCH_DAY).days


_EPOCH_DAY = date(1970, 1, 1)


def _microseconds(value: Any) -> Any:
    """An instant (or tuple of them) as microseconds since 1970-01-01 UTC."""
    if isinstance(value, tuple):
        return tuple(_microseconds(v) for v in value)
    assert isinstance(value, datetime)
    return (value - _EPOCH) // _MICROSECOND


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
    return lists.array_truth(node, _json_document(node.field, text))
