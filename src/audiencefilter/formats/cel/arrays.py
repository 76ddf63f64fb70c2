"""JSON arrays at a path in CEL: the guarded forms that say `array_contains` (and a list
declared inside JSON, which is that test at its path), read and written (docs/interop.md,
CEL).

A filter's array test is TRUE for an array holding the literal, FALSE for an array without
it, and UNKNOWN for a missing key, JSON null or a value that is no array
(docs/semantics-json.md, JSON arrays at a data path). celpy evaluates both sides of `&&` and
raises a Python `TypeError` for `exists` over null, so a `&&` cannot guard a comprehension;
a `has` chain checking each step is a map, as the condition of `?:`, can. So the array is
taken as itself or `[]`, and each item's type is tested before it is compared (an item of
another JSON type, or null, matches nothing):

| filter | CEL |
|---|---|
| `data.a.b array_contains "x"` | `(G ? data.a.b : []).exists(t, type(t) == string && t == "x")` |
| its `NOT` | `G && !(...)` of the above |
| `array_contains [1, "x"]` | `&&` of one test per literal; its `NOT`, `\\|\\|` of theirs |
| `array_contains []` | `G`; its `NOT` `false` |
| `array_starts_with "x"` | `(G && size(data.a.b) > 0 ? [data.a.b[0]] : []).exists(...)` |
| `array_ends_with "x"` | the same over `[data.a.b[size(data.a.b) - 1]]` |
| their `NOT` | `G && !(...)` of those (an empty array is FALSE for both) |

where `G` is `type(data) == map && has(data.a) && type(data.a) == map && has(data.a.b) &&
type(data.a.b) == list`. CEL never fails on them: each is false where the filter's test is
not TRUE, and its `!` is true for a non-array, which no filter says (the reader refuses it).
The index, `size` and `-` of the last two are read in these forms only (the subset reads
none elsewhere). `mode: "insensitive"` is refused (CEL's `lowerAscii` folds ASCII only).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ...language.data_paths import value_type
from ...language.fields import FieldType, ListOp
from ...language.nodes import ListTest
from . import syntax as cel
from .json_paths import TYPE_NAMES, plain, selected, typed

_KINDS = {name: kind for kind, name in TYPE_NAMES.items()}
_ITEM = "t"
"""The variable of `exists` over an array's items."""


def guard(name: str, keys: Sequence[str]) -> str:
    """`G`: true exactly where the path holds an array, never failing."""
    steps = [f"type({name}) == map"]
    for i in range(1, len(keys) + 1):
        at = selected(name, keys[:i])
        steps += [f"has({at})", f"type({at}) == {'list' if i == len(keys) else 'map'}"]
    return " && ".join(steps)


def written(
    node: ListTest, name: str, literal: Callable[[object], str], *, negated: bool = False
) -> str | None:
    """An array test at `node.path` of the column `name` (`negated`: its FALSE) in the
    guarded forms, or None when CEL cannot say the test."""
    if node.op not in _ITEMS or node.insensitive:
        return None
    at = selected(name, node.path)
    listed = f"({condition(name, node.path, node.op)} ? {_ITEMS[node.op].format(at=at)} : [])"
    tests = [_exists(listed, value, literal) for value in node.value]
    checked = guard(name, node.path)
    if not tests:
        return "false" if negated else checked
    if negated:
        falses = [f"{checked} && !{test}" for test in tests]
        return falses[0] if len(falses) == 1 else " || ".join(f"({t})" for t in falses)
    return " && ".join(tests)


_ITEMS = {
    ListOp.ARRAY_CONTAINS: "{at}",
    ListOp.ARRAY_STARTS_WITH: "[{at}[0]]",
    ListOp.ARRAY_ENDS_WITH: "[{at}[size({at}) - 1]]",
}
"""The items each test looks at: all, the first, the last (`{at}` the array)."""


def condition(name: str, keys: Sequence[str], op: ListOp) -> str:
    """The condition of `?:`: `G`, and for the first or last item, a non-empty array."""
    checked = guard(name, keys)
    if op is ListOp.ARRAY_CONTAINS:
        return checked
    return f"{checked} && size({selected(name, keys)}) > 0"


def items(name: str, keys: Sequence[str], op: ListOp) -> str:
    """The branch of `?:` holding the items `op` looks at."""
    return _ITEMS[op].format(at=selected(name, keys))


def _exists(listed: str, value: object, literal: Callable[[object], str]) -> str:
    kind = TYPE_NAMES[value_type(value)]
    return f"{listed}.exists({_ITEM}, type({_ITEM}) == {kind} && {_ITEM} == {literal(value)})"


@dataclass(frozen=True, slots=True)
class Array:
    """An array test found in CEL: the path (`data.a.b`) and the test (`array_contains` for
    `G` alone); as `plain` has them, the condition of `?:`, its branch of items and, for the
    test's `NOT`, the guard beside it (the reader checks each is this module's); the type
    and literal of the item compared (None for `array_contains []`)."""

    at: cel.Node
    op: ListOp
    checked: cel.Node
    listed: cel.Node | None = None
    kind: FieldType | None = None
    literal: cel.Node | None = None
    steps: cel.Node | None = None

    @property
    def negated(self) -> bool:
        return self.steps is not None


def form(node: cel.Node) -> Array | None:
    """The form of this module `node` is written as, or None."""
    match node:
        case cel.Call(function="exists", target=cel.Choice() as listed, args=(item, body)):
            return _item_test(listed, item, body)
        case cel.Logic(op="&&", items=(*steps, cel.Unary(op="!", operand=inner))) if steps:
            found = form(inner)
            if found is None or found.literal is None or found.negated:
                return None
            return replace(found, steps=plain(cel.Logic("&&", tuple(steps), 0)))
        case cel.Logic(op="&&", items=(*_, last)):
            at, kind = typed(last, "==")
            empty = ListOp.ARRAY_CONTAINS
            return None if at is None or kind != "list" else Array(at, empty, plain(node))
    return None


def _item_test(listed: cel.Choice, item: cel.Node, body: cel.Node) -> Array | None:
    """`(G ? at : []).exists(t, type(t) == kind && t == literal)`, or None."""
    empty = isinstance(listed.otherwise, cel.ListOf) and not listed.otherwise.items
    then, condition = listed.then, listed.condition
    located = None if then is None else _located(then)
    if then is None or condition is None or located is None or not empty:
        return None
    match body:
        case cel.Logic(op="&&", items=(typing, cel.Binary(op="==") as test)):
            tested, kind = typed(typing, "==")
            mine = isinstance(item, cel.Name) and tested == plain(item) == plain(test.left)
            found = _KINDS.get(kind or "")
            if not mine or found is None:
                return None
            at, op = located
            return Array(at, op, plain(condition), plain(then), found, test.right)
    return None


def _located(items: cel.Node) -> tuple[cel.Node, ListOp] | None:
    """The array and the test of a branch of items (`items` checks the rest), or None."""
    match items:
        case cel.ListOf(items=(cel.Index(operand=at, key=cel.Literal()),)):
            return plain(at), ListOp.ARRAY_STARTS_WITH
        case cel.ListOf(items=(cel.Index(operand=at),)):
            return plain(at), ListOp.ARRAY_ENDS_WITH
        case cel.ListOf():
            return None
    return plain(items), ListOp.ARRAY_CONTAINS
