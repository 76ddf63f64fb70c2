"""Spark back-end: a filter as one boolean `pyspark.sql.Column`, for `df.filter(...)`.

`to_pyspark(root, schema)` returns a Column that is TRUE, FALSE, or NULL for UNKNOWN over a
DataFrame whose columns carry the field names (or the names in `columns=`); `select_rows`
keeps the rows where it is TRUE, as Spark's `filter` does. pyspark is an optional extra
(`audiencefilter[spark]`) and needs a Java runtime; `local_session()` starts a local Spark
pinned the way the answers need it.

Design choices, each keeping the answers identical to the in-memory back-end:
- Three-valued logic is Spark SQL's own: a comparison with NULL is NULL, `&`/`|` are Kleene,
  `~NULL` is NULL, and `filter` keeps TRUE rows only. An empty `in`/`notIn` is a constant
  (FALSE/TRUE even for null rows); a comparison whose answer is the same for every value a
  column can hold (`points > 2**70`) is that constant where the value is present, NULL
  elsewhere.
- Numbers compare exactly: against an integer column a float literal becomes the integer
  bound it is equivalent to (`x > 2.5` is `x > 2`) and a literal beyond the column's range a
  constant, so no value is converted to a double. Against a double column an integer that no
  double holds becomes the nearest double bound, and NaN (which Spark orders above every number
  and equal to itself) is FALSE in every comparison, as in Python.
- Date-times are instants: literals are built from microseconds since the epoch
  (`timestamp_micros`), so neither the session time zone nor the JVM's calendar touches them.
  A `TIMESTAMP_NTZ` column holds UTC wall times and a `DATE` column midnight UTC.
- Case folding is Spark's `lower`, which agrees with `str.lower()` except on 55 code points new
  since Python's Unicode; a case-insensitive literal that could meet them is refused
  (`dialects.spark.fold_refusal`, and docs/backends.md).
- `contains`/`startsWith`/`endsWith` are `Column.contains/startswith/endswith`: literal, so
  `%`, `_` and `\\` are ordinary characters.
- Conditions inside a JSON text column (custom `data`) are the Spark SQL dialect's own text
  (`F.expr`), so the JSON rules on Spark live in one place, `dialects/spark.py`.
"""

from __future__ import annotations

import operator
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, cast

from ..errors import FrameError
from ..language.anniversary import MonthDays
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
from .sql.dialects import DIALECTS
from .sql.dialects.spark import fold_refusal, order_refusal
from .sql.text import SqlWriter

try:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the Spark back-end needs pyspark: pip install 'audiencefilter[spark]' "
        "(and a Java 17+ runtime)"
    ) from exc

# After the check above, so a missing pyspark is the error that says how to install it.
from .spark_relations import aggregated_column, quantified_column, related_values  # noqa: E402
from .spark_types import (  # noqa: E402
    _DECIMAL_RANGE,
    _INT_RANGES,
    CANONICAL,
    field_values,
)

Dtypes = Mapping[str, Any]
"""Column name -> Spark data type, as `{f.name: f.dataType for f in df.schema}` gives it."""


