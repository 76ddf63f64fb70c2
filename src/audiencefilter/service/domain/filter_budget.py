"""Filter budgets: what one audience, one list and one request may ask of the database and the CPU.

The library's limits (10,000 conditions, 10,000 values per array, depth 32) bound what it can
parse; they do not say what an engine can run. SQLite reads `a OR b OR c ...` as a left-deep tree
and refuses an expression deeper than 1,000, every engine caps the bound parameters of one
statement (SQLite 32,766), and each page of contacts runs every smart filter of the list on every
row in memory. So the service decides when a filter arrives (audience create and update,
`GET /v4/contacts?filters=`), never when it is read: a filter that fits its budget runs on every
supported engine, and a stored one never turns a read into an error.

The cost of a filter has three measures, computed by one visitor (a new node kind fails loudly
here as in every walker):
- `conditions`: nodes of the tree (comparisons, null checks, constants and groups), what the
  in-memory predicate visits per contact;
- `values`: items of `in`/`notIn` arrays plus JSON path steps, an upper bound of the bound
  parameters beyond one per condition;
- `depth`: the nesting of the SQL expression, where an n-ary AND/OR of k items counts k - 1
  levels (the engine's binary tree) and a comparison a few (functions, NULL guards).

Budgets per filter bound one statement; budgets per list (the sum over its audiences' stored
filters, smart or not, since a manual audience may become smart by a PATCH that sends no filter)
bound the statement that counts every audience of a list and the CPU of one page of contacts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import (
    Aggregated,
    And,
    Blank,
    Comparison,
    Const,
    FieldComparison,
    Filter,
    IsNull,
    ListTest,
    Node,
    Not,
    Or,
    Quantified,
    Visitor,
)
from ..ground.errors import AudienceRuleError

MAX_CONDITIONS = 500
MAX_VALUES = 5_000
MAX_SQL_DEPTH = 300
# A write judges only the audiences reading what it changed, and a page reads stored
# memberships: what bounds a list now is the filters that change with time alone, which every
# page runs on each of its rows (LIST_MAX_LIVE_CONDITIONS), and the values bound per statement.
LIST_MAX_CONDITIONS = 50_000
LIST_MAX_LIVE_CONDITIONS = 2_000
LIST_MAX_VALUES = 100_000

FILTER_TOO_LARGE = "Filters exceed the service's budget for one filter"
LIST_TOO_LARGE = "Filters exceed the service's budget for the audiences of one list"
# A comparison may become a function call, a cast and a NULL guard around its column.
_LEAF_DEPTH = 4


@dataclass(frozen=True, slots=True)
class Cost:
    """What a filter asks: conditions, array values, and the depth of its SQL expression."""

    conditions: int
    values: int
    depth: int
    widest: str = ""  # the widest group on the deepest chain, named in error messages
    widest_items: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.conditions + other.conditions,
            self.values + other.values,
            max(self.depth, other.depth),
        )


NOTHING = Cost(0, 0, 0)


class _Costing(Visitor[Cost]):
    """The cost of a subtree; `path` names the node like the library's errors (`OR[1].AND`)."""

    def __init__(self) -> None:
        self.path: list[str] = []

    def _group(self, name: str, items: tuple[Node, ...]) -> Cost:
        here = ".".join(self.path + [name])
        total = NOTHING
        deepest = NOTHING
        for index, item in enumerate(items):
            self.path.append(f"{name}[{index}]")
            cost = self.visit(item)
            self.path.pop()
            total = total + cost
            if cost.depth > deepest.depth:
                deepest = cost
        depth = deepest.depth + len(items)  # k - 1 binary levels, plus the group itself
        if len(items) >= deepest.widest_items:
            return Cost(total.conditions + 1, total.values, depth, here, len(items))
        return Cost(total.conditions + 1, total.values, depth, deepest.widest, deepest.widest_items)

    def visit_and(self, node: And) -> Cost:
        return self._group("AND", node.items)

    def visit_or(self, node: Or) -> Cost:
        return self._group("OR", node.items)

    def visit_not(self, node: Not) -> Cost:
        self.path.append("NOT")
        inner = self.visit(node.item)
        self.path.pop()
        return Cost(
            inner.conditions + 1, inner.values, inner.depth + 2, inner.widest, inner.widest_items
        )

    def visit_comparison(self, node: Comparison) -> Cost:
        items = len(node.value) if isinstance(node.value, tuple) else 0
        return Cost(1, items + len(node.path), _LEAF_DEPTH)

    def visit_is_null(self, node: IsNull) -> Cost:
        return Cost(1, len(node.path), _LEAF_DEPTH)

    def visit_const(self, node: Const) -> Cost:
        return Cost(1, 0, 1)

    def visit_field_comparison(self, node: FieldComparison) -> Cost:
        return Cost(1, 0, _LEAF_DEPTH)

    def visit_blank(self, node: Blank) -> Cost:  # null test OR equality: three conditions
        return Cost(3, 2 * len(node.path), _LEAF_DEPTH + 1)

    def visit_list_test(self, node: ListTest) -> Cost:
        return Cost(1, len(node.value) + len(node.path), _LEAF_DEPTH)

    def _related(self, name: str, parts: tuple[Node, ...]) -> Cost:
        """A relation condition: a subquery (EXISTS or an aggregate) around its inner trees,
        which cost as they would on the contact; the subquery adds a condition (the
        correlation) and a few levels of SQL."""
        total = NOTHING
        for part in parts:
            self.path.append(name)
            total = total + self.visit(part)
            self.path.pop()
        return Cost(total.conditions + 1, total.values, total.depth + _LEAF_DEPTH)

    def visit_quantified(self, node: Quantified) -> Cost:
        return self._related(f"{node.relation}.{node.quantifier}", (node.where,))

    def visit_aggregated(self, node: Aggregated) -> Cost:
        return self._related(f"{node.relation}.{node.function}", (node.where, node.test))


