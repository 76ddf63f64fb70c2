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
  (`dialects.spark.fold_refusal`, and docs/backends-spark.md).
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
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, cast

from ...errors import FrameError
from ...language.anniversary import MonthDays
from ...language.fields import ORDERING_OPS, FieldType, Op, Schema
from ...language.nodes import Comparison, IsNull, ListTest, Node, walk
from ...language.relations import Aggregate, Relation
from ..sql.dialects import DIALECTS
from ..sql.dialects.base import refused_comparison
from ..sql.dialects.spark import fold_refusal, order_refusal
from ..sql.text import SqlWriter
from .core import FrameCore, Integers, Rows, balanced, compare

try:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the Spark back-end needs pyspark: pip install pyspark, or from a clone of the "
        "repository pip install './audiencefilter[spark]' (and a Java 17+ runtime)"
    ) from exc

# After the check above, so a missing pyspark is the error that says how to install it.
from .spark_types import (  # noqa: E402
    _DECIMAL_RANGE,
    _INT_RANGES,
    CANONICAL,
    EXACT_SUM,
    field_values,
    related_values,
)

Dtypes = Mapping[str, Any]
"""Column name -> Spark data type, as `{f.name: f.dataType for f in df.schema}` gives it."""


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND = timedelta(microseconds=1)
_EPOCH_DAY = date(1970, 1, 1)
_DAY_MICROS = 86_400_000_000


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
            "first (SparkSession.builder...getOrCreate(), or af.spark_session())"
        )
    return _Columns(SPARK, schema, dtypes or {}, columns or {}).visit(root)


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
    builder: Any = SparkSession.builder.master(f"local[{cores}]").appName(app_name)
    pinned = {**_PINNED, "spark.sql.shuffle.partitions": str(max(2, cores)), **(config or {})}
    for key, value in pinned.items():
        builder = builder.config(key, value)
    session: SparkSession = builder.getOrCreate()
    return session


_PINNED = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.extraJavaOptions": "-Duser.language=en -Duser.country=US",
}
"""What `local_session` pins: local addresses only, no UI, UTC, the en-US JVM locale."""


class SparkAlgebra:
    """The column algebra in PySpark (`core.ColumnAlgebra`)."""

    def literal(self, value: Any) -> Column:
        if type(value) is int and not -(2**63) <= value < 2**63:
            return F.lit(Decimal(value))  # `lit` of a Python int takes a long at most
        return F.lit(value)

    def integer(self, value: int, dtype: Any) -> Column:
        return F.lit(value) if -(2**63) <= value < 2**63 else F.lit(Decimal(value))

    def double(self, value: float) -> Column:
        return F.lit(value)

    def unknown(self) -> Column:
        return F.lit(None).cast(T.BooleanType())

    def when(self, condition: Column, then: Column, otherwise: Column | None = None) -> Column:
        chosen = F.when(condition, then)
        return chosen if otherwise is None else chosen.otherwise(otherwise)

    def is_null(self, column: Column) -> Column:
        return column.isNull()

    def is_not_null(self, column: Column) -> Column:
        return column.isNotNull()

    def is_nan(self, column: Column) -> Column:
        return F.isnan(column)

    def coalesce(self, column: Column, value: Any) -> Column:
        return F.coalesce(column, F.lit(value))

    def is_in(self, column: Column, values: Sequence[Any], dtype: Any) -> Column:
        return column.isin([self.literal(v) for v in values])  # ints past 64 bits as decimals

    def to_double(self, column: Column) -> Column:
        return column.cast(T.DoubleType())

    def to_wide_integer(self, column: Column) -> Column:
        return column.cast(EXACT_SUM)


SPARK = SparkAlgebra()
_NUMBER_COLUMN = "an integer (TINYINT..BIGINT) or DOUBLE column"
_INSTANT_COLUMN = "a TIMESTAMP, TIMESTAMP_NTZ or DATE column"