_COMPARE: Mapping[Op, Callable[[Any, Any], Any]] = {
    Op.EQUALS: operator.eq,
    Op.GT: operator.gt,
    Op.GTE: operator.ge,
    Op.LT: operator.lt,
    Op.LTE: operator.le,
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND = timedelta(microseconds=1)


def to_pyspark(
    root: Node,
    schema: Schema,
    *,
    columns: Mapping[str, str] | None = None,
    dtypes: Dtypes | None = None,
    session: SparkSession | None = None,
) -> Column:
    """A lowered filter as a boolean Spark Column: TRUE, FALSE, or NULL where UNKNOWN.

    Args:
        root: The lowered tree (`Filter.lowered_at`): relative date-times are instants, so
            the Column holds them; build it again to move with time.
        schema: The schema it was validated against.
        columns: Column names for fields whose column is named differently.
        dtypes: The frame's column types; without them each column is taken to have its
            field's canonical type (`CANONICAL`).

    Raises:
        TypeError: a column's type cannot hold its field's values.
        ValueError: a case-insensitive literal Spark cannot fold like Python (see
            `dialects.spark.fold_refusal`), or a JSON key no Spark path can name.
        RuntimeError: no Spark session is running (in this thread or as the process's
            default; a worker thread of a pool finds the default session, as `F.col` does).
    """
    if session is None and live_session() is None:
        raise RuntimeError(
            "to_pyspark builds Spark Columns and needs a SparkSession: start one "
            "first (SparkSession.builder...getOrCreate(), or backends.spark.local_session())"
        )
    return _Columns(schema, dtypes or {}, columns or {}).visit(root)


def live_session() -> SparkSession | None:
    """The thread's active session, else the process's default one (the first built)."""
    try:
        return SparkSession.active()
    except Exception:  # PySparkRuntimeError: no session at all
        return None


def select_rows(
    root: Node, schema: Schema, frame: DataFrame, *, columns: Mapping[str, str] | None = None
) -> DataFrame:
    """The rows of `frame` where the lowered filter is TRUE (column types read from `frame`)."""
    dtypes = {f.name: f.dataType for f in frame.schema.fields}
    return frame.filter(to_pyspark(root, schema, columns=columns, dtypes=dtypes))


def local_session(
    cores: int = 2, app_name: str = "audiencefilter", config: Mapping[str, str] | None = None
) -> SparkSession:
    """A local Spark (`local[cores]`) pinned for the filters: bound to 127.0.0.1, UI off, UTC
    session time, en-US JVM locale, and any further settings in `config` (such as
    `spark.driver.memory`). Returns the active session when there is one.

    Raises:
        RuntimeError: no Java runtime is installed.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        raise RuntimeError(
            "Spark needs a Java 17+ runtime: install one (Debian: apt-get install "
            "openjdk-17-jre-headless) or set JAVA_HOME"
        )
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder: Any = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.extraJavaOptions", "-Duser.language=en -Duser.country=US")
        .config("spark.sql.shuffle.partitions", str(max(2, cores)))
    )
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    session: SparkSession = builder.getOrCreate()
    return session


# ---- the walker -------------------------------------------------------------------------------


class _Columns(Visitor[Column]):
    def __init__(
        self,
        schema: Schema,
        dtypes: Dtypes,
        columns: Mapping[str, str],
        column_of: Callable[[str], Column] | None = None,
    ) -> None:
        self.schema = schema
        self.dtypes = dtypes
        self.columns = columns
        self.column_of = column_of

    def visit_and(self, node: And) -> Column:
        return _balanced([self.visit(item) for item in node.items], operator.and_)

    def visit_or(self, node: Or) -> Column:
        return _balanced([self.visit(item) for item in node.items], operator.or_)

    def visit_not(self, node: Not) -> Column:
        return ~self.visit(node.item)

    def visit_quantified(self, node: Quantified) -> Column:
        return quantified_column(self, node)

    def visit_aggregated(self, node: Aggregated) -> Column:
        return aggregated_column(self, node)

    def over(self, schema: Schema, dtypes: Dtypes, column_of: Callable[[str], Column]) -> Any:
        """A walker of this kind whose fields are read by `column_of` (a related row's struct
        field, an aggregate's value): `spark_relations.ColumnWalker.over`."""
        return _Columns(schema, dtypes, {}, column_of)

    def visit_const(self, node: Const) -> Column:
        return F.lit(node.value)

    def visit_field_comparison(self, node: FieldComparison) -> Column:
        """Two columns of one type (a field reference); NULL on either side is NULL."""
        kind = self.schema[node.field].type
        left, right = self.column(node.field), self.column(node.other)
        ltype, rtype = self.dtype(node.field), self.dtype(node.other)
        result: Column
        if kind is FieldType.STRING:
            for field, dtype in ((node.field, ltype), (node.other, rtype)):
                if not isinstance(dtype, T.StringType):
                    raise _wrong_type(field, dtype, "a STRING column")
            left, right = F.collate(left, "UTF8_BINARY"), F.collate(right, "UTF8_BINARY")
            result = _COMPARE[node.op](left, right)
        elif kind is FieldType.BOOLEAN:
            result = left == right
        elif kind is FieldType.DATETIME:
            left, _ = self.instant_column(node.field)
            right, _ = self.instant_column(node.other)
            if type(ltype) is not type(rtype):  # refused rather than guessed at
                raise _wrong_type(
                    node.other,
                    rtype,
                    f'a {ltype.simpleString()} column like "{node.field}" to compare with it',
                )
            result = _COMPARE[node.op](left, right)
        else:
            result = _numbers_compared(node, left, ltype, right, rtype)
        return result

    def visit_blank(self, node: Blank) -> Column:  # lowering writes it out; as it does
        return self.visit(blank_form(node))

    def visit_list_test(self, node: ListTest) -> Column:
        """A list field's test as the Spark SQL dialect writes it (`sql/dialects/spark.py`), so the
        rules of lists on Spark live in one place; JSON arrays at a data path are refused."""
        if node.path:  # a JSON array in a JSON text column, as other data paths are read
            self.json_text_column(node.field)
            return F.expr(SqlWriter(DIALECTS["spark"], self.schema, self.columns, None).visit(node))
        dtype = self.dtypes.get(self.columns.get(node.field, node.field))
        if dtype is not None and not isinstance(dtype, T.ArrayType | T.NullType):
            raise _wrong_type(node.field, dtype, "an ARRAY column")
        return F.expr(SqlWriter(DIALECTS["spark"], self.schema, self.columns, None).visit(node))

    def visit_is_null(self, node: IsNull) -> Column:
        if node.path:
            return self.json_condition(node)
        return self.column(node.field).isNull()

    def visit_comparison(self, node: Comparison) -> Column:
        if node.op is Op.ANNIVERSARY:
            return self.anniversary(node)
        if node.path:
            return self.json_condition(node)
        kind = self.schema[node.field].type
        if kind is FieldType.STRING:
            return self.string(node)
        if kind is FieldType.NUMBER:
            return self.number(node)
        if kind is FieldType.BOOLEAN:
            dtype = self.dtype(node.field)
            if not isinstance(dtype, T.BooleanType):
                raise _wrong_type(node.field, dtype, "a BOOLEAN column")
            column = self.column(node.field)
            return column if node.value is True else ~column
        return self.instant(node)

    def json_condition(self, node: Comparison | IsNull) -> Column:
        """A condition inside a JSON text column, as the Spark SQL dialect writes it."""
        self.json_text_column(node.field)
        return F.expr(SqlWriter(DIALECTS["spark"], self.schema, self.columns, None).visit(node))

    def json_text_column(self, field: str) -> None:
        """Refuse, before Spark's analyzer does at length, a JSON field whose column is no
        STRING of JSON text (a STRUCT, say, as `spark.read.json` makes of objects)."""
        dtype = self.dtypes.get(self.columns.get(field, field), T.StringType())
        if not isinstance(dtype, T.StringType):
            raise _wrong_type(
                field, dtype, "a STRING column of JSON text (e.g. F.to_json(the struct column))"
            )

    def column(self, field: str) -> Column:
        if self.column_of is not None:
            return self.column_of(field)
        return F.col(_quoted(self.columns.get(field, field)))

    def dtype(self, field: str) -> Any:
        found = self.dtypes.get(self.columns.get(field, field))
        return CANONICAL[self.schema[field].type] if found is None else found

    def string(self, node: Comparison) -> Column:
        column = self.column(node.field)
        dtype = self.dtype(node.field)
        if not isinstance(dtype, T.StringType):
            raise _wrong_type(node.field, dtype, "a STRING column")
        if getattr(dtype, "collation", "UTF8_BINARY") != "UTF8_BINARY":
            column = F.collate(column, "UTF8_BINARY")  # code points, case and spaces count
        op = node.op
        value: Any = node.value
        if node.insensitive:  # the literals are folded already (lowering): fold the column
            for literal in value if isinstance(value, tuple) else (value,):
                reason = fold_refusal(literal)
                if reason is None and op in ORDERING_OPS:
                    reason = order_refusal(literal)
                if reason is not None:
                    raise ValueError(f'field "{node.field}", {op.value}: {reason}')
            column = F.lower(column)
        if op in ORDERING_OPS:  # UTF8_BINARY: code-point order
            ordered: Column = _COMPARE[op](column, F.lit(value))
            return ordered
        if op in (Op.IN, Op.NOT_IN):
            found = column.isin(list(value))
            return found if op is Op.IN else ~found
        if op is Op.EQUALS:
            return column == F.lit(value)
        if op is Op.CONTAINS:
            return column.contains(F.lit(value))
        if op is Op.STARTS_WITH:
            return column.startswith(F.lit(value))
        return column.endswith(F.lit(value))

    def number(self, node: Comparison) -> Column:
        column = self.column(node.field)
        dtype = self.dtype(node.field)
        if type(dtype) in _INT_RANGES:
            return _integer_comparison(column, _INT_RANGES[type(dtype)], node.op, node.value)
        if isinstance(dtype, T.DecimalType) and dtype.scale == 0:  # an exact sum (relations)
            return _integer_comparison(column, _DECIMAL_RANGE, node.op, node.value)
        if isinstance(dtype, T.DoubleType | T.FloatType):
            if isinstance(dtype, T.FloatType):
                column = column.cast(T.DoubleType())  # exact: every float is a double
            return _double_comparison(column, node.op, node.value)
        raise _wrong_type(node.field, dtype, "an integer (TINYINT..BIGINT) or DOUBLE column")

    def instant(self, node: Comparison) -> Column:
        column, literal = self.instant_column(node.field)
        if node.op in (Op.IN, Op.NOT_IN):
            instants = cast(tuple[datetime, ...], node.value)
            found = column.isin([literal(v) for v in instants])
            return found if node.op is Op.IN else ~found
        assert isinstance(node.value, datetime)
        result: Column = _COMPARE[node.op](column, literal(node.value))
        return result

    def anniversary(self, node: Comparison) -> Column:
        """The local month-day in the period's zone (Java's zone database) in the lowered
        ranges, whatever the session time zone: a TIMESTAMP is shifted by the zone's offset
        (`from_utc_timestamp`) and its microseconds counted as whole days; a TIMESTAMP_NTZ
        (UTC wall time) or DATE (midnight UTC) is converted wall time to wall time."""
        days = node.value
        assert isinstance(days, MonthDays), "anniversaries are lowered at a now"
        column = self.column(node.field)
        dtype = self.dtype(node.field)
        zone = F.lit(days.zone)
        if isinstance(dtype, T.TimestampType):
            shifted = column if days.zone == "UTC" else F.from_utc_timestamp(column, zone)
            day = F.date_from_unix_date(
                F.floor(F.unix_micros(shifted) / 86_400_000_000).cast("int")
            )
        elif isinstance(dtype, T.TimestampNTZType | T.DateType):
            wall = column.cast(T.TimestampNTZType())
            local = wall if days.zone == "UTC" else F.convert_timezone(F.lit("UTC"), zone, wall)
            day = local.cast(T.DateType())
        else:
            raise _wrong_type(node.field, dtype, "a TIMESTAMP, TIMESTAMP_NTZ or DATE column")
        # A local date before year 1 or after 9999 counts as 1 January or 31 December, as the
        # memory rule clamps it (`anniversary.local_month_day`).
        year = F.year(day)
        month_day = (
            F.when(year < 1, F.lit(101))
            .when(year > 9999, F.lit(1231))
            .otherwise(F.month(day) * 100 + F.dayofmonth(day))
        )
        tests = [month_day.between(low, high) for low, high in days.ranges]
        return _balanced(tests, operator.or_)

    def instant_column(self, field: str) -> tuple[Column, Callable[[datetime], Column]]:
        """The column as instants, and how to write an instant it compares with."""
        column = self.column(field)
        dtype = self.dtype(field)
        if isinstance(dtype, T.TimestampType):
            return column, _instant
        if isinstance(dtype, T.TimestampNTZType):
            return column, _wall_time
        if isinstance(dtype, T.DateType):
            return column.cast(T.TimestampNTZType()), _wall_time
        raise _wrong_type(field, dtype, "a TIMESTAMP, TIMESTAMP_NTZ or DATE column")


def _quoted(name: str) -> str:
    """A column name as one identifier for `F.col` (dots would otherwise read as struct fields)."""
    return "`" + name.replace("`", "``") + "`"


def _balanced(items: list[Column], combine: Callable[[Column, Column], Column]) -> Column:
    """`a & b & c & d` as `(a & b) & (c & d)`: a 200-branch OR stays shallow for the planner."""
    while len(items) > 1:
        pairs = [combine(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = pairs + items[len(items) - len(items) % 2 :]
    return items[0]


def _instant(value: datetime) -> Column:
    micros = (value - _EPOCH) // _ONE_MICROSECOND
    return F.timestamp_micros(F.lit(micros))


def _wall_time(value: datetime) -> Column:
    text = value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    return F.lit(text).cast(T.TimestampNTZType())


def _where_present(column: Column, answer: bool) -> Column:
    """`answer` where the value is present, NULL (UNKNOWN) where it is not."""
    return F.when(column.isNotNull(), F.lit(answer))


def _integer_comparison(column: Column, bounds: tuple[int, int], op: Op, value: Any) -> Column:
    low, high = bounds
    if op in (Op.IN, Op.NOT_IN):
        exact = [v for v in (as_integer(x) for x in value) if v is not None and low <= v <= high]
        found = column.isin(list(dict.fromkeys(exact))) if exact else _where_present(column, False)
        return found if op is Op.IN else ~found
    bound = integer_bound(op, value)
    if isinstance(bound, bool):
        return _where_present(column, bound)
    op, number = bound
    always = out_of_range(op, number, low, high)
    if always is not None:
        return _where_present(column, always)
    literal = F.lit(number) if -(2**63) <= number < 2**63 else F.lit(Decimal(number))
    result: Column = _COMPARE[op](column, literal)
    return result


def _double_comparison(column: Column, op: Op, value: Any) -> Column:
    if op in (Op.IN, Op.NOT_IN):
        exact = list(dict.fromkeys(float(v) for v in value if double_exact(v)))
        found = column.isin(exact) if exact else _where_present(column, False)
        found = _nan_is_false(column, found)
        return found if op is Op.IN else ~found
    if double_exact(value):
        result = _COMPARE[op](column, F.lit(float(value)))
    elif op is Op.EQUALS:
        result = _where_present(column, False)
    else:
        below, above = doubles_around(value)
        if op in (Op.GT, Op.GTE):  # x >= n <=> x > n: no double equals n
            result = column > F.lit(below)
        else:
            result = column < F.lit(above)
    return _nan_is_false(column, result)


_MIRRORED = {Op.EQUALS: Op.EQUALS, Op.GT: Op.LT, Op.GTE: Op.LTE, Op.LT: Op.GT, Op.LTE: Op.GTE}


def _numbers_compared(
    node: FieldComparison, left: Column, ltype: Any, right: Column, rtype: Any
) -> Column:
    """Integers with integers and doubles with doubles as they are; an integer with a double
    exactly: as doubles where those differ, else (the double is then integral) as decimals."""
    kinds = []
    for field, dtype in ((node.field, ltype), (node.other, rtype)):
        if type(dtype) in _INT_RANGES:
            kinds.append("int")
        elif isinstance(dtype, T.DoubleType | T.FloatType):
            kinds.append("double")
        else:
            raise _wrong_type(field, dtype, "an integer (TINYINT..BIGINT) or DOUBLE column")
    op = node.op
    if kinds == ["double", "int"]:
        left, right, op = right, left, _MIRRORED[op]
    if kinds[0] == kinds[1]:
        same: Column = _COMPARE[op](left, right)
        return _nan_is_false(left, _nan_is_false(right, same)) if "double" in kinds else same
    near = left.cast(T.DoubleType())
    decimal = T.DecimalType(38, 0)
    exact = _COMPARE[op](left.cast(decimal), right.cast(decimal))
    result = F.when(near != right, _COMPARE[op](near, right)).otherwise(exact)
    return _nan_is_false(right, result)


def _nan_is_false(column: Column, result: Column) -> Column:
    # Spark orders NaN above every number and equal to itself; Python compares it with nothing.
    return F.when(F.isnan(column), F.lit(False)).otherwise(result)


def _wrong_type(field: str, dtype: Any, expected: str) -> FrameError:
    shown = dtype.simpleString() if hasattr(dtype, "simpleString") else str(dtype)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return FrameError(
        f'field "{field}" needs {expected}; the DataFrame has {shown} '
        f"(cast the column, or map the field to another column with columns=)"
    )


def frame_for(session: SparkSession, records: list[Mapping[str, Any]], schema: Schema) -> DataFrame:
    """Records as a DataFrame with each field's canonical column type; a missing key is null.

    Date-time values may be `datetime`s or ISO 8601 strings, as for `Filter.matches`; `data`
    becomes JSON text. A number column holding a fractional value is DOUBLE. An `id` key, when
    records have one, becomes a STRING column too, to name the rows selected.
    """
    data, types = field_values(records, schema)
    for relation in schema.relations:  # an ARRAY of STRUCT, one struct per related row
        data[relation.name], types[relation.name] = related_values(list(records), relation)
    if "id" not in types and any("id" in record for record in records):
        data["id"], types["id"] = [record.get("id") for record in records], T.StringType()
    names = list(data)
    rows = [list(row) for row in zip(*(data[name] for name in names), strict=True)]
    struct = T.StructType([T.StructField(name, types[name], True) for name in names])
    return session.createDataFrame(rows, struct)
