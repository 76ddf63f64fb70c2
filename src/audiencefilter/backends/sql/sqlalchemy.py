"""SQLAlchemy back-end: a filter as a boolean `ColumnElement` over a table, ORM class or mapping.

Design choices:
- It builds the lowered tree (`rewrite/lower.py`: constants for empty lists, folded
  literals, each list literal once, declared JSON fields as path conditions, instants for
  relative date-times); `Filter.to_sqlalchemy` lowers and calls `to_sqlalchemy`.
- Values are bound parameters, and the expression composes with anything else a `select()`
  holds (`listId = :id`, ORDER BY, LIMIT).
- Numbers, date-times, booleans and NULL tests are plain SQLAlchemy operators. String tests use
  three small constructs (`Exact`, `Folded`, `TextMatch`) whose `@compiles` hooks ask the
  dialect classes of `dialects/` for the SQL, so this back-end and `to_sql` agree by
  construction. An unknown SQLAlchemy dialect gets the standard SQL forms.
- Statements stay cacheable: a construct's SQL depends only on its structure and on facts in
  its cache key (`Shape`); dialect-specific value changes (pattern escaping, number forms)
  happen at bind time in `TypeDecorator`s, which see the dialect.
- Numbers bind as BIGINT when they are int64 and as NUMERIC otherwise (exact decimals; SQLite
  gets a double that orders the same against every int64), never as float8.
- Date-times bind with the column's own `DateTime` type, so SQLite's text storage format is
  SQLAlchemy's; a column without time zone receives naive UTC.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Double,
    Float,
    Numeric,
    String,
    and_,
    bindparam,
    false,
    not_,
    or_,
    true,
)
from sqlalchemy.engine.interfaces import Dialect as SADialect
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import operators
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ColumnElement, Grouping, UnaryExpression
from sqlalchemy.sql.operators import OperatorType
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import NullType, TypeDecorator, TypeEngine

from ...language.anniversary import MonthDays
from ...language.fields import LIST_OPS, ORDERING_OPS, PATTERN_OPS, FieldType, Op, Schema
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
from ...language.relative import Ago
from ...language.values import double_guard
from ...language.visitor import Visitor
from ..naming import DEFAULT_NAMING, Naming, naming_function
from .attributes import Attributes
from .column_shapes import gated
from .dialects import DIALECTS, INT64_MAX, INT64_MIN, Dialect, Number, Shape, integral
from .dialects.base import AnniversaryRefused, anniversary_sql
from .dialects.like import like_unsafe
from .dialects.members import Members, members_of
from .relations_sqlalchemy import aggregated_expression, quantified_expression
from .text import (
    COMPARISON_OPERATORS,
    GROUP_WIDTH,
    SqlWriter,
    fold_checked,
    number_groups,
    reference_sql,
    refusal,
    string_order,
)

Expression = ColumnElement[bool]
_STANDARD = Dialect()


def to_sqlalchemy(
    node: Node,
    schema: Schema,
    target: Any,
    relations: Mapping[str, Any] | None = None,
    *,
    columns: Mapping[str, Any] | None = None,
    naming: Naming = DEFAULT_NAMING,
) -> Expression:
    """A lowered filter as a SQLAlchemy boolean expression, with every value a bound parameter.

    Args:
        node: The lowered tree, relative date-times already instants (`Filter.lowered_at`):
            they are bound as parameters, so build the expression per query for a filter that
            moves with time.
        schema: The schema the filter was validated against.
        target: A `Table` (or any FROM clause: alias, subquery) with a column per field; an ORM
            class or `aliased()` entity with an attribute per field (column, `column_property`
            or `hybrid_property`); or a mapping of field name to column expression.
        relations: For Core tables, the related table (or ORM class) of each relation the
            filter uses (`{"actions": actions_table}`); an ORM target's relationships need none
            (see `relations_sqlalchemy.py`).
        columns: The attribute (or column) of each field named otherwise, or its column
            expression: `{"createdAt": "created_at", "actions.createdAt": "created_at"}`.
        naming: How a field name found nowhere else becomes an attribute name: `"snake_case"`
            (the default), a callable, or None (`backends/naming.py`).

    Raises:
        ValueError: the target has no attribute for a field the filter uses (the message names
            the closest attribute and the `columns=` line to write).
    """
    attributes = Attributes(columns or {}, naming_function(naming))
    builder = ExpressionBuilder(attributes.lookup(target), schema, target=target)
    builder.relations = relations or {}
    builder.attributes = attributes
    return builder.visit(node)


class ExpressionBuilder(Visitor[Expression]):
    """Builds the expression of one filter over columns found by `lookup`; it implements
    `relations_sqlalchemy.RelationBuilder`."""

    def __init__(
        self, lookup: Callable[[str], ColumnElement[Any]], schema: Schema, target: Any = None
    ) -> None:
        self.lookup = lookup
        self.schema = schema
        self.columns: dict[str, ColumnElement[Any]] = {}
        #: The target (ORM class) whose relationships relation conditions follow, and the
        #: Core tables given for relations.
        self.target = target
        self.relations: Mapping[str, Any] = {}
        #: How fields and relations find their attributes (`attributes.py`).
        self.attributes = Attributes()
        #: The relations followed to reach the rows, dotted (`orders.`).
        self.path = ""

    def column(self, field: str) -> ColumnElement[Any]:
        if field not in self.columns:
            declared = self.schema.get(field)
            found = self.lookup(field)
            self.columns[field] = gated(field, declared.type, found) if declared else found
        return self.columns[field]

    def related(
        self, lookup: Callable[[str], ColumnElement[Any]], schema: Schema, target: Any, path: str
    ) -> ExpressionBuilder:
        inner = ExpressionBuilder(lookup, schema, target=target)
        inner.relations, inner.path, inner.attributes = self.relations, path, self.attributes
        return inner

    def valued(self, schema: Schema, field: str, value: ColumnElement[Any]) -> ExpressionBuilder:
        return ExpressionBuilder(Attributes().lookup({field: value}), schema)

    def visit_and(self, node: And) -> Expression:
        return _balanced([self.visit(item) for item in node.items], and_)

    def visit_or(self, node: Or) -> Expression:
        return _balanced([self.visit(item) for item in node.items], or_)

    def visit_not(self, node: Not) -> Expression:
        return not_(self.visit(node.item))

    def visit_const(self, node: Const) -> Expression:
        return true() if node.value else false()

    def visit_quantified(self, node: Quantified) -> Expression:
        return quantified_expression(self, node)

    def visit_aggregated(self, node: Aggregated) -> Expression:
        return aggregated_expression(self, node)

    def visit_field_comparison(self, node: FieldComparison) -> Expression:
        kind = self.schema[node.field].type
        return ColumnsCompared(kind, node.op, self.column(node.field), self.column(node.other))

    def visit_blank(self, node: Blank) -> Expression:  # lowering writes it out; as it does
        return self.visit(blank_form(node))

    def visit_list_test(self, node: ListTest) -> Expression:
        kind = FieldType.JSON if node.path else self.schema[node.field].type
        return FoldChecked.of(node, ListCondition(node, kind, self.column(node.field)))

    def visit_is_null(self, node: IsNull) -> Expression:
        if node.path:
            return JsonCondition(node, self.column(node.field))
        return self.column(node.field).is_(None)

    def visit_comparison(self, node: Comparison) -> Expression:
        if node.op is Op.ANNIVERSARY:
            dated = not node.path and self.schema[node.field].type is FieldType.DATE
            return Anniversary(node, self.column(node.field), dated=dated)
        if node.path:
            return FoldChecked.of(node, JsonCondition(node, self.column(node.field)))
        expression = FoldChecked.of(node, self.typed(node, self.column(node.field)))
        return not_(expression) if node.op is Op.NOT_IN else expression

    def typed(self, node: Comparison, column: ColumnElement[Any]) -> Expression:
        """`node` on a column of its field's type; `in` for `notIn` (the caller negates)."""
        kind = self.schema[node.field].type
        if kind is FieldType.STRING:
            return _string_test(node, column)
        if kind is FieldType.NUMBER:
            return exact_on_doubles(node, column, _compare(node, column, _number_bind))
        if kind is FieldType.DATETIME:
            return _compare(node, column, _instant_binder(column))
        if kind is FieldType.DATE:
            return _compare(node, column, _date_bind)
        return column == bool(node.value)


