"""The accelerator of `parse` for JSON text: a reader for valid, ordinary filters only.

`parse` is on the hot path of a service that reads a filter per request, and most filters are
valid and plain. This reader handles exactly those, as cheaply as it can, and gives up on
anything else by returning None; `parse` then runs the plain reader (`read.py`), which is the
definition of the where clause and writes every message. So this module holds no message, no
path and no suggestion: only shortcuts that must build the same AST as the plain reader.

Design choices:
- The text is decoded by the C scanner without the duplicate-key hook, which keeps the last
  of repeated keys silently. Repeats are then ruled out by counting: outside strings, valid
  JSON has exactly one colon per object member, so `colons in the text - colons in its
  strings` is the number of members, and it equals the number of keys the walk met only if no
  object lost a key. Text with a backslash is left to the plain reader: there a decoded string
  may hold a colon the text spells `\\u003a`.
- The accelerator repeats the plain reader's type checks for the ordinary literals only (what
  a valid filter holds); every other rule it leaves to the plain reader, and the case rule
  it takes from `language.conditions`.
- Any input the walk does not expect raises `_GiveUp`, caught once at the top: the common case
  pays for no checks of results on the way back up.
- Bounds (depth, array length, text size) are checked as the plain reader checks them, and
  the node count is bounded by the number of object members; the walk gives up rather than
  report.

Switch: `ENABLED` (a module attribute, read on every call), initially off when the environment
variable `AUDIENCEFILTER_FAST_PARSE` is `0`. `tests/test_parse_fast.py` proves that both ways
give the same filter or the same errors.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping
from typing import Any

from ..language.conditions import is_insensitive
from ..language.fields import LIST_OPS, SHORTHAND_OP, Field, FieldType, Op, Schema
from ..language.limits import Limits
from ..language.nodes import TRUE, And, Comparison, IsNull, Node, Not, Or, all_of, any_of
from ..language.relative import Ago, DurationError
from ..language.values import Scalar, parse_datetime
from .decode import SCAN_PLAIN, SKIP_SPACE, fits

ENABLED = os.environ.get("AUDIENCEFILTER_FAST_PARSE", "1") != "0"
"""Whether `parse` tries this reader first; set it to False to run the plain reader alone."""

_STRING = FieldType.STRING
_NUMBER = FieldType.NUMBER
_BOOLEAN = FieldType.BOOLEAN
_DATETIME = FieldType.DATETIME
_EQUALS = SHORTHAND_OP
_LISTS = LIST_OPS
_isfinite = math.isfinite


def _twin(cls: type[Any], names: tuple[str, ...]) -> type[Any] | None:
    """A mutable class with the same slots as the frozen node class `cls`, or None.

    A frozen dataclass sets each field through `object.__setattr__`, one Python-level call for
    each field, which cost as much as a third of reading a typical filter. Instead the fields are
    stored in a mutable twin of the same slots, whose plain attribute stores are the
    interpreter's fastest, and the object then becomes a `cls` (`__class__` assignment, allowed
    between classes of the same layout). Only while `cls` is exactly the frozen slotted class
    of the fields `names` with no `__post_init__`; otherwise None, and the class itself is used.
    """
    fields = tuple(f.name for f in dataclasses.fields(cls))
    if fields != names or hasattr(cls, "__post_init__") or "__slots__" not in vars(cls):
        return None

    class Twin:
        __slots__ = names

    return Twin


def _swaps(build: Callable[..., Any], *example: Any) -> bool:
    """Whether Python accepts the builder's `__class__` assignment (a layout it will swap)."""
    try:
        build(*example)
    except TypeError:
        return False
    return True


_new = object.__new__


def _comparison_builder() -> Callable[..., Comparison]:
    """`Comparison(field, op, value, insensitive=False)` through its twin (`_twin`)."""
    twin = _twin(Comparison, ("field", "op", "value", "insensitive", "path"))
    if twin is None:
        return Comparison

    def build(field: str, op: Op, value: Any, insensitive: bool = False) -> Comparison:
        node: Any = _new(twin)
        node.field = field
        node.op = op
        node.value = value
        node.insensitive = insensitive
        node.path = ()
        node.__class__ = Comparison
        return node  # type: ignore[no-any-return]

    return build if _swaps(build, "field", _EQUALS, 0) else Comparison


def _group_builder(cls: type[And] | type[Or]) -> Callable[[tuple[Node, ...]], Node]:
    """`And(items)` or `Or(items)` through its twin (`_twin`)."""
    twin = _twin(cls, ("items",))
    if twin is None:
        return cls

    def build(items: tuple[Node, ...]) -> Node:
        node: Any = _new(twin)
        node.items = items
        node.__class__ = cls
        return node  # type: ignore[no-any-return]

    return build if _swaps(build, ()) else cls


