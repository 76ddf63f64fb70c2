"""Paths inside a JSON column in CEL: the forms that say a filter's tests at a path, read and
written (docs/interop.md, CEL).

The environment binds a JSON column as CEL's JSON: an object a `map`, an array a `list`, a
number a `double`, text a `string`, a boolean a `bool`. CEL answers otherwise than a filter
at a path in two ways: a missing key is an error (as our UNKNOWN), but JSON `null` compared
with `==` is false and a value of another type has no overload (an error, where ours is
FALSE). So each test is written beside the type of its literal, and its `NOT` and its null
test are written out, never as CEL's `!` of another form:

- `data.plan = "pro"`: `type(data.plan) == string && data.plan == "pro"`;
- its `NOT`: `type(data.plan) != null_type && (type(data.plan) != string || !(data.plan ==
  "pro"))` (present, and of another type or not equal);
- `data.seats notIn [1]`: `type(data.seats) == double && !(data.seats in [1.0])`;
- `data.a.b IS NULL`: `type(data) != map || !has(data.a) || type(data.a) != map ||
  !has(data.a.b) || type(data.a.b) == null_type`, and its `NOT` each step flipped and joined
  by `&&`.

The first two answer false for JSON null where the filter's test is UNKNOWN, so the reader
reads each as the one tree it says and refuses its `!` (`UNSAID`). The null tests never fail.
Keys are CEL identifiers (others need an index, which the subset leaves out).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from datetime import date, datetime
from typing import Final

from ...language.fields import JSON_LIST_OPS, FieldType, ListOp, Schema
from ...language.lists import as_arrays
from ...language.nodes import And, Comparison, IsNull, ListTest, Node, Not, Or, Quantified
from . import syntax as cel
from .lexer import RESERVED

TYPE_NAMES: Final = {
    FieldType.STRING: "string",
    FieldType.NUMBER: "double",
    FieldType.BOOLEAN: "bool",
}
"""The CEL type of a JSON value compared with a literal of each of our types."""
_KINDS: Final = {name: kind for kind, name in TYPE_NAMES.items()}
_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*\Z")
_WORDS = frozenset({"true", "false", "null", "in"}) | RESERVED


def is_key(key: str) -> bool:
    """Whether CEL selects `key` with a dot: an identifier, no reserved word."""
    return bool(_IDENTIFIER.match(key)) and key not in _WORDS


def selected(name: str, keys: Sequence[str]) -> str:
    """`data.a.b` of the column `name` and the keys."""
    return ".".join((name, *keys))


def true_form(at: str, kind: FieldType, test: str) -> str:
    """The test at a path, TRUE where the filter's comparison is TRUE."""
    return f"type({at}) == {TYPE_NAMES[kind]} && {test}"


def false_form(at: str, kind: FieldType, test: str) -> str:
    """The test's FALSE at a path: present, and of another type or not true (`test` an atom)."""
    return f"type({at}) != null_type && (type({at}) != {TYPE_NAMES[kind]} || !{test})"


def null_form(name: str, keys: Sequence[str], negated: bool) -> str:
    """`IS NULL` at a path (`negated`: its `NOT`), step by step, never failing."""
    steps = [f"type({name}) != map"]
    for i in range(1, len(keys) + 1):
        at = selected(name, keys[:i])
        last = i == len(keys)
        steps += [f"!has({at})", f"type({at}) == null_type" if last else f"type({at}) != map"]
    if not negated:
        return " || ".join(steps)
    flipped = [_flip(step) for step in steps]
    return " && ".join(flipped)


def _flip(step: str) -> str:
    if step.startswith("!"):
        return step[1:]
    return step.replace(" != ", " == ") if " != " in step else step.replace(" == ", " != ")


@dataclass(frozen=True, slots=True)
class Form:
    """A test at a path found in CEL: the path (`data.a`), the type its literal is compared
    as (None for a null test), the test on the path (`data.a == "x"`), and whether it is
    the test's `NOT` (`false_form`, or the null test's `NOT`)."""

    at: cel.Node
    kind: FieldType | None
    test: cel.Node | None
    negated: bool


