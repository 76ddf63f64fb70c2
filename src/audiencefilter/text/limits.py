"""The depth and size a filter has in its canonical JSON, so text is held to the JSON limits.

The two syntaxes nest differently (`NOT: [a, b]` is one level of JSON but `not (a or b)`; a
where object ANDs its keys without a level), so counting parentheses would make the same
filter valid in one syntax and too deep in the other. Instead a text filter is measured as
the JSON `dump` writes for it and `parse` counts: a text filter is within the limits exactly
when its canonical JSON is. The walk is iterative, so any nesting is measured safely.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

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
    unhandled,
    walk,
)
from ..where.write import _field_object, _operator_entry  # the dumper's own merge rules


@dataclass(frozen=True, slots=True)
class Size:
    """A filter's canonical JSON nesting depth and node count, as `parse` counts them.

    Attributes:
        depth: Nesting of AND/OR/NOT keys and field-level `not`.
        nodes: Field keys, operator keys and groups.
        too_deep: When deeper than the bound asked for: the first node (in reading order) whose
            JSON is nested past it, after its ancestors, outermost first.
    """

    depth: int
    nodes: int
    too_deep: tuple[Node, ...] = ()


@dataclass(frozen=True, slots=True)
class _Shape:
    depth: int
    nodes: int
    keys: tuple[str, ...]  # the top-level keys of the node's JSON object


def canonical_size(root: Node, max_depth: int) -> Size:
    """Measure `root` as its canonical JSON; `too_deep` says where `max_depth` is crossed."""
    if any(isinstance(n, Not) and isinstance(n.item, Aggregated) for n in walk(root)):
        root = _as_written(root)  # a rare form, in trees the reader has bounded in depth
    shapes: dict[int, _Shape] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in shapes:
            continue
        if not children_done:
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
            continue
        shapes[id(node)] = _shape(node, shapes)
    top = shapes[id(root)]
    too_deep = _first_too_deep(root, shapes, max_depth) if top.depth > max_depth else ()
    return Size(top.depth, top.nodes, too_deep)


def _as_written(node: Node) -> Node:
    """The tree in the JSON writer's form: a `Not` around an aggregate is written as the
    aggregate's `not` (`{"actions": {"count": {"not": 1}}}`). Unchanged nodes stay the same
    objects, so positions found for them still apply."""
    match node:
        case Not(item=Aggregated() as aggregate):
            return replace(aggregate, test=Not(aggregate.test), where=_as_written(aggregate.where))
        case And() | Or():
            items = tuple(_as_written(item) for item in node.items)
            same = all(a is b for a, b in zip(items, node.items, strict=True))
            return node if same else replace(node, items=items)
        case Not():
            item = _as_written(node.item)
            return node if item is node.item else Not(item)
        case Quantified():
            where = _as_written(node.where)
            return node if where is node.where else replace(node, where=where)
        case Aggregated():
            where = _as_written(node.where)
            return node if where is node.where else replace(node, where=where)
        case _:
            return node


def _first_too_deep(root: Node, shapes: dict[int, _Shape], max_depth: int) -> tuple[Node, ...]:
    """The first node, top-down and left to right, that `parse` would find too deep."""
    stack: list[tuple[tuple[Node, ...], int]] = [((root,), 0)]
    while stack:
        chain, level = stack.pop()
        node = chain[-1]
        level += _levels_added(node, shapes, chain[-2] if len(chain) > 1 else None)
        if level > max_depth:
            return chain
        stack.extend((chain + (child,), level) for child in reversed(_children(node)))
    return ()


def _levels_added(node: Node, shapes: dict[int, _Shape], parent: Node | None) -> int:
    """How many JSON levels `node` opens: a group key, or a field's `not`."""
    if isinstance(parent, Aggregated) and node is parent.where:
        # {"relation": {"where": {...}}}: the where object is a level below the relation's
        return 1 + _levels_added(node, shapes, None)
    match node:
        case Or():
            # {"NOT": [items]}: the NOT's level holds the OR's items
            return 0 if isinstance(parent, Not) else 1
        case Not():
            return 1
        case Const():
            return 1 if node == FALSE else 0
        case And():
            return 1 if shapes[id(node)].keys == ("AND",) else 0
        case Comparison() | IsNull() | Blank() | FieldComparison() | ListTest():
            return 0
        case Quantified():  # {"relation": {"some": {...}}}
            return 2
        case Aggregated():  # {"relation": {"count": ...}}
            return 1
        case _:
            unhandled("text.limits", node)


