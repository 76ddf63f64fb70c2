"""The frame core: one walker for the column back-ends (polars and PySpark), over a small algebra.

Both engines turn a lowered tree into one boolean column expression with the same rules, and
those rules live here once:

- **Logic** is the engines' own Kleene logic (`&`, `|`, `~` on columns); an n-ary group becomes a
  balanced tree of binary operators, so a 200-branch OR stays shallow.
- **A constant answer is UNKNOWN where the value is missing**: a comparison true or false for
  every value a column can hold (`points > 2**70`) is that constant where the value is present,
  NULL elsewhere (`where_present`).
- **Numbers compare exactly.** Against an integer column a literal becomes the integer bound it
  is equivalent to (`x > 2.5` is `x > 2`) and a literal beyond the column's range a constant, so
  no value is converted to a float; against a float column an integer no double holds becomes
  the nearest double bound; NaN (which both engines order above every number) is a missing
  number, null (`nan_is_null`). Two number columns compare as they are when of one kind, and an
  integer with a float as doubles where those differ, else (the float is then integral) as wide
  integers.
- **Relations** (a List/ARRAY of structs, one per related row): `some`/`is` are FALSE and `every`
  TRUE over no rows, `count` and `sum` 0, `min`/`max` NULL; a row's UNKNOWN test is not TRUE; a
  sum of integers is exact past 64 bits; an aggregate's test is the ordinary comparison over the
  aggregate's column; a relation inside a related row is refused.

What differs between the engines is spelling (a typed literal, a membership test, a cast) and
how each reads strings, instants, anniversaries, list fields and JSON: an engine is a
`ColumnAlgebra` and a subclass of `FrameCore` with those hooks (`polars.py`, `spark.py`).
"""

from __future__ import annotations

import operator
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

from ...errors import FrameError, RecordError
from ...language.fields import FieldType, Op, Schema
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
from ...language.relations import (
    Aggregate,
    Quantifier,
    Relation,
    refused_nested,
    relation_of,
    value_schema,
)
from ...language.values import (
    as_integer,
    double_bound,
    double_exact,
    integer_bound,
    out_of_range,
)
from ...language.visitor import Visitor

C = TypeVar("C")

COMPARE: Mapping[Op, Callable[[Any, Any], Any]] = {
    Op.EQUALS: operator.eq,
    Op.GT: operator.gt,
    Op.GTE: operator.ge,
    Op.LT: operator.lt,
    Op.LTE: operator.le,
}
MIRRORED = {Op.EQUALS: Op.EQUALS, Op.GT: Op.LT, Op.GTE: Op.LTE, Op.LT: Op.GT, Op.LTE: Op.GTE}
"""`a op b` is `b mirrored-op a`."""


class ColumnAlgebra(Protocol[C]):
    """How an engine spells the few column operations the shared rules need."""

    def literal(self, value: Any) -> C:
        """A boolean, string or float literal."""
        ...

    def integer(self, value: int, dtype: Any) -> C:
        """An integer literal in a column's integer type (`dtype`), never rounded."""
        ...

    def double(self, value: float) -> C: ...

    def unknown(self) -> C:
        """A boolean NULL: UNKNOWN on every row."""
        ...

    def when(self, condition: C, then: C, otherwise: C | None = None) -> C:
        """`then` where `condition` is TRUE, else `otherwise` (NULL when there is none)."""
        ...

    def is_null(self, column: C) -> C: ...

    def is_not_null(self, column: C) -> C: ...

    def is_nan(self, column: C) -> C: ...

    def coalesce(self, column: C, value: Any) -> C:
        """`column`, with `value` where it is NULL."""
        ...

    def is_in(self, column: C, values: Sequence[Any], dtype: Any) -> C:
        """Membership in distinct `values` of the column's type `dtype` (never empty)."""
        ...

    def to_double(self, column: C) -> C: ...

    def to_wide_integer(self, column: C) -> C:
        """Integers in a type that holds any two compared exactly (Int128, DECIMAL(38, 0))."""
        ...


