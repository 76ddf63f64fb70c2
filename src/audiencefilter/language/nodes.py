"""The filter AST: small frozen nodes that every reader produces and every back-end walks.

Design choices:
- Frozen slotted dataclasses: immutable, hashable and compared by value, and cheap to build,
  which keeps `parse` in the tens of microseconds. Literals compare by `values.value_key`, not
  Python's `==`: `data.optin = true` and `data.optin = 1` are two nodes.
- `And`/`Or` are n-ary with at least two items; a group of one is its item, an empty group is a
  `Const`. Nested groups are kept as written (flattening is `simplify`'s job), so an explanation
  of a result follows the filter the user wrote.
- Field-level `not`, `NOT` groups and `notIn`'s negation all meet in `Not`: the semantics of
  negation are decided once, by three-valued logic, and not per spelling.
- Every node has a `kind` tag naming its `visit_<kind>` handler. Every walker dispatches on the
  kind (a `Visitor`, or a `match` whose last case is `unhandled`), so a node kind a walker does
  not know stops it with `UnhandledNodeError` instead of falling into a default branch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any, ClassVar, NoReturn

from .anniversary import MonthDays
from .calendar import RELATIVE_TYPES, DayOf, Period, Relative, StartOf
from .fields import ListOp, Op, Schema
from .relations import Aggregate, Quantifier, relation_of, rows_schema, values_schema
from .relative import Ago
from .values import Scalar, same_value

Value = Scalar | Ago | StartOf | Period | MonthDays | DayOf | tuple[Scalar, ...]
"""A comparison's operand: one literal, a relative date-time (`Ago`, `StartOf`), a calendar
period (`Period`, for `within` only), or a tuple of literals for `in` and `notIn`."""


@dataclass(frozen=True, slots=True)
class And:
    """Every item holds. Text: `points > 10 and country = "FR"`."""

    items: tuple[Node, ...]
    kind: ClassVar[str] = "and"


@dataclass(frozen=True, slots=True)
class Or:
    """At least one item holds. Text: `city = "Paris" or city = "Lyon"`."""

    items: tuple[Node, ...]
    kind: ClassVar[str] = "or"


@dataclass(frozen=True, slots=True)
class Not:
    """The item does not hold; UNKNOWN stays UNKNOWN. Text: `not (points > 10)`."""

    item: Node
    kind: ClassVar[str] = "not"


@dataclass(frozen=True, slots=True)
class Comparison:
    """A field compared with a literal. Text: `email ends with "@acme.com"`.

    Attributes:
        field: The field's name in the schema.
        op: The operator.
        value: A literal, or a tuple of literals for `in`/`notIn`; date-times are aware UTC,
            or an `Ago` for a date-time relative to the moment of evaluation.
        insensitive: Compare after case folding (`mode: "insensitive"`); always true for
            `contains`.
        path: For a JSON field, the keys leading to the value compared (`data.plan`); the
            comparison then takes the JSON type of its literal. Empty for other fields.
    """

    field: str
    op: Op
    value: Value
    insensitive: bool = False
    path: tuple[str, ...] = ()
    kind: ClassVar[str] = "comparison"

    def __eq__(self, other: object) -> bool:
        """Equal fields, operators, modes and paths, and one literal (`values.value_key`):
        `data.optin = true` is not `data.optin = 1`, though `True == 1` in Python. The hash
        stays the fields' own, which equal nodes share."""
        if not isinstance(other, Comparison):
            return NotImplemented
        return (
            self.field == other.field
            and self.op is other.op
            and self.insensitive == other.insensitive
            and self.path == other.path
            and same_value(self.value, other.value)
        )

    @property
    def only_at(self) -> tuple[Any, ...] | None:
        """The literals this comparison names all the values it can be TRUE at by: an
        `equals`'s one, an `in`'s list; None for any other operator (a range, a pattern,
        `notIn`). What a reader of the tree asks to learn which values a condition bounds a
        field to, e.g. the audiences a filter names."""
        if self.op is Op.EQUALS:
            return (self.value,)
        if self.op is Op.IN and isinstance(self.value, tuple):
            return self.value
        return None


