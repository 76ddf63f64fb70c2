"""The AST back to canonical where-clause JSON: the inverse of `parse`.

Canonical means one spelling per AST: `equals` instead of the literal shorthand, conditions on
one field merged into one operator object, fields of an AND merged into one where object where
`parse` would read them back to the same nodes. `parse(to_json(node)) == node` for every node
`parse` can produce; the property test in tests/ keeps that true.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from ..language.calendar import DayOf, Period, StartOf
from ..language.fields import ALWAYS_FOLDED, SHORTHAND_OP, ListOp
from ..language.nodes import (
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
    aggregate_form,
)
from ..language.relations import Aggregate
from ..language.relative import Ago
from ..language.visitor import Visitor


def to_dict(node: Node) -> dict[str, Any]:
    """The canonical where object for `node`."""
    return _Dumper().visit(node)


def to_json(node: Node, *, indent: int | None = None) -> str:
    """The canonical where clause as compact JSON text (or indented, for people)."""
    separators = (",", ": ") if indent is not None else (",", ":")
    return json.dumps(to_dict(node), ensure_ascii=False, indent=indent, separators=separators)


def json_value(value: Any) -> Any:
    """A literal (or a record's value) as JSON data, written as the canonical where clause
    writes it, so SQL parameters and records shown next to a filter read the same: date-times
    become ISO 8601 UTC strings ending in `Z`, dates `YYYY-MM-DD`, relative values
    `{"ago": "<canonical duration>"}`, tuples lists; anything else is returned as it is."""
    if isinstance(value, datetime):
        return format_datetime(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, DayOf):  # a lowered tree's: the date of the value it was written as
        return json_value(value.value)
    if isinstance(value, Ago):
        return {"ago": value.iso}
    if isinstance(value, StartOf | Period):
        return value.json
    if isinstance(value, tuple):
        return [json_value(v) for v in value]
    return value


def format_datetime(value: datetime) -> str:
    """`2025-01-31T09:30:00Z`, with microseconds only when there are some."""
    return value.isoformat().replace("+00:00", "Z")


Entry = tuple[tuple[str, tuple[str, ...]], str, Any, bool | None]
"""((field, path), key, value, insensitive): one key of a field's operator object."""


def _operator_entry(node: Node) -> Entry | None:
    """The entry `node` is when it is one key of a field's operator object.

    `insensitive` is None where mode does not matter (null tests, `contains`, non-strings).
    """
    if isinstance(node, IsNull):
        return (node.field, node.path), "equals", None, None
    if isinstance(node, Blank):
        return (node.field, node.path), "blank", True, None
    if isinstance(node, FieldComparison):
        return (node.field, ()), node.op.value, {"_ref": node.other}, None
    if isinstance(node, Comparison):
        return (node.field, node.path), node.op.value, json_value(node.value), _mode_of(node)
    if isinstance(node, ListTest) and node.path:
        return (node.field, node.path), node.op.value, _array_operand(node), _array_mode(node)
    if isinstance(node, Not) and isinstance(node.item, ListTest) and node.item.path:
        test = node.item
        negated = {test.op.value: _array_operand(test)}
        return (test.field, test.path), "not", negated, _array_mode(test)
    if isinstance(node, ListTest):
        return (node.field, ()), node.op.value, _list_operand(node), _list_mode(node)
    if isinstance(node, Not) and isinstance(node.item, ListTest):
        test = node.item
        if test.op is ListOp.IS_EMPTY:
            return (test.field, ()), test.op.value, False, None
        operand = _list_operand(test)
        listed = operand if test.op is ListOp.EQUALS else {test.op.value: operand}
        return (test.field, ()), "not", listed, _list_mode(test)
    if isinstance(node, Not):
        inner = node.item
        if isinstance(inner, IsNull):
            return (inner.field, inner.path), "not", None, None
        if isinstance(inner, Blank):
            return (inner.field, inner.path), "blank", False, None
        if isinstance(inner, FieldComparison):
            return (inner.field, ()), "not", {inner.op.value: {"_ref": inner.other}}, None
        if isinstance(inner, Comparison):
            value = json_value(inner.value)
            # A relative value is never a shorthand, so its `not` keeps the `equals`.
            shorthand = inner.op is SHORTHAND_OP and not isinstance(inner.value, Ago | StartOf)
            negated = value if shorthand else {inner.op.value: value}
            return (inner.field, inner.path), "not", negated, _mode_of(inner)
    return None


def _list_operand(node: ListTest) -> Any:
    """A list operator's operand: one item for `has`, `true` for `isEmpty`, else the items."""
    if node.op is ListOp.IS_EMPTY:
        return True
    if node.op is ListOp.HAS:
        return json_value(node.value[0])
    return json_value(node.value)


def _array_operand(node: ListTest) -> Any:
    """A JSON array test's operand: one value, or the list `array_contains` was given."""
    if node.op is ListOp.ARRAY_CONTAINS and len(node.value) != 1:
        return json_value(node.value)
    return json_value(node.value[0])


def _array_mode(node: ListTest) -> bool | None:
    # Only string literals fold, so only they decide the mode.
    return node.insensitive if any(isinstance(v, str) for v in node.value) else None


def _list_mode(node: ListTest) -> bool | None:
    # `isEmpty` compares no item, so its mode is whatever its neighbours say.
    return None if node.op is ListOp.IS_EMPTY else node.insensitive


def _mode_of(node: Comparison) -> bool | None:
    # `contains` is case-insensitive whatever mode says, so it never decides the mode; nor does
    # anything but a string comparison.
    if node.op in ALWAYS_FOLDED or (node.path and not _is_text(node.value)):
        return None
    return node.insensitive


def _is_text(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, tuple) and bool(value) and _is_text(value[0])
    )