def _not_null_builder() -> Callable[[str], Node]:
    """`Not(IsNull(field))`, the `"not": null` of a field, through their twins (`_twin`)."""
    not_twin, null_twin = _twin(Not, ("item",)), _twin(IsNull, ("field", "path"))
    if not_twin is None or null_twin is None:
        return lambda field: Not(IsNull(field))

    def build(field: str) -> Node:
        null: Any = _new(null_twin)
        null.field = field
        null.path = ()
        null.__class__ = IsNull
        node: Any = _new(not_twin)
        node.item = null
        node.__class__ = Not
        return node  # type: ignore[no-any-return]

    return build if _swaps(build, "field") else (lambda field: Not(IsNull(field)))


_Comparison = _comparison_builder()
_And = _group_builder(And)
_Or = _group_builder(Or)
_NotNull = _not_null_builder()


class _GiveUp(Exception):
    """The input is not an ordinary valid filter: the plain reader must read it."""


def read_fast(text: str, schema: Schema, limits: Limits) -> Node | None:
    """The AST of a valid, ordinary filter in JSON text; None to take the plain reader."""
    if "\\" in text or not fits(text, limits):
        return None
    if text[:1] == "{":
        start = 0
    elif text.startswith("\ufeff"):
        return None
    else:
        start = SKIP_SPACE(text, 0).end()  # type: ignore[union-attr]
    try:
        data, end = SCAN_PLAIN(text, start)
    except (StopIteration, ValueError, RecursionError):
        return None
    if end != len(text) and SKIP_SPACE(text, end).end() != len(text):  # type: ignore[union-attr]
        return None
    if type(data) is not dict:
        return None
    walk = _Walk(schema, limits)
    try:
        root = walk.where(data, 0)
    except _GiveUp:
        return None
    if walk.keys > limits.max_nodes or text.count(":") - walk.colons != walk.keys:
        return None
    return root


_Tables = tuple[Mapping[str, Field], Mapping[str, Mapping[Any, Op]]]
# By identity, holding the schema so its id cannot be reused: hashing a schema costs more than
# the lookups save. Schemas are few; past 64 the tables are just rebuilt.
_TABLES: dict[int, tuple[Schema, _Tables]] = {}


def _tables(schema: Schema) -> _Tables:
    """Per schema, once: its fields by name (JSON fields left to the plain reader), and for
    each field the operators it accepts, by name."""
    cached = _TABLES.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    fields = {f.name: f for f in schema.fields if f.type is not FieldType.JSON}
    accepted = {f.name: {op.value: op for op in Op if f.accepts(op)} for f in fields.values()}
    if len(_TABLES) < 64:
        _TABLES[id(schema)] = (schema, (fields, accepted))
    return fields, accepted


