"""SQL dialects as data: how each engine spells literals, case folding and pattern matching.

Both SQL back-ends read these classes: `sql.py` writes text with them, and `sqlalchemy.py` calls
them from its `@compiles` hooks, so a dialect's quirks live in one place. The base class is
PostgreSQL, the most standard of the four; each other engine overrides only what differs.

Design choices, each forced by a semantic rule of the filters (docs/backends.md has the why):
- Case-sensitive string tests must compare code points exactly, with trailing spaces
  significant. MySQL/MariaDB collations ignore case (and pad spaces), so `exact()` compares
  there as `CAST(x AS BINARY)`, which also works whatever the column's collation is.
- Patterns: `LIKE ... ESCAPE '!'` with `!`, `%` and `_` escaped, except on SQLite, whose LIKE
  ignores ASCII case: `GLOB` (case-sensitive, can use an index) for prefixes, `instr` for
  substrings and a byte comparison for suffixes; and on DuckDB, which has `starts_with`,
  `ends_with` and `contains` and needs no escaping at all.
- Numbers compare exactly with 64-bit integer columns: an integral float is written as the
  integer it equals, other floats as their shortest decimal, and integers beyond 64 bits as
  exact decimals (or, on SQLite, as a double that orders the same against every int64).
- Date-times are instants, written as each engine stores SQLAlchemy's
  `DateTime(timezone=True)`: `timestamptz` on PostgreSQL and DuckDB, a UTC `DATETIME(6)` on
  MySQL, and UTC text `YYYY-MM-DD HH:MM:SS.ffffff` on SQLite.
- A literal can never end early: quotes are doubled, and text a server setting could make it
  misread (backslashes on MySQL and PostgreSQL) or that could end the statement (NUL) takes a
  form that reads the same under every setting: `E'...'`, hex, `chr(0)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import ClassVar

from ...language.fields import FieldType, Op

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
LIKE_ESCAPE = "!"

Number = int | float


@dataclass(frozen=True, slots=True)
class Shape:
    """What a pattern's SQL shape may depend on: facts about the value, never the value itself.

    SQLAlchemy caches compiled SQL by shape, so these facts (not the text) are part of the
    cache key of a pattern construct.
    """

    nul: bool
    nbytes: int

    @classmethod
    def of(cls, value: str) -> Shape:
        return cls("\x00" in value, len(value.encode("utf-8")))


def integral(value: Number) -> Number:
    """An integral float as the int it equals: `100.0` must compare like `100` with a bigint,
    and 2^53 as a double would be rounded together with 2^53 + 1 by any engine casting the
    column to double."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def utc_text(value: datetime) -> str:
    """`YYYY-MM-DD HH:MM:SS.ffffff` of the UTC wall time (values in the AST are already UTC)."""
    return value.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def like_pattern(op: Op, value: str) -> str:
    """A LIKE pattern matching `value` literally, for `ESCAPE '!'`."""
    escaped = value.replace("!", "!!").replace("%", "!%").replace("_", "!_")
    return _wrap(op, escaped, "%")


def glob_pattern(op: Op, value: str) -> str:
    """A SQLite GLOB pattern matching `value` literally: `*`, `?` and `[` go in brackets."""
    escaped = value.replace("[", "[[]").replace("*", "[*]").replace("?", "[?]")
    return _wrap(op, escaped, "*")


def _wrap(op: Op, escaped: str, wildcard: str) -> str:
    if op is Op.STARTS_WITH:
        return escaped + wildcard
    if op is Op.ENDS_WITH:
        return wildcard + escaped
    return wildcard + escaped + wildcard


