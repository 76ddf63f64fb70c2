"""The `Dialect` base class and the helpers the engines share: how SQL spells literals, case
folding, pattern matching and JSON access.

Both SQL back-ends read the dialects: `text.py` writes text with them, and `sqlalchemy.py` calls
them from its `@compiles` hooks, so a dialect's quirks live in one place. The base class holds
the standard SQL forms, which are PostgreSQL's (the most standard of the four engines); each
engine's module overrides only what differs.

Design choices, each forced by a semantic rule of the filters (docs/backends.md has the why):
- Case-sensitive string tests must compare code points exactly, with trailing spaces
  significant (`exact()`; MySQL/MariaDB collations ignore case and pad spaces).
- Patterns: `LIKE ... ESCAPE '!'` with `!`, `%` and `_` escaped, unless an engine has a
  better form (SQLite, DuckDB).
- Numbers compare exactly with 64-bit integer columns: an integral float is written as the
  integer it equals, other floats as their shortest decimal, and integers beyond 64 bits as
  exact decimals (or a double that orders the same against every int64, where decimals fail).
- Date-times are instants, written as each engine stores SQLAlchemy's
  `DateTime(timezone=True)`.
- A literal can never end early: quotes are doubled, and text a server setting could make it
  misread (backslashes) or that could end the statement (NUL) takes a form that reads the same
  under every setting: `E'...'`, hex, `chr(0)`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, ClassVar, Literal

from ....errors import FilterError, Issue
from ....language.anniversary import MonthDays
from ....language.fields import FieldType, Op
from ....language.lists import refused
from ....language.nodes import ListTest
from ....language.values import decimal_literal
from .list_sql import ListWriter
from .members import Members
from .numbers import NumberWriter, double_test, exact_test

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
LIKE_ESCAPE = "!"

Number = int | float

Marked = Literal["text", "number", "double", "instant", "day", "boolean", "members"]
"""What a bound value is to the writer (`Dialect.marker`): the literal form it stands for."""


def refused_literal(engine: str, reason: str) -> FilterError:
    """The error of a back-end that cannot write a literal so it answers as the semantics say
    (its case folding differs there): a refusal, like `refused_comparison`."""
    return FilterError(
        [Issue(path="", message=f"{engine} cannot evaluate this filter faithfully: {reason}")]
    )


SIGMAS = frozenset("\u03a3\u03c3\u03c2")
"""Capital, medial and final sigma: Python lowers `Σ` to `ς` at the end of a word and to `σ`
elsewhere, an engine whose `lower()` maps it to `σ` everywhere (MariaDB, DuckDB) folds a word
ending in `Σ` otherwise, and its collations may take `ς` and `σ` as one letter."""


def sigma_refusal(literal: str, engine: str) -> str | None:
    """Why a case-insensitive test with this literal cannot run on `engine`, whose fold has no
    final sigma, or None: a literal holding no sigma never meets the place where a value's two
    folds differ (that place is a sigma, compared with the literal's character there)."""
    if not SIGMAS.intersection(literal):
        return None
    return (
        f"{engine}'s lower() folds a final \u03a3 (U+03A3) to \u03c3, where Python writes "
        f"\u03c2 at the end of a word, and this text holds a sigma"
    )


def refused_fold(field: str, op: str, engine: str, reason: str) -> FilterError:
    """The error of an engine whose case folding meets a case-insensitive test's literal
    otherwise than Python (`Dialect.fold_refusal`): the field, the operator, why, the fix."""
    return FilterError(
        [
            Issue(
                path=field,
                message=f'{engine} cannot evaluate "{op}" ignoring case on "{field}" '
                f"faithfully: {reason}",
                suggestion='compare case-sensitively (without mode: "insensitive"), or '
                "evaluate this filter in memory, with polars, or on PostgreSQL or SQLite",
            )
        ]
    )


def refused_comparison(field: str, op: Op, engine: str, reason: str) -> FilterError:
    """The error of a back-end that cannot answer a comparison as the semantics say (a
    `FilterError`, so a `ValueError` too): it names the field and the operator, why, and where
    the filter runs instead."""
    return FilterError(
        [
            Issue(
                path=field,
                message=f'{engine} cannot evaluate "{op.value}" on "{field}" faithfully: {reason}',
                suggestion="evaluate this filter in memory, with polars, or on PostgreSQL, "
                "SQLite, MySQL/MariaDB or DuckDB",
            )
        ]
    )


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


def as_double(value: int) -> float:
    """The double nearest `value`; an infinity beyond the doubles' range (10^309 and up), which
    orders like `value` against every number an engine stores."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


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


def text_bound(op: Op, value: str, holds_nul: bool) -> tuple[Op, str]:
    """`x op value` for a string ordering, as an ordering with a literal the engine can hold.

    An engine whose text cannot hold NUL (PostgreSQL) cannot be given `value` if it holds one;
    its stored text holds none either, and for such text `x op P + NUL + R` is `x <= P` for
    `lt`/`lte` and `x > P` for `gt`/`gte`, where `P` is `value` up to its first NUL (text
    starting with `P` and longer than it continues with a character above NUL).
    """
    if holds_nul or "\x00" not in value:
        return op, value
    prefix = value[: value.index("\x00")]
    return (Op.LTE if op in (Op.LT, Op.LTE) else Op.GT), prefix


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
    json_text_ends_at_nul: ClassVar[bool] = False
    """Whether the engine's JSON functions read a string up to its first NUL (SQLite): a
    literal holding NUL at a data path is then refused (`text.nul_checked`), as no answer
    with it could be memory's."""
    json_exact_integers: ClassVar[int] = 2**63
    """The integers a JSON number keeps exactly on this engine: those within 64 bits
    (PostgreSQL and SQLite read a larger one as a double), or within 2^53 where every JSON
    number is read as a double. An equality with a literal beyond them that no double holds is
    refused (`text.number_checked`)."""
    instant_type: ClassVar[str] = "TIMESTAMP WITH TIME ZONE "
    unifies_lists: ClassVar[bool] = False
    """An `IN` list of integers and floats is compared as doubles: write integers and floats
    as two lists."""
    widened_float: ClassVar[str | None] = "DOUBLE PRECISION"
    """The type `to_sqlalchemy` reads a single-precision (`REAL`) column as, so that a list
    of numbers is compared with its value rather than rounded to single precision (PostgreSQL
    types `real IN (0.3, 2.5)` as `real`); None: as it is."""
    fold_collation: ClassVar[str | None] = None
    """The collation `to_sqlalchemy` folds a text column under when the column's type declares
    none, or one outside `fold_collations` (MySQL's default folds with Unicode 4.0 tables,
    missing `ẞ`); None: its own."""
    fold_collations: ClassVar[tuple[str, ...]] = ()
    """Prefixes of the declared collations whose case tables fold as Python's `str.lower()`
    (a recent Unicode): a column declaring one is folded under its own."""
    title: ClassVar[str] = "standard SQL"
    """The engine's name in messages."""
    relations: ClassVar[bool] = True
    """Relation conditions run as correlated subqueries over the related table."""
    grouped_aggregates: ClassVar[bool] = False
    """A `count` or `sum` test is written over groups of related rows (`key IN (SELECT fk ...
    GROUP BY fk HAVING ...)`, `relations_text.grouped_sql`) rather than as a correlated
    subquery: for planners that run a correlated scalar subquery once per contact."""
    subquery_in: ClassVar[bool] = True
    """The engine takes a correlated subquery (an aggregate of related rows) as the left
    operand of `IN`; where it does not, `in`/`notIn` on an aggregate are written as
    equalities."""
    exact_number_bind: ClassVar[str] = "numeric"
    """How SQLAlchemy binds a number beyond 64 bits (`sqlalchemy.ExactNumber`): `numeric`
    (an exact decimal), `float` (a double) or `untyped` (the driver's own conversion)."""

    rounds_integers_for_doubles: ClassVar[bool] = True
    """A DOUBLE column meets an integer literal rounded to a double (`2^60 + 1` as `2^60`;
    SQLite past 64 bits only): `text.Writer.exact_on_doubles` adds back the one answer that
    changes."""
    finds_members_by_bits: ClassVar[bool] = False
    """`IN` finds a double by its bits (ClickHouse's hash sets), where -0 is not 0: a zero of
    a number list is tested apart, with `=` (`text.Writer.zero_apart`)."""

    sums_within_64_bits: ClassVar[bool] = False
    """The engine holds a sum exactly only within 64 bits (SQLite): a sum test whose literal
    lies beyond is refused (`relations_text.refuse_wide_sum`)."""

    def sum_sql(self, sql: str) -> str:
        """The sum of the non-null values of the column `sql` over the rows, 0 over none."""
        return f"COALESCE(SUM({sql}), 0)"

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

    def bind_text(self, value: str) -> object:
        """The driver value of a text parameter: the text itself, but where parameters travel
        in an escaped form of their own (ClickHouse)."""
        return value

    def number(self, value: Number) -> str:
        value = integral(value)
        return str(value) if isinstance(value, int) else repr(value)

    def marker(self, index: int, kind: Marked, value: object) -> str:
        """The placeholder of the bound `value`, the `index`-th parameter, standing for a
        literal of `kind`: the driver's one marker (`placeholder`), except on an engine whose
        parameters are named and typed in the text (ClickHouse's `{p0:String}`)."""
        return self.placeholder

    def bind_number(self, value: Number) -> object:
        """A driver value comparing exactly: a Decimal rather than a float, which PostgreSQL
        would compare as float8 after casting the bigint column to float8 too."""
        return decimal_literal(value)

    def double(self, value: float) -> str:
        """A literal of the double `value` (`numbers.double_test`): the decimal is read as
        the double it was written from."""
        return f"CAST({value!r} AS DOUBLE PRECISION)"

    def bind_double(self, value: float) -> object:
        return value

    def instant(self, value: datetime) -> str:
        return f"{self.instant_type}'{utc_text(value)}+00:00'"

    def bind_instant(self, value: datetime) -> object:
        return value

    def day(self, value: date) -> str:
        """A date literal (a date field's): a day, no time, no zone."""
        return f"DATE '{value.isoformat()}'"

    def bind_day(self, value: date) -> object:
        return value

    def date_month_day(self, sql: Callable[[], str]) -> str:
        """`month * 100 + day` of the dates `sql()` writes: a date's own, with no zone."""
        return f"CAST(to_char({sql()}, 'MMDD') AS INTEGER)"

    def month_day(self, sql: Callable[[], str], zone: str) -> str:
        """The local `month * 100 + day` of the instants `sql()` writes, in the IANA `zone`, an
        integer (anniversaries). `sql` is called at each use: it may hold placeholders.
        PostgreSQL reads its own zone database (`AT TIME ZONE`)."""
        return f"CAST(to_char({sql()} AT TIME ZONE {self.text(zone)}, 'MMDD') AS INTEGER)"

    def boolean(self, value: bool) -> str:
        return self.true if value else self.false

    # Expressions over a column's SQL

    def exact(self, sql: str) -> str:
        """The operand of a case-sensitive, no-pad comparison."""
        return sql

    def fold(self, sql: str) -> str:
        """Case folding; `lower` is Python's `str.lower` given an ICU 'und' database."""
        return f"lower({sql})"

    def ordered(self, sql: str) -> str:
        """The operand of a string ordering (`gt`, `lt`, ...) in code-point order: the "C"
        collation, which compares UTF-8 bytes, whose order is the code points' order, with
        no padding."""
        return f'{sql} COLLATE "C"'

    def fold_refusal(self, literal: str) -> str | None:
        """Why a case-insensitive test with this (folded) literal cannot be answered as Python
        answers it on this engine, or None (`sigma_refusal` on engines whose `lower()` has no
        final sigma)."""
        return None

    def order_refusal(self, literal: str) -> str | None:
        """Why a case-insensitive ordering with this folded literal cannot be answered as
        Python answers it on this engine, or None."""
        return None

    def never(self, sql: str) -> str:
        """FALSE for a present value and UNKNOWN for null, as a comparison that cannot hold."""
        return f"CASE WHEN {sql} IS NOT NULL THEN {self.false} END"

    def operand(self, op: Op, value: str) -> str:
        """The value `match` compares with, as bound or inlined."""
        return like_pattern(op, value)

    def match(self, op: Op, sql: str, operand: str, shape: Shape) -> str:
        """`contains`, `startsWith` or `endsWith` of `sql` with an `operand(op, value)`."""
        return f"{self.exact(sql)} LIKE {operand} ESCAPE '{LIKE_ESCAPE}'"

    like_folding: ClassVar[str | None] = None
    """How the engine's case-insensitive LIKE folds (`like_unsafe`); None: a case-insensitive
    pattern test always matches the folded column (`fold`)."""

    def folded_like(
        self,
        op: Op,
        sql: Callable[[], str],
        needle: Callable[[], str],
        shape: Shape,
        unsafe: str,
    ) -> str:
        """The case-insensitive `op` of the column `sql()` with the folded `needle()` (the
        value itself, bound or inlined) by the engine's LIKE, where `like_unsafe` allows it:
        text holding a character of `unsafe` is tested the exact way. Each callable writes
        its piece anew at each use, in the order of the text."""
        raise NotImplementedError(f"{self.title} has no case-insensitive LIKE form")

    # Long `in`/`notIn` lists bound as one parameter (`members.py`)

    def member_test(self, op: Op, sql: str, param: str, members: Members) -> str | None:
        """`sql` `in` (or `notIn`, by `op`) the list bound as the one parameter `param`, of
        `members` items, with `sql` written before `param`; None where the engine keeps one
        placeholder per value (the standard forms have no list parameter)."""
        return None

    def bind_members(self, values: Sequence[Any], members: Members) -> object:
        """The driver value of the one parameter `member_test` reads."""
        raise NotImplementedError(f"{self.title} binds lists value by value")

    def bind_member(self, value: Any, members: Members) -> object:
        """One item as the literal form binds it (`bind_number`, `bind_instant`, ...)."""
        if members is Members.INTEGER or members is Members.REAL:
            return self.bind_number(value)
        if members is Members.INSTANT:
            return self.bind_instant(value)
        return self.bind_day(value) if members is Members.DAY else value

    # List fields and JSON arrays at a data path: each engine stores and reads them its own
    # way (`list_sql.py`); an engine without a way refuses.

    def list_test(self, out: ListWriter, node: ListTest, column: str, element: FieldType) -> str:
        """`node` on the present list `column` of `element` items."""
        raise refused(node, self.title, "lists are stored and compared differently there")

    def array_test(self, out: ListWriter, node: ListTest) -> str:
        """`node` on the JSON array at `node.path` of a JSON column."""
        raise refused(node, self.title, "JSON arrays at a data path are not read there yet")

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

    def json_number(self, out: NumberWriter, op: Op, value: Callable[[], str], literal: Any) -> str:
        """`value() op literal` for a JSON number `value()` (as `json_value` reads it), read as
        Python's `json` reads its text (`numbers.py`).

        jsonb keeps a number as a decimal, with its fraction digits (`5.0`, `0.1`) but not its
        exponent (`1e+23` is kept as 100000000000000000000000): a number with a fraction is a
        double, an integer within 64 bits is exact, and a larger one is a double (as on
        SQLite), so `1e+23` is the double 1e23. Numbers beyond the doubles stay exact decimals.
        """

        def exact() -> str:
            return exact_test(out, op, value, literal)

        def double() -> str:
            as_double = lambda: f"CAST({value()} AS DOUBLE PRECISION)"  # noqa: E731
            return double_test(out, op, as_double, literal, (self.false, self.true))

        return (
            f"CASE WHEN scale({value()}) = 0 AND {value()} BETWEEN {INT64_MIN} AND {INT64_MAX} "
            f"THEN {exact()} WHEN {value()} = 0 OR abs({value()}) BETWEEN {_LEAST_DOUBLE} AND "
            f"{_GREATEST_DOUBLE} THEN {double()} ELSE {exact()} END"
        )

    def json_value(self, sql: str, keys: list[str], path: str | None, kind: FieldType) -> str:
        """The value as an SQL value of `kind`, for a value known to be of that JSON type:
        numbers as `numeric`, which keeps what jsonb keeps (`json_number` compares them)."""
        document = self.json_document(sql, keys)
        if kind is FieldType.STRING:
            return f"({document} #>> '{{}}')"
        return f"CAST({document} AS {'NUMERIC' if kind is FieldType.NUMBER else 'BOOLEAN'})"


_LEAST_DOUBLE = "2.5e-324"
"""The least decimal PostgreSQL casts to a double without failing (it rounds up to 5e-324)."""
_GREATEST_DOUBLE = "1.7976931348623157e308"


# Engines whose lower() uses simple case mappings fold U+0130 to "i"; Python's str.lower() gives
# "i" + U+0307 (its one unconditional multi-character lowercase mapping), so map it first.
FOLD_DOTTED_I = "lower(replace({}, '\u0130', 'i\u0307'))"


class AnniversaryRefused(ValueError):
    """An engine that cannot compute a local month-day in the zone faithfully; the back-ends
    turn it into a `FilterError` naming the field."""

    def __init__(self, message: str, suggestion: str) -> None:
        super().__init__(message)
        self.suggestion = suggestion


def anniversary_sql(
    dialect: Dialect, column: Callable[[], str], days: MonthDays, *, dated: bool = False
) -> str:
    """The local month-day (`month * 100 + day`, `Dialect.month_day`) of `column()` in one of
    the ranges of `days`: TRUE, FALSE, or NULL for a null column. The zone is a checked IANA
    name, inlined as a literal; the column is written anew in each range's test. A column of
    dates (`dated`) has its own month-day, whatever the zone (`Dialect.date_month_day`)."""
    month_day = dialect.date_month_day(column) if dated else dialect.month_day(column, days.zone)
    tests = [f"{month_day} BETWEEN {low} AND {high}" for low, high in days.ranges]
    return tests[0] if len(tests) == 1 else "(" + " OR ".join(tests) + ")"
