"""MySQL and MariaDB: binary comparison for exact text, hex for text a setting could misread.

Design choices:
- Collations ignore case and pad spaces, so `exact()` compares as `CAST(x AS BINARY)`, which
  works whatever the column's collation is.
- A backslash is an escape unless NO_BACKSLASH_ESCAPES is set: text holding one (or a control
  character) is written in hex, which reads the same under both settings.
- Date-times are UTC `DATETIME(6)`; JSON values are read with `JSON_EXTRACT`.
- An integer literal wider than 65 digits (a DECIMAL's most) is written as a double: MariaDB
  would clamp it to 65 nines, which a large stored double passes.
- Lists are JSON holding an array, its items numbered by `JSON_TABLE` and read with their
  JSON type, as data paths are read; numbers compare as doubles there, so an integer no
  double holds matches no item. Date-time lists are refused, as on SQLite.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from ....language.fields import FieldType, ListOp, Op
from ....language.lists import refused
from ....language.nodes import ListTest
from .base import (
    FOLD_DOTTED_I,
    AnniversaryRefused,
    Dialect,
    Number,
    as_double,
    integral,
    sigma_refusal,
    utc_text,
)
from .list_sql import (
    ListWriter,
    all_of,
    any_of,
    double_items,
    double_literals,
    json_kind,
    literal_of,
)
from .members import Members, json_members
from .numbers import NumberWriter, double_test

JSON_TEXT_COLLATION = "utf8mb4_unicode_520_ci"
"""The collation of text read from JSON, and of a column declaring none when folded: Unicode
5.2 case mappings, where the connection's default (`utf8mb4_general_ci`) misses `ẞ`."""


CHARACTER_SET = "utf8mb4"
"""The character set the library writes text in: its literals and the bytes `exact` compares
(`CAST(x AS BINARY)` gives a column's bytes in the column's own character set)."""

CHARACTER_SETS = (
    *("armscii8", "ascii", "big5", "binary", "cp1250", "cp1251", "cp1256", "cp1257", "cp850"),
    *("cp852", "cp866", "cp932", "dec8", "eucjpms", "euckr", "gb18030", "gb2312", "gbk"),
    *("geostd8", "greek", "hebrew", "hp8", "keybcs2", "koi8r", "koi8u", "latin1", "latin2"),
    *("latin5", "latin7", "macce", "macroman", "sjis", "swe7", "tis620", "ucs2", "ujis"),
    *("utf16", "utf16le", "utf32", "utf8", "utf8mb3", "utf8mb4"),
)
"""The character sets of MariaDB and MySQL (`information_schema.CHARACTER_SETS`; `utf8` is
`utf8mb3`'s old name): a collation is named after its set (`latin1_swedish_ci`).
tests/test_engine_catalogues.py holds it equal to the server's list."""

PROVEN_COLLATIONS = frozenset(
    {
        "utf8mb4_bin",
        "utf8mb4_general_ci",
        "utf8mb4_unicode_ci",
        "utf8mb4_unicode_520_ci",
        "utf8mb4_nopad_bin",
        "utf8mb4_general_nopad_ci",
        "utf8mb4_uca1400_ai_ci",
        "utf8mb4_0900_ai_ci",
    }
)
"""The `utf8mb4` collations a column may declare: each is run by a cell of the support matrix
(tests/shapes/settings.py), but `utf8mb4_0900_ai_ci`, MySQL 8's counterpart of
`utf8mb4_uca1400_ai_ci`, which the conformance suite declares on MySQL 8. Another folds under
its own case tables when it is recent (a Turkish one lowers `I` to `ı`), and is refused."""


