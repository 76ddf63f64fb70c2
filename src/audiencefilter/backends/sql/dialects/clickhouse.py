"""ClickHouse (also chDB, ClickHouse in process): the dialect behind `to_sql("clickhouse")`.

The columns it expects are the nullable ones (`Nullable(String)`, `Nullable(Int64)`,
`Nullable(Bool)`, `Nullable(DateTime64(6, 'UTC'))`, `Nullable(Date32)`); list fields and JSON
fields are JSON text in a `Nullable(String)` (ClickHouse has no nullable arrays, and a null
list is UNKNOWN, unlike an empty one). docs/backends-sql-rules.md, "Lists", shows the table.

Design choices, each forced by a semantic rule of the filters:
- Logic: ClickHouse's AND, OR and NOT on `Nullable` values are Kleene's, and a comparison with
  NULL is NULL, so the writer's three-valued SQL holds as written. An `IN` list never holds
  NULL here (lowering keeps none), so `transform_null_in` does not matter.
- Text literals: ClickHouse reads backslash escapes in every string literal, whatever the
  settings: a backslash is escaped with a backslash, a quote doubled, and NUL is `\\0` (a `String`
  holds any bytes, NUL included). Identifiers are double-quoted, the quote doubled and a
  backslash escaped.
- Strings are bytes: `=` and orderings compare UTF-8 bytes, which order as code points, with
  trailing spaces significant; patterns are `position`, `startsWith` and `endsWith`, which
  take the text literally (no pattern is built).
- Case folding is `lowerUTF8`, ICU's lowercase in a newer Unicode than Python 3.11's: it
  differs from `str.lower()` on the code points of `icu_lower.LOWER_DIFFERS` (measured over
  every code point by `tests/test_clickhouse.py`), and literals that could meet them are
  refused, as on Spark.
- Numbers: a literal integer beyond `UInt64` is read by ClickHouse as a Float64, rounded, so
  integers beyond 64 bits are written as `toInt256('...')` (which compares exactly with an
  Int64 column), and beyond Int256 as a double far from every Int64. Comparisons of an Int64
  with a Float64 are exact in ClickHouse (no rounding of the integer), so a float literal is
  its shortest decimal. An `IN` list mixing integers and floats is written as two lists, and
  its zero tested with `=` (`IN` finds a Float64 by its bits, where -0 is not 0). A
  `sum` is taken in Int128 (`sum_sql`): ClickHouse's sum of an Int64 wraps around past 2^63.
- Date-times: `toDateTime64('...', 6, 'UTC')`, an instant whatever the session time zone;
  local month-days (anniversaries) by `toMonth(x, zone)` and `toDayOfMonth(x, zone)`, from
  ClickHouse's own zone database.
- JSON (text): `JSONType` with the keys one by one (a key is never an array index), `'Null'`
  for a missing key and JSON null alike; strings by `JSONExtractString`, booleans by
  `JSONExtractBool`, numbers as Float64 (exact to 2^53, as on DuckDB and Spark).
- Lists: `JSONExtract(col, 'Array(Nullable(T))')`, tested with `arrayExists`; numbers as
  Float64 (as on DuckDB); date-times and dates parsed from their ISO 8601 text.
- Relations: correlated `EXISTS` subqueries, which ClickHouse's analyzer runs; `count` and
  `sum` are grouped (`grouped_aggregates`), one hash join instead of a subquery per contact;
  `in` on a `min` or `max` is written as equalities (`subquery_in`): ClickHouse takes no
  correlated subquery as IN's operand.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any, ClassVar

from ....language.fields import FieldType, ListOp, Op
from ....language.nodes import ListTest
from . import icu_lower
from .base import (
    INT64_MAX,
    INT64_MIN,
    Dialect,
    Marked,
    Number,
    Shape,
    as_double,
    integral,
    refused_literal,
    utc_text,
)
from .list_sql import ListWriter, all_of, double_items, double_literals, edge_index, json_kind
from .numbers import NumberWriter, double_test

_INT256 = 2**255
_TITLE = "ClickHouse"


class ClickHouse(Dialect):
    """ClickHouse 24+ (chDB in process), over nullable columns."""

    name = "clickhouse"
    aliases = ()
    title = _TITLE
    json_exact_integers = 2**53
    placeholder = "{p0:String}"
    """Parameters are named and typed in the text (`marker`): `{p0:String}`, `{p1:Int64}`...,
    bound by name (`query(sql, params={"p0": ...})`); the values are in order in the list
    `to_sql_params` returns, the `i`-th named `p<i>`."""
    text_holds_nul = True
    unifies_lists = True
    grouped_aggregates = True
    subquery_in = False
    finds_members_by_bits = True
    rounds_integers_for_doubles = False  # an Int64 meets a Float64 exactly
    """"Correlated subqueries are not supported as IN function arguments" (ClickHouse 26)."""

    # Identifiers and literals

    def quote(self, name: str) -> str:
        if not name or "\x00" in name:
            raise ValueError(f"invalid column name {name!r}: empty or contains NUL")
        return '"' + name.replace("\\", "\\\\").replace('"', '""') + '"'

    def text(self, value: str) -> str:
        reason = icu_lower.fold_refusal(value, _TITLE)
        if reason is not None:
            # Literals are folded before they are written; which ones were folded is not known
            # here, so the refusal covers every literal holding such a code point (as Spark).
            raise refused_literal(self.title, reason)
        escaped = value.replace("\\", "\\\\").replace("'", "''").replace("\x00", "\\0")
        return "'" + escaped + "'"

    def number(self, value: Number) -> str:
        value = integral(value)
        if isinstance(value, float):
            return repr(value)
        if INT64_MIN <= value <= INT64_MAX:
            return str(value)
        if -_INT256 <= value < _INT256:
            # A bare literal beyond UInt64 is a Float64, rounded to a neighbour of the value.
            return f"toInt256('{value}')"
        return self.double(as_double(value))

    def marker(self, index: int, kind: Marked, value: object) -> str:
        """`{p<index>:<type>}`, the type of the literal `kind` stands for; a number's type
        by its value (`bind_number`). Text is held to the folding refusal of `text`."""
        if kind == "members":  # never bound: `member_test` keeps a parameter per value
            return self.placeholder
        if kind == "text":
            reason = icu_lower.fold_refusal(str(value), _TITLE)
            if reason is not None:
                raise refused_literal(self.title, reason)
        if kind == "number":
            if isinstance(value, float):
                kind = "double"
            elif isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
                return f"{{p{index}:Int256}}"
        return f"{{p{index}:{_PARAMETER_TYPES[kind]}}}"

    def bind_text(self, value: str) -> object:
        """ClickHouse reads a parameter's value in its escaped text form (`TSV`'s): a newline or
        a tab would end it, and a backslash starts an escape."""
        return "".join(_PARAMETER_ESCAPES.get(char, char) for char in value)

    def bind_number(self, value: Number) -> object:
        """An integer as it is (Int64 or Int256, `marker`), beyond Int256 the double nearest
        it (far from every Int64); a float as it is."""
        value = integral(value)
        if isinstance(value, int) and not -_INT256 <= value < _INT256:
            return as_double(value)
        return value

    def bind_instant(self, value: datetime) -> object:
        return utc_text(value)

    def double(self, value: float) -> str:
        """Read from text: a literal `inf` or a subnormal is read as the double it names."""
        return f"toFloat64('{value!r}')"

    def instant(self, value: datetime) -> str:
        return f"toDateTime64('{utc_text(value)}', 6, 'UTC')"

    def day(self, value: date) -> str:
        return f"toDate32('{value.isoformat()}')"

    def boolean(self, value: bool) -> str:
        return "true" if value else "false"

    def date_month_day(self, sql: Callable[[], str]) -> str:
        return f"(toMonth({sql()}) * 100 + toDayOfMonth({sql()}))"

    def month_day(self, sql: Callable[[], str], zone: str) -> str:
        zone_sql = self.text(zone)
        return f"(toMonth({sql()}, {zone_sql}) * 100 + toDayOfMonth({sql()}, {zone_sql}))"

    def sum_sql(self, sql: str) -> str:
        """In Int128: ClickHouse's `sum` of an Int64 is an Int64, wrapping around past 2^63;
        an Int128 holds the sum of any 2^64 values of 64 bits exactly."""
        return f"COALESCE(sum(toInt128({sql})), 0)"

    # Strings

    def fold(self, sql: str) -> str:
        return f"lowerUTF8({sql})"

    def ordered(self, sql: str) -> str:
        return sql  # String compares bytes: the code points' order

    def order_refusal(self, literal: str) -> str | None:
        return icu_lower.order_refusal(literal, _TITLE)

    def operand(self, op: Op, value: str) -> str:
        return value

    def match(self, op: Op, sql: str, operand: str, shape: Shape) -> str:
        if op is Op.CONTAINS:
            return f"position({sql}, {operand}) > 0"
        return f"{_MATCH[op]}({sql}, {operand})"

    # JSON text

    json_null = "Null"
    json_types: ClassVar[dict[FieldType, tuple[str, ...]]] = {
        FieldType.STRING: ("String",),
        FieldType.NUMBER: ("Int64", "UInt64", "Double"),
        FieldType.BOOLEAN: ("Bool",),
    }

    def json_type(self, sql: str, keys: list[str], path: str | None) -> str:
        return f"toString(JSONType({_args(sql, keys)}))"

    def json_number(self, out: NumberWriter, op: Op, value: Callable[[], str], literal: Any) -> str:
        """Every JSON number is read as a Float64 (`json_value`), compared exactly. `IN` looks
        a Float64 up by its bits, where -0 is not 0: the value is made +0 first (`_zeroed`)."""
        if op in (Op.IN, Op.NOT_IN):
            listed = [_plus_zero(v) for v in literal]
            return double_test(out, op, lambda: _zeroed(value()), listed, (self.false, self.true))
        return double_test(out, op, value, literal, (self.false, self.true))

    def json_value(self, sql: str, keys: list[str], path: str | None, kind: FieldType) -> str:
        return f"{_EXTRACT[kind]}({_args(sql, keys)})"

    # List fields (JSON text) and JSON arrays at a data path

    def list_test(self, out: ListWriter, node: ListTest, column: str, element: FieldType) -> str:
        # No nullable arrays: the writer has tested the column for NULL already.
        items = f"JSONExtract(ifNull({column}, ''), '{_ITEMS[element]}')"
        if element is FieldType.DATETIME:
            items = f"arrayMap(af_x -> parseDateTime64BestEffortOrNull(af_x, 6, 'UTC'), {items})"
        elif element is FieldType.DATE:
            items = f"arrayMap(af_x -> toDate32OrNull(af_x), {items})"
        if node.op is ListOp.IS_EMPTY:
            return f"empty({items})"
        values = double_items(node, element)
        if values is None:
            return self.false
        render = _literal_of(out, element)
        if node.insensitive:
            items = f"arrayMap(af_x -> {self.fold('af_x')}, {items})"
        if node.op is ListOp.EQUALS:
            tests = [f"length({items}) = {len(values)}"]
            for index, value in enumerate(values, start=1):
                tests.append(f"ifNull({items}[{index}] = {render(value)}, false)")
            return all_of(tests)
        if node.op is ListOp.HAS_EVERY:
            return all_of(
                [f"arrayExists(af_x -> ifNull(af_x = {render(v)}, false), {items})" for v in values]
            )
        number = element is FieldType.NUMBER
        choices = ", ".join(render(_plus_zero(v) if number else v) for v in values)
        item = _zeroed("af_x") if number else "af_x"
        return f"arrayExists(af_x -> ifNull({item} IN ({choices}), false), {items})"

    def array_test(self, out: ListWriter, node: ListTest) -> str:
        """The array's type first (UNKNOWN for anything but an array), then its raw items, each
        item's JSON type tested before its value is read (`lists.array_truth`)."""
        column = out.column(node.field)

        def keys() -> str:
            return ", ".join([column, *(out.text(key) for key in node.path)])

        head = f"CASE WHEN toString(JSONType({keys()})) = 'Array' THEN "
        if node.op is ListOp.IS_EMPTY:
            return head + f"JSONLength({keys()}) = 0 END"
        values = double_literals(node)
        if values is None:
            return head + "false END"

        def items() -> str:  # no nullable arrays: a null column is no array, tested first
            path = ", ".join(out.text(key) for key in node.path)
            return f"JSONExtractArrayRaw(ifNull({column}, ''), {path})"

        if node.op is ListOp.ARRAY_CONTAINS:
            tests = [
                f"arrayExists(af_x -> {self._item(out, node, lambda: 'af_x', value)}, {items()})"
                for value in values
            ]
            test = all_of(tests) if tests else self.true
        else:
            index = edge_index(node, "1", "-1")
            test = self._item(out, node, lambda: f"arrayElement({items()}, {index})", values[0])
        return head + test + " END"

    def _item(self, out: ListWriter, node: ListTest, item: Callable[[], str], value: Any) -> str:
        """The raw JSON item `item()` equals `value`, as a value of the literal's JSON type (an
        index past the end reads '', whose type is 'Null': FALSE). Each piece is written in
        the order of the text, `item()` anew at each use."""
        found = json_kind(value)
        names = ", ".join(f"'{name}'" for name in self.json_types[found])
        of_type = f"toString(JSONType({item()})) IN ({names})"
        read = f"{_EXTRACT[found]}({item()})"
        if found is FieldType.STRING and node.insensitive:
            read = self.fold(read)
        literal = (
            self.boolean(value)
            if found is FieldType.BOOLEAN
            else (out.text(value) if found is FieldType.STRING else out.double(float(value)))
        )
        return f"CASE WHEN {of_type} THEN {read} = {literal} ELSE false END"