def form(node: cel.Node) -> Form | None:
    """The form of this module `node` is written as, or None (its null tests checked by the
    reader against `null_form`, step by step)."""
    match node:
        case cel.Logic(
            op="&&", items=(guard, cel.Logic(op="||", items=(other, cel.Unary(op="!") as no)))
        ):
            at, kind = typed(guard, "!=")
            if kind != "null_type" or at is None or typed(other, "!=")[0] != at:
                return None
            return _form(at, typed(other, "!=")[1], no.operand, True)
        case cel.Logic(op="&&", items=(guard, test)):
            at, kind = typed(guard, "==")
            return None if at is None else _form(at, kind, test, False)
        case cel.Logic(op="||" | "&&", items=(*_, last)):
            at, kind = typed(last, "==" if node.op == "||" else "!=")
            return Form(at, None, None, node.op == "&&") if kind == "null_type" and at else None
    return None


def _form(at: cel.Node, kind: str | None, test: cel.Node, negated: bool) -> Form | None:
    found = _KINDS.get(kind or "")
    return None if found is None else Form(at, found, test, negated)


def typed(node: cel.Node, op: str) -> tuple[cel.Node | None, str | None]:
    """`x` and `t` of `type(x) == t` (`op` `==` or `!=`), or Nones; `x` as `plain` has it."""
    match node:
        case cel.Binary(
            left=cel.Call(function="type", target=None, args=(at,)), right=cel.Name(name=kind)
        ):
            return (plain(at), kind) if node.op == op else (None, None)
    return None, None


def plain(node: cel.Node) -> cel.Node:
    """`node` with every offset 0, to compare two expressions by their text alone."""
    values = {f.name: _plain(getattr(node, f.name)) for f in fields(node) if f.name != "offset"}
    return replace(node, offset=0, **values)  # type: ignore[arg-type]


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        return plain(value)  # type: ignore[arg-type]
    return value


def in_json(node: Node, schema: Schema) -> Node:
    """`node` with each test of a date or a list declared inside JSON as what it means at its
    path, which CEL says (docs/semantics-json.md, Typed fields inside JSON): a date's as the test
    of its ISO 8601 text, a list's as `array_contains` (`language.lists.as_arrays`), a null
    test as the path's; relative and calendar values, and the list tests such a list does not
    take, are left for the writer to refuse."""
    match node:
        case And() | Or():
            return type(node)(tuple(in_json(item, schema) for item in node.items))
        case Not():
            return Not(in_json(node.item, schema))
        case Quantified():
            relation = schema.relation(node.relation)
            inner = node.where if relation is None else in_json(node.where, relation.schema)
            return replace(node, where=inner)
        case Comparison() if _declared(node.field, schema, FieldType.DATE):
            text = _days(node.value)
            column, keys = schema[node.field].read_at()
            return node if text is None else Comparison(column, node.op, text, False, keys)
        case IsNull() if _declared(node.field, schema, FieldType.DATE, list_too=True):
            return IsNull(*schema[node.field].read_at())
        case ListTest() if _declared(node.field, schema, list_too=True) and _item_test(node):
            return as_arrays(node, schema[node.field].source)
    return node


def _declared(name: str, schema: Schema, *kinds: FieldType, list_too: bool = False) -> bool:
    """Whether `name` is declared inside JSON, of one of `kinds` or (`list_too`) a list."""
    found = schema.get(name)
    if found is None or not found.source:
        return False
    return found.type in kinds or (list_too and found.type.element is not None)


def _item_test(node: ListTest) -> bool:
    """An item test a list declared inside JSON takes (`Field.list_operators`): `isEmpty`
    is left for the writer to refuse, as CEL's guarded array forms read no array's size."""
    return (
        not node.path
        and not node.insensitive
        and node.op in JSON_LIST_OPS
        and node.op is not ListOp.IS_EMPTY
    )


def _days(value: object) -> str | tuple[str, ...] | None:
    """The ISO 8601 text of a day or of each day of a tuple, or None (another value)."""
    if isinstance(value, tuple):
        texts = tuple(_days(item) for item in value)
        return None if None in texts else texts  # type: ignore[return-value]
    if isinstance(value, date) and not isinstance(value, datetime):
        return value.isoformat()
    return None