class _Columns(FrameCore[Column]):
    """The PySpark adapter of the frame core: how Spark reads each type."""

    engine = "PySpark"
    canonical = CANONICAL
    rows_type = "an ARRAY of STRUCT"

    def over(
        self, schema: Schema, dtypes: Mapping[str, Any], column_of: Callable[[str], Column]
    ) -> _Columns:
        return _Columns(self.a, schema, dtypes, {}, column_of)

    def named_column(self, name: str) -> Column:
        return F.col(_quoted(name))

    def all_null(self, field: str) -> bool:
        return isinstance(self.dtype(field), T.NullType)

    def text_pair(self, field: str, other: str) -> tuple[Column, Column]:
        """Both compared by code points (`UTF8_BINARY`), whatever their collation."""
        for name in (field, other):
            if not isinstance(self.dtype(name), T.StringType):
                raise _wrong_type(name, self.dtype(name), "a STRING column")
        left, right = (F.collate(self.column(name), "UTF8_BINARY") for name in (field, other))
        return left, right

    def instant_pair(self, field: str, other: str) -> tuple[Column, Column]:
        """Two columns of one date-time type: a TIMESTAMP with a TIMESTAMP_NTZ is refused
        rather than guessed at."""
        left, _ = self.instant_column(field)
        right, _ = self.instant_column(other)
        ltype, rtype = self.dtype(field), self.dtype(other)
        if type(ltype) is not type(rtype):
            expected = f'a {ltype.simpleString()} column like "{field}" to compare with it'
            raise _wrong_type(other, rtype, expected)
        return left, right

    def number_kind(self, field: str) -> str:
        dtype = self.dtype(field)
        if type(dtype) in _INT_RANGES:
            return "int"
        if isinstance(dtype, T.DoubleType | T.FloatType):
            return "float"
        raise _wrong_type(field, dtype, _NUMBER_COLUMN)

    def visit_list_test(self, node: ListTest) -> Column:
        """A list field's test as the Spark SQL dialect writes it (`sql/dialects/spark.py`), so the
        rules of lists on Spark live in one place."""
        self.written_in_sql(node)
        return F.expr(SqlWriter(DIALECTS["spark"], self.schema, self.columns, None).visit(node))

    def written_in_sql(self, where: Node) -> None:
        """Refuse, before Spark's analyzer does at length, a column the Spark SQL of `where`
        cannot read: a list field's that is no ARRAY, a JSON field's (read at a path) that is
        no STRING of JSON text. The contact's columns, or a related row's struct fields."""
        for node in walk(where):
            if isinstance(node, ListTest | Comparison | IsNull) and node.path:
                self.json_text_column(node.field)
            elif isinstance(node, ListTest):
                dtype = self.dtypes.get(self.columns.get(node.field, node.field))
                if dtype is not None and not isinstance(dtype, T.ArrayType | T.NullType):
                    raise _wrong_type(node.field, dtype, "an ARRAY column")

    def json_condition(self, node: Comparison | IsNull) -> Column:
        """A condition inside a JSON text column, as the Spark SQL dialect writes it."""
        self.written_in_sql(node)
        return F.expr(SqlWriter(DIALECTS["spark"], self.schema, self.columns, None).visit(node))

    def json_text_column(self, field: str) -> None:
        """Refuse, before Spark's analyzer does at length, a JSON field whose column is no
        STRING of JSON text (a STRUCT, say, as `spark.read.json` makes of objects)."""
        dtype = self.dtypes.get(self.columns.get(field, field), T.StringType())
        if not isinstance(dtype, T.StringType):
            raise _wrong_type(
                field, dtype, "a STRING column of JSON text (e.g. F.to_json(the struct column))"
            )

    def boolean_column(self, field: str) -> Column:
        dtype = self.dtype(field)
        if not isinstance(dtype, T.BooleanType):
            raise _wrong_type(field, dtype, "a BOOLEAN column")
        return self.column(field)

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
            _refuse_unfoldable(node)
            column = F.lower(column)
        if op in ORDERING_OPS or op is Op.EQUALS:  # UTF8_BINARY: code-point order
            return compare(column, op, F.lit(value))
        if op in (Op.IN, Op.NOT_IN):
            found = column.isin(list(value))
            return found if op is Op.IN else ~found
        if op is Op.CONTAINS:
            return column.contains(F.lit(value))
        if op is Op.STARTS_WITH:
            return column.startswith(F.lit(value))
        return column.endswith(F.lit(value))

    def number_column(self, field: str, value: Any) -> tuple[Column, Integers | None, Any]:
        """A FLOAT column is widened to DOUBLE (exactly); a DECIMAL(38, 0) is an exact sum."""
        column = self.column(field)
        dtype = self.dtype(field)
        if type(dtype) in _INT_RANGES:
            return column, Integers(dtype, *_INT_RANGES[type(dtype)]), value
        if isinstance(dtype, T.DecimalType) and dtype.scale == 0:  # an exact sum (relations)
            return column, Integers(dtype, *_DECIMAL_RANGE), value
        if isinstance(dtype, T.FloatType):
            return column.cast(T.DoubleType()), None, value  # exact: every float is a double
        if isinstance(dtype, T.DoubleType):
            return column, None, value
        raise _wrong_type(field, dtype, _NUMBER_COLUMN)

    def day(self, node: Comparison) -> Column:
        """A DATE column against date literals: days, no time, no zone. Each literal is its
        days since 1970 (`_day`), never a Python `date`, which PySpark hands to the JVM as a
        `java.sql.Date` in the Julian calendar before 1582-10-15 (10 days off, and year 1 not
        at all) while Spark's dates are proleptic Gregorian, as Python's are."""
        column = self.date_column(node.field)
        if node.op in (Op.IN, Op.NOT_IN):
            found = column.isin([_day(v) for v in cast(tuple[date, ...], node.value)])
            return found if node.op is Op.IN else ~found
        assert isinstance(node.value, date)
        return compare(column, node.op, _day(node.value))

    def date_column(self, field: str) -> Column:
        dtype = self.dtype(field)
        if not isinstance(dtype, T.DateType):
            raise _wrong_type(field, dtype, "a DATE column (a date field holds days)")
        return self.column(field)

    def instant(self, node: Comparison) -> Column:
        column, literal = self.instant_column(node.field)
        if node.op in (Op.IN, Op.NOT_IN):
            instants = cast(tuple[datetime, ...], node.value)
            found = column.isin([literal(v) for v in instants])
            return found if node.op is Op.IN else ~found
        assert isinstance(node.value, datetime)
        return compare(column, node.op, literal(node.value))

    def anniversary(self, node: Comparison) -> Column:
        """The local month-day in the period's zone (Java's zone database) in the lowered
        ranges, whatever the session time zone."""
        days = node.value
        assert isinstance(days, MonthDays), "anniversaries are lowered at a now"
        day = self.local_day(node.field, days.zone)
        month_day = F.month(day) * 100 + F.dayofmonth(day)
        tests = [month_day.between(low, high) for low, high in days.ranges]
        return balanced(tests, operator.or_)

    def local_day(self, field: str, zone: str) -> Column:
        """The field's local date in `zone`: a TIMESTAMP is shifted by the zone's offset
        (`from_utc_timestamp`) and its microseconds counted as whole days; a TIMESTAMP_NTZ
        (UTC wall time) or DATE (midnight UTC) is converted wall time to wall time."""
        if self.schema[field].type is FieldType.DATE:
            return self.date_column(field)  # a date is its own day, in no zone
        column = self.column(field)
        dtype = self.dtype(field)
        if isinstance(dtype, T.TimestampType):
            shifted = column if zone == "UTC" else F.from_utc_timestamp(column, F.lit(zone))
            # Whole days by an exact decimal division, as the Spark SQL dialect counts them
            # (`WHOLE_DAYS`): a division in doubles rounds the last microsecond of a day up.
            days = F.floor(F.unix_micros(shifted) / F.lit(Decimal(_DAY_MICROS)))
            return F.date_from_unix_date(days.cast("int"))
        if isinstance(dtype, T.TimestampNTZType | T.DateType):
            wall = column.cast(T.TimestampNTZType())
            local = wall if zone == "UTC" else F.convert_timezone(F.lit("UTC"), F.lit(zone), wall)
            return local.cast(T.DateType())
        raise _wrong_type(field, dtype, _INSTANT_COLUMN)

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
        raise _wrong_type(field, dtype, _INSTANT_COLUMN)

    # ---- relations: an ARRAY of STRUCT, one struct per related row --------------------------

    def struct_fields(self, dtype: Any) -> Mapping[str, Any] | None:
        element = getattr(dtype, "elementType", None)
        if not isinstance(dtype, T.ArrayType) or not isinstance(element, T.StructType):
            return None
        return {f.name: f.dataType for f in element.fields}

    def tested(self, rows: Rows[Column], where: Node, function: str) -> Column:
        """`exists`, `forall` or `filter` of the related rows by W: a PySpark lambda, or a
        Spark SQL one when W reads a list field or a JSON path (`_written_in_sql`)."""
        lambda_sql = _written_in_sql(rows.relation, where)
        if lambda_sql is not None:
            name = rows.relation.name
            try:
                self.over(rows.relation.schema, rows.dtypes, rows.column.getField).written_in_sql(
                    where
                )
            except FrameError as exc:  # a related row's field: say which relation holds it
                raise FrameError(f'relation "{name}": {exc}') from None
            array = DIALECTS["spark"].quote(self.columns.get(name, name))
            return F.expr(f"{function}({array}, {lambda_sql})")
        higher = {"exists": F.exists, "forall": F.forall, "filter": F.filter}[function]
        return higher(rows.column, lambda element: self.row_test(rows, where, element.getField))

    def rows_any(self, rows: Rows[Column], where: Node) -> Column:
        return self.tested(rows, where, "exists")

    def rows_all(self, rows: Rows[Column], where: Node) -> Column:
        return self.tested(rows, where, "forall")

    def rows_count(self, rows: Rows[Column], where: Node) -> tuple[Column, Any]:
        kept = self.tested(rows, where, "filter")
        value = F.when(rows.column.isNull(), F.lit(0)).otherwise(F.size(kept)).cast("bigint")
        return value, T.LongType()

    def rows_aggregate(
        self, rows: Rows[Column], where: Node, function: Aggregate, field: str | None
    ) -> tuple[Column, Any]:
        assert field is not None, "sum, min and max read a field"
        dtype = rows.dtypes[field]
        values = F.transform(self.tested(rows, where, "filter"), lambda row: row.getField(field))
        if function is Aggregate.MIN:
            return F.array_min(values), dtype
        if function is Aggregate.MAX:
            return F.array_max(values), dtype
        if type(dtype) in _INT_RANGES:  # exact past 64 bits, as every engine's sum is
            dtype = EXACT_SUM
            values = F.transform(values, lambda v: v.cast(EXACT_SUM))
        zero = F.lit(0).cast(dtype)
        total = F.aggregate(values, zero, lambda acc, v: acc + F.coalesce(v, zero))
        return F.coalesce(total, zero), dtype


