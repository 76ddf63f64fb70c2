"""SQLite: integers and text as stored, booleans as 1 and 0, date-times as UTC text.

Design choices:
- Its LIKE ignores ASCII case, so patterns use `GLOB` (case-sensitive, can use an index) for
  prefixes, `instr` for substrings and a byte comparison for suffixes.
- SQL text is a C string for SQLite: a literal holding NUL is written as a hex blob cast to
  TEXT.
- Integers beyond 64 bits become the double that orders like them against every int64
  (SQLite compares integers and reals exactly).
- JSON paths quote each key as `$."key"`; a key holding `"` or `\\` (which the quoted label
  cannot escape) is looked up through `json_each`.
"""

from __future__ import annotations

import math
import re
from datetime import datetime

from ....language.fields import FieldType, Op
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

MONTH_DAY_FUNCTION = "audiencefilter_month_day"


class SQLite(Dialect):
    name = "sqlite"
    aliases = ()
    placeholder = "?"
    true = "1"
    false = "0"
    text_holds_nul = True

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

    def month_day(self, sql: str, zone: str) -> str:
        """UTC by `strftime`; another zone by the Python function `register_unicode_lower`
        registers (sqlite_functions.py), which plain SQLite lacks: it then stops with "no
        such function", never answering in another zone."""
        if zone == "UTC":
            return f"CAST(strftime('%m%d', {sql}) AS INTEGER)"
        return f"{MONTH_DAY_FUNCTION}({sql}, {self.text(zone)})"

    json_types = {
        FieldType.STRING: ("text",),
        FieldType.NUMBER: ("integer", "real"),
        FieldType.BOOLEAN: ("true", "false"),
    }

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
        if op is Op.STARTS_WITH and "\x00" not in value:
            return glob_pattern(op, value)
        return value

    def match(self, op: Op, sql: str, operand: str, shape: Shape) -> str:
        if op is Op.CONTAINS:
            return f"instr({sql}, {operand}) > 0"
        if op is Op.STARTS_WITH:
            # GLOB is case-sensitive and can use an index; it stops at NUL, instr does not.
            return f"instr({sql}, {operand}) = 1" if shape.nul else f"{sql} GLOB {operand}"
        # Compare the last bytes. The X'FF' (never in UTF-8) keeps the blob non-empty: SQLite's
        # substr of an empty blob is NULL, which would make `endsWith` UNKNOWN for "".
        n = shape.nbytes
        return f"substr(CAST(X'FF' || {sql} AS BLOB), -{n}, {n}) = CAST({operand} AS BLOB)"


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