def exact_on_doubles(
    node: Comparison, column: ColumnElement[Any], expression: Expression
) -> Expression:
    """On a column that may hold doubles (`Float`, `Double`, `REAL`, and `Numeric`, which
    SQLite keeps as a double past 64 bits), the one answer the engine's rounding of an integer
    literal no double holds changes, added back (`values.double_guard`); `in` before the
    caller negates `notIn`. An integer column compares exactly as is."""
    if not isinstance(column.type, Float | Numeric):  # SQLAlchemy 2.1: Float is no Numeric
        return expression
    guard = double_guard(Op.IN if node.op is Op.NOT_IN else node.op, node.value)
    if guard is None:
        return expression
    op, operand, holds_there = guard
    if op is Op.IN:
        there = column.in_([_number_bind(v) for v in operand])
    else:
        there = column == _number_bind(operand)
    return or_(expression, there) if holds_there else and_(expression, not_(there))


def _balanced(items: list[Expression], join: Callable[..., Expression]) -> Expression:
    """`join(*items)` in parenthesized groups of at most `GROUP_WIDTH`, as `text.balanced`
    writes them (SQLAlchemy flattens nested groups of one kind, hence `Parenthesized`)."""
    while len(items) > GROUP_WIDTH:
        chunks = [items[i : i + GROUP_WIDTH] for i in range(0, len(items), GROUP_WIDTH)]
        items = [Parenthesized(join(*chunk)) if len(chunk) > 1 else chunk[0] for chunk in chunks]
    return join(*items)


