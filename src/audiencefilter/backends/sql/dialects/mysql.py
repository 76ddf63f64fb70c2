"""MySQL and MariaDB: binary comparison for exact text, hex for text a setting could misread.

Design choices:
- Collations ignore case and pad spaces, so `exact()` compares as `CAST(x AS BINARY)`, which
  works whatever the column's collation is.
- A backslash is an escape unless NO_BACKSLASH_ESCAPES is set: text holding one (or a control
  character) is written in hex, which reads the same under both settings.
- Date-times are UTC `DATETIME(6)`; JSON values are read with `JSON_EXTRACT`.
"""

from __future__ import annotations

from datetime import datetime

from ....language.fields import FieldType
from .base import FOLD_DOTTED_I, Dialect, utc_text


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

    def instant(self, value: datetime) -> str:
        return f"{self.instant_type}'{utc_text(value)}'"

    def bind_instant(self, value: datetime) -> object:
        return value.replace(tzinfo=None)

    def exact(self, sql: str) -> str:
        return f"CAST({sql} AS BINARY)"

    def fold(self, sql: str) -> str:
        return FOLD_DOTTED_I.format(sql)

    json_null = "NULL"
    json_types = {
        FieldType.STRING: ("STRING",),
        FieldType.NUMBER: ("INTEGER", "UNSIGNED INTEGER", "DOUBLE", "DECIMAL"),
        FieldType.BOOLEAN: ("BOOLEAN",),
    }

    def json_path(self, keys: tuple[str, ...]) -> str | None:
        return "$" + "".join(
            '."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"' for key in keys
        )

    def json_type(self, sql: str, keys: list[str], path: str | None) -> str:
        return f"JSON_TYPE(JSON_EXTRACT({sql}, {path}))"

    def json_value(self, sql: str, keys: list[str], path: str | None, kind: FieldType) -> str:
        """Strings unquoted; numbers as DOUBLE (exact to 2^53); booleans as 1 or 0."""
        text = f"JSON_UNQUOTE(JSON_EXTRACT({sql}, {path}))"
        if kind is FieldType.STRING:
            return f"CAST({text} AS CHAR CHARACTER SET utf8mb4)"
        if kind is FieldType.NUMBER:
            return f"CAST({text} AS DOUBLE)"
        return f"({text} = 'true')"
