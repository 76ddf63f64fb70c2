"""What a CEL literal means for a field of ours, and what the constructs outside the subset
are called in messages: the values side of the CEL reader (`reader.py`).

Design choices:
- A number field is a `double` in CEL's environment, so a number literal is a double
  (`100.0`); an integer literal is refused, since celpy and older evaluators compare no `int`
  with a `double`. An integral double within 2^53 is read as the integer it is, so a filter
  written from `points >= 100` reads back as `points >= 100`.
- A date-time is `timestamp("...")` of an RFC 3339 text with `T`, and `Z` or an offset, up to
  microseconds (the library's precision), in capitals: CEL's evaluators refuse `t` and `z`,
  and a text one tool takes and another refuses would make two audiences of one filter. A
  text of that shape naming no instant (hour 24, a leap second, 30 February, an offset of 24
  hours) is refused with the reason, never a bare `ValueError`.
- Problems are told through `Add`, so this module knows nothing of the reader.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import Final

from ...language.fields import Field, FieldType
from . import syntax as cel

Add = Callable[[int, str, str | None, str], None]
"""`add(offset, message, suggestion, path)`: how a problem is reported."""

_EXACT_DOUBLE: Final = 2**53
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})\Z", re.ASCII
)


class Bad:
    """A literal in error (already reported)."""


BAD: Final = Bad()


class Literals:
    """A CEL literal as the value a field of our schema compares with."""

    def __init__(self, add: Add, found: Field) -> None:
        self.add = add
        self.found = found

    def value(self, node: cel.Node) -> object:
        if isinstance(node, cel.Literal) and node.kind == "bytes":
            return self.wrong(node, f"the bytes {node.text}", "write a string: drop the b")
        if isinstance(node, cel.Literal) and node.kind in ("null", "string", "bool"):
            return node.value
        kind = self.found.type
        if kind is FieldType.NUMBER:
            return self.number(node)
        if kind is FieldType.DATETIME and isinstance(node, cel.Call):
            return self.timestamp(node)
        if isinstance(node, cel.Literal):
            return node.value  # the builder names the wrong type
        return self.wrong(node, refusal(node)[0])

    def wrong(self, node: cel.Node, found: str, fix: str | None = None) -> object:
        expected = "a double" if self.found.type is FieldType.NUMBER else "a literal"
        if self.found.type is FieldType.DATETIME:
            expected = 'a timestamp("2025-01-31T00:00:00Z")'
        self.add(node.offset, f"expected {expected}, found {found}", fix, self.found.name)
        return BAD

    def number(self, node: cel.Node) -> object:
        """A double: CEL compares no int with a double field (`100.0`, not `100`)."""
        sign = 1.0
        if isinstance(node, cel.Unary) and node.op == "-":
            sign, node = -1.0, node.operand
        if not isinstance(node, cel.Literal):
            return self.wrong(node, refusal(node)[0])
        if node.kind in ("int", "uint"):
            return self.integer_for_double(node)
        if node.kind != "double":
            return node.value
        value = sign * float(str(node.value))
        if not math.isfinite(value):
            return self.wrong(node, f"{node.text}, beyond every double")
        return int(value) if value.is_integer() and abs(value) <= _EXACT_DOUBLE else value

    def integer_for_double(self, node: cel.Literal) -> object:
        """An int literal where CEL wants a double: refused, with the double to write."""
        found = f"the integer {node.text}, which CEL compares with no double"
        return self.wrong(
            node, found, f"a number field is a double: write {float(str(node.value))!r}"
        )

    def timestamp(self, node: cel.Call) -> object:
        if node.function != "timestamp" or node.target or len(node.args) != 1:
            return self.wrong(node, f"a call of {node.function}")
        text = node.args[0]
        if not (is_string(text) and _TIMESTAMP.match(str(text.value))):  # type: ignore[union-attr]
            return self.wrong(
                text,
                "no RFC 3339 date-time",
                'write e.g. timestamp("2025-01-31T09:30:00Z"), with Z or an offset',
            )
        try:
            return datetime.fromisoformat(str(text.value))  # type: ignore[union-attr]
        except ValueError as exc:
            return self.no_instant(text, exc)  # type: ignore[arg-type]

    def no_instant(self, text: cel.Literal, exc: ValueError) -> object:
        """A timestamp text of RFC 3339's shape that names no instant (hour 24, 30 February)."""
        return self.wrong(
            text,
            f"{text.text}, which names no instant ({exc})",
            "hours run 00-23, seconds 00-59, days to the month's last, offsets within"
            ' ±23:59: e.g. timestamp("2025-01-31T09:30:00Z")',
        )


def null_type_test(node: cel.Binary) -> cel.Binary | None:
    """`type(x) == null_type` (or `!=`) as the null test `x == null` it is."""
    left, right = node.left, node.right
    if isinstance(left, cel.Name) and left.name == "null_type":
        left, right = right, left
    typed = isinstance(left, cel.Call) and left.function == "type" and left.target is None
    if not (typed and isinstance(right, cel.Name) and right.name == "null_type"):
        return None
    assert isinstance(left, cel.Call) and isinstance(right, cel.Name)
    if node.op not in ("==", "!=") or len(left.args) != 1:
        return None
    null = cel.Literal("null", None, "null", right.offset)
    return cel.Binary(node.op, left.args[0], null, node.offset)


def is_string(node: cel.Node) -> bool:
    return isinstance(node, cel.Literal) and node.kind == "string"


def refusal(node: cel.Node) -> tuple[str, str | None]:
    """What a construct outside the subset is, and what to write instead."""
    match node:
        case cel.Binary(op="+" | "-" | "*" | "/" | "%"):
            return f"the arithmetic {node.op}", "compare a field with a literal"
        case cel.Unary(op="-"):
            return "a negation by -", "write the negative literal, e.g. -5.0"
        case cel.Choice():
            return "the conditional ?:", "write (c && a) || (!c && b)"
        case cel.MapOf():
            return "a map literal", None
        case cel.Index():
            return "an index [...]", "select a field by name"
        case cel.ListOf():
            return "a list", "use field in [...]"
        case cel.Call():
            return f"the function {node.function}()", (
                "the functions read are contains, startsWith, endsWith, exists, all, "
                "timestamp, and size of a relation's rows"
            )
        case cel.Literal():
            return f"the literal {node.text}", "compare a field with it"
        case cel.Name() | cel.Select():
            return "a name outside the schema's fields", (
                "name a field of the record alone (points), a row's field through the variable "
                "of exists or all (a.name)"
            )
        case _:
            return "a negation", "negate a condition, not a value"