class Dialect:
    """PostgreSQL, and the standard SQL forms other engines share; subclasses override the rest.

    Methods that take `sql` wrap the SQL of a column (or of an expression over it); the ones
    that take a value return a literal.
    """

    name: ClassVar[str] = "postgresql"
    aliases: ClassVar[tuple[str, ...]] = ("postgres",)
    placeholder: ClassVar[str] = "%s"
    """The DBAPI placeholder of `to_sql_params` (psycopg, pymysql: `format`; sqlite3, duckdb:
    `qmark`)."""
    identifier_quote: ClassVar[str] = '"'
    true: ClassVar[str] = "TRUE"
    false: ClassVar[str] = "FALSE"
    text_holds_nul: ClassVar[bool] = False
    """PostgreSQL text cannot contain NUL, so a value with NUL can never match stored text."""
    instant_type: ClassVar[str] = "TIMESTAMP WITH TIME ZONE "

    # Identifiers and literals

    def quote(self, name: str) -> str:
        if not name or "\x00" in name:
            raise ValueError(f"invalid column name {name!r}: empty or contains NUL")
        q = self.identifier_quote
        return q + name.replace(q, q + q) + q

    def text(self, value: str) -> str:
        if "\x00" in value:
            raise ValueError("PostgreSQL text cannot contain NUL")
        if "\\" in value:
            # E'' strings read backslashes as escapes whatever standard_conforming_strings is.
            return "E'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
        return "'" + value.replace("'", "''") + "'"

    def number(self, value: Number) -> str:
        value = integral(value)
        return str(value) if isinstance(value, int) else repr(value)

    def bind_number(self, value: Number) -> object:
        """A driver value comparing exactly: a Decimal rather than a float, which PostgreSQL
        would compare as float8 after casting the bigint column to float8 too."""
        value = integral(value)
        return value if isinstance(value, int) else Decimal(repr(value))

    def instant(self, value: datetime) -> str:
        return f"{self.instant_type}'{utc_text(value)}+00:00'"

    def bind_instant(self, value: datetime) -> object:
        return value

    def boolean(self, value: bool) -> str:
        return self.true if value else self.false

    # Expressions over a column's SQL

    def exact(self, sql: str) -> str:
        """The operand of a case-sensitive, no-pad comparison."""
        return sql

    def fold(self, sql: str) -> str:
        """Case folding; `lower` is Python's `str.lower` given an ICU 'und' database."""
        return f"lower({sql})"

    def never(self, sql: str) -> str:
        """FALSE for a present value and UNKNOWN for null, as a comparison that cannot hold."""
        return f"CASE WHEN {sql} IS NOT NULL THEN {self.false} END"

    def operand(self, op: Op, value: str) -> str:
        """The value `match` compares with, as bound or inlined."""
        return like_pattern(op, value)

    def match(self, op: Op, sql: str, operand: str, shape: Shape) -> str:
        """`contains`, `startsWith` or `endsWith` of `sql` with an `operand(op, value)`."""
        return f"{self.exact(sql)} LIKE {operand} ESCAPE '{LIKE_ESCAPE}'"

    # Values inside a JSON column (`data_paths`). `keys` holds the SQL literals of the keys,
    # rendered by the caller (inlined or bound); `path` the literal of the whole path, in the
    # dialect's own path syntax (`json_path`).

    json_null: ClassVar[str] = "null"
    """The type name of JSON null."""
    json_types: ClassVar[dict[FieldType, tuple[str, ...]]] = {
        FieldType.STRING: ("string",),
        FieldType.NUMBER: ("number",),
        FieldType.BOOLEAN: ("boolean",),
    }
    """The type names each filter type accepts, as `json_type` spells them."""

    def json_path(self, keys: tuple[str, ...]) -> str | None:
        """The path as one text in the engine's syntax; None to pass the keys one by one."""
        return None

    def json_document(self, sql: str, keys: list[str]) -> str:
        """`jsonb` at `keys` (each `->` reads an object key only, never an array index)."""
        steps = "".join(f" -> CAST({key} AS TEXT)" for key in keys)
        return f"(CAST({sql} AS JSONB){steps})"

    def json_type(self, sql: str, keys: list[str], path: str | None) -> str:
        return f"jsonb_typeof({self.json_document(sql, keys)})"

    def json_value(self, sql: str, keys: list[str], path: str | None, kind: FieldType) -> str:
        """The value as an SQL value of `kind`, for a value known to be of that JSON type:
        numbers as `numeric`, which compares exactly."""
        document = self.json_document(sql, keys)
        if kind is FieldType.STRING:
            return f"({document} #>> '{{}}')"
        return f"CAST({document} AS {'NUMERIC' if kind is FieldType.NUMBER else 'BOOLEAN'})"


class PostgreSQL(Dialect):
    """The base dialect as it is."""


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

    json_types = {
        FieldType.STRING: ("text",),
        FieldType.NUMBER: ("integer", "real"),
        FieldType.BOOLEAN: ("true", "false"),
    }

    def json_path(self, keys: tuple[str, ...]) -> str | None:
        # A quoted label has no escapes in SQLite: keys with `"` or `\` go through json_each.
        if any('"' in key or "\\" in key for key in keys):
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
        return _FOLD_DOTTED_I.format(sql)

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


