"""What a filter costs: a static estimate of the work per record, and the sizes budgets bound.

Why a model at all: a filter arrives from outside and runs on every record of a list, in
memory and in SQL. A service must say no to a filter before it runs, and the count of nodes
alone prices `email contains "x"` like `points > 1` and a relation over a thousand actions like
one comparison. As CEL's cost estimator does beside its type checker, one walker prices the
tree once, statically, from what the tree says (operand lengths, list sizes, path steps,
relations and the rows each contact is expected to have), never by running it.

`Cost` holds:
- `units`: the estimated work to judge one record on one kind of engine, in units of about one
  comparison of a column with a literal there (the weights of each engine are `ENGINES`,
  docs/performance.md "The cost model"). An AND's first item is counted whole and each later
  one for the share of records that reach it (`Weights.reach`: engines stop at the first
  FALSE); every item of an OR is counted, its items being mostly FALSE. On SQL engines, a
  relation condition an index answers (`indexed`) is a seek, not a read of the rows;
- `conditions`: the nodes of the tree, what the in-memory predicate may visit per record;
- `values`: the items of `in`/`notIn` arrays and list tests plus JSON path steps, an upper
  bound of the parameters bound beyond one per condition;
- `depth`: the nesting of the SQL expression, where an n-ary AND/OR of k items counts k levels
  (engines read it as a binary tree) and a condition a few (a function, a cast, a NULL guard);
- `widest`: the path of the widest group on the deepest chain (`OR[1].AND`), for messages.

The walker is a `Visitor`: a node kind it does not know raises `UnhandledNodeError`.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field

from .calendar import RELATIVE_TYPES, Period
from .fields import COMPARISON_OPS, LIST_OPS, PATTERN_OPS, Quantifier, Schema
from .nodes import (
    TRUE,
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
)
from .relations import Aggregate, relation_of, rows_schema
from .visitor import Visitor

DEFAULT_ROWS = 10.0
"""Related rows a record is expected to have per to-many relation, unless the caller says."""
MAX_ROWS = 1e9
"""The most rows per record a caller may assume: the estimate stays a finite number."""


@dataclass(frozen=True, slots=True)
class Weights:
    """The units of the model for one kind of engine, each the work of one step relative to
    one comparison of a column with a literal there. Set from the measurements of
    `benchmarks/cost_model.py` (docs/performance.md, "The cost model")."""

    record: float  # reading a record or row and calling the predicate on it
    compare: float  # a column compared with a literal (or tested for null)
    group: float  # each item of an AND or OR, and a NOT
    json: float  # reading a value inside JSON (at a path, or a field declared there)
    step: float  # each key of that path
    text: float  # a pattern (`contains`, `startsWith`, `endsWith`) instead of `=`
    text_char: float  # each character of a pattern's operand
    folding: float  # `mode: "insensitive"`: both sides folded
    member: float  # `in`/`notIn`, per doubling of the list (a set or a B-tree probe)
    members: float  # `in`/`notIn`, once: the list's own setting up
    relative: float  # a relative date-time taken at the moment of evaluation
    reference: float  # a field compared with another field of the record
    list_item: float  # each item of a list field a list test reads, per literal
    list_items: float  # the items a list field is expected to hold
    array: float  # a test of a JSON array's items (`array_contains`...)
    relation: float  # a relation condition: the subquery, or the lookup of the rows
    row: float  # each related row read
    row_where: float  # each related row a where clause (other than TRUE) is asked of
    value: float  # each value an aggregate (`sum`, `min`, `max`) reads
    sum_value: float  # each value `sum` adds exactly, on top of `value`
    instant_value: float  # each date-time value an aggregate reads, on top of `value`
    early: float  # the share of rows `some`/`none`/`every` read before the answer is known
    seek: float = 0.0  # an index answering `some`/`none` without a row read (0: no indexes)
    reach: float = 1.0  # the share of records an AND's later items are asked of


ENGINES: dict[str, Weights] = {
    # The compiled predicate: a call per record, Python comparisons, sets for `in`, rows as
    # lists of mappings (a count of all rows is their length).
    "memory": Weights(
        record=3.0,
        compare=1.5,
        group=0.7,
        json=8.0,
        step=1.0,
        text=2.0,
        text_char=1 / 64,
        folding=2.0,
        member=0.1,
        members=0.0,
        relative=3.0,
        reference=80.0,
        list_item=0.5,
        list_items=4.0,
        array=220.0,
        relation=4.0,
        row=0.3,
        row_where=4.3,
        value=8.0,
        sum_value=0.0,
        instant_value=33.0,
        early=1.0,
        reach=0.5,
    ),
    # SQL engines, fitted on SQLite: a row scanned per record, JSON read from its text, a
    # related row fetched through the index on its contact (its columns from the table).
    "sql": Weights(
        record=3.5,
        compare=1.0,
        group=0.1,
        json=36.0,
        step=1.0,
        text=3.5,
        text_char=0.0,
        folding=0.5,
        member=0.5,
        members=4.0,
        relative=2.0,
        reference=2.5,
        list_item=0.5,
        list_items=4.0,
        array=40.0,
        relation=25.0,
        row=6.5,
        row_where=9.0,
        value=1.0,
        sum_value=22.0,
        instant_value=0.0,
        early=0.5,
        reach=0.5,
        seek=8.0,
    ),
}
"""The weights of each kind of engine `Filter.cost` estimates for."""
ENGINE_NAMES = tuple(ENGINES)


@dataclass(frozen=True, slots=True)
class Cost:
    """The cost of a filter (the module docstring says what each measure means).

    Costs add up (`a + b`): sizes and units sum, the depth is the larger one, as for the
    filters of one list judged side by side.
    """

    conditions: int
    values: int
    depth: int
    units: float = 0.0
    widest: str = field(default="", compare=False)
    widest_items: int = field(default=0, compare=False)

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.conditions + other.conditions,
            self.values + other.values,
            max(self.depth, other.depth),
            self.units + other.units,
        )


_LEAF_DEPTH = 4  # a condition in SQL: a function call, a cast and a NULL guard around a column
_TEXT_OPS = PATTERN_OPS
_MEMBER_OPS = LIST_OPS
_SEEK_OPS = COMPARISON_OPS


def cost(
    node: Node,
    schema: Schema,
    rows: float = DEFAULT_ROWS,
    engine: str = "memory",
    indexed: Collection[str] = (),
) -> Cost:
    """The cost of judging one record with the tree `node` over `schema` on `engine` (one of
    `ENGINES`), whose records hold `rows` related rows per to-many relation (a to-one
    relation holds one). The record's own reading (`Weights.record`) is counted once.
    `indexed`: the related fields (`"actions.createdAt"`) an index on the related table holds
    right after the contact's key, as docs/backends-sql-rules.md advises; on an engine with indexes
    (`Weights.seek`), `some`/`none` over one such comparison is a seek, not a read of rows.

    Raises:
        ValueError: `rows` is not a number from 0 to `MAX_ROWS`, or `engine` is unknown.
    """
    if not (isinstance(rows, int | float) and 0 <= rows <= MAX_ROWS):
        raise ValueError(f"rows per record must be a number from 0 to {MAX_ROWS:g}, not {rows!r}")
    weights = ENGINES.get(engine)
    if weights is None:
        raise ValueError(f"unknown engine {engine!r} for a cost; expected one of {ENGINE_NAMES}")
    walker = _Costing(schema, rows, weights, frozenset(indexed) if weights.seek else frozenset())
    conditions, values, depth, units, widest, items = walker.visit(node)
    return Cost(conditions, values, depth, units + weights.record, _spelled(widest), items)


_Step = tuple["_Step | None", str, int | None]
"""Where the walk stands: the step before, a name (`OR`, `NOT`, `actions.some`) and, inside a
group, the item's index. A path is spelled (`OR[1].AND`) once, for the widest group only."""
_Part = tuple[int, int, int, float, _Step | None, int]
"""A subtree's `Cost` as a plain tuple (conditions, values, depth, units, the widest group's
step, its items): the walker builds thousands of them for a large filter, and a tuple is the
cheapest value."""