def _children(node: Node) -> tuple[Node, ...]:
    match node:
        case And() | Or():
            return node.items
        case Not():
            return (node.item,)
        case Comparison() | IsNull() | Const() | Blank() | FieldComparison() | ListTest():
            return ()
        case Quantified():
            return (node.where,)
        case Aggregated():
            return (node.test, node.where)
        case _:
            unhandled("text.limits", node)


def _shape(node: Node, shapes: dict[int, _Shape]) -> _Shape:
    match node:
        case Const():
            return _Shape(0, 0, ()) if node.value else _Shape(1, 1, ("OR",))  # {} / {"OR": []}
        case IsNull():
            # {"f": null}, or {"f": {"path": [...], "equals": null}} for a JSON field
            return _Shape(0, 2 if node.path else 1, (node.field,))
        case Comparison() | Blank() | FieldComparison() | ListTest():
            return _Shape(0, 2, (node.field,))  # {"f": {"op": value}}, {"f": {"blank": true}}
        case Not():
            return _negation_shape(node, shapes)
        case Or():
            return _group_shape("OR", [shapes[id(item)] for item in node.items])
        case And():
            return _conjunction_shape(node, [shapes[id(item)] for item in node.items])
        case Quantified():  # the relation key, the quantifier key, the where object
            inner = shapes[id(node.where)]
            return _Shape(2 + inner.depth, 2 + inner.nodes, (node.relation,))
        case Aggregated():  # the relation key, the aggregate key, its test, its where
            test = shapes[id(node.test)]
            depth, nodes = 1 + test.depth, 1 + test.nodes
            if node.where != TRUE:
                where = shapes[id(node.where)]
                depth, nodes = max(depth, 2 + where.depth), nodes + 1 + where.nodes
            return _Shape(depth, nodes, (node.relation,))
        case _:
            unhandled("text.limits", node)


def _group_shape(key: str, items: list[_Shape]) -> _Shape:
    return _Shape(
        1 + max((s.depth for s in items), default=0), 1 + sum(s.nodes for s in items), (key,)
    )


def _negation_shape(node: Not, shapes: dict[int, _Shape]) -> _Shape:
    entry = _operator_entry(node)
    # {"f": {"blank": false}}, {"tags": {"isEmpty": false}}
    if entry is not None and entry[1] != "not":
        return _Shape(0, 2, (entry[0][0],))
    if entry is not None:  # {"f": {"not": value}} or {"f": {"not": {"op": value}}}
        return _Shape(1, 2 + isinstance(entry[2], dict), (entry[0][0],))
    inner = node.item
    if isinstance(inner, Or):  # {"NOT": [items of the OR]}
        return _group_shape("NOT", [shapes[id(item)] for item in inner.items])
    return _group_shape("NOT", [shapes[id(inner)]])


def _conjunction_shape(node: And, items: list[_Shape]) -> _Shape:
    entries = [_operator_entry(item) for item in node.items]
    if all(e is not None for e in entries):
        present = [e for e in entries if e is not None]
        if _field_object(present) is not None:  # one field's operator object
            negated = [e for e in present if e[1] == "not"]
            nodes = 1 + len(present) + sum(isinstance(e[2], dict) for e in negated)
            return _Shape(1 if negated else 0, nodes, (present[0][0][0],))
    keys = [s.keys[0] for s in items if len(s.keys) == 1]
    if len(keys) == len(items) and len(set(keys)) == len(keys):  # one where object
        return _Shape(max(s.depth for s in items), sum(s.nodes for s in items), tuple(keys))
    return _group_shape("AND", items)