def balanced(items: list[C], combine: Callable[[C, C], C]) -> C:
    """`a & b & c & d` as `(a & b) & (c & d)`: binary operators run faster than horizontal
    ones in polars, and pairing keeps a 200-branch OR shallow for either planner."""
    while len(items) > 1:
        pairs = [combine(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = pairs + items[len(items) - len(items) % 2 :]
    return items[0]


def negate(column: C) -> C:
    """`~column`: Kleene NOT in both engines (NULL stays NULL)."""
    result: C = ~cast(Any, column)
    return result


def compare(left: C, op: Op, right: C) -> C:
    result: C = COMPARE[op](left, right)
    return result


def where_present(a: ColumnAlgebra[C], column: C, answer: bool) -> C:
    """`answer` where the value is present, NULL (UNKNOWN) where it is not."""
    return a.when(a.is_not_null(column), a.literal(answer))


def nan_is_null(a: ColumnAlgebra[C], column: C, result: C) -> C:
    """NaN is a missing number (docs/semantics.md, "Values from NumPy and pandas"), so a
    comparison of NaN is UNKNOWN, as of null; the engines would order it above every number."""
    return a.when(negate(a.is_nan(column)), result)


@dataclass(frozen=True)
class Integers:
    """An integer column's type and the range it holds (a Decimal's integers included)."""

    dtype: Any
    low: int
    high: int


def integer_comparison(a: ColumnAlgebra[C], column: C, integers: Integers, op: Op, value: Any) -> C:
    """`column op value` for a column of integers and an exact number (an int, float or
    Fraction, or a tuple of them), without rounding either."""
    low, high = integers.low, integers.high
    if op in (Op.IN, Op.NOT_IN):
        exact = [v for v in (as_integer(x) for x in value) if v is not None and low <= v <= high]
        distinct = list(dict.fromkeys(exact))
        found = a.is_in(column, distinct, integers.dtype) if distinct else None
        found = where_present(a, column, False) if found is None else found
        return found if op is Op.IN else negate(found)
    bound = integer_bound(op, value)
    if isinstance(bound, bool):
        return where_present(a, column, bound)
    op, number = bound
    always = out_of_range(op, number, low, high)
    if always is not None:
        return where_present(a, column, always)
    return compare(column, op, a.integer(number, integers.dtype))


def double_comparison(a: ColumnAlgebra[C], column: C, op: Op, value: Any) -> C:
    """`column op value` for a column of doubles, exactly."""
    if op in (Op.IN, Op.NOT_IN):
        exact = list(dict.fromkeys(float(v) for v in value if double_exact(v)))
        found = a.is_in(column, exact, None) if exact else where_present(a, column, False)
        found = nan_is_null(a, column, found)
        return found if op is Op.IN else negate(found)
    bound = double_bound(op, value)
    if isinstance(bound, bool):
        result = where_present(a, column, bound)
    else:
        result = compare(column, bound[0], a.double(bound[1]))  # an infinity included
    return nan_is_null(a, column, result)


def numbers_compared(a: ColumnAlgebra[C], left: tuple[C, str], op: Op, right: tuple[C, str]) -> C:
    """Two number columns, each `(column, "int" | "float")`: integers with integers and floats
    with floats as they are; an integer with a float exactly: as doubles where those differ,
    else (the float is then integral) as wide integers."""
    (lcol, lkind), (rcol, rkind) = left, right
    if (lkind, rkind) == ("float", "int"):
        lcol, rcol, op = rcol, lcol, MIRRORED[op]
    if lkind == rkind:
        same = compare(lcol, op, rcol)
        return nan_is_null(a, lcol, nan_is_null(a, rcol, same)) if lkind == "float" else same
    near = a.to_double(lcol)
    exact = compare(a.to_wide_integer(lcol), op, a.to_wide_integer(rcol))
    result = a.when(operator.ne(near, rcol), compare(near, op, rcol), exact)
    return nan_is_null(a, rcol, result)


@dataclass(frozen=True)
class Rows(Generic[C]):
    """The related rows of one relation condition, as an engine reads them."""

    relation: Relation
    column: C
    dtypes: Mapping[str, Any]
    """Each related field's type in the struct (the canonical one where the frame has none)."""


class FrameCore(Visitor[C]):
    """The shared walker: logic, constants, dispatch by field type, numbers and relations.

    A subclass is one engine: its algebra (`self.a`) and the hooks below.
    """

    engine: str
    """Named where a construct is refused ("polars", "PySpark")."""
    canonical: Mapping[FieldType, Any]
    """The column type each field type is taken to have where the frame's types are unknown."""
    rows_type: str
    """A relation's column type as the engine names it ("a List of Struct"), for messages."""

    def __init__(
        self,
        algebra: ColumnAlgebra[C],
        schema: Schema,
        dtypes: Mapping[str, Any],
        columns: Mapping[str, str],
        column_of: Callable[[str], C] | None = None,
    ) -> None:
        self.a = algebra
        self.schema = schema
        self.dtypes = dtypes
        self.columns = columns
        self.column_of = column_of

    # ---- logic and constants --------------------------------------------------------------

    def visit_and(self, node: And) -> C:
        return balanced([self.visit(item) for item in node.items], operator.and_)

    def visit_or(self, node: Or) -> C:
        return balanced([self.visit(item) for item in node.items], operator.or_)

    def visit_not(self, node: Not) -> C:
        result: C = negate(self.visit(node.item))
        return result

    def visit_const(self, node: Const) -> C:
        return self.a.literal(node.value)

    def visit_blank(self, node: Blank) -> C:  # lowering writes it out; as it does
        return self.visit(blank_form(node))

    # ---- conditions on one field ----------------------------------------------------------

    def visit_is_null(self, node: IsNull) -> C:
        if node.path:
            return self.json_condition(node)
        column = self.column(node.field)
        if self.holds_doubles(node.field):  # NaN is a missing number (`nan_is_null`)
            either: C = operator.or_(self.a.is_null(column), self.a.is_nan(column))
            return either
        return self.a.is_null(column)

    def holds_doubles(self, field: str) -> bool:
        """Whether `field` is a number column of doubles (where NaN can be)."""
        if self.schema[field].type is not FieldType.NUMBER or self.all_null(field):
            return False
        try:
            return self.number_kind(field) == "float"
        except RecordError:  # a decimal column: no NaN
            return False

    def visit_comparison(self, node: Comparison) -> C:
        early = self.before_comparison(node)
        if early is not None:
            return early
        if node.path:
            return self.json_condition(node)
        if self.all_null(node.field):  # a column of nulls only (`pl.read_ndjson`, NullType)
            return where_present(self.a, self.column(node.field), False)
        if node.op is Op.ANNIVERSARY:
            return self.anniversary(node)
        return self.by_type(node)

    def by_type(self, node: Comparison) -> C:
        """A comparison of a column with a literal, by the field's type."""
        kind = self.schema[node.field].type
        if kind is FieldType.STRING:
            return self.string(node)
        if kind is FieldType.NUMBER:
            return self.number(node)
        if kind is FieldType.BOOLEAN:
            column = self.boolean_column(node.field)
            return column if node.value is True else negate(column)
        if kind is FieldType.DATE:
            return self.day(node)
        return self.instant(node)

    def visit_field_comparison(self, node: FieldComparison) -> C:
        """Two columns of one type (a field reference); NULL on either side is NULL."""
        for field in (node.field, node.other):
            if self.all_null(field):
                return self.a.unknown()
        kind = self.schema[node.field].type
        if kind is FieldType.BOOLEAN:
            return compare(self.column(node.field), Op.EQUALS, self.column(node.other))
        if kind is FieldType.NUMBER:
            sides = self.number_sides(node.field, node.other)
            return numbers_compared(self.a, sides[0], node.op, sides[1])
        pair = self.text_pair if kind is FieldType.STRING else self.instant_pair
        left, right = pair(node.field, node.other)
        return compare(left, node.op, right)

    def number(self, node: Comparison) -> C:
        """A number comparison in a type wider than both the column's and the literal's."""
        column, integers, value = self.number_column(node.field, node.value)
        if integers is None:
            return double_comparison(self.a, column, node.op, value)
        return integer_comparison(self.a, column, integers, node.op, value)

    # ---- relations ------------------------------------------------------------------------

    def visit_quantified(self, node: Quantified) -> C:
        early = self.before_relation(node)
        if early is not None:
            return early
        rows = self.rows(node)
        if node.quantifier is Quantifier.EVERY:
            return self.a.coalesce(self.rows_all(rows, node.where), True)
        found = self.a.coalesce(self.rows_any(rows, node.where), False)
        if node.quantifier in (Quantifier.SOME, Quantifier.IS):
            return found
        result: C = negate(found)
        return result

    def visit_aggregated(self, node: Aggregated) -> C:
        early = self.before_relation(node)
        if early is not None:
            return early
        rows = self.rows(node)
        if node.function is Aggregate.COUNT:
            value, dtype = self.rows_count(rows, node.where)
        else:
            value, dtype = self.rows_aggregate(rows, node.where, node.function, node.field)
        values = value_schema(rows.relation, node.function, node.field)
        return self.over(values, {node.field: dtype}, lambda _field: value).visit(node.test)

    def dtype(self, field: str) -> Any:
        """The field's column type: the frame's, else its field type's canonical one."""
        found = self.dtypes.get(self.columns.get(field, field))
        return self.canonical[self.schema[field].type] if found is None else found

    def struct_dtypes(self, relation: Relation, dtype: Any) -> dict[str, Any]:
        """Each related field's type, read from the relation column's type (`dtype`, or None
        when the frame's types are not known); a field the struct lacks has its canonical
        type, as a contact's column does (`dtype`)."""
        found: dict[str, Any] = {f.name: self.canonical[f.type] for f in relation.schema.fields}
        if dtype is None:
            return found
        fields = self.struct_fields(dtype)
        if fields is None:
            raise FrameError(
                f'column "{relation.name}" for relation "{relation.name}" is {dtype}; expected '
                f"{self.rows_type}, one struct per related row"
            )
        found.update({name: inner for name, inner in fields.items() if name in found})
        return found

    def rows(self, node: Quantified | Aggregated) -> Rows[C]:
        if self.column_of is not None:  # a related row's walker: a relation inside one
            raise refused_nested(self.engine, node.relation)
        relation = relation_of(self.schema, node.relation)
        name = self.columns.get(relation.name, relation.name)
        dtypes = self.struct_dtypes(relation, self.dtypes.get(name))
        return Rows(relation, self.column(relation.name), dtypes)

    def row_test(self, rows: Rows[C], where: Node, element: Callable[[str], C]) -> C:
        """W for one related row (its fields read by `element`): TRUE or FALSE, as UNKNOWN
        counts as not TRUE."""
        built = self.over(rows.relation.schema, rows.dtypes, element).visit(where)
        return self.a.coalesce(built, False)

    # ---- the engine's hooks ---------------------------------------------------------------

    def column(self, field: str) -> C:
        if self.column_of is not None:
            return self.column_of(field)
        return self.named_column(self.columns.get(field, field))

    def before_comparison(self, node: Comparison) -> C | None:
        """An answer decided before the shared dispatch (polars: a column of unknown type)."""
        return None

    def before_relation(self, node: Quantified | Aggregated) -> C | None:
        """A relation condition answered before the shared rules (polars: a relation column of
        unknown type, whose struct fields are learnt as the expression runs)."""
        return None

    @abstractmethod
    def over(
        self, schema: Schema, dtypes: Mapping[str, Any], column_of: Callable[[str], C]
    ) -> FrameCore[C]:
        """A walker of this engine whose fields are read by `column_of` (a related row's
        struct field, an aggregate's value)."""

    @abstractmethod
    def named_column(self, name: str) -> C: ...

    @abstractmethod
    def all_null(self, field: str) -> bool:
        """Whether the field's column holds nulls only (its type says so)."""

    @abstractmethod
    def visit_list_test(self, node: ListTest) -> C:
        """A list field's test (or a JSON array's): each engine reads lists its own way."""

    @abstractmethod
    def json_condition(self, node: Comparison | IsNull) -> C: ...

    @abstractmethod
    def string(self, node: Comparison) -> C: ...

    @abstractmethod
    def boolean_column(self, field: str) -> C:
        """The field's column, refused unless it is boolean."""

    @abstractmethod
    def number_column(self, field: str, value: Any) -> tuple[C, Integers | None, Any]:
        """The column to compare, its integers (None for doubles), and the literal in the
        column's units (a Decimal's integers are its value times 10^scale)."""

    @abstractmethod
    def number_kind(self, field: str) -> str:
        """ "int" or "float" for a number column compared with another; refused otherwise."""

    def number_sides(self, field: str, other: str) -> tuple[tuple[C, str], tuple[C, str]]:
        """Two number columns compared with each other, each with its kind (`number_kind`);
        an engine with decimal columns reads them in units both sides share."""
        return (self.column(field), self.number_kind(field)), (
            self.column(other),
            self.number_kind(other),
        )

    @abstractmethod
    def text_pair(self, field: str, other: str) -> tuple[C, C]:
        """Two string columns, each comparable by code points."""

    @abstractmethod
    def instant_pair(self, field: str, other: str) -> tuple[C, C]:
        """Two date-time columns as comparable instants."""

    @abstractmethod
    def instant(self, node: Comparison) -> C: ...

    @abstractmethod
    def day(self, node: Comparison) -> C:
        """A date field's comparison with a date literal (or a tuple of them)."""

    @abstractmethod
    def anniversary(self, node: Comparison) -> C:
        """The field's local month-day in the lowered ranges: a date-time's in the period's
        zone, a date's own."""

    @abstractmethod
    def struct_fields(self, dtype: Any) -> Mapping[str, Any] | None:
        """The field types of a relation column's type, by name, or None when it is not a list
        of structs (`rows_type`)."""

    @abstractmethod
    def rows_any(self, rows: Rows[C], where: Node) -> C:
        """Whether some related row passes W (NULL for a NULL list)."""

    @abstractmethod
    def rows_all(self, rows: Rows[C], where: Node) -> C:
        """Whether every related row passes W (NULL for a NULL list)."""

    @abstractmethod
    def rows_count(self, rows: Rows[C], where: Node) -> tuple[C, Any]:
        """The number of related rows passing W (0 for a NULL list), and its column type."""

    @abstractmethod
    def rows_aggregate(
        self, rows: Rows[C], where: Node, function: Aggregate, field: str | None
    ) -> tuple[C, Any]:
        """`sum` (0 over none, exact for integers), `min` or `max` (NULL over none) of the
        field over the related rows passing W, and the column type of the result."""
