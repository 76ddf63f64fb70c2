"""SQLite: integers and text as stored, booleans as 1 and 0, date-times as UTC text.

Design choices:
- Its LIKE ignores ASCII case, so patterns use `GLOB` (case-sensitive, can use an index) for
  prefixes, `instr` for substrings and a byte comparison for suffixes.
- LIKE and GLOB refuse a pattern over `LIKE_PATTERN_LIMIT` bytes ("LIKE or GLOB pattern too
  complex"): an operand whose pattern could be longer is tested without them, by `instr` and
  the byte comparison, which have no limit and answer the same (`_pattern_fits`).
- SQL text is a C string for SQLite: a literal holding NUL is written as a hex blob cast to
  TEXT.
- Integers beyond 64 bits become the double that orders like them against every int64
  (SQLite compares integers and reals exactly).
- JSON paths quote each key as `$."key"`; a key holding `"` or `\\` (which the quoted label
  cannot escape) is looked up through `json_each`.
- Lists are JSON text holding an array, read with `json_each`, each item tested together with
  its JSON type (`true` is no number, `"1"` no number). An item is a 64-bit integer or a
  double, so an integer literal beyond 64 bits that no double holds equals none. Date-time
  lists are refused: JSON has no date-time type, and SQLite has no exact parse of ISO 8601
  text to the microsecond.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import Any

from ....language.fields import FieldType, ListOp, Op
from ....language.lists import refused
from ....language.nodes import ListTest
from ....language.values import double_exact
from .base import (
    INT64_MAX,
    INT64_MIN,
    Dialect,
    Number,
    Shape,
    as_double,
    glob_pattern,
    integral,
    utc_text,
)
from .like import like_wrapped
from .list_sql import ListWriter, all_of, double_items, literal_of
from .members import Members, json_members
from .numbers import NumberWriter, double_test, exact_test

MONTH_DAY_FUNCTION = "audiencefilter_month_day"
LIKE_PATTERN_LIMIT = 50_000
"""SQLITE_MAX_LIKE_PATTERN_LENGTH's default: the most bytes a LIKE or GLOB pattern may hold."""


def _pattern_fits(nbytes: int) -> bool:
    """Whether any LIKE or GLOB pattern of an operand of `nbytes` UTF-8 bytes fits SQLite's
    limit: GLOB writes each `[`, `*` or `?` as three bytes, and a pattern adds two wildcards.
    Decided on the byte count alone (a fact of `Shape`), so the operand bound and the SQL
    written around it always agree."""
    return 3 * nbytes + 2 <= LIKE_PATTERN_LIMIT