class Parenthesized(ColumnElement[bool]):
    """A condition written in parentheses, which SQLAlchemy keeps (it unwraps `Grouping`s of
    an AND or OR inside another of the same kind)."""

    _traverse_internals = [("element", InternalTraversal.dp_clauseelement)]
    type = Boolean()

    def __init__(self, element: ColumnElement[bool]) -> None:
        self.element = element

    def self_group(self, against: OperatorType | None = None) -> ColumnElement[Any]:
        return self

    def _negate(self) -> ColumnElement[Any]:
        return UnaryExpression(self, operator=operators.inv)


@compiles(Parenthesized)
def _compile_parenthesized(element: Parenthesized, compiler: SQLCompiler, **kw: Any) -> str:
    return f"({compiler.process(element.element, **kw)})"


_OPERATORS: dict[Op, Callable[[ColumnElement[Any], Any], Expression]] = {
    Op.EQUALS: lambda c, v: c == v,
    Op.GT: lambda c, v: c > v,
    Op.GTE: lambda c, v: c >= v,
    Op.LT: lambda c, v: c < v,
    Op.LTE: lambda c, v: c <= v,
}


def _compare(
    node: Comparison, column: ColumnElement[Any], bind: Callable[[Any], Any]
) -> Expression:
    """An ordering or equality test; `in`/`notIn` as IN (the caller negates `notIn`)."""
    if node.op in LIST_OPS:
        assert isinstance(node.value, tuple)
        if bind is _number_bind:
            # Split for every dialect: the expression is built before one is known.
            groups = number_groups(node.value)
            return or_(*[_in(column, group, FieldType.NUMBER, bind) for group in groups])
        kind = FieldType.DATE if bind is _date_bind else FieldType.DATETIME
        return _in(column, node.value, kind, bind)
    return _OPERATORS[node.op](column, bind(node.value))


def _in(
    column: ColumnElement[Any], values: tuple[Any, ...], kind: FieldType, bind: Callable[[Any], Any]
) -> Expression:
    """`column IN values`; a long list as one parameter (`MemberTest`, `members.py`), but for
    date-times only on a column with a time zone: a naive column binds naive values, which a
    list of instants could not be."""
    members = members_of(values, kind)
    naive = isinstance(column.type, DateTime) and not column.type.timezone
    if members is None or (members is Members.INSTANT and naive):
        return column.in_([bind(v) for v in values])
    return MemberTest(column, values, members, bind(values[0]).type)


def _number_bind(value: Number) -> Any:
    value = integral(value)
    if isinstance(value, int) and INT64_MIN <= value <= INT64_MAX:
        return bindparam(None, value, type_=BigInteger())
    return bindparam(None, value, type_=ExactNumber())


def _date_bind(value: date) -> Any:
    return bindparam(None, value, type_=Date())


def _instant_binder(column: ColumnElement[Any]) -> Callable[[datetime | Ago], Any]:
    column_type = column.type if isinstance(column.type, DateTime) else DateTime(timezone=True)
    aware = column_type.timezone

    def bind(value: datetime | Ago) -> Any:
        if isinstance(value, Ago):  # kept by `lower(keep_durations=True)`
            return bindparam(duration_parameter(value, naive=not aware), type_=column_type)
        return bindparam(None, value if aware else value.replace(tzinfo=None), type_=column_type)

    return bind


