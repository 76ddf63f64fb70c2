"""List fields: the rules of Prisma's scalar-list filters, decided once for every back-end.

A list field (`Schema.of(tags="string[]")`) holds a list of strings, numbers, booleans or
date-times. Its operators (`ListOp`) are Prisma's: `has`, `hasSome`, `hasEvery`, `isEmpty`
and `equals` (the whole list, in order), plus `mode: "insensitive"` on lists of strings.

Three-valued logic, the same on every engine (docs/semantics-relations.md, "Lists"):
- A null (missing) list is UNKNOWN for every operator, `isEmpty` included, as SQL's
  `cardinality(NULL) = 0` and `NULL @> ARRAY[...]` are; so `not` keeps it UNKNOWN, and
  "null or empty" is written `OR: [{tags: null}, {tags: {isEmpty: true}}]`.
- A null item takes a place in the list (`[null]` is not empty and equals no list a filter
  can write, since a filter's lists hold no null) but matches no value: `has`, `hasSome` and
  `hasEvery` look at the other items only, so a null item never makes an answer UNKNOWN.
- `hasSome: []` is FALSE and `hasEvery: []` TRUE for every present list; `equals: []` is
  `isEmpty`. Lowering writes these with `isEmpty` (`rewrite/lower.py`), so no back-end meets an
  empty operand list.

`truth` is that rule in Python: the reference the in-memory back-ends run and the others are
tested against. Items are compared as the field's scalars are: numbers exactly (Python
compares an int with a float exactly), booleans are no numbers, date-times as UTC instants,
strings folded with `values.fold` when insensitive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

from ..errors import FilterError, Issue
from .fields import FieldType, ListOp
from .nodes import And, ListTest, Node, Not, Or
from .values import accepts, fold, met_by, record_value, value_key


def items(kind: FieldType, value: object) -> list[Any] | None:
    """A record's list as comparable items (None for a null list; None items kept), or
    `TypeError` for a value a list field cannot hold: text is no list of characters, and an
    item of another type than the list's is refused as for a scalar field."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise TypeError(f"{type(value).__name__} for a {kind.value} field; expected a list")
    element = kind.element
    assert element is not None
    found: list[Any] = []
    for item in value:
        if item is None:
            found.append(None)
        elif not accepts(element, item):
            raise TypeError(f"an item {item!r} in a {kind.value} field")
        else:
            found.append(record_value(element, item))
    return found


def truth(node: ListTest, kind: FieldType, value: object) -> bool | None:
    """The three-valued result of a lowered `node` on a record's list `value`."""
    found = items(kind, value)
    if found is None:
        return None
    if node.insensitive:
        found = [None if item is None else fold(item) for item in found]
    if node.op is ListOp.IS_EMPTY:
        return not found
    if node.op is ListOp.EQUALS:
        return _equal_lists(found, node.value)
    decimals = {value_key(item) for item in found if isinstance(item, Decimal)}
    present = {value_key(i) for i in found if i is not None and not isinstance(i, Decimal)}

    def has(literal: Any) -> bool:  # an item equals the literal as a scalar value would
        exact = value_key(met_by(Decimal(0), literal))  # as a `Decimal` item meets it
        return value_key(literal) in present or (bool(decimals) and exact in decimals)

    if node.op is ListOp.HAS_EVERY:
        return all(has(literal) for literal in node.value)
    return any(has(literal) for literal in node.value)  # has, hasSome


def _equal_lists(found: Sequence[Any], literals: Sequence[Any]) -> bool:
    """`equals`: the same items in the same order, a null item equal to nothing, each item
    equal to its literal as a scalar field's value is (`values.met_by`)."""
    return len(found) == len(literals) and all(
        item is not None and value_key(item) == value_key(met_by(item, literal))
        for item, literal in zip(found, literals, strict=True)
    )