_ROW = "__row"


def _written_in_sql(relation: Relation, where: Node) -> str | None:
    """W as a Spark SQL lambda over the related row, when W reads a list field or a JSON path.

    Those tests are the Spark SQL dialect's own (one place for their rules), written as SQL
    text naming their column. Inside a PySpark lambda such text would name the CONTACT's
    column; inside a SQL lambda it names the row's (`__row`.`tags`).
    """
    if not any(isinstance(n, ListTest) or getattr(n, "path", ()) for n in walk(where)):
        return None
    writer = SqlWriter(DIALECTS["spark"], relation.schema, {}, None)
    writer.table, writer.qualify = _ROW, True
    return f"{_ROW} -> coalesce({writer.visit(where)}, false)"


def _refuse_unfoldable(node: Comparison) -> None:
    """A case-insensitive literal Spark's `lower` cannot fold (or order) as Python does."""
    value: Any = node.value
    for literal in value if isinstance(value, tuple) else (value,):
        reason = fold_refusal(literal)
        if reason is None and node.op in ORDERING_OPS:
            reason = order_refusal(literal)
        if reason is not None:
            raise refused_comparison(node.field, node.op, "PySpark", reason)


def _quoted(name: str) -> str:
    """A column name as one identifier for `F.col` (dots would otherwise read as struct fields)."""
    return "`" + name.replace("`", "``") + "`"


def _instant(value: datetime) -> Column:
    micros = (value - _EPOCH) // _ONE_MICROSECOND
    return F.timestamp_micros(F.lit(micros))


def _day(value: date) -> Column:
    """A date literal as its days since 1970-01-01: the proleptic Gregorian day, in every year."""
    return F.date_from_unix_date(F.lit((value - _EPOCH_DAY).days))


def _wall_time(value: datetime) -> Column:
    text = value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    return F.lit(text).cast(T.TimestampNTZType())


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
