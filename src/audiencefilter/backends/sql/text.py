"""SQL text back-end: a filter as a boolean SQL condition, for PostgreSQL, SQLite, MySQL/MariaDB
and DuckDB.

Design choices:
- One visitor writes both forms: with every literal inlined (`to_sql`) or with placeholders and
  a parameter list (`to_sql_params`). Only the leaf renderers differ, so the two cannot drift.
- The dialect (`dialects/`) decides every spelling; this module decides structure:
  parentheses around an OR inside an AND and the reverse, `NOT (...)` always parenthesized
  (MySQL's HIGH_NOT_PRECEDENCE would read `NOT a = b` as `(NOT a) = b`).
- It writes the lowered tree (`rewrite/lower.py`), where empty lists are constants, literals of
  case-insensitive tests are folded, lists hold each literal once and declared JSON fields are
  path conditions; `Filter.to_sql` lowers and calls `to_sql`.
- SQL's three-valued logic is the filters' logic: a comparison with NULL is UNKNOWN, `NOT` keeps
  it UNKNOWN, and a WHERE clause keeps only TRUE rows; no `IS NOT NULL` guards are needed.
- Relative date-times (`{"ago": "P30D"}`) arrive resolved (lowered at `now` or the clock's time
  of writing): the SQL holds the instant, exactly as for an absolute date-time, so every engine
  compares with the same value and a statement is rebuilt (or re-bound) to move with time.
- Inlined text is meant to be run as is. `%` is not doubled: that is a DBAPI `format`
  paramstyle rule, so run the text without parameters (or double `%` yourself if you must
  pass some along).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any, cast

from ...errors import FilterError, Issue
from ...language.anniversary import MonthDays
from ...language.data_paths import value_type
from ...language.fields import (
    LIST_OPS,
    ORDERING_OPS,
    PATTERN_OPS,
    FieldType,
    ListOp,
    Op,
    Schema,
)
from ...language.lists import without_nul
from ...language.nodes import (
    Aggregated,
    And,
    Blank,
    Comparison,
    Const,
    FieldComparison,
    IsNull,
    ListTest,
    Node,
    Not,
    Or,
    Quantified,
    blank_form,
)
from ...language.values import double_exact, double_guard
from ...language.visitor import Visitor
from .dialects import Dialect, Number, Shape, get_dialect, integral, text_bound
from .dialects.base import (
    INT64_MAX,
    INT64_MIN,
    AnniversaryRefused,
    Marked,
    anniversary_sql,
    refused_comparison,
    refused_fold,
)
from .dialects.like import like_unsafe
from .dialects.members import LONG_LIST, members_of
from .relations_text import aggregated_sql, quantified_sql

COMPARISON_OPERATORS = {Op.EQUALS: "=", Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}


def to_sql(
    node: Node,
    schema: Schema,
    dialect: str = "postgresql",
    columns: Mapping[str, str] | None = None,
    *,
    table: str = "contacts",
    tables: Mapping[str, str] | None = None,
) -> str:
    """A lowered filter as a SQL boolean condition with every value inlined as a safe literal.

    `node` is the lowered tree (`Filter.lowered_at`); `dialect` is `postgresql`, `sqlite`,
    `mysql` (also for MariaDB), `duckdb` or `spark`; `columns` maps field names to column names
    (`{"createdAt": "created_at"}`, each quoted as one identifier); `table` names the contact
    row and `tables` the related tables named otherwise than their relation declares.
    Raises `ValueError` for an unknown dialect or an invalid column name.
    """
    writer = SqlWriter(get_dialect(dialect), schema, columns, None, table=table, tables=tables)
    return writer.visit(node)


def to_sql_params(
    node: Node,
    schema: Schema,
    dialect: str = "postgresql",
    columns: Mapping[str, str] | None = None,
    *,
    table: str = "contacts",
    tables: Mapping[str, str] | None = None,
) -> tuple[str, list[Any]]:
    """A lowered filter as a SQL condition with placeholders, and the parameters in order.

    Placeholders follow the usual driver of each dialect: `%s` for postgresql (psycopg) and
    mysql (pymysql, mysqlclient), `?` for sqlite (sqlite3) and duckdb. Parameters are driver
    values: str, int, Decimal or float, bool, and datetime (aware UTC; naive UTC for MySQL;
    text in SQLAlchemy's storage format for SQLite).
    """
    params: list[Any] = []
    writer = SqlWriter(get_dialect(dialect), schema, columns, params, table=table, tables=tables)
    return writer.visit(node), params


class SqlWriter(Visitor[str]):
    """Writes one filter for one dialect; `params` collects values instead of inlining them.

    It implements `relations_text.RelationWriter` (relation conditions) and
    `dialects.base.ListWriter` (list and JSON-array tests, written by the dialect).
    """

    def __init__(
        self,
        dialect: Dialect,
        schema: Schema,
        columns: Mapping[str, str] | None,
        params: list[Any] | None,
        *,
        table: str = "contacts",
        tables: Mapping[str, str] | None = None,
    ) -> None:
        self.dialect = dialect
        self.schema = schema
        self.columns: Mapping[str, str] = columns or {}
        self.params = params
        #: The row source's name: the contact table, or a related table's alias.
        self.table = table
        #: Relations' tables named otherwise than their `Relation.table`.
        self.tables: Mapping[str, str] = tables or {}
        #: The last alias given in the statement (shared by nested writers).
        self.aliases = [0]
        self.qualify = False
        #: SQL standing for a field (an aggregate's subquery), written anew at each use.
        self.expressions: Mapping[str, Callable[[], str]] = {}

    def _nested(self, schema: Schema, columns: Mapping[str, str]) -> SqlWriter:
        inner = SqlWriter(self.dialect, schema, columns, self.params, tables=self.tables)
        inner.aliases = self.aliases
        return inner

    def next_alias(self) -> str:
        self.aliases[0] += 1
        return f"r{self.aliases[0]}"

    def related(self, schema: Schema, columns: Mapping[str, str], alias: str) -> SqlWriter:
        inner = self._nested(schema, columns)
        inner.table, inner.qualify = alias, True
        return inner

    def valued(self, schema: Schema, field: str, value: Callable[[], str]) -> SqlWriter:
        inner = self._nested(schema, {})
        inner.expressions = {field: value}
        return inner

    def visit_and(self, node: And) -> str:
        return balanced([self.operand(item, Or) for item in node.items], " AND ")

    def visit_or(self, node: Or) -> str:
        return balanced([self.operand(item, And) for item in node.items], " OR ")

    def operand(self, node: Node, other: type[And | Or]) -> str:
        """An item of a group; in parentheses if it is a group of the other kind (a nested
        group of the same kind is associative and needs none)."""
        sql = self.visit(node)
        return f"({sql})" if isinstance(node, other) else sql

    def visit_not(self, node: Not) -> str:
        return f"NOT ({self.visit(node.item)})"

    def visit_const(self, node: Const) -> str:
        return self.dialect.boolean(node.value)

    def visit_quantified(self, node: Quantified) -> str:
        return quantified_sql(self, node)

    def visit_aggregated(self, node: Aggregated) -> str:
        return aggregated_sql(self, node)

    def visit_field_comparison(self, node: FieldComparison) -> str:
        kind = self.schema[node.field].type
        left, right = self.column(node.field), self.column(node.other)
        return reference_sql(self.dialect, kind, node.op, left, right)

    def visit_blank(self, node: Blank) -> str:  # lowering writes it out; as it does
        return f"({self.visit(blank_form(node))})"

    def visit_list_test(self, node: ListTest) -> str:
        """A list field's test, written by the dialect for a present list: a null list is
        UNKNOWN whatever the operator (`lists.truth`). A JSON array at a data path is read
        as the dialect reads other data paths (`Dialect.array_test`)."""
        if node.insensitive:
            fold_checked(self.dialect, node)
        nul_checked(self.dialect, node)  # a list column is JSON text where JSON ends at NUL
        if node.path:
            number_checked(self.dialect, node)
            return self.dialect.array_test(self, node)
        element = self.schema[node.field].type.element
        assert element is not None
        column = self.column(node.field)
        kept = node if self.dialect.text_holds_nul else without_nul(node)
        if isinstance(kept, bool):
            test = self.dialect.true if kept else self.dialect.false
        else:
            test = self.dialect.list_test(self, kept, column, element)
        return f"CASE WHEN {column} IS NOT NULL THEN {test} END"

    def visit_is_null(self, node: IsNull) -> str:
        if node.path:
            # Missing, JSON null, or under something that is no object.
            of_kind = self.json_type(node.field, node.path)
            null = self.dialect.json_null
            return f"COALESCE({of_kind}, {self.text(null)}) = {self.text(null)}"
        return f"{self.column(node.field)} IS NULL"

    def visit_comparison(self, node: Comparison) -> str:
        if node.insensitive:
            fold_checked(self.dialect, node)
        if node.op is Op.ANNIVERSARY:
            dated = not node.path and self.schema[node.field].type is FieldType.DATE
            return self.anniversary(node, lambda: self.column(node.field), dated=dated)
        if node.path:
            return self.json_comparison(node, node.field, node.path)
        kind = self.schema[node.field].type
        return self.typed(node, kind, lambda: self.column(node.field))

    def anniversary(
        self, node: Comparison, column: Callable[[], str], *, dated: bool = False
    ) -> str:
        """The local month-day in ranges (`dialects.base.anniversary_sql`); a `FilterError` on
        an engine that cannot compute it faithfully."""
        assert isinstance(node.value, MonthDays), "anniversaries are lowered at a now"
        try:
            return anniversary_sql(self.dialect, column, node.value, dated=dated)
        except AnniversaryRefused as exc:
            raise refusal(node, exc) from None

    def json_comparison(self, node: Comparison, field: str, keys: tuple[str, ...]) -> str:
        """UNKNOWN for a missing key or JSON null, FALSE for a value of another JSON type, else
        the comparison of the value read as the literal's type. Every piece is written in the
        order it appears, so that placeholders and parameters stay in step."""
        dialect = self.dialect
        kind = value_type(node.value)
        nul_checked(dialect, node)
        number_checked(dialect, node)
        names = dialect.json_types[kind]
        of_kind = self.json_type(field, keys)
        accepted = ", ".join([self.text(name) for name in names])
        value = lambda: self.json_value(field, keys, kind)  # noqa: E731
        if kind is FieldType.NUMBER:
            test = dialect.json_number(self, node.op, value, node.value)
        else:
            test = self.typed(node, kind, value, split=False)
        other = f"{self.json_type(field, keys)} <> {self.text(dialect.json_null)}"
        return (
            f"CASE WHEN {of_kind} IN ({accepted}) THEN {test} WHEN {other} THEN {dialect.false} END"
        )

    def json_type(self, field: str, keys: tuple[str, ...]) -> str:
        path = self.dialect.json_path(keys)
        column = self.column(field)
        rendered = [self.text(key) for key in keys] if path is None else []
        return self.dialect.json_type(column, rendered, None if path is None else self.text(path))

    def json_value(self, field: str, keys: tuple[str, ...], kind: FieldType) -> str:
        path = self.dialect.json_path(keys)
        column = self.column(field)
        rendered = [self.text(key) for key in keys] if path is None else []
        path_sql = None if path is None else self.text(path)
        return self.dialect.json_value(column, rendered, path_sql, kind)

    def typed(
        self, node: Comparison, kind: FieldType, column: Callable[[], str], *, split: bool = True
    ) -> str:
        """`node` on the values `column()` writes, of `kind`. `column` is called at each use,
        so an expression holding placeholders (an aggregate's subquery) is written with its
        parameters each time. `split` (a column, not a JSON value) writes lists of numbers as
        integers and others (`number_groups`) where the dialect asks for it or a long list
        binds each group as one parameter (`members.py`)."""
        if kind is FieldType.STRING:
            return self.string_comparison(node, column)
        if kind is FieldType.NUMBER and split and not self.expressions:
            return self.exact_on_doubles(node, column, self.plain_typed(node, kind, column))
        return self.plain_typed(node, kind, column, split=split)

    def exact_on_doubles(self, node: Comparison, column: Callable[[], str], sql: str) -> str:
        """`sql`, a number column's comparison, with the one answer a DOUBLE column's rounding
        of an integer literal no double holds changes added back (`values.double_guard`), on
        an engine that rounds so (`Dialect.rounds_integers_for_doubles`). Nothing here says
        whether the column holds doubles: on integers and decimals the added test is idle."""
        guard = (
            double_guard(node.op, node.value) if self.dialect.rounds_integers_for_doubles else None
        )
        if guard is None:
            return sql
        op, operand, holds_there = guard
        if op is Op.IN:  # in groups, as any list (`number_groups`): DuckDB unifies a list's types
            there = self.in_list(Op.IN, column, number_groups(operand), self.number)
        else:
            there = f"{column()} = {self.number(operand)}"
        return f"({sql} OR {there})" if holds_there else f"({sql} AND NOT {there})"

    def plain_typed(
        self, node: Comparison, kind: FieldType, column: Callable[[], str], *, split: bool = True
    ) -> str:
        """`typed` for numbers, booleans, date-times and dates, as the engine compares them."""
        render = self.number if kind is FieldType.NUMBER else self.scalar
        if node.op not in LIST_OPS:
            return f"{column()} {COMPARISON_OPERATORS[node.op]} {render(node.value)}"
        assert isinstance(node.value, tuple)
        long = self.params is not None and len(node.value) > LONG_LIST
        split_numbers = split and kind is FieldType.NUMBER and (self.dialect.unifies_lists or long)
        groups = number_groups(node.value) if split_numbers else [node.value]
        return self.in_list(node.op, column, groups, render, kind if split else None)

    def in_list(
        self,
        op: Op,
        column: Callable[[], str],
        groups: list[tuple[Any, ...]],
        render: Callable[[Any], str],
        kind: FieldType | None = None,
    ) -> str:
        """`in`/`notIn` of one list, or of several groups ORed (`number_groups`); a long group
        of a field of `kind` as one parameter where the dialect binds one (`members.py`)."""
        if len(groups) == 1:
            return self.in_group(op, column, groups[0], render, kind)
        return _any_in(op, [self.in_group(Op.IN, column, g, render, kind) for g in groups])

    def in_group(
        self,
        op: Op,
        column: Callable[[], str],
        values: tuple[Any, ...],
        render: Callable[[Any], str],
        kind: FieldType | None,
    ) -> str:
        """`column() IN (values)`, the column written first, as in the text; as one parameter
        where `bound_list` can. An aggregate's subquery on an engine that takes none as IN's
        operand (`Dialect.subquery_in`) is compared with each value, the tests ORed: the same
        three-valued answer, since the list holds no null."""
        if self.expressions and not self.dialect.subquery_in:
            return _any_in(op, [f"{column()} = {render(v)}" for v in values])
        apart = self.zero_apart(op, column, values, render, kind)
        if apart is not None:
            return apart
        subject = column()
        bound = self.bound_list(op, subject, values, kind)
        if bound is not None:
            return bound
        rendered = ", ".join([render(v) for v in values])
        return f"{subject} {_LIST_KEYWORD[op]} ({rendered})"

    def zero_apart(
        self,
        op: Op,
        column: Callable[[], str],
        values: tuple[Any, ...],
        render: Callable[[Any], str],
        kind: FieldType | None,
    ) -> str | None:
        """A number list holding zero, on an engine whose `IN` finds a double by its bits
        (`Dialect.finds_members_by_bits`): the zero tested with `=`, which holds for -0 as
        for 0, ORed with the rest's `IN`; the same three-valued answer (no null listed)."""
        zero = [v for v in values if not isinstance(v, bool) and v == 0]
        if kind is not FieldType.NUMBER or not self.dialect.finds_members_by_bits or not zero:
            return None
        rest = tuple(v for v in values if isinstance(v, bool) or v != 0)
        tests = [self.in_group(Op.IN, column, rest, render, kind)] if rest else []
        tests.append(f"{column()} = {render(0)}")  # written in order: parameters stay in step
        return _any_in(op, tests)

    def bound_list(
        self, op: Op, subject: str, values: tuple[Any, ...], kind: FieldType | None
    ) -> str | None:
        """The list bound as one parameter, when parameters are collected and `members_of`
        and the dialect allow it (`dialects/members.py`); else None."""
        if self.params is None or kind is None:
            return None
        members = members_of(values, kind)
        if members is None:
            return None
        dialect = self.dialect
        marker = dialect.marker(len(self.params), "members", values)
        test = dialect.member_test(op, subject, marker, members)
        if test is not None:
            self.params.append(dialect.bind_members(values, members))
        return test

    def string_comparison(self, node: Comparison, column: Callable[[], str]) -> str:
        """A string test of the values `column()` writes (called once, or once per use by a
        case-insensitive pattern the engine's LIKE answers: `folded_like`)."""
        unsafe = self.like_unsafe(node)
        if unsafe is not None:
            text = cast(str, node.value)
            needle = lambda: self.text(text)  # noqa: E731
            return self.dialect.folded_like(node.op, column, needle, Shape.of(text), unsafe)
        subject = self.dialect.fold(column()) if node.insensitive else column()
        if node.op in LIST_OPS:
            texts = cast(tuple[str, ...], node.value)
            return self.string_list(node.op, subject, list(texts))
        assert isinstance(node.value, str)
        if node.op in ORDERING_OPS:
            return self.string_order(node, subject, node.value)
        return self.string_match(node, subject, node.value)

    def like_unsafe(self, node: Comparison) -> str | None:
        """For a case-insensitive pattern test the dialect's LIKE can answer, the characters
        of the column it must leave to the exact test (`dialects.base.like_unsafe`)."""
        folding = self.dialect.like_folding
        if folding is None or not node.insensitive or node.op not in PATTERN_OPS:
            return None
        return like_unsafe(node.op, cast(str, node.value), folding)

    def string_order(self, node: Comparison, subject: str, value: str) -> str:
        op, bound = string_order(self.dialect, node, value)
        return f"{self.dialect.ordered(subject)} {COMPARISON_OPERATORS[op]} {self.text(bound)}"

    def string_match(self, node: Comparison, subject: str, value: str) -> str:
        """`equals` or a pattern test of text (`contains`, `startsWith`, `endsWith`)."""
        dialect = self.dialect
        if "\x00" in value and not dialect.text_holds_nul:
            return dialect.never(subject)
        if node.op is Op.EQUALS:
            return f"{dialect.exact(subject)} = {self.text(value)}"
        if node.op in PATTERN_OPS:
            operand = self.text(dialect.operand(node.op, value))
            return dialect.match(node.op, subject, operand, Shape.of(value))
        raise ValueError(
            f"operator {node.op.value!r} does not apply to string field {node.field!r}"
        )

    def string_list(self, op: Op, subject: str, values: list[str]) -> str:
        dialect = self.dialect
        if not dialect.text_holds_nul:
            # No stored text holds NUL: such values match nothing and can be left out.
            values = [v for v in values if "\x00" not in v]
            if not values:
                never = dialect.never(subject)
                return never if op is Op.IN else f"NOT ({never})"
        exact = dialect.exact(subject)
        return self.in_group(op, lambda: exact, tuple(values), self.text, FieldType.STRING)

    def column(self, field: str) -> str:
        if field in self.expressions:
            return self.expressions[field]()
        column = self.dialect.quote(self.columns.get(field, field))
        return f"{self.dialect.quote(self.table)}.{column}" if self.qualify else column

    def members(self, values: tuple[Any, ...], element: FieldType) -> str | None:
        members = None if self.params is None else members_of(values, element)
        if members is None or self.params is None:
            return None
        return self._bound("members", self.dialect.bind_members(values, members))

    # Leaves: a literal, or a placeholder with the value appended to `params`.

    def _bound(self, kind: Marked, value: object) -> str:
        """`value` appended to the parameters, and its placeholder (`Dialect.marker`)."""
        assert self.params is not None
        self.params.append(value)
        return self.dialect.marker(len(self.params) - 1, kind, value)

    def text(self, value: str) -> str:
        if self.params is None:
            return self.dialect.text(value)
        return self._bound("text", self.dialect.bind_text(value))

    def number(self, value: Any) -> str:
        number: Number = value
        if self.params is None:
            return self.dialect.number(number)
        return self._bound("number", self.dialect.bind_number(number))

    def double(self, value: float) -> str:
        """A double, typed as one (`dialects.numbers.double_test`)."""
        if self.params is None:
            return self.dialect.double(value)
        return self._bound("double", self.dialect.bind_double(value))

    def scalar(self, value: Any) -> str:
        """A date-time, a date or a boolean."""
        if isinstance(value, datetime):
            if self.params is None:
                return self.dialect.instant(value)
            return self._bound("instant", self.dialect.bind_instant(value))
        if isinstance(value, date):
            if self.params is None:
                return self.dialect.day(value)
            return self._bound("day", self.dialect.bind_day(value))
        if self.params is None:
            return self.dialect.boolean(bool(value))
        return self._bound("boolean", bool(value))


def _literals(node: Comparison | ListTest) -> tuple[Any, ...]:
    """The literal of a test, or each item of a list literal."""
    return node.value if isinstance(node.value, tuple) else (node.value,)


def _where(node: Comparison | ListTest) -> str:
    """The data path a refusal names: `data.plan.tier`."""
    return ".".join((node.field, *node.path))


def fold_checked(dialect: Dialect, node: Comparison | ListTest) -> None:
    """A `FilterError` naming the field where a case-insensitive test's literal meets a
    place where the engine folds otherwise than Python (`Dialect.fold_refusal`): decided by
    the literal, so refused when the expression is built, never answered otherwise."""
    values = _literals(node)
    for value in values:
        reason = dialect.fold_refusal(value) if isinstance(value, str) else None
        if reason is not None:
            raise refused_fold(node.field, node.op.value, dialect.title, reason)


def nul_checked(dialect: Dialect, node: Comparison | ListTest) -> None:
    """A `FilterError` naming the path where a string literal at a data path, or of a list
    field's test, holds NUL on an engine whose JSON functions end a string there
    (`json_text_ends_at_nul`: SQLite, which keeps a list column as JSON text and reads its
    items with `json_each`): decided by the literal, so refused when the expression is built.
    There the item `"\\u0000"` reads as the empty string: `has` would select nobody, its `not`
    everybody."""
    values = _literals(node)
    if not dialect.json_text_ends_at_nul:
        return
    if any(isinstance(value, str) and "\x00" in value for value in values):
        where = _where(node)
        raise FilterError(
            [
                Issue(
                    path=where,
                    message=f'{dialect.title} cannot evaluate "{node.op.value}" on "{where}" '
                    "faithfully: its JSON functions read a string up to its first NUL, and "
                    "this text holds NUL (U+0000)",
                    suggestion="compare without the NUL, keep such text in a column of its "
                    "own, or evaluate this filter in memory or on DuckDB",
                )
            ]
        )


_EQUALITIES = frozenset(
    {Op.EQUALS, Op.IN, Op.NOT_IN, ListOp.HAS, ListOp.HAS_SOME, ListOp.HAS_EVERY}
)
"""The operators that are equalities of the literal (or each item of it) with a value."""


def number_checked(dialect: Dialect, node: Comparison | ListTest) -> None:
    """A `FilterError` naming the path where an equality at a data path has an integer literal
    that no double holds and the engine keeps no JSON integer that large exactly
    (`json_exact_integers`): the one stored number equal to it is read as another there, so
    the engine's answer could only be "nobody". Decided by the literal, so refused when the
    expression is built; an ordering with such a literal stays, right on every value the
    engine keeps."""
    if node.op not in _EQUALITIES:
        return
    values = _literals(node)
    bound = dialect.json_exact_integers
    lost = next((v for v in values if _beyond(v, bound)), None)
    if lost is None:
        return
    where = _where(node)
    message = (
        f'{dialect.title} cannot evaluate "{node.op.value}" on "{where}" faithfully: it keeps '
        f"a JSON integer beyond {_power(bound)} as a double, and no double holds {lost}"
    )
    fix = "keep such numbers in an integer or decimal column of their own, or evaluate this "
    raise FilterError([Issue(path=where, message=message, suggestion=fix + "filter in memory")])


def _beyond(value: object, bound: int) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not -bound <= value < bound
        and not double_exact(value)
    )


def _power(bound: int) -> str:
    return f"2^{bound.bit_length() - 1}"


def string_order(dialect: Dialect, node: Comparison, value: str) -> tuple[Op, str]:
    """The operator and literal of a string ordering on `dialect` (`text_bound`), or a
    `FilterError` where a case-insensitive one cannot be answered as Python answers it."""
    if node.insensitive:
        reason = dialect.order_refusal(value)
        if reason is not None:
            raise refused_comparison(node.field, node.op, dialect.title, reason)
    return text_bound(node.op, value, dialect.text_holds_nul)


def reference_sql(dialect: Dialect, kind: FieldType, op: Op, left: str, right: str) -> str:
    """Two columns of one type compared (a field reference); NULL on either side is UNKNOWN.
    Strings compare by code point (`exact` for equality, `ordered` for ordering, on both
    sides); numbers, date-times and booleans as the columns' types compare them."""
    if kind is FieldType.STRING:
        wrap = dialect.exact if op is Op.EQUALS else dialect.ordered
        left, right = wrap(left), wrap(right)
    return f"{left} {COMPARISON_OPERATORS[op]} {right}"


GROUP_WIDTH = 32
"""The most items one AND or OR writes side by side; see `balanced`."""


def balanced(items: list[str], keyword: str) -> str:
    """`items` joined by `keyword`, in parenthesized groups of at most `GROUP_WIDTH` when there
    are more: engines parse `a OR b OR c` as a tree as deep as the list is long, and SQLite
    refuses one deeper than 1,000 ("Expression tree is too large"). Groups of groups keep the
    depth near `GROUP_WIDTH` times the logarithm of the length."""
    while len(items) > GROUP_WIDTH:
        chunks = [items[i : i + GROUP_WIDTH] for i in range(0, len(items), GROUP_WIDTH)]
        items = [
            "(" + keyword.join(chunk) + ")" if len(chunk) > 1 else chunk[0] for chunk in chunks
        ]
    return keyword.join(items)


def number_groups(values: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The distinct numbers of an `in` list: the 64-bit integers, each wider integer alone,
    and the other numbers. DuckDB compares a list of integers and floats as doubles (2^53 + 1
    would equal 2^53; `Dialect.unifies_lists`), and an engine writes some wide integers as
    doubles (DuckDB past HUGEINT: `-1e300`): beside -2^63 - 1 in one list, that makes the
    list doubles, and -2^63 a member. Alone, each is compared as its own literal is."""
    numbers = [integral(v) for v in dict.fromkeys(values)]
    ints = tuple(dict.fromkeys(v for v in numbers if isinstance(v, int) and _int64(v)))
    wide = [(v,) for v in dict.fromkeys(v for v in numbers if isinstance(v, int) and not _int64(v))]
    others = tuple(dict.fromkeys(v for v in numbers if not isinstance(v, int)))
    return [group for group in (ints, *wide, others) if group] or [()]


def _int64(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX


_LIST_KEYWORD = {Op.IN: "IN", Op.NOT_IN: "NOT IN"}


def _any_in(op: Op, tests: list[str]) -> str:
    """`in` written as tests ORed (no null among the values): `notIn` is their negation."""
    either = "(" + " OR ".join(tests) + ")"
    return f"NOT {either}" if op is Op.NOT_IN else either


def refusal(node: Comparison, exc: AnniversaryRefused) -> FilterError:
    """The `FilterError` of a condition an engine cannot answer faithfully."""
    return FilterError(
        [Issue(path=f"{node.field}.{node.op.value}", message=str(exc), suggestion=exc.suggestion)]
    )