class SQLite(Dialect):
    name = "sqlite"
    aliases = ()
    title = "SQLite"
    exact_number_bind = "float"
    """A number beyond 64 bits binds as the double that orders like it (`bind_number`)."""
    placeholder = "?"
    true = "1"
    false = "0"
    text_holds_nul = True
    json_text_ends_at_nul = True

    sums_within_64_bits = True

    def sum_sql(self, sql: str) -> str:
        """An integer sum that never stops with SQLite's `integer overflow` (its SUM does, even
        when only a partial sum leaves 64 bits): the high and low 32 bits of each value are
        summed apart (`_wide_sum`), exact within 64 bits, and beyond them a REAL that orders
        like the sum against every 64-bit integer. With a REAL among the values, the sum is
        a REAL, as SQLite's SUM gives it (TOTAL)."""
        reals = f"COUNT(CASE WHEN typeof({sql}) = 'real' THEN 1 END)"
        return f"CASE WHEN {reals} > 0 THEN TOTAL({sql}) ELSE {_wide_sum(sql)} END"

    def text(self, value: str) -> str:
        if "\x00" in value:
            # SQL text is a C string for SQLite: NUL would end the statement.
            return f"CAST(X'{value.encode('utf-8').hex().upper()}' AS TEXT)"
        return "'" + value.replace("'", "''") + "'"

    def number(self, value: Number) -> str:
        value = integral(value)
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            return _sqlite_big_int(value)
        return super().number(value)

    def bind_number(self, value: Number) -> object:
        value = integral(value)
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            return _sqlite_real(value)
        return value

    def instant(self, value: datetime) -> str:
        return f"'{utc_text(value)}'"

    def bind_instant(self, value: datetime) -> object:
        return utc_text(value)

    def day(self, value: date) -> str:
        return f"'{value.isoformat()}'"  # SQLite keeps dates as ISO 8601 text

    def bind_day(self, value: date) -> object:
        return value.isoformat()

    def date_month_day(self, sql: Callable[[], str]) -> str:
        return f"CAST(strftime('%m%d', {sql()}) AS INTEGER)"

    def month_day(self, sql: Callable[[], str], zone: str) -> str:
        """UTC by `strftime`; another zone by the Python function `register_sqlite_functions`
        registers (sqlite_functions.py), which plain SQLite lacks: it then stops with "no
        such function", never answering in another zone."""
        if zone == "UTC":  # read from the UTC text: `strftime` rounds to milliseconds, and
            # the last half-millisecond of 9999 rounds past the calendar, to NULL
            return f"CAST(substr({sql()}, 6, 2) || substr({sql()}, 9, 2) AS INTEGER)"
        return f"{MONTH_DAY_FUNCTION}({sql()}, {self.text(zone)})"

    def member_test(self, op: Op, sql: str, param: str, members: Members) -> str | None:
        """JSON text read by `json_each`: its `value` is TEXT, INTEGER or REAL as the literal
        form's, and compares with the column as a literal would."""
        return f"{sql} {'IN' if op is Op.IN else 'NOT IN'} (SELECT value FROM json_each({param}))"

    def bind_members(self, values: Sequence[Any], members: Members) -> object:
        return json_members([self.bind_member(v, members) for v in values])

    json_types = {
        FieldType.STRING: ("text",),
        FieldType.NUMBER: ("integer", "real"),
        FieldType.BOOLEAN: ("true", "false"),
    }

    def exact(self, sql: str) -> str:
        """BINARY, whatever collation the column declares: `NOCASE` would ignore ASCII case
        in `=` and `IN`, `RTRIM` trailing spaces. A column declaring none is BINARY already
        (an index on it serves)."""
        return f"{sql} COLLATE BINARY"

    def ordered(self, sql: str) -> str:
        # BINARY compares the UTF-8 bytes (memcmp, then length): code-point order, NUL and
        # trailing spaces included, whatever collation the column was declared with.
        return f"{sql} COLLATE BINARY"

    def json_path(self, keys: tuple[str, ...]) -> str | None:
        # A quoted label has no escapes, and SQLite matches it against the key as written in
        # the document: `\u00e9` in the text is not `é` in the path. Keys that a JSON writer
        # may escape (anything but printable ASCII) and keys with `"` or `\` go through
        # json_each, whose `key` column is decoded.
        if not all(_PLAIN_KEY.fullmatch(key) for key in keys):
            return None
        return "$" + "".join(f'."{key}"' for key in keys)

    def json_type(self, sql: str, keys: list[str], path: str | None) -> str:
        if path is not None:
            return f"json_type({sql}, {path})"
        return self._json_each(sql, keys, "type")

    def json_number(self, out: NumberWriter, op: Op, value: Callable[[], str], literal: Any) -> str:
        """`json_extract` reads the text as Python's `json` does, but for integers beyond 64
        bits: an integer within 64 bits as an INTEGER, any other number as a REAL (a double).
        SQLite compares both exactly with a literal within 64 bits or a float; an integer
        literal beyond 64 bits meets only REALs, so it compares as with a double."""
        if op in (Op.IN, Op.NOT_IN):
            kept = tuple(v for v in literal if _stored_exactly(v))
            if not kept:
                return self.true if op is Op.NOT_IN else self.false
            return exact_test(out, op, value, kept)
        if isinstance(literal, int) and not INT64_MIN <= literal <= INT64_MAX:
            return double_test(out, op, value, literal, (self.false, self.true))
        return exact_test(out, op, value, literal)

    def double(self, value: float) -> str:
        return repr(value)  # a REAL: SQLite reads a number with an exponent or a point so

    def json_value(self, sql: str, keys: list[str], path: str | None, kind: FieldType) -> str:
        # json_extract gives TEXT, INTEGER or REAL as stored, and 1 or 0 for booleans.
        if path is not None:
            return f"json_extract({sql}, {path})"
        return self._json_each(sql, keys, "value")

    @staticmethod
    def _json_each(sql: str, keys: list[str], column: str) -> str:
        document = sql
        for key in keys[:-1]:
            document = (
                f"(SELECT value FROM json_each({document}) WHERE key = {key} AND type = 'object')"
            )
        return f"(SELECT {column} FROM json_each({document}) WHERE key = {keys[-1]})"

    def operand(self, op: Op, value: str) -> str:
        if op is Op.STARTS_WITH and _globbed(Shape.of(value)):
            return glob_pattern(op, value)
        return value

    def match(self, op: Op, sql: str, operand: str, shape: Shape) -> str:
        if op is Op.CONTAINS:
            return f"instr({sql}, {operand}) > 0"
        if op is Op.STARTS_WITH:
            # GLOB is case-sensitive and can use an index; it stops at NUL and has a length
            # limit, instr has neither.
            return f"{sql} GLOB {operand}" if _globbed(shape) else f"instr({sql}, {operand}) = 1"
        # Compare the last bytes. The X'FF' (never in UTF-8) keeps the blob non-empty: SQLite's
        # substr of an empty blob is NULL, which would make `endsWith` UNKNOWN for "".
        n = shape.nbytes
        return f"substr(CAST(X'FF' || {sql} AS BLOB), -{n}, {n}) = CAST({operand} AS BLOB)"

    like_folding = "ascii"

    def folded_like(
        self,
        op: Op,
        sql: Callable[[], str],
        needle: Callable[[], str],
        shape: Shape,
        unsafe: str,
    ) -> str:
        """LIKE folds ASCII in C (`fold` calls Python per row) but stops at NUL: text holding
        NUL or an `unsafe` character takes the folded test, after a failed LIKE (what LIKE
        finds is a match) or instead of it (suffixes). A needle too long for a LIKE pattern
        takes the folded test alone."""
        if not _pattern_fits(shape.nbytes):
            return self._folded_match(op, sql, needle, shape)
        if op is Op.ENDS_WITH:
            return self._suffix_like(sql, needle, shape, unsafe)
        like = f"{sql()} LIKE {like_wrapped(op, needle())}"
        test = self._unsafe_text(sql, unsafe)
        found = f"instr({self.fold(sql())}, {needle()}) {'> 0' if op is Op.CONTAINS else '= 1'}"
        return f"({like} OR ({test} AND {found}))"

    def _folded_match(
        self, op: Op, sql: Callable[[], str], needle: Callable[[], str], shape: Shape
    ) -> str:
        """The folded column matched by `instr` or the byte comparison (the needle is bound as
        it is, never as a GLOB pattern)."""
        if op is Op.ENDS_WITH:
            return self.match(op, self.fold(sql()), needle(), shape)
        return f"instr({self.fold(sql())}, {needle()}) {'> 0' if op is Op.CONTAINS else '= 1'}"

    def _suffix_like(
        self, sql: Callable[[], str], needle: Callable[[], str], shape: Shape, unsafe: str
    ) -> str:
        """`endsWith`: LIKE only for text LIKE reads whole (no NUL, no `unsafe` character)."""
        test = self._unsafe_text(sql, unsafe)
        exact = self.match(Op.ENDS_WITH, self.fold(sql()), needle(), shape)
        like = f"{sql()} LIKE {like_wrapped(Op.ENDS_WITH, needle())}"
        return f"CASE WHEN {test} THEN {exact} ELSE {like} END"

    @staticmethod
    def _unsafe_text(sql: Callable[[], str], unsafe: str) -> str:
        """`sql()` holds NUL or a character of `unsafe` (constants, inlined)."""
        tests = [f"instr({sql()}, {c}) > 0" for c in ("char(0)", *_quoted(unsafe))]
        return tests[0] if len(tests) == 1 else "(" + " OR ".join(tests) + ")"

    # Lists (JSON text) and JSON arrays at a data path, read with json_each

    def list_test(self, out: ListWriter, node: ListTest, column: str, element: FieldType) -> str:
        if element in (FieldType.DATETIME, FieldType.DATE):
            held = "date-times" if element is FieldType.DATETIME else "dates"
            raise refused(node, self.title, f"a JSON array holds {held} as text")
        if node.op is ListOp.IS_EMPTY:
            return f"json_array_length({column}) = 0"
        values = double_items(node, element, _stored_exactly)
        if values is None:
            return self.false
        matches = self._list_item(out, node, element)
        if node.op is ListOp.EQUALS:
            tests = [f"json_array_length({column}) = {len(values)}"]
            for index, value in enumerate(values):
                tests.append(_each(column, f"e.key = {index} AND {matches(value)}"))
            return all_of(tests)
        if node.op is ListOp.HAS_EVERY:
            return all_of([_each(column, matches(v)) for v in values])
        if element is not FieldType.BOOLEAN and len(values) > 1:
            # One type test and one `IN` for the items, where an OR of `type AND =` per
            # literal scanned each item once per literal (1.67x a hand-written `IN`).
            item = self.fold("e.value") if node.insensitive else "e.value"
            listed = ", ".join(literal_of(out, element)(v) for v in values)
            return _each(column, f"e.type IN {_ITEM_TYPES[element]} AND {item} IN ({listed})")
        return _each(column, "(" + " OR ".join(matches(v) for v in values) + ")")

    def _list_item(
        self, out: ListWriter, node: ListTest, element: FieldType
    ) -> Callable[[Any], str]:
        """The test that the item `e` of `json_each` equals a literal, its JSON type first."""
        item = self.fold("e.value") if node.insensitive else "e.value"
        render = literal_of(out, element)

        def matches(value: Any) -> str:
            if element is FieldType.BOOLEAN:
                return f"e.type = '{'true' if value else 'false'}'"
            return f"e.type IN {_ITEM_TYPES[element]} AND {item} = {render(value)}"

        return matches

    def array_test(self, out: ListWriter, node: ListTest) -> str:
        def kind() -> str:
            return out.json_type(node.field, node.path)

        head = f"CASE WHEN {kind()} = 'array' THEN "
        if node.op is ListOp.IS_EMPTY:
            array = out.json_value(node.field, node.path, FieldType.STRING)
            return head + f"json_array_length({array}) = 0 END"
        test = self._array_items(out, node)
        return head + test + " END"  # UNKNOWN for anything but an array (lists.array_truth)

    def _array_items(self, out: ListWriter, node: ListTest) -> str:
        def document() -> str:  # the array as JSON text
            return out.json_value(node.field, node.path, FieldType.STRING)

        if node.op is ListOp.ARRAY_CONTAINS:
            tests = [
                _each(document(), self._item(out, value, node.insensitive)) for value in node.value
            ]
            return all_of(tests) if tests else self.true
        array = document()  # each piece in the order it appears in the text
        if node.op is ListOp.ARRAY_STARTS_WITH:
            where = "e.key = 0"
        else:
            where = f"e.key = json_array_length({document()}) - 1"
        item = self._item(out, node.value[0], node.insensitive)
        return _each(array, f"{where} AND {item}")

    def _item(self, out: ListWriter, value: Any, insensitive: bool) -> str:
        if isinstance(value, bool):
            return f"e.type = '{'true' if value else 'false'}'"
        if isinstance(value, str):
            item = self.fold("e.value") if insensitive else "e.value"
            return f"(e.type = 'text' AND {item} = {out.text(value)})"
        number = self.json_number(out, Op.EQUALS, lambda: "e.value", value)
        return f"(e.type IN ('integer', 'real') AND {number})"