def _spelled(step: _Step | None) -> str:
    """A walker's step as the library's errors spell its path: `OR[1].AND`."""
    names: list[str] = []
    while step is not None:
        step, name, index = step
        names.append(name if index is None else f"{name}[{index}]")
    return ".".join(reversed(names))


class _Costing(Visitor[_Part]):
    """The cost of a subtree; `at` is where the walk stands, a chain of steps spelled as the
    library's errors name a node (`OR[1].AND`).

    The walk runs once per node of filters of hundreds of conditions, so its steps are kept
    cheap: the chain is extended by a tuple per item and spelled only for the widest group, at
    the end; the handler of each item is looked up in the class's table directly (`visit` only
    for a kind it lacks, which raises); the cost of reading a field is worked out once per
    field and path.
    """

    def __init__(
        self, schema: Schema, rows: float, weights: Weights, indexed: frozenset[str] = frozenset()
    ) -> None:
        self.schema = schema
        self.rows = float(rows)
        self.w = weights
        self.indexed = indexed
        self.at: _Step | None = None
        self._reads: dict[tuple[str, tuple[str, ...]], float] = {}

    def _group(self, name: str, items: tuple[Node, ...]) -> _Part:
        conditions = values = deepest = 0
        units = self.w.group * len(items)
        widest: _Step | None = None
        widest_items = 0
        reach = self.w.reach if name == "AND" else 1.0
        handlers, at = self._dispatch, self.at
        for index, item in enumerate(items):
            self.at = (at, name, index)
            handler = handlers.get(type(item))
            c, v, d, u, w, i = self.visit(item) if handler is None else handler(self, item)
            conditions, values = conditions + c, values + v
            units += u if index == 0 else reach * u
            if d > deepest:
                deepest, widest, widest_items = d, w, i
        self.at = at
        if len(items) >= widest_items:
            widest, widest_items = (at, name, None), len(items)
        # an AND/OR of k items: k - 1 binary levels, plus the group itself
        return conditions + 1, values, deepest + len(items), units, widest, widest_items

    def visit_and(self, node: And) -> _Part:
        return self._group("AND", node.items)

    def visit_or(self, node: Or) -> _Part:
        return self._group("OR", node.items)

    def visit_not(self, node: Not) -> _Part:
        at = self.at
        self.at = (at, "NOT", None)
        c, v, d, u, w, i = self.visit(node.item)
        self.at = at
        return c + 1, v, d + 2, u + self.w.group, w, i

    def _read(self, name: str, path: tuple[str, ...]) -> float:
        """Reading the value tested: nothing for a column, the JSON read and its keys for a
        value inside JSON (at a path, or a field declared there)."""
        known = self._reads.get((name, path))
        if known is None:
            field = self.schema.get(name)
            keys = len(path) + (len(field.source) - 1 if field is not None and field.source else 0)
            known = self._reads[name, path] = self.w.json + self.w.step * keys if keys else 0.0
        return known

    def visit_comparison(self, node: Comparison) -> _Part:
        value = node.value
        items = len(value) if type(value) is tuple else 0
        units = self.w.compare + self._read(node.field, node.path)
        if node.op in _TEXT_OPS and type(value) is str:
            units += self.w.text + self.w.text_char * len(value)
        if node.insensitive:
            units += self.w.folding
        if node.op in _MEMBER_OPS:
            units += self.w.members + self.w.member * math.log2(items + 1)
        if isinstance(value, RELATIVE_TYPES):
            units += self.w.relative
        elif isinstance(value, Period):  # two bounds, or an anniversary's month-days
            units += 2 * self.w.relative
        return 1, items + len(node.path), _LEAF_DEPTH, units, None, 0

    def visit_is_null(self, node: IsNull) -> _Part:
        units = self.w.compare + self._read(node.field, node.path)
        return 1, len(node.path), _LEAF_DEPTH, units, None, 0

    def visit_const(self, node: Const) -> _Part:
        return 1, 0, 1, 0.0, None, 0

    def visit_field_comparison(self, node: FieldComparison) -> _Part:
        units = self.w.reference + self._read(node.field, ()) + self._read(node.other, ())
        return 1, 0, _LEAF_DEPTH, units, None, 0

    def visit_blank(self, node: Blank) -> _Part:  # a null test OR an equality: three conditions
        units = 2 * self.w.compare + self.w.group + self._read(node.field, node.path)
        return 3, 2 * len(node.path), _LEAF_DEPTH + 1, units, None, 0

    def visit_list_test(self, node: ListTest) -> _Part:
        items = len(node.value)
        units = self.w.compare + self._read(node.field, node.path)
        units += self.w.list_item * self.w.list_items * max(1, items)
        if node.path:
            units += self.w.array
        if node.insensitive:
            units += self.w.folding * self.w.list_items
        return 1, items + len(node.path), _LEAF_DEPTH, units, None, 0

    def _related(self, name: str, relation: str, where: Node) -> tuple[_Part, float, _Costing]:
        """What a relation condition reads: its where clause's cost per row (and the asking
        of it, unless it is TRUE), the related rows a record holds, and a walker over their
        schema."""
        found = relation_of(self.schema, relation)
        inner = _Costing(rows_schema(self.schema, found), self.rows, self.w, self.indexed)
        inner.at = (self.at, name, None)
        c, v, d, u, _, _ = inner.visit(where)
        asked = 0.0 if where == TRUE else self.w.row_where
        return (c, v, d, u + asked, None, 0), (self.rows if found.many else 1.0), inner

    def visit_quantified(self, node: Quantified) -> _Part:
        """A quantifier: the subquery, its rows up to the first decisive one (`early`), and
        the where clause on each; a correlation condition and a few levels of SQL more."""
        name = f"{node.relation}.{node.quantifier}"
        (c, v, d, u, _, _), rows, _ = self._related(name, node.relation, node.where)
        if self._seeks(node):
            return c + 1, v, d + _LEAF_DEPTH, self.w.relation + self.w.seek, None, 0
        units = self.w.relation + self.w.early * rows * (self.w.row + u)
        return c + 1, v, d + _LEAF_DEPTH, units, None, 0

    def _seeks(self, node: Quantified) -> bool:
        """Whether an index answers the quantifier: `some`/`none` whose where clause is one
        equality or range on a field the index holds after the contact's key (`every` asks
        the negation, which no single range is)."""
        where = node.where
        if node.quantifier not in (Quantifier.SOME, Quantifier.NONE):
            return False
        if not isinstance(where, Comparison) or where.path or where.insensitive:
            return False
        return where.op in _SEEK_OPS and f"{node.relation}.{where.field}" in self.indexed

    def visit_aggregated(self, node: Aggregated) -> _Part:
        """An aggregate: the subquery, every row and the where clause on each, the value each
        row gives (`sum`, `min`, `max`), then the test, once, on the result."""
        name = f"{node.relation}.{node.function}"
        (c, v, d, u, _, _), rows, inner = self._related(name, node.relation, node.where)
        tc, tv, td, tu, _, _ = inner.visit(node.test)
        if self._ends_of_index(node):
            units = self.w.relation + self.w.seek + tu
        else:
            units = self.w.relation + rows * (self.w.row + u + self._value(node, inner)) + tu
        return c + tc + 1, v + tv, max(d, td) + _LEAF_DEPTH, units, None, 0

    def _ends_of_index(self, node: Aggregated) -> bool:
        """Whether an index answers the aggregate: `min`/`max` of a field the index holds
        after the contact's key, over all the contact's rows (its first or last entry)."""
        if node.function not in (Aggregate.MIN, Aggregate.MAX) or node.where != TRUE:
            return False
        return f"{node.relation}.{node.field}" in self.indexed

    def _value(self, node: Aggregated, rows: _Costing) -> float:
        """Reading one row's value for the aggregate (nothing for `count`)."""
        if node.function is Aggregate.COUNT:
            return 0.0
        extra = self.w.sum_value if node.function is Aggregate.SUM else 0.0
        field = rows.schema.get(node.field)
        if field is not None and field.type.entry.moment == "instant":
            extra += self.w.instant_value
        return self.w.value + extra + rows._read(node.field, ())
