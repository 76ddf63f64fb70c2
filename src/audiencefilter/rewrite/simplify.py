"""Smaller equivalent filters, and filters that can never match anyone.

`simplify` keeps membership exactly: a record is in the simplified audience iff it is in the
original. Three-valued logic makes that subtler than Boolean algebra: `points > 10 AND points < 5`
is FALSE for a contact with points but UNKNOWN for one without, so it may become FALSE only where
no NOT sits above it (an even number of negations: "positive" position), where FALSE and UNKNOWN
both mean "not a member". Rewrites that are exact in three-valued logic (flattening, constants,
double negation, duplicate removal, merging `in` lists, tightening ranges that stay non-empty) are
applied everywhere.

Relative date-times (`{"ago": ...}`) are treated conservatively: how one compares with another
value depends on the clock, so a comparison holding one takes part in no range tightening and no
`in` merge; only rewrites that hold at every instant (duplicates, constants, grouping) touch it.

`is_unsatisfiable` is sound, not complete: when it says True no record can match; it finds the
contradictions `simplify` folds (empty ranges, disjoint `in` lists, `in: []`, IS NULL next to a
comparison on the same field). `is_always_true` is its mirror, as sound and as incomplete: True
when the filter folds to TRUE, so every record is a member (`x OR {}`, `NOT (x AND in: [])`,
`notIn: []`); `x OR NOT x` is not folded, being UNKNOWN where `x` reads a null.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ..language.calendar import Period, StartOf
from ..language.data_paths import value_type
from ..language.fields import LIST_OPS, Op, Schema
from ..language.nodes import (
    FALSE,
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
    all_of,
    any_of,
    unhandled,
)
from ..language.relative import Ago
from ..language.values import unique
from .lower import empty_list, lower_list_test

_LOWER = {Op.GT: False, Op.GTE: True}
_UPPER = {Op.LT: False, Op.LTE: True}


def simplify(node: Node, schema: Schema) -> Node:
    """An equivalent node, no larger than `node`."""
    return _Simplifier(schema).run(node, positive=True)


def is_unsatisfiable(node: Node, schema: Schema) -> bool:
    """True when no record can ever match (sound, not complete)."""
    return simplify(node, schema) == FALSE


def is_always_true(node: Node, schema: Schema) -> bool:
    """True when every record matches, null values included (sound, not complete)."""
    return simplify(node, schema) == TRUE


def size(node: Node) -> int:
    """Nodes in the tree, counting each literal of an `in` list: what simplify reduces."""
    match node:
        case And() | Or():
            return 1 + sum(size(item) for item in node.items)
        case Not():
            return 1 + size(node.item)
        case Comparison():
            return 1 + len(node.value) if isinstance(node.value, tuple) else 1
        case IsNull() | Const() | Blank() | FieldComparison():
            return 1
        case Quantified():
            return 1 + size(node.where)
        case Aggregated():
            return 1 + size(node.test) + size(node.where)
        case ListTest():
            return 1 + len(node.value)
        case _:
            unhandled("simplify.size", node)


class _Simplifier:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def run(self, node: Node, positive: bool) -> Node:
        match node:
            case Not():
                inner = self.run(node.item, not positive)
                if isinstance(inner, Const):
                    return Const(not inner.value)
                return inner.item if isinstance(inner, Not) else Not(inner)
            case And():
                return self.conjunction(node.items, positive)
            case Or():
                return self.disjunction(node.items, positive)
            case Comparison():
                return _comparison(node)
            case IsNull() | Const() | Blank() | FieldComparison():
                return node
            case Quantified() | Aggregated():
                from .simplify_relations import simplify_relation

                return simplify_relation(
                    node, self.schema, lambda n, s: _Simplifier(s).run(n, True)
                )
            case ListTest():
                # Lowering's list rules (each literal once, one-literal sets as `has`), where
                # they make the filter no larger.
                lowered = lower_list_test(node)
                return lowered if size(lowered) <= size(node) else node
            case _:
                unhandled("simplify", node)

    def _items(self, items: Iterable[Node], kind: type, positive: bool) -> list[Node]:
        flat: list[Node] = []
        for item in items:
            done = self.run(item, positive)
            if isinstance(done, And | Or) and isinstance(done, kind):
                flat.extend(done.items)
            else:
                flat.append(done)
        return _unique(flat)

    def conjunction(self, items: Iterable[Node], positive: bool) -> Node:
        flat = [i for i in self._items(items, And, positive) if i != TRUE]
        if FALSE in flat:
            return FALSE
        merged = self.merge_ranges(flat, positive)
        return merged if isinstance(merged, Const) else all_of(tuple(merged))

    def disjunction(self, items: Iterable[Node], positive: bool) -> Node:
        flat = [i for i in self._items(items, Or, positive) if i != FALSE]
        if TRUE in flat:
            return TRUE
        return any_of(tuple(_merge_memberships(flat, self.schema)))

    def merge_ranges(self, items: list[Node], positive: bool) -> list[Node] | Const:
        """Tighten the comparisons on each ordered field into at most two; fold contradictions."""
        by_field: dict[str, list[Comparison]] = {}
        for item in items:
            if isinstance(item, Comparison) and self._ordered(item):
                by_field.setdefault(item.field, []).append(item)
        out = list(items)
        for comparisons in by_field.values():
            merged = _intersect(comparisons)
            if merged is None:  # empty: FALSE with a value, UNKNOWN without one
                if positive:
                    return FALSE
                continue
            if len(merged) < len(comparisons):
                first = out.index(comparisons[0])
                out = [i for i in out if i not in comparisons]
                out[first:first] = merged
        if positive and _null_contradiction(out):
            return FALSE
        if _null_and_not_null(out):
            return FALSE
        return out

    def _ordered(self, node: Comparison) -> bool:
        kind = self.schema[node.field].type if node.field in self.schema else None
        # Strings order by code point, as Python's do; folded ones are left as written, and
        # so are relative values (`ago`, a unit's start, a period).
        ordered = (
            kind is not None
            and kind.entry.ordered
            and not node.insensitive
            and not isinstance(node.value, Ago | StartOf | Period)
        )
        return ordered and (node.op in _LOWER or node.op in _UPPER or node.op is Op.EQUALS)


def _comparison(node: Comparison) -> Node:
    if node.op in LIST_OPS and node.value == ():
        return empty_list(node.op)
    if isinstance(node.value, tuple):
        values = unique(node.value)
        if node.op is Op.IN and len(values) == 1:
            return replace(node, op=Op.EQUALS, value=values[0])
        if len(values) < len(node.value):
            return replace(node, value=values)
    return node


def _unique(items: Iterable[Any]) -> list[Any]:
    return list(unique(tuple(items)))


def _intersect(comparisons: list[Comparison]) -> list[Comparison] | None:
    """The tightest bounds implied by all comparisons, or None when no value satisfies them."""
    field = comparisons[0].field
    low: tuple[Any, bool] | None = None  # (value, inclusive)
    high: tuple[Any, bool] | None = None
    for c in comparisons:
        if c.op is Op.EQUALS or c.op in _LOWER:
            inclusive = c.op is Op.EQUALS or _LOWER[c.op]
            if low is None or c.value > low[0] or (c.value == low[0] and not inclusive):
                low = (c.value, inclusive)
        if c.op is Op.EQUALS or c.op in _UPPER:
            inclusive = c.op is Op.EQUALS or _UPPER[c.op]
            if high is None or c.value < high[0] or (c.value == high[0] and not inclusive):
                high = (c.value, inclusive)
    if low is not None and high is not None:
        if low[0] > high[0] or (low[0] == high[0] and not (low[1] and high[1])):
            return None
        if low[0] == high[0]:
            return [Comparison(field, Op.EQUALS, low[0])]
    merged = []
    if low is not None:
        merged.append(Comparison(field, Op.GTE if low[1] else Op.GT, low[0]))
    if high is not None:
        merged.append(Comparison(field, Op.LTE if high[1] else Op.LT, high[0]))
    return merged


def _merge_memberships(items: list[Node], schema: Schema) -> list[Node]:
    """`x = a OR x in [b, c]` -> `x in [a, b, c]`, per field and case mode (exact)."""
    groups: dict[tuple[object, bool], list[Comparison]] = {}
    for item in items:
        if (
            isinstance(item, Comparison)
            and item.op in (Op.EQUALS, Op.IN)
            and not isinstance(item.value, Ago | StartOf | Period)
            and item.field in schema
            and schema[item.field].accepts(Op.IN)
        ):
            # A JSON path's comparisons merge per path and per the literals' JSON type.
            key = (item.field, item.path, value_type(item.value) if item.path else None)
            groups.setdefault((key, item.insensitive), []).append(item)
    out = list(items)
    for members in groups.values():
        if len(members) < 2:
            continue
        values: list[Any] = []
        for member in members:
            values.extend(member.value if isinstance(member.value, tuple) else (member.value,))
        merged = replace(members[0], op=Op.IN, value=tuple(_unique(values)))
        first = out.index(members[0])
        out = [i for i in out if i not in members]
        out.insert(first, merged)
    return out


def _null_contradiction(items: list[Node]) -> bool:
    """`f IS NULL AND <comparison on f>`: never TRUE (UNKNOWN or FALSE)."""
    nulls = {(i.field, i.path) for i in items if isinstance(i, IsNull)}
    return any(isinstance(i, Comparison) and (i.field, i.path) in nulls for i in items)


def _null_and_not_null(items: list[Node]) -> bool:
    """`f IS NULL AND NOT f IS NULL` (or `f is blank and f is not blank`): FALSE for every
    record, exactly, as neither test is ever UNKNOWN."""
    tests = {(type(i), i.field, i.path) for i in items if isinstance(i, IsNull | Blank)}
    return any(
        isinstance(i, Not)
        and isinstance(i.item, IsNull | Blank)
        and (type(i.item), i.item.field, i.item.path) in tests
        for i in items
    )