def _globbed(shape: Shape) -> bool:
    """Whether `startsWith` is a GLOB: no NUL (GLOB stops there) and a pattern that fits."""
    return not shape.nul and _pattern_fits(shape.nbytes)


_ITEM_TYPES = {
    FieldType.STRING: "('text')",
    FieldType.NUMBER: "('integer', 'real')",
}


def _stored_exactly(value: Any) -> bool:
    """Whether a JSON item can equal `value`: SQLite stores a JSON number as a 64-bit integer
    or a double, so an integer beyond 64 bits that no double holds equals none."""
    return INT64_MIN <= value <= INT64_MAX or double_exact(value)


def _wide_sum(sql: str) -> str:
    """sum = high * 2^32 + low, with `high` the sum of each value's high 32 bits (`>>` is
    arithmetic) carried with the low sums' overflow and `low` in 0..2^32 - 1: each SUM stays
    within 64 bits below 2^31 rows. The sum is within 64 bits exactly when `high` is within
    32; beyond, the REAL nearest, kept off -2^63 (a 64-bit integer) by `min`."""
    low_sum = f"COALESCE(SUM({sql} & 4294967295), 0)"
    high = f"(COALESCE(SUM({sql} >> 32), 0) + ({low_sum} >> 32))"
    low = f"({low_sum} & 4294967295)"
    near = f"{high} * 4294967296.0 + {low}"
    return (
        f"CASE WHEN {high} BETWEEN -2147483648 AND 2147483647 THEN {high} * 4294967296 + {low} "
        f"WHEN {high} > 0 THEN {near} ELSE min({near}, {_BELOW_INT64}) END"
    )


_BELOW_INT64 = "-9223372036854777856.0"
"""The double next below -2^63."""


def _quoted(chars: str) -> list[str]:
    return [f"'{char}'" for char in chars]


def _each(array: str, condition: str) -> str:
    return f"EXISTS (SELECT 1 FROM json_each({array}) AS e WHERE {condition})"


_PLAIN_KEY = re.compile(r"[ !#-\[\]-~]*")
"""Printable ASCII but the quote and the backslash: keys every JSON writer leaves unescaped."""


def _sqlite_real(value: int) -> float:
    """A double that orders like `value` against every int64 (SQLite compares int and real
    exactly). Rounding may land on -2^63, which is an int64, so step one double further out."""
    real = as_double(value)
    if real == float(INT64_MIN):
        real = -9223372036854777856.0  # the next double below -2^63
    return real


def _sqlite_big_int(value: int) -> str:
    # SQLite reads an integer literal beyond int64 as a double; write the digits of the double
    # itself, so that no rounding is left to SQLite's parser; beyond the doubles, a literal
    # SQLite reads as an infinity.
    real = _sqlite_real(value)
    if math.isinf(real):
        return "9e999" if real > 0 else "-9e999"
    return str(int(real))