@dataclass(frozen=True, slots=True)
class IsNull:
    """The field is null or missing. Text: `company is null`, `data.plan is null`.

    With a `path`, the key is missing, holds JSON null, or a step before it is no object.
    """

    field: str
    path: tuple[str, ...] = ()
    kind: ClassVar[str] = "is_null"


@dataclass(frozen=True, slots=True)
class Const:
    """TRUE or FALSE for every record. Text: `true`, `false`.

    `{}`, `AND: []` and `NOT: []` are TRUE, and `OR: []` is FALSE.
    """

    value: bool
    kind: ClassVar[str] = "const"


@dataclass(frozen=True, slots=True)
class Quantified:
    """A where clause over the related rows of a relation, quantified: never UNKNOWN.

    Text: `actions some (name = "share")`, `actions none (createdAt >= 60 days ago)`.

    Attributes:
        relation: The relation's name in the schema.
        quantifier: `some` (a related row for which `where` is TRUE), `none` (no such row),
            `every` (no related row for which `where` is not TRUE); `is`/`isNot` for a to-one
            relation (its row exists and `where` is TRUE for it, and the negation).
        where: A tree over the related schema's fields.
    """

    relation: str
    quantifier: Quantifier
    where: Node
    kind: ClassVar[str] = "quantified"


@dataclass(frozen=True, slots=True)
class Aggregated:
    """A value computed over the related rows that `where` holds for, tested like a field.

    Text: `count(actions where name = "share") >= 3`, `max(actions.createdAt) < 60 days ago`.

    Attributes:
        relation: The relation's name in the schema.
        function: `count` (rows), `sum` (0 over no values), `min` or `max` (null over none).
        field: The related field summed or ranged over; "count" for `count`.
        test: One condition on the value, as on a field called `field`: a `Comparison` or
            an `IsNull`. A `not` on the value is a `Not` around the aggregate, the same answer
            in one form (`aggregated`), so JSON and text read it alike.
        where: Narrows the rows the aggregate sees (TRUE: every row).
    """

    relation: str
    function: Aggregate
    field: str
    test: Node
    where: Node
    kind: ClassVar[str] = "aggregated"


def aggregated(relation: str, function: Any, field: str, test: Node, where: Node) -> Node:
    """The node of an aggregate's test: the test's `not`s, `and`s and `or`s moved outside, so
    each `Aggregated` tests its value with one condition (a `Comparison` or an `IsNull`).

    `min(actions.increase) not > 5` and `not (min(actions.increase) > 5)` are one condition
    (a null minimum is UNKNOWN either way), and so one node, whichever reader built it; so are
    `{"count": {"not": {"not": 5}}}` and `not (count(actions) != 5)`, and the value meets
    `gt 5 and lt 9` when it meets each. The groups keep the shape written, as a field's do."""
    match test:
        case Not(item=item):
            return Not(aggregated(relation, function, field, item, where))
        case And(items=items) | Or(items=items):
            parts = tuple(aggregated(relation, function, field, item, where) for item in items)
            return type(test)(parts)
    return Aggregated(relation, function, field, test, where)


def aggregate_form(node: Aggregated) -> Node:
    """`node` in the readers' one form (`aggregated`), for writers meeting a tree built by hand
    whose test is a group or a negation.

    Raises:
        ValueError: the test is no condition on the aggregate's value with a literal or null
            (a field reference, a constant): no reader builds one and no writer can say it.
    """
    form = aggregated(node.relation, node.function, node.field, node.test, node.where)
    for part in walk(form):
        if isinstance(part, Aggregated) and not isinstance(part.test, Comparison | IsNull):
            raise ValueError(
                f"the test of an aggregate of {part.relation} compares its value with a "
                f"literal or null; found {type(part.test).__name__} {part.test!r}"
            )
    return form


@dataclass(frozen=True, slots=True)
class Blank:
    """The field is null (or missing) or the empty string. Text: `nickname is blank`.

    JSON: `{"nickname": {"blank": true}}`; `blank: false` is its `Not`. Never UNKNOWN: it means
    what `blank_form` says, null test OR `= ""`, which lowering writes out for the back-ends.
    With a `path`, the value there (see `IsNull`) is null or the JSON string `""`.
    """

    field: str
    path: tuple[str, ...] = ()
    kind: ClassVar[str] = "blank"