def array_truth(node: ListTest, document: object) -> bool | None:
    """The three-valued result of a lowered `array_*` test at `node.path` of a JSON document:
    UNKNOWN where the path finds nothing, JSON null or a value that is no array (Prisma's
    test of the JSON type goes with the condition and with its NOT alike), else the test of
    the items, each literal matching items of its own JSON type (`1` and `1.0` one number,
    `true` no number, `"1"` no number) and no null item."""
    from .data_paths import json_type, lookup, value_type

    value = lookup(document, node.path)
    if not isinstance(value, list | tuple):
        return None
    if node.op is ListOp.IS_EMPTY:  # an array with no items (a null item is one)
        return not value

    def same(item: object, literal: Any) -> bool:
        kind = value_type(literal)
        if json_type(item) is not kind:
            return False
        if node.insensitive and isinstance(item, str):
            item = fold(item)
        return bool(item == literal)

    if node.op is ListOp.ARRAY_STARTS_WITH:
        return bool(value) and same(value[0], node.value[0])
    if node.op is ListOp.ARRAY_ENDS_WITH:
        return bool(value) and same(value[-1], node.value[0])
    return all(any(same(item, literal) for item in value) for literal in node.value)


def as_arrays(node: ListTest, source: tuple[str, ...]) -> Node:
    """A list declared inside JSON (stored at `source`) is the JSON array at its path: `has`
    and `hasEvery` are `array_contains`, `hasSome` one `array_contains` per literal, ORed
    (`hasSome []` FALSE for an array, UNKNOWN where there is none, as for a list field), and
    `isEmpty` the array's own test of no items (UNKNOWN where there is no array, as for a
    null list field). Lowering and the CEL writer follow this one rule."""
    column, path = source[0], source[1:]
    if node.op is ListOp.IS_EMPTY:
        return ListTest(column, ListOp.IS_EMPTY, (), False, path)

    def contains(values: tuple[Any, ...]) -> ListTest:
        return ListTest(column, ListOp.ARRAY_CONTAINS, values, False, path)

    if node.op is not ListOp.HAS_SOME:
        return contains(node.value)
    if not node.value:
        every = contains(())
        return And((every, Not(every)))
    tests = tuple(contains((value,)) for value in dict.fromkeys(node.value))
    return tests[0] if len(tests) == 1 else Or(tests)


IN_JSON = "is not read on a list kept inside JSON: it is a JSON array, tested item by item"
# `equals` (order and items at once) and `mode` have no reading every engine shares.
"""Why a list kept inside JSON takes only the item tests (`Field.list_operators`)."""


def in_json_hint(taken: Sequence[str]) -> str:
    """What to write instead, given the spellings of the operators such a list takes."""
    *rest, last = taken
    return f"use {', '.join(rest)} or {last} (case-sensitive)"


def not_in_json(node: ListTest, taken: Sequence[ListOp]) -> FilterError:
    """The error of a list test built by hand on a list kept inside JSON that the readers
    would have refused (`language/conditions.py`): lowering meets it, so every back-end
    refuses it alike instead of reading it as `array_contains`."""
    case = " ignoring case" if node.insensitive else ""
    return FilterError(
        [
            Issue(
                path=node.field,
                message=f"{node.op.value}{case} {IN_JSON}",
                suggestion=in_json_hint([op.value for op in taken]),
            )
        ]
    )


def refused(node: ListTest, engine: str, reason: str) -> FilterError:
    """The error of a back-end that cannot answer a list test faithfully."""
    if node.path:
        where = "JSON array at " + ".".join((node.field, *node.path))
        elsewhere = "in memory, with polars, or on PostgreSQL, SQLite, MySQL/MariaDB or DuckDB"
    else:
        where = f'list field "{node.field}"'
        elsewhere = "in memory, with polars or Spark, or on PostgreSQL or DuckDB"
    return FilterError(
        [
            Issue(
                path=node.field,
                message=f'{engine} cannot evaluate "{node.op.value}" on {where} faithfully: '
                f"{reason}",
                suggestion=f"evaluate this filter {elsewhere}",
            )
        ]
    )


def without_nul(node: ListTest) -> ListTest | bool:
    """`node` on a present list for an engine whose text holds no NUL (PostgreSQL): a literal
    holding NUL equals no stored item, so `hasSome` leaves it out, and `has`, `hasEvery`,
    `equals` and the JSON array tests with such a literal are FALSE. The one home of that rule
    for list tests; `memory` needs none, as Python's strings hold NUL."""
    if not any(isinstance(v, str) and "\x00" in v for v in node.value):
        return node
    if node.op is ListOp.HAS_SOME:
        kept = tuple(v for v in node.value if not (isinstance(v, str) and "\x00" in v))
        return replace(node, value=kept) if kept else False
    return False