class MySQL(Dialect):
    name = "mysql"
    aliases = ("mariadb",)
    title = "MySQL/MariaDB"
    json_exact_integers = 2**53
    identifier_quote = "`"
    text_holds_nul = True
    instant_type = "TIMESTAMP "
    fold_collation = JSON_TEXT_COLLATION
    fold_collations = ("utf8mb4_uca1400_", "utf8mb4_0900_")
    widened_float = None  # MySQL's REAL is a DOUBLE, and CAST takes no DOUBLE PRECISION

    def text(self, value: str) -> str:
        if any(ch == "\\" or ch < " " or ch == "\x7f" for ch in value):
            # A backslash is an escape unless NO_BACKSLASH_ESCAPES: hex reads the same in both.
            return f"_utf8mb4 X'{value.encode('utf-8').hex().upper()}'"
        return "'" + value.replace("'", "''") + "'"

    def number(self, value: Number) -> str:
        value = _within_decimal(integral(value))
        return repr(value) if isinstance(value, float) else str(value)

    def bind_number(self, value: Number) -> object:
        """A float as a float: the driver writes a Decimal as a decimal literal, and MySQL keeps
        at most 30 decimal places (5e-324 would become 0); a float is written as the double
        literal `to_sql` inlines, and a double compares with a bigint in the right order."""
        return _within_decimal(integral(value))

    def instant(self, value: datetime) -> str:
        return f"{self.instant_type}'{utc_text(value)}'"

    def bind_instant(self, value: datetime) -> object:
        return value.replace(tzinfo=None)

    def date_month_day(self, sql: Callable[[], str]) -> str:
        return f"(MONTH({sql()}) * 100 + DAYOFMONTH({sql()}))"

    def month_day(self, sql: Callable[[], str], zone: str) -> str:
        if zone != "UTC":
            raise AnniversaryRefused(
                f"an anniversary in {zone} needs the local date of each row, and MySQL and "
                "MariaDB convert to a named zone only with their time zone tables loaded "
                "(mysql_tzinfo_to_sql), which a default server lacks: refused rather than "
                "answered in another zone",
                'use "timeZone": "UTC" on MySQL/MariaDB, or evaluate in memory, polars, '
                "PostgreSQL or DuckDB",
            )
        return f"(MONTH({sql()}) * 100 + DAYOFMONTH({sql()}))"

    def exact(self, sql: str) -> str:
        return f"CAST({sql} AS BINARY)"

    def member_test(self, op: Op, sql: str, param: str, members: Members) -> str | None:
        """JSON text numbered by `JSON_TABLE`, each item read as the column's type; text as
        bytes (`exact`), so that neither the collation nor padding decides."""
        item = self.exact("af_l.v") if members is Members.TEXT else "af_l.v"
        rows = f"JSON_TABLE({param}, '$[*]' COLUMNS (v {_MEMBER_TYPES[members]} PATH '$'))"
        keyword = "IN" if op is Op.IN else "NOT IN"
        return f"{sql} {keyword} (SELECT {item} FROM {rows} AS af_l)"

    def bind_members(self, values: Sequence[Any], members: Members) -> object:
        if members is Members.INSTANT:
            return json_members([utc_text(v) for v in values])
        if members is Members.DAY:
            return json_members([v.isoformat() for v in values])
        return json_members(values)

    def fold(self, sql: str) -> str:
        return FOLD_DOTTED_I.format(sql)

    def fold_refusal(self, literal: str) -> str | None:
        return sigma_refusal(literal, self.title)

    def ordered(self, sql: str) -> str:
        # A binary string compares byte by byte with no padding (`'a ' > 'a'`): UTF-8 bytes
        # order as code points do, supplementary characters included. Against a binary
        # operand the literal is compared as bytes too.
        return self.exact(sql)

    json_null = "NULL"
    json_types = {
        FieldType.STRING: ("STRING",),
        FieldType.NUMBER: ("INTEGER", "UNSIGNED INTEGER", "DOUBLE", "DECIMAL"),
        FieldType.BOOLEAN: ("BOOLEAN",),
    }

    def json_path(self, keys: tuple[str, ...]) -> str | None:
        # A quoted path label is matched against the key as written in the document (`\u00e9`
        # in the text is not `é` in the path), and MariaDB misreads a label starting with `-`:
        # such paths read key by key through JSON_TABLE (`_json_step`).
        if not all(_PLAIN_KEY.fullmatch(key) for key in keys):
            return None
        return "$" + "".join(
            '."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"' for key in keys
        )

    def json_type(self, sql: str, keys: list[str], path: str | None) -> str:
        return f"JSON_TYPE({self._json_document(sql, keys, path)})"

    def double(self, value: float) -> str:
        return f"CAST({value!r} AS DOUBLE)"

    def json_number(self, out: NumberWriter, op: Op, value: Callable[[], str], literal: Any) -> str:
        """Every JSON number is read as a double (`json_value`), compared exactly."""
        return double_test(out, op, value, literal, (self.false, self.true))

    def json_value(self, sql: str, keys: list[str], path: str | None, kind: FieldType) -> str:
        """Strings unquoted; numbers as DOUBLE (exact to 2^53); booleans as 1 or 0."""
        text = f"JSON_UNQUOTE({self._json_document(sql, keys, path)})"
        if kind is FieldType.STRING:
            # A collation both MySQL and MariaDB have, for `lower()` (the connection's default,
            # utf8mb4_general_ci, folds with older tables); comparisons are binary anyway.
            return f"CAST({text} AS CHAR CHARACTER SET utf8mb4) COLLATE {JSON_TEXT_COLLATION}"
        if kind is FieldType.NUMBER:
            return f"CAST({text} AS DOUBLE)"
        return f"({text} = 'true')"

    @staticmethod
    def _json_document(sql: str, keys: list[str], path: str | None) -> str:
        if path is not None:
            return f"JSON_EXTRACT({sql}, {path})"
        document = sql
        for key in keys:
            document = _json_step(document, key)
        return document

    # Lists (JSON arrays numbered by JSON_TABLE) and JSON arrays at a data path

    def list_test(self, out: ListWriter, node: ListTest, column: str, element: FieldType) -> str:
        if element in (FieldType.DATETIME, FieldType.DATE):
            held = "date-times" if element is FieldType.DATETIME else "dates"
            raise refused(node, self.title, f"a JSON array holds {held} as text")
        if node.op is ListOp.IS_EMPTY:
            return f"JSON_LENGTH({column}) = 0"
        values = double_items(node, element)
        if values is None:
            return self.false

        def matches(path: str, value: Any) -> str:
            return self._item(out, node, lambda: column, lambda: path, value)

        if node.op is ListOp.EQUALS:
            tests = [f"JSON_LENGTH({column}) = {len(values)}"]
            tests += [matches(f"'$[{index}]'", value) for index, value in enumerate(values)]
            return all_of(tests)
        found = [_numbered(column, matches(_ORDINAL, value)) for value in values]
        return all_of(found) if node.op is ListOp.HAS_EVERY else any_of(found)

    def _item(self, out: ListWriter, node: ListTest, document: Any, path: Any, value: Any) -> str:
        """The item at `path()` of the array `document()` equals `value`, as a JSON value of
        the literal's type; each piece written anew, in the order it appears."""
        kind = json_kind(value)
        names = ", ".join(f"'{name}'" for name in self.json_types[kind])
        of_type = f"{self.json_type(document(), [], path())} IN ({names})"
        read = self.json_value(document(), [], path(), kind)
        if kind is FieldType.BOOLEAN:
            return f"({of_type} AND {read} = {self.boolean(value)})"
        if kind is FieldType.STRING:
            read = self.exact(self.fold(read) if node.insensitive else read)
        return f"({of_type} AND {read} = {literal_of(out, kind)(value)})"

    def array_test(self, out: ListWriter, node: ListTest) -> str:
        path = self.json_path(node.path)
        if path is None:
            raise refused(node, self.title, "JSON arrays at a data path are not read there yet")
        column = out.column(node.field)

        def kind() -> str:
            return f"JSON_TYPE(JSON_EXTRACT({column}, {out.text(path)}))"

        if node.op is ListOp.IS_EMPTY:
            head = f"CASE WHEN {kind()} = 'ARRAY' THEN "
            return head + f"JSON_LENGTH(JSON_EXTRACT({column}, {out.text(path)})) = 0 END"
        values = double_literals(node)
        if values is None:
            return f"CASE WHEN {kind()} = 'ARRAY' THEN FALSE END"
        head = f"CASE WHEN {kind()} = 'ARRAY' THEN "
        test = self._array_items(
            out, node, values, lambda: f"JSON_EXTRACT({column}, {out.text(path)})"
        )
        return head + test + " END"  # UNKNOWN for anything but an array (lists.array_truth)

    def _array_items(
        self, out: ListWriter, node: ListTest, values: tuple[Any, ...], document: Any
    ) -> str:
        if node.op is ListOp.ARRAY_CONTAINS:
            tests = [
                _numbered(document(), self._item(out, node, document, lambda: _ORDINAL, value))
                for value in values
            ]
            return all_of(tests) if tests else self.true
        if node.op is ListOp.ARRAY_STARTS_WITH:
            test = self._item(out, node, document, lambda: "'$[0]'", values[0])
        else:
            last = lambda: f"CONCAT('$[', JSON_LENGTH({document()}) - 1, ']')"  # noqa: E731
            test = self._item(out, node, document, last, values[0])
        return f"COALESCE({test}, FALSE)"