class DuckDB(Dialect):
    name = "duckdb"
    aliases = ()
    placeholder = "?"
    text_holds_nul = True

    def text(self, value: str) -> str:
        if "\x00" not in value:
            return "'" + value.replace("'", "''") + "'"
        pieces: list[str] = []
        for index, part in enumerate(value.split("\x00")):
            if index:
                pieces.append("chr(0)")
            if part:
                pieces.append("'" + part.replace("'", "''") + "'")
        return pieces[0] if len(pieces) == 1 else "(" + " || ".join(pieces) + ")"

    def number(self, value: Number) -> str:
        value = integral(value)
        if isinstance(value, int) and not _HUGEINT_MIN <= value <= _HUGEINT_MAX:
            # Wider literals become UHUGEINT or BIGNUM, which DuckDB casts to the column's BIGINT
            # (wrapping around or failing) instead of the other way: make it a DOUBLE, which is
            # far enough from every int64 to order the same.
            return f"{value}.0"
        return super().number(value)

    def bind_number(self, value: Number) -> object:
        value = integral(value)
        if isinstance(value, int):
            return value if _HUGEINT_MIN <= value <= _HUGEINT_MAX else float(value)
        return value

    def fold(self, sql: str) -> str:
        return _FOLD_DOTTED_I.format(sql)

    def operand(self, op: Op, value: str) -> str:
        return value

    def match(self, op: Op, sql: str, operand: str, shape: Shape) -> str:
        function = _DUCKDB_MATCH[op]
        return f"{function}({sql}, {operand})"

    json_types = {
        FieldType.STRING: ("VARCHAR",),
        FieldType.NUMBER: ("BIGINT", "UBIGINT", "HUGEINT", "DOUBLE"),
        FieldType.BOOLEAN: ("BOOLEAN",),
    }
    json_null = "NULL"

    def json_path(self, keys: tuple[str, ...]) -> str | None:
        # `$."key"` with backslash escapes; it never indexes an array. It cannot name the empty
        # key, so a path holding one is a JSON pointer (RFC 6901), which reads the empty key
        # but takes an all-digit key as an index into an array (a documented limit).
        if "" in keys:
            return "".join("/" + key.replace("~", "~0").replace("/", "~1") for key in keys)
        return "$" + "".join(
            '."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"' for key in keys
        )

    def json_type(self, sql: str, keys: list[str], path: str | None) -> str:
        return f"json_type(CAST({sql} AS JSON), {path})"

    def json_value(self, sql: str, keys: list[str], path: str | None, kind: FieldType) -> str:
        """Strings as VARCHAR, numbers as DOUBLE (exact to 2^53), booleans as BOOLEAN."""
        text = f"json_extract_string(CAST({sql} AS JSON), {path})"
        if kind is FieldType.STRING:
            return text
        return f"CAST({text} AS {'DOUBLE' if kind is FieldType.NUMBER else 'BOOLEAN'})"


# Engines whose lower() uses simple case mappings fold U+0130 to "i"; Python's str.lower() gives
# "i" + U+0307 (its one unconditional multi-character lowercase mapping), so map it first.
_FOLD_DOTTED_I = "lower(replace({}, '\u0130', 'i\u0307'))"
_HUGEINT_MIN, _HUGEINT_MAX = -(2**127) + 1, 2**127 - 1
_DUCKDB_MATCH = {Op.CONTAINS: "contains", Op.STARTS_WITH: "starts_with", Op.ENDS_WITH: "ends_with"}


def _sqlite_real(value: int) -> float:
    """A double that orders like `value` against every int64 (SQLite compares int and real
    exactly). Rounding may land on -2^63, which is an int64, so step one double further out."""
    real = float(value)
    if real == float(INT64_MIN):
        real = -9223372036854777856.0  # the next double below -2^63
    return real


def _sqlite_big_int(value: int) -> str:
    # SQLite reads an integer literal beyond int64 as a double; write the digits of the double
    # itself, so that no rounding is left to SQLite's parser.
    return str(int(_sqlite_real(value)))


DIALECTS: dict[str, Dialect] = {}
for _dialect in (PostgreSQL(), SQLite(), MySQL(), DuckDB()):
    for _name in (_dialect.name, *_dialect.aliases):
        DIALECTS[_name] = _dialect


def get_dialect(name: str) -> Dialect:
    """The dialect called `name` (`postgresql`, `sqlite`, `mysql`, `duckdb`, or an alias).

    Raises:
        ValueError: no such dialect.
    """
    try:
        return DIALECTS[name]
    except KeyError:
        from .dialect_spark import SPARK  # a module of its own, which builds on this one

        if name in (SPARK.name, *SPARK.aliases):
            return SPARK
        known = ", ".join(sorted([*DIALECTS, SPARK.name, *SPARK.aliases]))
        raise ValueError(f"unknown SQL dialect {name!r}; expected one of {known}") from None
