"""List fields in CEL: the four shapes that say a filter's list tests, read and written.

| filter | CEL |
|---|---|
| `tags has "vip"` | `"vip" in tags` |
| `tags hasSome ["a", "b"]` | `["a", "b"].exists(t, t in tags)`, or `tags.exists(t, t in [...])` |
| `tags hasEvery ["a", "b"]` | `["a", "b"].all(t, t in tags)` |
| `tags isEmpty` | `tags == []` (and `size(tags) == 0` is read) |

The first three fail in CEL exactly where the filter's test is UNKNOWN (a null list: `"vip" in
null` has no overload) and a null item matches no value in both, so each is exact: its `!` is
our `NOT`. `tags == []` is false for a null list, as `==` is; `size(tags) == 0` fails there by
the specification, but celpy answers true (`size(null)` is 0 there), so the writer writes the
first. celpy raises a Python `TypeError` for `tags.exists(...)` over a null list, which ends
the whole evaluation where the specification has an error that `||` and `exists` absorb, so
`hasSome` is written over its values.
A list of numbers is tested in guarded forms: celpy fails on a double compared with a null
item, where the filter's `has` looks at the other items, so each item's type is tested first,
over the list or `[]` for a null one (celpy raises a `TypeError` for `exists` over null even
under `false &&`, as it evaluates both sides):

| filter | CEL |
|---|---|
| `s has 1` | `(type(s) == list ? s : []).exists(t, type(t) == double && t == 1.0)` |
| `s hasSome [1, 2]` | the same with `t in [1.0, 2.0]` |
| `s hasEvery [1, 2]` | `[1.0, 2.0].all(v, (type(s) == list ? s : []).exists(t, ... && t == v))` |
| their `NOT` | `type(s) == list && !...` of the above |

CEL never fails on them: they are false for a null list. `equals` (CEL compares a null list
with a list as false), `mode: "insensitive"`, `hasEvery: []` and `hasSome: []` (CEL's
`[].all(...)` is true and `[].exists(...)` false for a null list) are not written.

A macro over an empty list literal never evaluates its body: `[].all(...)` is true and
`[].exists(...)` false for every record, a null or missing list too, so they are read as the
constants TRUE and FALSE (`over_values` marks the forms iterating the literal), not as
`hasEvery: []` (UNKNOWN for a null list). `tags.exists(t, t in [])` iterates the record's list
and fails on a null one, as `hasSome: []` is UNKNOWN there: it is read as that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from ...language.fields import FieldType, ListOp
from ...language.nodes import ListTest
from . import syntax as cel

LIST_TYPES: Final = (
    FieldType.STRING_LIST,
    FieldType.BOOLEAN_LIST,
    FieldType.DATETIME_LIST,
    FieldType.DATE_LIST,
    FieldType.NUMBER_LIST,
)
"""The list types CEL tests as we do."""

_ITEM = "t"
"""The variable of `exists` and `all` over a list's items."""


@dataclass(frozen=True, slots=True)
class Shape:
    """A list test found in CEL: the operator, the expression naming the list field, and the
    operand (an item, a list of items, or None for `isEmpty`)."""

    op: ListOp
    field: cel.Node
    operand: cel.Node | None
    total: bool = False
    """CEL never fails on it (`tags == []`): false where the test is not TRUE."""
    negated: bool = False
    guarded: bool = False
    """A list of numbers' guarded form (the guarded forms): `negated` is the test's `NOT`."""
    over_values: bool = False
    """The macro iterates the operand's list literal (`["a"].all(t, t in tags)`): over an
    empty one it answers without reading the field."""


def shape(node: cel.Node) -> Shape | None:
    """The list test `node` is written as, or None."""
    match node:
        case cel.Logic(op="&&", items=(cel.Binary() as guard, test)):
            return _guarded(guard, test)
        case cel.Call(target=cel.Choice() | cel.ListOf()) if _numbers(node):
            return _numbers(node)
        case cel.Binary(op="in", right=cel.Name() | cel.Select()):
            return Shape(ListOp.HAS, node.right, node.left)
        case cel.Binary(op="==" | "!=", right=cel.ListOf(items=())):
            return Shape(ListOp.IS_EMPTY, node.left, None, True, node.op == "!=")
        case cel.Binary(op="==", left=cel.Call(function="size", target=None, args=(field,))):
            zero = isinstance(node.right, cel.Literal) and node.right.text == "0"
            return Shape(ListOp.IS_EMPTY, field, None) if zero else None
        case cel.Call(function="exists", target=cel.ListOf(), args=(cel.Name() as item, body)):
            tested = _tested(body, item.name, by_item=False)
            assert node.target is not None
            if tested is None:
                return None
            return Shape(ListOp.HAS_SOME, tested, node.target, over_values=True)
        case cel.Call(function="exists", args=(cel.Name() as item, body)) if node.target:
            operand = _tested(body, item.name, by_item=True)
            return None if operand is None else Shape(ListOp.HAS_SOME, node.target, operand)
        case cel.Call(function="all", target=cel.ListOf(), args=(cel.Name() as item, body)):
            tested = _tested(body, item.name, by_item=False)
            assert node.target is not None
            if tested is None:
                return None
            return Shape(ListOp.HAS_EVERY, tested, node.target, over_values=True)
    return None