def duration_parameter(duration: Ago, *, naive: bool) -> str:
    """The name of the parameter a duration compared with a date-time column binds to: one
    per duration (two filters with `P30D` share it, as they share its instant at any `now`),
    and another for columns without time zone, which take naive UTC."""
    name = f"af_ago_{duration.months}_{duration.micros}"
    return f"{name}_naive" if naive else name


def duration_parameters(durations: Iterable[Ago]) -> Callable[[datetime], dict[str, datetime]]:
    """The values of these durations' `duration_parameter`s at a `now` (aware UTC): each
    duration's instant, in both forms, as the lowering would have written it at `now`. The
    names and resolvers are worked out once; a call costs a subtraction per duration."""
    bindings = [
        (
            duration.resolver(),
            duration_parameter(duration, naive=False),
            duration_parameter(duration, naive=True),
        )
        for duration in durations
    ]

    def at(now: datetime) -> dict[str, datetime]:
        values: dict[str, datetime] = {}
        for before, name, naive in bindings:
            instant = before(now)
            values[name] = instant
            values[naive] = instant.replace(tzinfo=None)
        return values

    return at


def _string_test(node: Comparison, column: ColumnElement[Any]) -> Expression:
    subject: ColumnElement[Any] = Folded(column) if node.insensitive else column
    if node.op in LIST_OPS:
        return _string_in(subject, cast(tuple[str, ...], node.value))
    value = node.value
    assert isinstance(value, str)
    if node.op in ORDERING_OPS:
        return TextOrder(subject, node, value)
    if node.op is Op.EQUALS and "\x00" not in value:
        return Exact(subject) == bindparam(None, value, type_=String())
    if node.insensitive and node.op in PATTERN_OPS:
        return TextMatch(column, node.op, value, insensitive=True)
    return TextMatch(subject, node.op, value)


def _string_in(subject: ColumnElement[Any], values: Sequence[str]) -> Expression:
    plain = [v for v in values if "\x00" not in v]
    # Values with NUL go through TextMatch, which knows that PostgreSQL text cannot hold them.
    tests: list[Expression] = [TextMatch(subject, Op.EQUALS, v) for v in values if "\x00" in v]
    members = members_of(tuple(plain), FieldType.STRING)
    if members is not None:
        tests.insert(0, MemberTest(Exact(subject), tuple(plain), members, String()))
    elif plain:
        bound = bindparam(None, plain, expanding=True, type_=String())
        tests.insert(0, Exact(subject).in_(bound))
    return or_(*tests)


def _dialect(sa_dialect: SADialect) -> Dialect:
    return DIALECTS.get(sa_dialect.name, _STANDARD)


_NUMBER_BINDS: dict[str, Callable[[], TypeEngine[Any]]] = {
    "numeric": Numeric,
    "float": Float,
    "untyped": NullType,
}
"""The SQLAlchemy type of each `Dialect.exact_number_bind`."""


class ExactNumber(TypeDecorator[Any]):
    """A number bound in the form that compares exactly on each engine (see `bind_number`)."""

    impl = Numeric
    cache_ok = True

    def load_dialect_impl(self, dialect: SADialect) -> TypeEngine[Any]:
        kind = _dialect(dialect).exact_number_bind
        return dialect.type_descriptor(_NUMBER_BINDS[kind]())

    def process_bind_param(self, value: Any, dialect: SADialect) -> Any:
        return _dialect(dialect).bind_number(value)