_MEMBER_TYPES = {
    Members.TEXT: "LONGTEXT CHARACTER SET utf8mb4",
    Members.INTEGER: "BIGINT",
    Members.REAL: "DOUBLE",
    Members.INSTANT: "DATETIME(6)",
    Members.DAY: "DATE",
}
"""The `JSON_TABLE` column type of each kind of long list: the types the columns have."""

_PLAIN_KEY = re.compile(r"[ -,.-~][ -~]*|")
"""Printable ASCII not starting with `-`: keys a quoted path label reads as written."""


def _json_step(document: str, key: str) -> str:
    """The member `key` of the object `document`, found by comparing decoded keys as bytes.

    JSON_KEYS lists the keys in the order `$.*` lists the values; JSON_TABLE decodes the keys
    and numbers them. The document comes before the key in the text, so placeholders stay in
    the order of the keys.
    """
    return (
        "(SELECT JSON_EXTRACT(JSON_EXTRACT(af_d.doc, '$.*'), CONCAT('$[', af_k.pos - 1, ']'))"
        f" FROM JSON_TABLE({document}, '$' COLUMNS (doc JSON PATH '$')) AS af_d,"
        " JSON_TABLE(JSON_KEYS(af_d.doc), '$[*]'"
        " COLUMNS (pos FOR ORDINALITY, name TEXT PATH '$')) AS af_k"
        f" WHERE CAST(af_k.name AS BINARY) = CAST({key} AS BINARY) ORDER BY af_k.pos LIMIT 1)"
    )


_ORDINAL = "CONCAT('$[', af_e.o - 1, ']')"
"""The path of the item `_numbered` numbers."""


def _numbered(array: str, condition: str) -> str:
    """Some item of `array`, numbered `af_e.o` from 1, meets `condition`."""
    return (
        f"EXISTS (SELECT 1 FROM JSON_TABLE({array}, '$[*]' COLUMNS (o FOR ORDINALITY)) "
        f"AS af_e WHERE {condition})"
    )


DECIMAL_DIGITS = 65
"""The most digits of a MySQL/MariaDB DECIMAL: a wider integer literal is clamped to 65 nines."""


def _within_decimal(value: Number) -> Number:
    """An integer wider than `DECIMAL_DIGITS` as the double nearest it (the largest finite
    double beyond the doubles' range): every value MySQL stores, a bigint, a DECIMAL(65) or a
    JSON number read as DOUBLE, orders against it as against the integer, where the clamped
    literal would be passed by 10^70."""
    if isinstance(value, int) and len(str(abs(value))) > DECIMAL_DIGITS:
        real = as_double(value)
        return real if math.isfinite(real) else math.copysign(sys.float_info.max, real)
    return value