def _guarded(guard: cel.Binary, test: cel.Node) -> Shape | None:
    """`type(l) == list && !...` of the guarded forms: the `NOT` of a guarded test."""
    listed = _typed(guard, "list")
    if listed is None or not (isinstance(test, cel.Unary) and test.op == "!"):
        return None
    found = _numbers(test.operand)
    if found is None or _dotted(found.field) != _dotted(listed):
        return None
    return Shape(found.op, found.field, found.operand, True, True, True, found.over_values)


def _numbers(node: cel.Node) -> Shape | None:
    """A test of the guarded forms over `(type(l) == list ? l : [])`."""
    match node:
        case cel.Call(function="exists", target=cel.Choice() as target, args=(item, body)):
            listed, found = _listed(target), _number_item(body, _dotted(item))
            if listed is None or found is None:
                return None
            op = ListOp.HAS if found.op == "==" else ListOp.HAS_SOME
            return Shape(op, listed, found.right, True, False, True)
        case cel.Call(function="all", target=cel.ListOf() as values, args=(item, body)):
            every = _numbers(body)
            if every is None or every.op is not ListOp.HAS:
                return None
            mine = _dotted(every.operand) == _dotted(item) is not None
            if not mine:
                return None
            return Shape(ListOp.HAS_EVERY, every.field, values, True, False, True, True)
    return None


def _listed(choice: cel.Choice) -> cel.Node | None:
    """`l` of `type(l) == list ? l : []`, or None."""
    listed = None if choice.condition is None else _typed(choice.condition, "list")
    same = listed is not None and _dotted(listed) == _dotted(choice.then) is not None
    empty = isinstance(choice.otherwise, cel.ListOf) and not choice.otherwise.items
    return listed if same and empty else None


def _typed(node: cel.Node, kind: str) -> cel.Node | None:
    """`x` of `type(x) == kind`, or None."""
    match node:
        case cel.Binary(op="==", left=cel.Call(function="type", target=None, args=(x,))):
            return x if node.right == cel.Name(kind, node.right.offset) else None
    return None


def _number_item(body: cel.Node, item: str | None) -> cel.Binary | None:
    """`t == 1.0` or `t in [...]` of `type(t) == double && ...`, for the variable `t`."""
    match body:
        case cel.Logic(op="&&", items=(guard, cel.Binary(op="==" | "in") as test)):
            named = _typed(guard, "double")
            mine = item is not None and _dotted(named) == item == _dotted(test.left)
            return test if mine else None
    return None


def _dotted(node: cel.Node | None) -> str | None:
    """`r.scores` of a name or a selection of one, to compare two without their offsets."""
    match node:
        case cel.Name():
            return node.name
        case cel.Select():
            operand = _dotted(node.operand)
            return None if operand is None else f"{operand}.{node.field}"
    return None


def _tested(body: cel.Node, item: str, *, by_item: bool) -> cel.Node | None:
    """`t in [...]` (the list, `by_item`) or `t in tags` (the field), for the variable `t`."""
    if not (isinstance(body, cel.Binary) and body.op == "in"):
        return None
    if not (isinstance(body.left, cel.Name) and body.left.name == item):
        return None
    listed = isinstance(body.right, cel.ListOf)
    return body.right if listed == by_item else None


def written_numbers(
    node: ListTest, name: str, literal: Callable[[object], str], *, negated: bool = False
) -> str | None:
    """A test of a list of numbers as its guarded form (the guarded forms), or its `NOT`
    (`negated`), or None when CEL cannot say it."""
    items = ", ".join(literal(value) for value in node.value)
    item = f"type({_ITEM}) == double && {_ITEM}"
    listed = f"(type({name}) == list ? {name} : [])"
    match node.op:
        case ListOp.HAS:
            test = f"{listed}.exists({_ITEM}, {item} == {items})"
        case ListOp.HAS_SOME if node.value:
            test = f"{listed}.exists({_ITEM}, {item} in [{items}])"
        case ListOp.HAS_EVERY if node.value:
            test = f"[{items}].all(v, {listed}.exists({_ITEM}, {item} == v))"
        case _:
            return None
    return f"type({name}) == list && !{test}" if negated else test


def written(node: ListTest, name: str, literal: Callable[[object], str]) -> str | None:
    """`node` in CEL (`name` the field as CEL names it), or None when CEL cannot say it."""
    items = ", ".join(literal(value) for value in node.value)
    match node.op:
        case ListOp.HAS:
            return f"{items} in {name}"
        case ListOp.HAS_SOME if node.value:
            return f"[{items}].exists({_ITEM}, {_ITEM} in {name})"
        case ListOp.HAS_EVERY if node.value:
            return f"[{items}].all({_ITEM}, {_ITEM} in {name})"
        case ListOp.IS_EMPTY:
            return f"{name} == []"
    return None