def _args(sql: str, keys: list[str]) -> str:
    return ", ".join([sql, *keys])


def _literal_of(out: ListWriter, element: FieldType) -> Callable[[Any], str]:
    """An item literal: numbers as doubles, the items' type (`double_items` kept only those)."""
    if element is FieldType.STRING:
        return out.text
    if element is FieldType.NUMBER:
        return lambda value: out.double(float(value))
    return out.scalar


_PARAMETER_ESCAPES = {
    "\\": "\\\\",
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\x00": "\\0",
    "\b": "\\b",
    "\f": "\\f",
}
"""The escapes of ClickHouse's escaped text form, where a parameter's value is read."""

_PARAMETER_TYPES: dict[str, str] = {
    "text": "String",
    "number": "Int64",
    "double": "Float64",
    "instant": "DateTime64(6, 'UTC')",
    "day": "Date32",
    "boolean": "Bool",
}
"""The parameter type of each kind of literal (`marker`); long lists keep a parameter per
value (`member_test` is the base's None)."""

_MATCH = {Op.STARTS_WITH: "startsWith", Op.ENDS_WITH: "endsWith"}
_EXTRACT = {
    FieldType.STRING: "JSONExtractString",
    FieldType.NUMBER: "JSONExtractFloat",
    FieldType.BOOLEAN: "JSONExtractBool",
}
_ITEMS = {
    FieldType.STRING: "Array(Nullable(String))",
    FieldType.NUMBER: "Array(Nullable(Float64))",
    FieldType.BOOLEAN: "Array(Nullable(Bool))",
    FieldType.DATETIME: "Array(Nullable(String))",
    FieldType.DATE: "Array(Nullable(String))",
}
"""How each list's JSON text is read: date-times and dates as text, parsed item by item."""


def _zeroed(number: str) -> str:
    """`number` with -0 made +0 (equal to 0 as every comparison says): ClickHouse's `IN` finds a
    Float64 by its bits, so -0 would be in no list holding 0 (JSON numbers are Float64 here)."""
    return f"({number} + 0.)"  # -0 + 0 is +0; written once, so parameters stay in step


def _plus_zero(value: Any) -> Any:
    """A literal of an `IN` list with -0.0 written as 0 (see `_zeroed`)."""
    return 0 if isinstance(value, float) and value == 0 else value
