"""Spark SQL (also what Databricks SQL runs): the dialect behind `to_sql("spark")`.

The PySpark back-end (`backends/frames/spark.py`) reads this module too: it writes conditions
inside a JSON column as this SQL, so the rules for custom data on Spark live here only.

Design choices, each forced by a semantic rule of the filters:
- Text literals: Spark reads backslashes as escapes (unless `escapedStringLiterals`) and
  substitutes `${name}` before it parses anything (`spark.sql.variable.substitute`), so text
  holding a backslash, `${`, or a control character is written as UTF-8 hex,
  `CAST(X'..' AS STRING)`, which reads the same under every setting. Quotes are doubled.
- Matching is literal: `contains`, `startswith` and `endswith` take the text itself, so `%`,
  `_` and `\\` need no escaping and no pattern is ever built.
- Case folding is Spark's `lower`, which folds with ICU (`spark.sql.icu.caseMappings.enabled`,
  on by default) in a newer Unicode than Python 3.11's. 55 code points fold differently, all
  new since Unicode 14 (`icu_lower.LOWER_DIFFERS`); Python leaves each as it is. Spark's
  `lower` can only give a different answer when a literal holds one of them or what Spark
  folds them to (`fold_refusal`), and such a literal is refused rather than answered
  differently. Both agree
  on U+0130 (`i` and a combining dot) and on final sigma, except when a capital sigma stands
  next to a character new since Unicode 14 (docs/backends-spark.md).
- Numbers: integers within 64 bits as they are, wider ones up to 38 digits as exact decimals
  (`CAST('9223372036854775808' AS DECIMAL(38, 0))`, not a `BD` literal: Spark 4.x rewrites
  `bigint < 9223372036854775808BD` to TRUE, NULL rows included), wider still as a double
  (far beyond every bigint, so it orders the same); other floats as double literals (`2.5D`),
  which compare with a bigint exactly enough: no integer lies between a non-integral float and
  its neighbours where doubles are that dense.
- Date-times: `TIMESTAMP '... +00:00'`, an instant whatever the session time zone.
- JSON (`data` as JSON text): `parse_json` into a VARIANT, `variant_get(..., path, 'variant')`
  for the value at a path (NULL when a key is missing or a step is no object), and
  `schema_of_variant` for its JSON type (`VOID` is JSON null). JSON numbers are compared as
  DOUBLE, exact to 2^53, as on MySQL and DuckDB.
- Lists (also PySpark's, written through `F.expr`) are `array` columns, tested with `exists`
  over a lambda whose NULL is FALSE (Spark's `exists` is three-valued on null items); numbers
  compare as doubles, as on DuckDB. A JSON array at a data path is read as `array<variant>`.
- Relation conditions are refused: Spark SQL is written for one row source (`relations`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar

from ....language.fields import FieldType, ListOp, Op
from ....language.nodes import ListTest
from . import icu_lower
from .base import INT64_MAX, INT64_MIN, Number, Shape, integral, refused_literal, utc_text
from .icu_lower import LOWER_DIFFERS as LOWER_DIFFERS
from .list_sql import (
    ListWriter,
    all_of,
    double_items,
    literal_of,
)
from .numbers import NumberWriter, double_test
from .typed_arrays import TypedItemArrays

WHOLE_DAYS = "floor(unix_micros({}) / 86400000000BD)"
"""The whole days since 1970 of a TIMESTAMP, exactly: a BIGINT over a DECIMAL(11, 0) is a
decimal of 12 fractional digits, and no microsecond of a day lies within 10^-12 days of its
end (one is 1.16 * 10^-11 days), so rounding to them never reaches the next day. In doubles,
the last microsecond of a day rounds into the next one from about 2^53 microseconds on (the
years before 1685 and after 2255)."""

_DECIMAL_DIGITS = 38


def fold_refusal(literal: str) -> str | None:
    """Why a case-insensitive comparison with this (folded) literal cannot run on Spark, or None
    (`icu_lower.fold_refusal`)."""
    return icu_lower.fold_refusal(literal, "Spark")


def order_refusal(literal: str) -> str | None:
    """Why a case-insensitive ordering with this folded literal cannot run on Spark, or None
    (`icu_lower.order_refusal`)."""
    return icu_lower.order_refusal(literal, "Spark")


class SparkSQL(TypedItemArrays):
    """Spark SQL 3.5+ (VARIANT functions need Spark 4.0)."""

    name = "spark"
    aliases = ()
    title = "Spark SQL"
    json_exact_integers = 2**53
    relations = False
    placeholder = "?"
    """`spark.sql(text, args=[...])` binds positional `?` markers."""
    identifier_quote = "`"
    text_holds_nul = True
    instant_type = "TIMESTAMP "
    unifies_lists = True
    """Spark widens an `IN` list of integers and doubles to doubles (2^53 + 1 would equal
    2^53): integers and other numbers are written as two lists."""

    def text(self, value: str) -> str:
        reason = fold_refusal(value)
        if reason is not None:
            # The SQL writer folds literals before writing them; which ones were folded is not
            # known here, so the refusal covers every literal holding such a code point.
            raise refused_literal(self.title, reason)
        if "\\" in value or "${" in value or any(ch < " " or ch == "\x7f" for ch in value):
            return f"CAST(X'{value.encode('utf-8').hex().upper()}' AS STRING)"
        return "'" + value.replace("'", "''") + "'"

    def number(self, value: Number) -> str:
        value = integral(value)
        if isinstance(value, float):
            return repr(value) + "D"
        if INT64_MIN <= value <= INT64_MAX:
            return str(value)
        if len(str(abs(value))) <= _DECIMAL_DIGITS:
            # Not `...BD`: Spark's optimizer turns `bigint_col < 9223372036854775808BD` into
            # TRUE, even for NULL; a decimal cast from text keeps NULL UNKNOWN.
            return f"CAST('{value}' AS DECIMAL(38, 0))"
        return f"{float(value)!r}D"

    def bind_number(self, value: Number) -> object:
        value = integral(value)
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            return Decimal(value) if len(str(abs(value))) <= _DECIMAL_DIGITS else float(value)
        return value

    def date_month_day(self, sql: Callable[[], str]) -> str:
        return f"(month({sql()}) * 100 + dayofmonth({sql()}))"

    def month_day(self, sql: Callable[[], str], zone: str) -> str:
        """Whatever the session time zone: `from_utc_timestamp` shifts the instant by the
        zone's offset then, and the shifted microseconds count whole days as a date, whose
        month and day no session setting changes. The days are counted exactly
        (`WHOLE_DAYS`): a division in doubles rounds the last microsecond of a day into the
        next one, far from 1970."""

        def day() -> str:
            shifted = sql() if zone == "UTC" else f"from_utc_timestamp({sql()}, {self.text(zone)})"
            return f"date_from_unix_date(CAST({WHOLE_DAYS.format(shifted)} AS INT))"

        return f"(month({day()}) * 100 + dayofmonth({day()}))"

    def instant(self, value: datetime) -> str:
        return f"{self.instant_type}'{utc_text(value)}+00:00'"

    def operand(self, op: Op, value: str) -> str:
        return value

    def match(self, op: Op, sql: str, operand: str, shape: Shape) -> str:
        return f"{_MATCH[op]}({sql}, {operand})"

    def ordered(self, sql: str) -> str:
        # Spark's default string comparison (UTF8_BINARY) compares UTF-8 bytes.
        return sql

    def order_refusal(self, literal: str) -> str | None:
        return order_refusal(literal)

    # JSON text through VARIANT

    json_null = "VOID"
    json_types = {
        FieldType.STRING: ("STRING",),
        FieldType.NUMBER: ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"),
        FieldType.BOOLEAN: ("BOOLEAN",),
    }
    _CAST: ClassVar[dict[FieldType, str]] = {
        FieldType.STRING: "string",
        FieldType.NUMBER: "double",
        FieldType.BOOLEAN: "boolean",
    }

    def json_path(self, keys: tuple[str, ...]) -> str | None:
        """`$['key']` steps: only object keys, never array indexes. The path language has no
        escapes (a backslash is itself): a key holding `'` goes in double quotes, and a key
        holding both quote characters cannot be named."""
        steps = []
        for key in keys:
            if "'" in key and '"' in key:
                raise ValueError(
                    f"the JSON key {key!r} cannot be written in a Spark variant path "
                    "(it holds both quote characters)"
                )
            steps.append(f'["{key}"]' if "'" in key else f"['{key}']")
        return "$" + "".join(steps)

    def json_document(self, sql: str, keys: list[str]) -> str:
        raise NotImplementedError("Spark reads JSON through a path (json_path)")

    def json_type(self, sql: str, keys: list[str], path: str | None) -> str:
        value = f"variant_get(parse_json({sql}), {path}, 'variant')"
        return f"regexp_extract(schema_of_variant({value}), '^[A-Z]+', 0)"

    def double(self, value: float) -> str:
        return repr(value) + "D"

    def json_number(self, out: NumberWriter, op: Op, value: Callable[[], str], literal: Any) -> str:
        """Every JSON number is read as a double (`json_value`), compared exactly."""
        return double_test(out, op, value, literal, (self.false, self.true))

    def json_value(self, sql: str, keys: list[str], path: str | None, kind: FieldType) -> str:
        return f"variant_get(parse_json({sql}), {path}, '{self._CAST[kind]}')"

    # Lists (array columns) and JSON arrays at a data path (array<variant>)

    def list_test(self, out: ListWriter, node: ListTest, column: str, element: FieldType) -> str:
        if node.op is ListOp.IS_EMPTY:
            return f"size({column}) = 0"
        values = double_items(node, element)
        if values is None:
            return self.false
        render = literal_of(out, element)
        if element is FieldType.NUMBER:  # a number list is doubles: so is each literal in it
            render = lambda v: out.double(float(v))  # noqa: E731
        subject = column
        if node.insensitive:
            subject = f"transform({column}, af_x -> {self.fold('af_x')})"
        if node.op is ListOp.EQUALS:
            items = ", ".join(render(v) for v in values)
            return f"COALESCE({subject} = array({items}), FALSE)"
        if node.op is ListOp.HAS_EVERY:
            return all_of(
                [f"exists({subject}, af_x -> COALESCE(af_x = {render(v)}, FALSE))" for v in values]
            )
        items = ", ".join(render(v) for v in values)
        return f"exists({subject}, af_x -> COALESCE(af_x IN ({items}), FALSE))"

    def array_items(self, column: str, path: str) -> str:
        return f"variant_get(parse_json({column}), {path}, 'array<variant>')"

    def some_item(self, items: str, test: str) -> str:
        return f"exists({items}, af_x -> {test})"

    def item_count(self, items: str) -> str:
        return f"size({items})"

    def item_at(self, items: str, index: str) -> str:
        return f"try_element_at({items}, {index})"

    def item_kind(self, item: str) -> str:
        return f"regexp_extract(schema_of_variant({item}), '^[A-Z]+', 0)"

    def item_value(self, item: str, kind: FieldType) -> str:
        return f"variant_get({item}, '$', '{self._CAST[kind]}')"


_MATCH = {Op.CONTAINS: "contains", Op.STARTS_WITH: "startswith", Op.ENDS_WITH: "endswith"}