def cost_of(flt: Filter) -> Cost:
    return _Costing().visit(flt.root)


def check_filter(flt: Filter) -> Cost:
    """The filter's cost; raises `AudienceRuleError` (a 400) naming each budget it exceeds."""
    cost = cost_of(flt)
    details = []
    where = cost.widest or "(the whole filter)"
    if cost.depth > MAX_SQL_DEPTH:
        details.append(
            _detail(
                where,
                f"the SQL expression would nest {cost.depth} levels deep; the budget is "
                f"{MAX_SQL_DEPTH} (an AND/OR of k items counts k levels)",
                "write a long OR of equalities on one field as `in`, or split the group",
            )
        )
    if cost.conditions > MAX_CONDITIONS:
        details.append(
            _detail(
                "(the whole filter)",
                f"{cost.conditions} conditions and groups; the budget is {MAX_CONDITIONS}",
                "merge equalities on one field into `in`, or split the audience",
            )
        )
    if cost.values > MAX_VALUES:
        details.append(
            _detail(
                "(the whole filter)",
                f"{cost.values} values in `in`/`notIn` arrays; the budget is {MAX_VALUES}",
                "keep such long lists as a manual audience (POST /audiences/{id}/members)",
            )
        )
    if details:
        raise AudienceRuleError(FILTER_TOO_LARGE, details)
    return cost


def check_list(others: Cost, new: Cost, live_others: int = 0, live_new: int = 0) -> None:
    """Refuse a filter that would take its list's audiences past the budget per list;
    `live_*`: the conditions of filters that change with time alone (run on every page)."""
    total = others + new
    details = _live_details(live_others, live_new)
    if total.conditions > LIST_MAX_CONDITIONS:
        details.append(
            _detail(
                "(the list's audiences)",
                f"{total.conditions} conditions and groups over the list's audiences with this "
                f"filter ({others.conditions} without it); the budget is {LIST_MAX_CONDITIONS}",
                "simplify or delete other audiences of the list",
            )
        )
    if total.values > LIST_MAX_VALUES:
        details.append(
            _detail(
                "(the list's audiences)",
                f"{total.values} `in`/`notIn` values over the list's audiences with this filter "
                f"({others.values} without it); the budget is {LIST_MAX_VALUES}",
                "keep long lists of contacts as manual audiences",
            )
        )
    if details:
        raise AudienceRuleError(LIST_TOO_LARGE, details)


def _live_details(others: int, new: int) -> list[dict[str, str]]:
    if others + new <= LIST_MAX_LIVE_CONDITIONS:
        return []
    return [
        _detail(
            "(the list's audiences)",
            f"{others + new} conditions in filters that change with time alone (relative "
            f"dates), which every page of contacts runs on each row ({others} without this "
            f"filter); the budget is {LIST_MAX_LIVE_CONDITIONS}",
            "use absolute dates where the audience allows, or delete other such audiences",
        )
    ]


def _detail(path: str, message: str, suggestion: str) -> dict[str, str]:
    return {"path": path, "message": message, "suggestion": suggestion}
