"""Two-valued formats against our three-valued logic: the one place that says how.

JsonLogic and MongoDB answer every condition true or false; here a condition on a null field
is UNKNOWN, and a record is in when the filter is TRUE. Readers and writers of those formats
keep one invariant: a tree read from a rule is TRUE exactly when the rule holds, and a rule
written from a tree holds exactly when the tree is TRUE.

- And and Or keep it as they are: TRUE-ness of a Kleene AND or OR is decided by the TRUE-ness
  of its items, so UNKNOWN may stand in for false everywhere but under a negation.
- A format's negation holds when its operand does not: `not_true` is the tree that is TRUE
  exactly when a tree is not TRUE (FALSE or UNKNOWN), pushing the negation to the conditions
  and adding the null test under which each is UNKNOWN (`country != "FR"` holds for a missing
  country in both formats: `NOT country = "FR" OR country IS NULL`).
- A writer writes our `NOT c` as "neither c nor its null test" (`unknown_when`), which reads
  back, through `conjoin`, as `NOT c` again.
"""

from __future__ import annotations

from dataclasses import replace

from ..language.fields import OPPOSITE_OPS
from ..language.nodes import (
    FALSE,
    TRUE,
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
from ..language.relations import Quantifier

NullKey = tuple[str, tuple[str, ...]]
"""A field and the keys of a path inside it: what a null test tests."""

_OPPOSITE = OPPOSITE_OPS


def unknown_when(node: Node) -> tuple[IsNull, ...]:
    """The null tests under which a condition is UNKNOWN (none for a condition that is never
    UNKNOWN: null tests, blank, constants, relations, and `in []`/`notIn []`)."""
    match node:
        case Comparison():
            empty = node.op in _OPPOSITE and node.value == ()
            return () if empty else (IsNull(node.field, node.path),)
        case ListTest():
            return (IsNull(node.field, node.path),)
        case FieldComparison():
            return (IsNull(node.field), IsNull(node.other))
        case IsNull() | Blank() | Const() | Quantified():
            return ()
        case _:  # an aggregate's minimum is UNKNOWN over no values: no null test says when
            unhandled("unknown_when", node)


def not_true(node: Node) -> Node:
    """The tree TRUE exactly when `node` is not TRUE: a two-valued format's negation."""
    match node:
        case And():
            return any_of(tuple(not_true(item) for item in node.items))
        case Or():
            return conjoin(tuple(not_true(item) for item in node.items))
        case Not():
            return not_false(node.item)
        case Const():
            return FALSE if node.value else TRUE
        case Quantified() if node.quantifier in _NEGATED_QUANTIFIER:
            return replace(node, quantifier=_NEGATED_QUANTIFIER[node.quantifier])
        case Comparison() if node.op in _OPPOSITE and not node.path:
            # On a field, `notIn` is exactly "present and not in"; at a JSON path it is FALSE
            # for another JSON type, where NOT `in` is TRUE, so a path keeps the negation.
            return any_of((replace(node, op=_OPPOSITE[node.op]), *unknown_when(node)))
        case _:
            return any_of((Not(node), *unknown_when(node)))


def not_false(node: Node) -> Node:
    """The tree TRUE exactly when `node` is not FALSE (TRUE or UNKNOWN)."""
    match node:
        case And():
            return conjoin(tuple(not_false(item) for item in node.items))
        case Or():
            return any_of(tuple(not_false(item) for item in node.items))
        case Not():
            return not_true(node.item)
        case _:
            return any_of((node, *unknown_when(node)))


_NEGATED_QUANTIFIER = {Quantifier.SOME: Quantifier.NONE, Quantifier.NONE: Quantifier.SOME}


def conjoin(items: tuple[Node, ...]) -> Node:
    """The conjunction of `items`, with "present and not c" read back as `NOT c`.

    Beside `IS NOT NULL` on a field, a disjunct testing that field for null is FALSE and is
    dropped; the `IS NOT NULL` that did so goes too when another item requires the field (a
    condition on it is never TRUE for a null). So a writer's "neither c nor null" comes back as
    the `NOT c` it was written from, and any other `IS NOT NULL` stays.
    """
    present = {
        _null_key(item.item) for item in items if isinstance(item, Not) and _is_null(item.item)
    }
    if not present:
        return all_of(items)
    used: set[NullKey] = set()
    kept = tuple(_without_null_tests(item, present, used) for item in items)
    needed = {key for key in present if key not in used or not _required(kept, key)}
    return all_of(tuple(item for item in kept if _kept_beside(item, needed)))


def _required(items: tuple[Node, ...], key: NullKey) -> bool:
    return any(_requires(item, key) for item in items)


def _kept_beside(item: Node, needed: set[NullKey]) -> bool:
    """Whether `item` stays in a conjunction: a present test only when nothing else needs
    its field."""
    return (
        not isinstance(item, Not)
        or not isinstance(item.item, IsNull)
        or (_null_key(item.item) in needed)
    )


def _is_null(node: Node) -> bool:
    return isinstance(node, IsNull)


def _null_key(node: Node) -> NullKey:
    assert isinstance(node, IsNull)
    return node.field, node.path


def _without_null_tests(node: Node, present: set[NullKey], used: set[NullKey]) -> Node:
    """`node` with the null tests of present fields dropped from a disjunction, noting in
    `used` the fields whose present test did so (it was a writer's "present and not")."""
    if not isinstance(node, Or):
        return node
    dropped = {_null_key(i) for i in node.items if _is_null(i) and _null_key(i) in present}
    used |= dropped
    return any_of(tuple(i for i in node.items if not (_is_null(i) and _null_key(i) in dropped)))


def _requires(node: Node, key: NullKey) -> bool:
    """Whether `node` is TRUE only when the field (and path) of `key` is not null."""
    inner = node.item if isinstance(node, Not) else node
    if isinstance(inner, Comparison | ListTest):
        return (inner.field, inner.path) == key and bool(unknown_when(inner))
    if isinstance(inner, FieldComparison):
        return key in ((inner.field, ()), (inner.other, ()))
    return False
