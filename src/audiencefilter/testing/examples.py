"""Example records for a filter: one inside, one outside, and for each condition a pair that
differs only in the field it reads and falls on opposite sides, so a test built from them
exercises every condition (a condition no pair flips is reported, proved dead where the algebra
shows the filter is the same without it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..algebra import can_match, equivalent
from ..errors import join_path
from ..filter import Filter, parse
from ..language.nodes import TRUE, And, Node, Not, Or, fields_used, walk
from ..language.relative import as_now, system_clock


@dataclass(frozen=True)
class ConditionExample:
    """One condition's pair (`inside`, `outside`), or `dead` (True: proved never to decide the
    outcome; None: no pair found and no proof)."""

    path: str
    inside: dict[str, Any] | None
    outside: dict[str, Any] | None
    dead: bool | None


@dataclass(frozen=True)
class Examples:
    """A record in the audience, one out of it, and a pair per condition by its path."""

    inside: dict[str, Any] | None
    outside: dict[str, Any] | None
    conditions: dict[str, ConditionExample] = field(default_factory=dict)


def examples(flt: Filter, *, now: datetime | None = None) -> Examples:
    """`inside`/`outside` records of `flt` and, per condition, a deciding pair (docs/algebra.md)."""
    moment = as_now(system_clock() if now is None else now)
    inside = can_match(flt, now=moment).witness
    outside = can_match(Filter(Not(flt.root), flt.schema), now=moment).witness
    if outside is None and not flt.matches({}, now=moment):
        outside = {}
    found = {}
    for path, node in _conditions(flt.to_dict(), flt):
        found[path] = _pair(flt, path, node, moment, [inside, outside])
    return Examples(inside, outside, found)


def _conditions(where: Any, flt: Filter, path: str = "") -> list[tuple[str, Node]]:
    """Each leaf condition of the where clause: its path and its node in the filter's tree."""
    if not isinstance(where, dict):
        return []
    found: list[tuple[str, Node]] = []
    for key, value in where.items():
        inner = join_path(path, key)
        if key in ("AND", "OR"):
            for i, item in enumerate(value if isinstance(value, list) else [value]):
                found += _conditions(
                    item, flt, f"{inner}[{i}]" if isinstance(value, list) else inner
                )
        elif key == "NOT":
            found += _conditions(value, flt, inner)
        else:
            found += _field_conditions(key, value, flt, inner)
    return found


def _field_conditions(key: str, value: Any, flt: Filter, path: str) -> list[tuple[str, Node]]:
    operators = value if isinstance(value, dict) else {"equals": value}
    shared = {k: operators[k] for k in ("mode", "path") if k in operators}
    found = []
    for op, operand in operators.items():
        if op in shared:
            continue
        node = _node({key: {op: operand, **shared}}, flt)
        if node is not None:
            found.append((join_path(path, op) if isinstance(value, dict) else path, node))
    return found


def _node(where: dict[str, Any], flt: Filter) -> Node | None:
    try:
        root = parse(where, flt.schema).root
    except Exception:  # a piece no reader takes alone (a relation's inner key)  # noqa: BLE001
        return None
    return root if any(n == root for n in walk(flt.root)) else None


def _pair(
    flt: Filter, path: str, node: Node, moment: datetime, bases: list[Any]
) -> ConditionExample:
    fixed = Filter(_replaced(flt.root, node, TRUE), flt.schema)
    reads = fields_used(node)
    values = _values(node, flt, moment)
    for base in [b for b in bases if b is not None] + [{}]:
        for a in values:
            for b in values:
                first, second = _with(base, reads, a), _with(base, reads, b)
                if flt.matches(first, now=moment) and not flt.matches(second, now=moment):
                    return ConditionExample(path, first, second, False)
    dead = True if equivalent(flt, fixed, now=moment).holds else None
    return ConditionExample(path, None, None, dead)


def _values(node: Node, flt: Filter, moment: datetime) -> list[dict[str, Any]]:
    """Values of the condition's fields making it TRUE and making it not TRUE."""
    alone = Filter(node, flt.schema)
    found = [
        can_match(alone, now=moment).witness,
        can_match(Filter(Not(node), flt.schema), now=moment).witness,
        {},
    ]
    return [w for w in found if w is not None]


def _with(base: dict[str, Any], reads: frozenset[str], values: dict[str, Any]) -> dict[str, Any]:
    record = {k: v for k, v in base.items() if k not in reads}
    record.update({k: v for k, v in values.items() if k in reads})
    return record


def _replaced(root: Node, target: Node, by: Node) -> Node:
    if root == target:
        return by
    if isinstance(root, And | Or):
        return type(root)(tuple(_replaced(item, target, by) for item in root.items))
    if isinstance(root, Not):
        return Not(_replaced(root.item, target, by))
    return root
