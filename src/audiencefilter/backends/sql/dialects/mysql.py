"""MySQL and MariaDB: binary comparison for exact text, hex for text a setting could misread.

Design choices:
- Collations ignore case and pad spaces, so `exact()` compares as `CAST(x AS BINARY)`, which
  works whatever the column's collation is.
- A backslash is an escape unless NO_BACKSLASH_ESCAPES is set: text holding one (or a control
  character) is written in hex, which reads the same under both settings.
- Date-times are UTC `DATETIME(6)`; JSON values are read with `JSON_EXTRACT`.
"""

from __future__ import annotations

import re
from datetime import datetime

from ....language.fields import FieldType
from .base import FOLD_DOTTED_I, AnniversaryRefused, Dialect, Number, integral, utc_text


class MySQL(Dialect):
    name = "mysql"
    aliases = ("mariadb",)
    identifier_quote = "`"
    text_holds_nul = True
    instant_type = "TIMESTAMP "

    def text(self, value: str) -> str:
        if any(ch == "\\" or ch < " " or ch == "\x7f" for ch in value):
            # A backslash is an escape unless NO_BACKSLASH_ESCAPES: hex reads the same in both.
            return f"_utf8mb4 X'{value.encode('utf-8').hex().upper()}'"
        return "'" + value.replace("'", "''") + "'"

    def bind_number(self, value: Number) -> object:
        """A float as a float: the driver writes a Decimal as a decimal literal, and MySQL keeps
        at most 30 decimal places (5e-324 would become 0); a float is written as the double
        literal `to_sql` inlines, and a double compares with a bigint in the right order."""
        value = integral(value)
        return value

    def instant(self, value: datetime) -> str:
        return f"{self.instant_type}'{utc_text(value)}'"

    def bind_instant(self, value: datetime) -> object:
        return value.replace(tzinfo=None)

    def month_day(self, sql: str, zone: str) -> str:
        if zone != "UTC":
            raise AnniversaryRefused(
                f"an anniversary in {zone} needs the local date of each row, and MySQL and "
                "MariaDB convert to a named zone only with their time zone tables loaded "
                "(mysql_tzinfo_to_sql), which a default server lacks: refused rather than "
                "answered in another zone",
                'use "timeZone": "UTC" on MySQL/MariaDB, or evaluate in memory, polars, '
                "PostgreSQL or DuckDB",
            )
        return f"(MONTH({sql}) * 100 + DAYOFMONTH({sql}))"

    def exact(self, sql: str) -> str:
        return f"CAST({sql} AS BINARY)"

    def fold(self, sql: str) -> str:
        return FOLD_DOTTED_I.format(sql)

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


JSON_TEXT_COLLATION = "utf8mb4_unicode_520_ci"
"""The collation of text read from JSON: Unicode 5.2 case mappings."""

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