@dataclass(frozen=True, slots=True)
class FieldComparison:
    """A field compared with another field of the same record. Text: `referrals > points`;
    JSON: `{"referrals": {"gt": {"_ref": "points"}}}` (Prisma's field reference).

    Both fields have one type (number, string, date-time, or boolean with `equals`), neither is
    stored inside JSON; a null on either side makes it UNKNOWN, as in SQL.
    """

    field: str
    op: Op
    other: str
    kind: ClassVar[str] = "field_comparison"


@dataclass(frozen=True, slots=True)
class ListTest:
    """A test of a list field's items (`language/lists.py`). Text: `tags has "vip"`.

    Attributes:
        field: The list field's name in the schema.
        op: `has`, `hasSome`, `hasEvery`, `isEmpty` or `equals` (the whole list, in order).
        value: The literals, of the list's item type (one for `has`, none for `isEmpty`);
            date-times are aware UTC.
        insensitive: Compare string items after case folding (`mode: "insensitive"`).
        path: For a JSON array inside a JSON field (`array_contains`, `array_starts_with`,
            `array_ends_with`), the keys leading to it; each literal then compares as its own
            JSON type. Empty for a list field.
    """

    field: str
    op: ListOp
    value: tuple[Scalar, ...]
    insensitive: bool = False
    path: tuple[str, ...] = ()
    kind: ClassVar[str] = "list_test"

    def __eq__(self, other: object) -> bool:
        """As `Comparison`'s: the literals are one when their `values.value_key`s are."""
        if not isinstance(other, ListTest):
            return NotImplemented
        return (
            self.field == other.field
            and self.op is other.op
            and self.insensitive == other.insensitive
            and self.path == other.path
            and same_value(self.value, other.value)
        )


Node = (
    And
    | Or
    | Not
    | Comparison
    | IsNull
    | Const
    | Quantified
    | Aggregated
    | Blank
    | FieldComparison
    | ListTest
)
NODE_TYPES: tuple[type[Node], ...] = (
    And,
    Or,
    Not,
    Comparison,
    IsNull,
    Const,
    Quantified,
    Aggregated,
    Blank,
    FieldComparison,
    ListTest,
)
TRUE = Const(True)
FALSE = Const(False)


def all_of(items: tuple[Node, ...], build: Callable[[tuple[Node, ...]], Node] = And) -> Node:
    """The conjunction of `items`, with the group-of-one and empty-group rules applied;
    `build` makes the `And` (a reader may pass a faster maker of the same node)."""
    if not items:
        return TRUE
    return items[0] if len(items) == 1 else build(items)


def any_of(items: tuple[Node, ...], build: Callable[[tuple[Node, ...]], Node] = Or) -> Node:
    """The disjunction of `items`, with the group-of-one and empty-group rules applied;
    `build` makes the `Or` (a reader may pass a faster maker of the same node)."""
    if not items:
        return FALSE
    return items[0] if len(items) == 1 else build(items)


class UnhandledNodeError(TypeError):
    """A walker met a node kind it has no handler for: a new kind added without teaching it."""


