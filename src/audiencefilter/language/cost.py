"""What a filter costs: a static estimate of the work per record, and the sizes budgets bound.

Why a model at all: a filter arrives from outside and runs on every record of a list, in
memory and in SQL. A service must say no to a filter before it runs, and the count of nodes
alone prices `email contains "x"` like `points > 1` and a relation over a thousand actions like
one comparison. As CEL's cost estimator does beside its type checker, one walker prices the
tree once, statically, from what the tree says (operand lengths, list sizes, path steps,
relations and the rows each contact is expected to have), never by running it.

`Cost` holds:
- `units`: the estimated work to judge one record, in units of one comparison of a column
  with a literal (the weights are `WEIGHTS`, docs/performance.md "The cost model"); every
  condition is counted as evaluated, as SQL engines do, so it is an upper estimate where
  memory's AND and OR stop early;
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
from dataclasses import dataclass, field

from .calendar import RELATIVE_TYPES, Period
from .fields import Op, Schema
from .nodes import (
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
from .relations import relation_of, rows_schema
from .visitor import Visitor

DEFAULT_ROWS = 10.0
"""Related rows a record is expected to have per to-many relation, unless the caller says."""
MAX_ROWS = 1e9
"""The most rows per record a caller may assume: the estimate stays a finite number."""


@dataclass(frozen=True, slots=True)
class Weights:
    """The units of the model, each the work of one step relative to one comparison."""

    record: float = 4.0  # reading a record or row and calling the predicate on it
    compare: float = 1.0  # a column compared with a literal (or tested for null)
    group: float = 0.25  # each item of an AND or OR, and a NOT
    step: float = 1.0  # each key of a JSON path, or a field kept inside JSON
    text: float = 2.0  # a pattern (`contains`, `startsWith`, `endsWith`) instead of `=`
    text_char: float = 1 / 16  # each character of a pattern's operand
    folding: float = 1.0  # `mode: "insensitive"`: both sides folded
    member: float = 0.5  # `in`/`notIn` per doubling of the list (a set or a B-tree probe)
    relative: float = 0.5  # a relative date-time taken at the moment of evaluation
    reference: float = 1.5  # a field compared with another field of the record
    list_item: float = 0.5  # each item of a list field a list test reads, per literal
    list_items: float = 4.0  # the items a list field is expected to hold
    relation: float = 6.0  # a relation condition: the subquery or the rows' lookup
    row: float = 1.0  # each related row visited


WEIGHTS = Weights()


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


NOTHING = Cost(0, 0, 0)
_LEAF_DEPTH = 4  # a condition in SQL: a function call, a cast and a NULL guard around a column
_TEXT_OPS = frozenset({Op.CONTAINS, Op.STARTS_WITH, Op.ENDS_WITH})
_MEMBER_OPS = frozenset({Op.IN, Op.NOT_IN})


def cost(node: Node, schema: Schema, rows: float = DEFAULT_ROWS) -> Cost:
    """The cost of judging one record with the tree `node` over `schema`, whose records hold
    `rows` related rows per to-many relation (a to-one relation holds one). The record's own
    reading (`Weights.record`) is counted once."""
    if not (isinstance(rows, int | float) and 0 <= rows <= MAX_ROWS):
        raise ValueError(f"rows per record must be a number from 0 to {MAX_ROWS:g}, not {rows!r}")
    found = _Costing(schema, float(rows)).visit(node)
    return _with(found, units=found.units + WEIGHTS.record)


def _with(cost: Cost, **changes: float | int | str) -> Cost:
    values = {
        "conditions": cost.conditions,
        "values": cost.values,
        "depth": cost.depth,
        "units": cost.units,
        "widest": cost.widest,
        "widest_items": cost.widest_items,
    }
    values.update(changes)
    return Cost(**values)  # type: ignore[arg-type]


class _Costing(Visitor[Cost]):
    """The cost of a subtree; `path` names the node as the library's errors do (`OR[1].AND`)."""

    def __init__(self, schema: Schema, rows: float) -> None:
        self.schema = schema
        self.rows = rows
        self.path: list[str] = []

    def _inside(self, name: str, node: Node) -> Cost:
        self.path.append(name)
        try:
            return self.visit(node)
        finally:
            self.path.pop()

    def _group(self, name: str, items: tuple[Node, ...]) -> Cost:
        total = NOTHING
        deepest = NOTHING
        for index, item in enumerate(items):
            found = self._inside(f"{name}[{index}]", item)
            total = total + found
            if found.depth > deepest.depth:
                deepest = found
        depth = deepest.depth + len(items)  # k - 1 binary levels, plus the group itself
        units = total.units + WEIGHTS.group * len(items)
        widest, widest_items = deepest.widest, deepest.widest_items
        if len(items) >= widest_items:
            widest, widest_items = ".".join([*self.path, name]), len(items)
        return Cost(total.conditions + 1, total.values, depth, units, widest, widest_items)

    def visit_and(self, node: And) -> Cost:
        return self._group("AND", node.items)

    def visit_or(self, node: Or) -> Cost:
        return self._group("OR", node.items)

    def visit_not(self, node: Not) -> Cost:
        inner = self._inside("NOT", node.item)
        return _with(
            inner,
            conditions=inner.conditions + 1,
            depth=inner.depth + 2,
            units=inner.units + WEIGHTS.group,
        )

    def _steps(self, name: str, path: tuple[str, ...]) -> int:
        """JSON keys read before the value: the path's, and a declared field's own."""
        declared = self.schema[name].read_at()[1] if name in self.schema.names else ()
        return len(path) + len(declared)

    def visit_comparison(self, node: Comparison) -> Cost:
        items = len(node.value) if isinstance(node.value, tuple) else 0
        units = WEIGHTS.compare + WEIGHTS.step * self._steps(node.field, node.path)
        if node.op in _TEXT_OPS and isinstance(node.value, str):
            units += WEIGHTS.text + WEIGHTS.text_char * len(node.value)
        if node.insensitive:
            units += WEIGHTS.folding
        if node.op in _MEMBER_OPS:
            units += WEIGHTS.member * math.log2(items + 1)
        if isinstance(node.value, RELATIVE_TYPES):
            units += WEIGHTS.relative
        elif isinstance(node.value, Period):  # two bounds, or an anniversary's month-days
            units += 2 * WEIGHTS.relative
        return Cost(1, items + len(node.path), _LEAF_DEPTH, units)

    def visit_is_null(self, node: IsNull) -> Cost:
        units = WEIGHTS.compare + WEIGHTS.step * self._steps(node.field, node.path)
        return Cost(1, len(node.path), _LEAF_DEPTH, units)

    def visit_const(self, node: Const) -> Cost:
        return Cost(1, 0, 1, 0.0)

    def visit_field_comparison(self, node: FieldComparison) -> Cost:
        steps = self._steps(node.field, ()) + self._steps(node.other, ())
        return Cost(1, 0, _LEAF_DEPTH, WEIGHTS.reference + WEIGHTS.step * steps)

    def visit_blank(self, node: Blank) -> Cost:  # a null test OR an equality: three conditions
        units = 2 * WEIGHTS.compare + WEIGHTS.group + WEIGHTS.step * self._steps(node.field, ())
        return Cost(3, 2 * len(node.path), _LEAF_DEPTH + 1, units + WEIGHTS.step * len(node.path))

    def visit_list_test(self, node: ListTest) -> Cost:
        items = len(node.value)
        units = WEIGHTS.compare + WEIGHTS.step * self._steps(node.field, node.path)
        units += WEIGHTS.list_item * WEIGHTS.list_items * max(1, items)
        if node.insensitive:
            units += WEIGHTS.folding * WEIGHTS.list_items
        return Cost(1, items + len(node.path), _LEAF_DEPTH, units)

    def _related(self, name: str, relation: str, where: Node, test: Node | None) -> Cost:
        """A relation condition: a subquery (EXISTS or an aggregate) whose `where` costs per
        related row as it would on a record of the related schema, and an aggregate's `test`
        once on its value; the subquery adds a condition (the correlation), a few levels of
        SQL, and the reading of its rows."""
        found = relation_of(self.schema, relation)
        inner = _Costing(rows_schema(self.schema, found), self.rows)
        inner.path = [*self.path, name]
        per_row = inner.visit(where)
        once = NOTHING if test is None else inner.visit(test)
        total = per_row + once
        rows = self.rows if found.many else 1.0
        units = WEIGHTS.relation + rows * (WEIGHTS.row + per_row.units) + once.units
        return Cost(total.conditions + 1, total.values, total.depth + _LEAF_DEPTH, units)

    def visit_quantified(self, node: Quantified) -> Cost:
        name = f"{node.relation}.{node.quantifier}"
        return self._related(name, node.relation, node.where, None)

    def visit_aggregated(self, node: Aggregated) -> Cost:
        name = f"{node.relation}.{node.function}"
        return self._related(name, node.relation, node.where, node.test)