class Operand(TypeDecorator[str]):
    """A string compared by `TextMatch`, escaped for the dialect's pattern form at bind time;
    as it is for the foldings (`likes`) under which the engine's LIKE answers it
    (`Dialect.folded_like`)."""

    impl = String
    cache_ok = True

    def __init__(self, op: str, likes: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.op = op
        self.likes = likes

    def process_bind_param(self, value: Any, dialect: SADialect) -> Any:
        engine = _dialect(dialect)
        if self.op == Op.EQUALS.value or engine.like_folding in self.likes:
            return value
        return engine.operand(Op(self.op), value)


LIKE_FOLDINGS = ("ascii", "simple")
"""Every `Dialect.like_folding` a dialect may have, so a `TextMatch` built before the dialect
is known carries `like_unsafe`'s answer for each."""


class MemberList(TypeDecorator[Any]):
    """A long list bound as one parameter, in the dialect's form (`Dialect.bind_members`)."""

    impl = NullType
    cache_ok = True

    def __init__(self, members: str) -> None:
        super().__init__()
        self.members = members

    def process_bind_param(self, value: Any, dialect: SADialect) -> Any:
        return _dialect(dialect).bind_members(value, Members(self.members))


class MemberTest(ColumnElement[bool]):
    """`subject IN` a long list bound as one parameter, written by the dialect
    (`Dialect.member_test`); where it has no such form, an expanding IN of the same parameter
    with the items' own type. Its SQL depends on the kind and operator, never the length."""

    _traverse_internals = [
        ("subject", InternalTraversal.dp_clauseelement),
        ("kind", InternalTraversal.dp_string),
        ("members", InternalTraversal.dp_string),
        ("param", InternalTraversal.dp_clauseelement),
        ("item", InternalTraversal.dp_type),
    ]
    type = Boolean()

    def __init__(
        self,
        subject: ColumnElement[Any],
        values: tuple[Any, ...],
        members: Members,
        item: TypeEngine[Any],
        op: Op = Op.IN,
    ) -> None:
        self.subject = subject
        self.kind = op.value
        self.members = members.value
        self.param = bindparam(None, values, type_=MemberList(members.value))
        self.item = item

    def self_group(self, against: OperatorType | None = None) -> ColumnElement[Any]:
        return Grouping(self) if against is not None else self

    def _negate(self) -> ColumnElement[Any]:
        op = Op.IN if self.kind == Op.NOT_IN.value else Op.NOT_IN
        negated = MemberTest(self.subject, (), Members(self.members), self.item, op)
        negated.param = self.param
        return negated


@compiles(MemberTest)
def _compile_member_test(element: MemberTest, compiler: SQLCompiler, **kw: Any) -> str:
    dialect = _dialect(compiler.dialect)
    op, members = Op(element.kind), Members(element.members)
    subject = compiler.process(element.subject, **kw)
    if dialect.member_test(op, subject, "", members) is None:
        expanding = element.param._clone()
        expanding.expanding, expanding.type = True, element.item
        test = element.subject.in_(expanding)
        return compiler.process(not_(test) if op is Op.NOT_IN else test, **kw)
    param = compiler.process(element.param, **kw)
    sql = dialect.member_test(op, subject, param, members)
    assert sql is not None
    return sql


class Exact(ColumnElement[Any]):
    """An operand of a case-sensitive, no-pad string comparison: `CAST(x AS BINARY)` on MySQL."""

    _traverse_internals = [("element", InternalTraversal.dp_clauseelement)]

    def __init__(self, element: ColumnElement[Any]) -> None:
        self.element = element
        self.type = element.type


class Folded(ColumnElement[Any]):
    """A string case-folded like Python's `str.lower()`, as near as the dialect allows."""

    _traverse_internals = [("element", InternalTraversal.dp_clauseelement)]

    def __init__(self, element: ColumnElement[Any]) -> None:
        self.element = element
        self.type = element.type


class TextMatch(ColumnElement[bool]):
    """`equals` (for values with NUL), `contains`, `startsWith` or `endsWith` of a string."""

    _traverse_internals = [
        ("subject", InternalTraversal.dp_clauseelement),
        ("kind", InternalTraversal.dp_string),
        ("operand", InternalTraversal.dp_clauseelement),
        ("nul", InternalTraversal.dp_boolean),
        ("nbytes", InternalTraversal.dp_plain_obj),
        ("unsafe", InternalTraversal.dp_plain_obj),
    ]
    type = Boolean()

    def __init__(
        self, subject: ColumnElement[Any], op: Op, value: str, *, insensitive: bool = False
    ) -> None:
        shape = Shape.of(value)
        self.subject = subject  # the column itself when `insensitive`
        self.kind = op.value  # not `op`: ColumnElement.op() builds custom operators
        #: `like_unsafe` for each folding, a fact of the value in the cache key; None if the
        #: subject is already folded or the test is case-sensitive.
        self.unsafe = (
            tuple((f, like_unsafe(op, value, f)) for f in LIKE_FOLDINGS) if insensitive else None
        )
        likes = tuple(f for f, chars in self.unsafe or () if chars is not None)
        self.operand = bindparam(None, value, type_=Operand(op.value, likes))
        self.nul = shape.nul
        self.nbytes = shape.nbytes

    def self_group(self, against: OperatorType | None = None) -> ColumnElement[Any]:
        return Grouping(self) if against is not None else self

    def _negate(self) -> ColumnElement[Any]:
        # A Boolean-typed element negates as `x = 0` on engines without a boolean type, which
        # leans on operator associativity (`a LIKE b ESCAPE '!' = 0`); write `NOT (...)`.
        return UnaryExpression(self.self_group(against=operators.inv), operator=operators.inv)


@compiles(Exact)
def _compile_exact(element: Exact, compiler: SQLCompiler, **kw: Any) -> str:
    return _dialect(compiler.dialect).exact(compiler.process(element.element, **kw))


@compiles(Folded)
def _compile_folded(element: Folded, compiler: SQLCompiler, **kw: Any) -> str:
    return _fold(_dialect(compiler.dialect), element.element, compiler, kw)


def _fold(
    dialect: Dialect, column: ColumnElement[Any], compiler: SQLCompiler, kw: dict[str, Any]
) -> str:
    """The fold of a column: under the dialect's `fold_collation` when the column's type
    declares no collation (a plain `VARCHAR(50)` or `TEXT` on MariaDB folds with Unicode 4.0
    tables otherwise) or one whose case tables are older (`utf8mb4_general_ci`,
    `utf8mb4_bin`); a column declaring a recent one (`Dialect.fold_collations`) folds under
    it."""
    sql = compiler.process(column, **kw)
    declared = getattr(column.type, "collation", None) or ""
    recent = any(declared.startswith(prefix) for prefix in dialect.fold_collations)
    if dialect.fold_collation and not recent:
        sql = f"{sql} COLLATE {dialect.fold_collation}"
    return dialect.fold(sql)


@compiles(TextMatch)
def _compile_text_match(element: TextMatch, compiler: SQLCompiler, **kw: Any) -> str:
    dialect = _dialect(compiler.dialect)
    if element.unsafe is not None:
        return _compile_folded_match(element, dialect, compiler, kw)
    subject = compiler.process(element.subject, **kw)
    if element.nul and not dialect.text_holds_nul:
        return dialect.never(subject)
    operand = compiler.process(element.operand, **kw)
    op = Op(element.kind)
    if op is Op.EQUALS:
        return f"{dialect.exact(subject)} = {operand}"
    return dialect.match(op, subject, operand, Shape(element.nul, element.nbytes))


def _compile_folded_match(
    element: TextMatch, dialect: Dialect, compiler: SQLCompiler, kw: dict[str, Any]
) -> str:
    """A case-insensitive pattern test: the engine's LIKE where `like_unsafe` allows it
    (`Dialect.folded_like`), else the match of the folded column."""
    op, shape = Op(element.kind), Shape(element.nul, element.nbytes)
    unsafe = dict(element.unsafe or ()).get(dialect.like_folding or "")
    if unsafe is not None:
        column = lambda: compiler.process(element.subject, **kw)  # noqa: E731
        needle = lambda: compiler.process(element.operand, **kw)  # noqa: E731
        return dialect.folded_like(op, column, needle, shape, unsafe)
    subject = _fold(dialect, element.subject, compiler, kw)
    if element.nul and not dialect.text_holds_nul:
        return dialect.never(subject)
    return dialect.match(op, subject, compiler.process(element.operand, **kw), shape)


class TextOrder(ColumnElement[bool]):
    """`gt`, `gte`, `lt` or `lte` of a string in code-point order (`Dialect.ordered`); the
    literal is bound, and where the engine's text cannot hold its NUL, replaced at compile
    time by the bound `text_bound` gives (`string_order`)."""

    _traverse_internals = [
        ("subject", InternalTraversal.dp_clauseelement),
        ("node", InternalTraversal.dp_plain_obj),
    ]
    type = Boolean()

    def __init__(self, subject: ColumnElement[Any], node: Comparison, value: str) -> None:
        self.subject = subject
        self.node = node
        self.value = value

    def self_group(self, against: OperatorType | None = None) -> ColumnElement[Any]:
        return Grouping(self) if against is not None else self

    def _negate(self) -> ColumnElement[Any]:
        return UnaryExpression(self.self_group(against=operators.inv), operator=operators.inv)


@compiles(TextOrder)
def _compile_text_order(element: TextOrder, compiler: SQLCompiler, **kw: Any) -> str:
    dialect = _dialect(compiler.dialect)
    subject = compiler.process(element.subject, **kw)
    op, bound = string_order(dialect, element.node, element.value)
    operand = compiler.process(bindparam(None, bound, type_=String()), **kw)
    return f"{dialect.ordered(subject)} {COMPARISON_OPERATORS[op]} {operand}"


class ColumnsCompared(ColumnElement[bool]):
    """Two columns compared (a field reference), written by `reference_sql`."""

    _traverse_internals = [
        ("kind", InternalTraversal.dp_string),
        ("compared", InternalTraversal.dp_string),
        ("left", InternalTraversal.dp_clauseelement),
        ("right", InternalTraversal.dp_clauseelement),
    ]
    type = Boolean()

    def __init__(
        self, kind: FieldType, op: Op, left: ColumnElement[Any], right: ColumnElement[Any]
    ) -> None:
        self.kind = kind.value
        self.compared = op.value
        self.left = left
        self.right = right

    def self_group(self, against: OperatorType | None = None) -> ColumnElement[Any]:
        return Grouping(self) if against is not None else self

    def _negate(self) -> ColumnElement[Any]:
        return UnaryExpression(self.self_group(against=operators.inv), operator=operators.inv)


@compiles(ColumnsCompared)
def _compile_columns_compared(element: ColumnsCompared, compiler: SQLCompiler, **kw: Any) -> str:
    left = compiler.process(element.left, **kw)
    right = compiler.process(element.right, **kw)
    dialect = _dialect(compiler.dialect)
    return reference_sql(dialect, FieldType(element.kind), Op(element.compared), left, right)


class JsonCondition(ColumnElement[bool]):
    """A condition on a value inside a JSON column, written by the SQL text back-end's rules
    (`SqlWriter.json_comparison`) with each value bound as a parameter.

    The node is part of the cache key, values included, so a cached statement is only reused
    for the same condition, whose parameters are the same: node equality keeps a boolean
    literal apart from a number (`values.value_key`, though `True == 1`). So are the Python
    types of its values (`kinds`), which choose how each is bound.
    """

    _traverse_internals = [
        ("node", InternalTraversal.dp_plain_obj),
        ("kinds", InternalTraversal.dp_plain_obj),
        ("column", InternalTraversal.dp_clauseelement),
    ]
    type = Boolean()

    def __init__(self, node: Comparison | IsNull, column: ColumnElement[Any]) -> None:
        self.node = node
        self.kinds = _kinds(node.value) if isinstance(node, Comparison) else ()
        self.column = column

    def self_group(self, against: OperatorType | None = None) -> ColumnElement[Any]:
        return Grouping(self) if against is not None else self

    def _negate(self) -> ColumnElement[Any]:
        return UnaryExpression(self.self_group(against=operators.inv), operator=operators.inv)


def _kinds(value: object) -> tuple[str, ...]:
    """The Python type of a literal, or of each literal of a list, by name."""
    values = value if isinstance(value, tuple) else (value,)
    return tuple(type(v).__name__ for v in values)


class _BoundWriter(SqlWriter):
    """`SqlWriter` whose column is a compiled SQLAlchemy column and whose values are bound."""

    def __init__(self, compiler: SQLCompiler, column: str, kw: dict[str, Any]) -> None:
        super().__init__(_dialect(compiler.dialect), Schema(()), None, None)
        self.compiler = compiler
        self.column_sql = column
        self.kw = kw

    def column(self, field: str) -> str:
        return self.column_sql

    def bound(self, value: Any, type_: TypeEngine[Any]) -> str:
        return self.compiler.process(bindparam(None, value, type_=type_), **self.kw)

    def text(self, value: str) -> str:
        return self.bound(value, String())

    def number(self, value: Any) -> str:
        # As for columns: a 64-bit integer binds as an integer, so SQLite compares it exactly.
        return str(self.compiler.process(_number_bind(value), **self.kw))

    def double(self, value: float) -> str:
        return self.bound(self.dialect.bind_double(value), Double())

    def scalar(self, value: Any) -> str:
        return self.bound(bool(value), Boolean())

    def members(self, values: tuple[Any, ...], element: FieldType) -> str | None:
        members = members_of(values, element)
        return None if members is None else self.bound(values, MemberList(members.value))


class ListCondition(ColumnElement[bool]):
    """A test of a list column's items, written by the dialect (`Dialect.list_test`) with
    each value bound; the node (values and their Python types included) is part of the cache
    key, as for `JsonCondition`."""

    _traverse_internals = [
        ("node", InternalTraversal.dp_plain_obj),
        ("kinds", InternalTraversal.dp_plain_obj),
        ("list_type", InternalTraversal.dp_plain_obj),
        ("column", InternalTraversal.dp_clauseelement),
    ]
    type = Boolean()

    def __init__(self, node: ListTest, list_type: FieldType, column: ColumnElement[Any]) -> None:
        self.node = node
        self.kinds = _kinds(node.value)
        self.list_type = list_type
        self.column = column

    def self_group(self, against: OperatorType | None = None) -> ColumnElement[Any]:
        return Grouping(self) if against is not None else self

    def _negate(self) -> ColumnElement[Any]:
        return UnaryExpression(self.self_group(against=operators.inv), operator=operators.inv)


class _BoundListWriter(_BoundWriter):
    """`_BoundWriter` for one list field, binding date-times as instants and dates as dates."""

    def scalar(self, value: Any) -> str:
        if isinstance(value, datetime):
            return self.bound(value, DateTime(timezone=True))
        if isinstance(value, date):
            return self.bound(value, Date())
        return super().scalar(value)


@compiles(ListCondition)
def _compile_list_condition(element: ListCondition, compiler: SQLCompiler, **kw: Any) -> str:
    writer = _BoundListWriter(compiler, compiler.process(element.column, **kw), kw)
    writer.schema = Schema.of(**{element.node.field: element.list_type})
    return writer.visit(element.node)


@compiles(JsonCondition)
def _compile_json_condition(element: JsonCondition, compiler: SQLCompiler, **kw: Any) -> str:
    writer = _BoundWriter(compiler, compiler.process(element.column, **kw), kw)
    node = element.node
    return writer.visit(node)


class FoldChecked(ColumnElement[bool]):
    """A case-insensitive test, held to the engine's fold of its literals when the statement
    is compiled for an engine (`text.fold_checked`: a `FilterError` before any SQL is sent),
    as `to_sql` text is when it is written; the test itself otherwise."""

    _traverse_internals = [
        ("node", InternalTraversal.dp_plain_obj),
        ("test", InternalTraversal.dp_clauseelement),
    ]
    type = Boolean()

    def __init__(self, node: Comparison | ListTest, test: Expression) -> None:
        self.node = node
        self.test = test

    @classmethod
    def of(cls, node: Comparison | ListTest, test: Expression) -> Expression:
        return cls(node, test) if node.insensitive else test

    def self_group(self, against: OperatorType | None = None) -> ColumnElement[Any]:
        return Grouping(self) if against is not None else self

    def _negate(self) -> ColumnElement[Any]:
        return UnaryExpression(self.self_group(against=operators.inv), operator=operators.inv)


@compiles(FoldChecked)
def _compile_fold_checked(element: FoldChecked, compiler: SQLCompiler, **kw: Any) -> str:
    fold_checked(_dialect(compiler.dialect), element.node)
    return str(compiler.process(element.test, **kw))


class Anniversary(ColumnElement[bool]):
    """A column's local month-day in the ranges of a lowered anniversary
    (`dialects.base.anniversary_sql`): the month-days and zone are constants of the SQL, and
    part of the cache key."""

    _traverse_internals = [
        ("node", InternalTraversal.dp_plain_obj),
        ("column", InternalTraversal.dp_clauseelement),
    ]
    type = Boolean()

    def __init__(self, node: Comparison, column: ColumnElement[Any], *, dated: bool) -> None:
        assert isinstance(node.value, MonthDays), "anniversaries are lowered at a now"
        self.node = node
        self.column = column
        self.dated = dated

    def self_group(self, against: OperatorType | None = None) -> ColumnElement[Any]:
        return Grouping(self) if against is not None else self

    def _negate(self) -> ColumnElement[Any]:
        return UnaryExpression(self.self_group(against=operators.inv), operator=operators.inv)


@compiles(Anniversary)
def _compile_anniversary(element: Anniversary, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.column, **kw)
    try:
        return anniversary_sql(
            _dialect(compiler.dialect),
            lambda: column,
            cast(MonthDays, element.node.value),
            dated=element.dated,
        )
    except AnniversaryRefused as exc:
        raise refusal(element.node, exc) from None