def unhandled(walker: str, node: object) -> NoReturn:
    """Stop `walker` loudly on a node kind it does not know (the last case of every dispatch)."""
    kind = getattr(node, "kind", None)
    raise UnhandledNodeError(
        f"{walker} does not handle node kind {kind!r} ({type(node).__name__}); "
        f"add a handler for it to {walker}"
    )


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree, parents before children, without recursion."""
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        yield current
        match current:
            case And() | Or():
                stack.extend(reversed(current.items))
            case Not():
                stack.append(current.item)
            case Comparison() | IsNull() | Const() | Blank() | FieldComparison() | ListTest():
                pass
            case Quantified():
                stack.append(current.where)
            case Aggregated():
                stack.extend((current.where, current.test))
            case _:
                unhandled("walk", current)


def own_nodes(node: Node) -> Iterator[Node]:
    """The nodes of the tree that test the record itself: `walk` without the trees of
    relation conditions (which test related rows, over another schema)."""
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, And | Or):
            stack.extend(reversed(current.items))
        elif isinstance(current, Not):
            stack.append(current.item)


def fields_used(node: Node) -> frozenset[str]:
    """The names of the fields a filter reads, e.g. to know which columns to load."""
    found: set[str] = set()
    stack: list[Node] = [node]
    while stack:
        n = stack.pop()
        match n:
            case Comparison() | IsNull() | Blank() | ListTest():
                found.add(n.field)
            case And() | Or():
                stack.extend(n.items)
            case Not():
                stack.append(n.item)
            case FieldComparison():
                found.update((n.field, n.other))
            case Const():
                pass
            case Quantified() | Aggregated():  # the related fields are the relation's own
                found.add(n.relation)
            case _:
                unhandled("fields_used", n)
    return frozenset(found)


def relative_values(node: Node) -> tuple[Relative, ...]:
    """The distinct relative date-times of a filter, in reading order (a period counts as its
    two bounds)."""
    found: dict[Relative, None] = {}
    for n in walk(node):
        match n:
            case Comparison():
                if isinstance(n.value, RELATIVE_TYPES):
                    found[n.value] = None
                elif type(n.value) is Period and n.op is Op.ANNIVERSARY:
                    found[n.value] = None
                elif type(n.value) is Period:
                    found.update(dict.fromkeys(n.value.bounds))
            case And() | Or() | Not() | IsNull() | Const() | Quantified() | Aggregated():
                pass
            case Blank() | FieldComparison() | ListTest():
                pass
            case _:
                unhandled("relative_values", n)
    return tuple(found)


def resolve(node: Node, schema: Schema, now: datetime) -> Node:
    """The absolute tree `node` is at `now` (an aware UTC instant): each relative value the
    literal it stands for then, a calendar period the range between its bounds; an
    anniversary stays relative (month-days have no absolute form).

    A value is taken as lowering takes it, over the schema of the row it tests: on a date
    field (a column or declared inside JSON) the local date it falls on, on any other the
    instant; in the value's own zone, else this schema's (which a relation's rows and an
    aggregate's value inherit, `relations.rows_schema`). So the tree reads back with `parse` and
    means at any time what `node` meant at `now`."""
    match node:
        case Comparison():
            return _resolve_comparison(node, schema, now)
        case And() | Or():
            return type(node)(tuple(resolve(item, schema, now) for item in node.items))
        case Not():
            return Not(resolve(node.item, schema, now))
        case IsNull() | Const() | Blank() | FieldComparison() | ListTest():
            return node
        case Quantified():
            related = rows_schema(schema, relation_of(schema, node.relation))
            return replace(node, where=resolve(node.where, related, now))
        case Aggregated():
            relation = relation_of(schema, node.relation)
            values = values_schema(schema, relation, node.function, node.field)
            test = resolve(node.test, values, now)
            rows = rows_schema(schema, relation)
            # A period resolves to a range (`and`): moved outside the aggregate, as a reader
            # would build it, so the tree reads back as itself.
            where = resolve(node.where, rows, now)
            return aggregated(node.relation, node.function, node.field, test, where)
        case _:
            unhandled("resolve", node)


def _resolve_comparison(node: Comparison, schema: Schema, now: datetime) -> Node:
    value = node.value
    if type(value) is Period and node.op is Op.ANNIVERSARY:
        return node
    declared = schema.get(node.field)
    on_date = declared is not None and declared.type.entry.moment == "day" and not node.path
    zone = schema.time_zone

    def literal(relative: Ago | StartOf) -> date | datetime:
        if on_date:
            day = DayOf.of(relative, zone).before(now)
            assert isinstance(day, date)
            return day
        return (relative.in_zone(zone) if isinstance(relative, StartOf) else relative).before(now)

    if type(value) is Period:
        start, end = value.bounds
        return And(
            (
                replace(node, op=Op.GTE, value=literal(start)),
                replace(node, op=Op.LT, value=literal(end)),
            )
        )
    if isinstance(value, Ago | StartOf):
        return replace(node, value=literal(value))
    return node


def blank_form(node: Blank) -> Node:
    """What `Blank` means, in the kinds every back-end knows: the null test, or equal to `""`
    (a present value of another type, or another JSON type at a path, is neither)."""
    return Or(
        (IsNull(node.field, node.path), Comparison(node.field, Op.EQUALS, "", path=node.path))
    )