def _field_object(entries: list[Entry]) -> dict[str, Any] | None:
    """One field's operator object holding every entry, or None when they cannot share one."""
    fields = {e[0] for e in entries}
    keys = [e[1] for e in entries]
    modes = {e[3] for e in entries if e[3] is not None}
    if len(fields) != 1 or len(set(keys)) != len(keys) or len(modes) > 1:
        return None
    ops = {key: value for _, key, value, _ in entries}
    if modes == {True}:
        ops["mode"] = "insensitive"
    name, path = entries[0][0]
    if path:  # a JSON field: the path leads the object
        ops = {"path": list(path), **ops}
    return {name: ops}


class _Dumper(Visitor[dict[str, Any]]):
    def visit_const(self, node: Const) -> dict[str, Any]:
        return {} if node.value else {"OR": []}

    def visit_is_null(self, node: IsNull) -> dict[str, Any]:
        if node.path:
            return {node.field: {"path": list(node.path), "equals": None}}
        return {node.field: None}

    def visit_comparison(self, node: Comparison) -> dict[str, Any]:
        entry = _operator_entry(node)
        assert entry is not None
        return _field_object([entry]) or {}

    def visit_list_test(self, node: ListTest) -> dict[str, Any]:
        entry = _operator_entry(node)
        assert entry is not None
        return _field_object([entry]) or {}

    def visit_not(self, node: Not) -> dict[str, Any]:
        if isinstance(node.item, Aggregated):  # `not` on the value: the readers' one form
            item = node.item
            if not isinstance(item.test, Comparison | IsNull):  # a tree built by hand
                return self.visit(Not(aggregate_form(item)))
            return self.visit_aggregated(item, Not(item.test))
        entry = _operator_entry(node)
        if entry is not None:
            return _field_object([entry]) or {}
        if isinstance(node.item, Or):
            return {"NOT": [self.visit(item) for item in node.item.items]}
        return {"NOT": self.visit(node.item)}

    def visit_or(self, node: Or) -> dict[str, Any]:
        return {"OR": [self.visit(item) for item in node.items]}

    def visit_field_comparison(self, node: FieldComparison) -> dict[str, Any]:
        entry = _operator_entry(node)
        assert entry is not None
        return _field_object([entry]) or {}

    def visit_blank(self, node: Blank) -> dict[str, Any]:
        entry = _operator_entry(node)
        assert entry is not None
        return _field_object([entry]) or {}

    def visit_and(self, node: And) -> dict[str, Any]:
        entries = [_operator_entry(item) for item in node.items]
        if all(e is not None for e in entries):
            merged = _field_object([e for e in entries if e is not None])
            if merged is not None:
                return merged
        objects = [self.visit(item) for item in node.items]
        keys = [next(iter(o)) for o in objects if len(o) == 1]
        if len(keys) == len(objects) and len(set(keys)) == len(keys):
            return {key: obj[key] for key, obj in zip(keys, objects, strict=True)}
        return {"AND": objects}

    def visit_quantified(self, node: Quantified) -> dict[str, Any]:
        return {node.relation: {node.quantifier.value: self.visit(node.where)}}

    def visit_aggregated(self, node: Aggregated, test_node: Node | None = None) -> dict[str, Any]:
        if test_node is None and not isinstance(node.test, Comparison | IsNull):
            # A tree built by hand, its test a group or a negation: the readers' one form.
            return self.visit(aggregate_form(node))
        # The test is one condition on a field named `node.field`: its operator object.
        test = self.visit(node.test if test_node is None else test_node)[node.field]
        if node.function is not Aggregate.COUNT:
            test = {node.field: test}
        written: dict[str, Any] = {node.function.value: test}
        if node.where != TRUE:
            written = {"where": self.visit(node.where), **written}
        return {node.relation: written}
