"""Residual filters (partial evaluation): what is left of a filter once some fields are known.

A contact write knows the contact's own fields; only the conditions on what it does not hold
(its actions, say) need a query. `residual(node, schema, known, truth)` replaces each condition
that reads known fields only by its answer and folds the constants away, leaving TRUE, FALSE
or a smaller tree over the other fields. For every record agreeing with the known values,
membership in the residual is membership in the filter (`Filter.residual`, docs/semantics.md).

Three-valued logic is kept with no UNKNOWN constant: a condition UNKNOWN on the known values
becomes FALSE where an even number of NOTs sits above it and TRUE where an odd number does.
Kleene's AND, OR and NOT are monotone (FALSE < UNKNOWN < TRUE) in a condition of even depth and
antitone in one of odd depth, so that choice can only lower the whole filter's answer, and an
answer it lowers was UNKNOWN (were it TRUE or FALSE, it would be so whatever the condition is):
UNKNOWN becomes FALSE or stays UNKNOWN, and membership (TRUE alone) is unchanged.

A condition's fields are the columns it reads (`fields_used`, `Field.read_at`): a field kept
inside a JSON column is known when that column is. A relation condition is a whole: it is
known when the relation's rows are. Each condition is answered by `truth` (the in-memory
back-end, passed in by the facade), so no rule of evaluation is written again here. The walker
is a `match` whose last case calls `unhandled`: a new kind of node fails loudly.
"""

from __future__ import annotations

from collections.abc import Callable, Set

from ..language.fields import Schema
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
    fields_used,
    unhandled,
)

Truth = Callable[[Node], bool | None]
"""A condition's three-valued answer on the known values: TRUE, FALSE or None (UNKNOWN)."""


def residual(node: Node, schema: Schema, known: Set[str], truth: Truth) -> Node:
    """`node` with every condition over `known` fields only replaced by its answer (`truth`),
    and the constants folded: TRUE, FALSE or a tree no larger than `node`. Relative
    date-times of the conditions left are kept as they are."""
    found = _Residual(schema, frozenset(known), truth).visit(node, positive=True)
    if isinstance(found, bool):
        return TRUE if found else FALSE
    return found


class _Residual:
    def __init__(self, schema: Schema, known: frozenset[str], truth: Truth) -> None:
        self.schema = schema
        self.known = known
        self.truth = truth

    def visit(self, node: Node, *, positive: bool) -> Node | bool:
        """The residual of `node`, or its answer as a bool; `positive`: an even number of NOTs
        sits above it."""
        match node:
            case Const():
                return node.value
            case And():
                return self.group(node.items, positive, conjunction=True)
            case Or():
                return self.group(node.items, positive, conjunction=False)
            case Not():
                inner = self.visit(node.item, positive=not positive)
                return (not inner) if isinstance(inner, bool) else Not(inner)
            case Quantified() | Aggregated():
                return self.condition(node, frozenset({node.relation}), positive)
            case Comparison() | IsNull() | Blank() | ListTest() | FieldComparison():
                reads = frozenset(self.column(name) for name in fields_used(node))
                return self.condition(node, reads, positive)
            case _:
                unhandled("residual", node)

    def column(self, name: str) -> str:
        """The column a condition on the field `name` reads (`Field.read_at`): a field kept
        inside JSON is its JSON column; a name the schema lacks (a JSON column's own, say) is
        itself."""
        if name not in self.schema.names:
            return name
        return self.schema[name].read_at()[0]

    def condition(self, node: Node, reads: frozenset[str], positive: bool) -> Node | bool:
        """A condition's answer when every field it reads is known (UNKNOWN as FALSE at an
        even depth, TRUE at an odd one: the module docstring), else the condition itself."""
        if not reads <= self.known:
            return node
        answer = self.truth(node)
        return (not positive) if answer is None else answer

    def group(self, items: tuple[Node, ...], positive: bool, *, conjunction: bool) -> Node | bool:
        """AND (`conjunction`) or OR of the items' residuals: decided by one item equal to
        the group's absorbing constant (FALSE for AND, TRUE for OR), the other constant
        dropped."""
        left: list[Node] = []
        for item in items:
            found = self.visit(item, positive=positive)
            if isinstance(found, bool):
                if found is not conjunction:
                    return found
                continue
            left.append(found)
        if not left:
            return conjunction
        return all_of(tuple(left)) if conjunction else any_of(tuple(left))