class _Walk:
    """One walk over decoded JSON, counting what `read_fast` checks at the end."""

    __slots__ = ("accepted", "colons", "fields", "keys", "max_array", "max_depth")

    def __init__(self, schema: Schema, limits: Limits) -> None:
        self.fields, self.accepted = _tables(schema)
        self.max_depth = limits.max_depth
        self.max_array = limits.max_array
        # Object members met. Every node the plain reader counts against `max_nodes` is a
        # member (a field, a group, an operator, a `not`), so this bounds its count too.
        self.keys = 0
        self.colons = 0  # colons inside the strings met

    def where(self, obj: dict[Any, Any], depth: int) -> Node:
        size = len(obj)
        self.keys += size
        if size == 1:  # the common case: no list of items to build
            for key, value in obj.items():
                return self.member(key, value, depth)
        return all_of(tuple([self.member(key, value, depth) for key, value in obj.items()]), _And)

    def member(self, key: Any, value: Any, depth: int) -> Node:
        """One member of a where object: a field's condition or a group."""
        field = self.fields.get(key)
        if field is not None:
            if type(value) is dict:
                if len(value) == 1:  # one operator: `operators` inlined for what is common
                    for name, operand in value.items():
                        op = self.accepted[field.name].get(name)
                        kind = type(operand)
                        expected = field.type
                        if op is None:
                            if name == "not" and operand is None and depth < self.max_depth:
                                self.keys += 1
                                return _NotNull(field.name)
                        elif op in _LISTS:
                            pass
                        elif (kind is int and expected is _NUMBER) or (
                            kind is bool and expected is _BOOLEAN
                        ):
                            self.keys += 1
                            return _Comparison(field.name, op, operand)
                        elif kind is str and expected is _STRING and operand.isascii():
                            self.keys += 1
                            self.colons += operand.count(":")
                            folded = is_insensitive(_STRING, op, False)
                            return _Comparison(field.name, op, operand, folded)
                        elif kind is str and expected is _DATETIME:
                            try:
                                instant = parse_datetime(operand)
                            except ValueError:
                                raise _GiveUp from None
                            self.keys += 1
                            self.colons += operand.count(":")
                            return _Comparison(field.name, op, instant)
                nodes = self.operators(field, value, depth, False, False)
                return nodes[0] if len(nodes) == 1 else all_of(tuple(nodes), _And)
            if value is None:
                return IsNull(field.name)
            kind = type(value)
            if (kind is bool and field.type is _BOOLEAN) or (kind is int and field.type is _NUMBER):
                return _Comparison(field.name, _EQUALS, value)  # `literal` inlined
            return _Comparison(field.name, _EQUALS, self.literal(field, value))
        if key == "AND":
            return all_of(tuple(self.group(value, depth + 1)), _And)
        if key == "OR":
            return any_of(tuple(self.group(value, depth + 1)), _Or)
        if key == "NOT":
            found = self.group(value, depth + 1)
            if not found:
                return TRUE
            return Not(found[0] if len(found) == 1 else Or(tuple(found)))
        raise _GiveUp

    def group(self, value: Any, depth: int) -> list[Node]:
        if depth > self.max_depth:
            raise _GiveUp
        kind = type(value)
        if kind is list:
            where, member = self.where, self.member
            items = []
            for item in value:
                if type(item) is not dict:
                    raise _GiveUp
                if len(item) == 1:  # `where` inlined for the common one-member object
                    self.keys += 1
                    for key, operand in item.items():
                        items.append(member(key, operand, depth))
                else:
                    items.append(where(item, depth))
            return items
        if kind is dict:
            return [self.where(value, depth)]
        raise _GiveUp

    def operators(
        self, field: Field, obj: dict[Any, Any], depth: int, insensitive: bool, inside_not: bool
    ) -> list[Node]:
        self.keys += len(obj)
        expected = field.type
        if "mode" in obj:
            mode = obj["mode"]
            if inside_not or expected is not _STRING or type(mode) is not str:
                raise _GiveUp
            if mode == "insensitive":
                insensitive = True
            elif mode == "default":
                insensitive = False
            else:
                raise _GiveUp
        accepted = self.accepted[field.name]
        nodes: list[Node] = []
        for key, value in obj.items():
            op = accepted.get(key)
            if op is not None and op not in _LISTS:
                kind = type(value)
                # The literals that are their own value, inlined; the rest through `literal`.
                if kind is str and expected is _STRING and value.isascii():
                    self.colons += value.count(":")
                    folded = is_insensitive(_STRING, op, insensitive)
                    nodes.append(_Comparison(field.name, op, value, folded))
                elif (kind is int and expected is _NUMBER) or (
                    kind is bool and expected is _BOOLEAN
                ):
                    nodes.append(_Comparison(field.name, op, value))
                else:
                    nodes.append(self.comparison(field, op, value, insensitive))
            elif op is not None:  # `in` or `notIn`
                nodes.append(self.comparison(field, op, value, insensitive))
            elif key == "not":
                if depth + 1 > self.max_depth:
                    raise _GiveUp
                if value is None:
                    nodes.append(_NotNull(field.name))
                elif type(value) is dict:
                    negated = self.operators(field, value, depth + 1, insensitive, True)
                    nodes.append(all_of(tuple(Not(node) for node in negated), _And))
                else:
                    nodes.append(Not(self.comparison(field, _EQUALS, value, insensitive)))
            elif key != "mode":
                raise _GiveUp
        return nodes

    def comparison(self, field: Field, op: Op, value: Any, insensitive: bool) -> Node:
        if op in _LISTS:
            if type(value) is not list or len(value) > self.max_array:
                raise _GiveUp
            literals: list[Any] = []
            for item in value:
                if type(item) is dict:  # a relative date-time: not allowed in a list
                    raise _GiveUp
                literals.append(self.literal(field, item))
            folded = is_insensitive(field.type, op, insensitive)
            return _Comparison(field.name, op, tuple(literals), folded)
        if value is None:
            if op is _EQUALS:
                return IsNull(field.name)
            raise _GiveUp
        literal = self.literal(field, value)
        folded = is_insensitive(field.type, op, insensitive)
        return _Comparison(field.name, op, literal, folded)

    def literal(self, field: Field, value: Any) -> Scalar | Ago:
        kind = type(value)
        expected = field.type
        if kind is str:
            self.colons += value.count(":")
            if expected is _STRING:
                if value.isascii() or _is_valid_unicode(value):
                    return value  # type: ignore[no-any-return]
            elif expected is _DATETIME:
                try:
                    instant: Scalar = parse_datetime(value)
                except ValueError:
                    raise _GiveUp from None
                return instant
        elif expected is _NUMBER:
            if kind is int or (kind is float and _isfinite(value)):
                return value  # type: ignore[no-any-return]
        elif expected is _BOOLEAN:
            if kind is bool:
                return value  # type: ignore[no-any-return]
        elif expected is _DATETIME and kind is dict and len(value) == 1:
            text = value.get("ago")
            if type(text) is str:
                self.keys += 1
                self.colons += text.count(":")
                try:
                    return Ago.parse(text)
                except DurationError:
                    raise _GiveUp from None
        raise _GiveUp


def _is_valid_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
