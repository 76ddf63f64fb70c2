"""An accelerator of the in-memory back-end: list tests, sums and counts at C speed.

The plain path reads a list field with `lists.truth` (every item type-checked in a Python
loop, then a set of keys built) and an aggregate with `memory_relations` (every value checked,
then tested through a one-row probe). Here, for the common case, Python's own set and `sum`
operations do the work:

- A list field's `has`, `hasSome`, `hasEvery` and `isEmpty`, case-sensitive, on a `list` whose
  items are all of the element's exact type (or None): `not W.isdisjoint(v)`, `W <= set(v)`,
  `not v`, with `W` the frozenset of the literals, built once. Whether the items are of that
  type is itself one C call (`ITEM_TYPES[...].issuperset(map(type, v))`, or for strings
  `"".join(v)`, which raises on any other item and sends the record to the compiled
  function's exact version); anything else (a tuple, a float in a list of numbers, a wrong
  type) takes the plain path, which answers exactly or raises `RecordError`.
- A `sum` over values that are all `int` or `float` is Python's `sum` of them.
- A `count` tested with `gte`/`gt` stops counting at the threshold (`count_threshold`).
- An aggregate's test (`count in [...]`, `sum >= 40`) is remembered per value.
- An anniversary of a date-time in UTC is tested inline (`compiler.py`, `_Builder.anniversary`):
  most UTC month-days answer without converting the value to the zone (`MonthDays.certain`
  and `near`), the rest convert it; any other value takes `is_anniversary`.
- `Filter.matches(record, now=...)` looks up the instants of `now` and evaluates in one
  generated function (`compiler.py`, `_function_at`) instead of a call to the compiled one;
  `af.compile(flt, clock=...)` reads its clock in such a function too (`_on_clock`), so the
  instants are resolved once per `now` the clock gives, not once per record.
- A JSON data-path equality walks plain `dict`s and compares a value of the literal's class
  inline (`paths.py`); anything else takes `data_paths.truth`.

Switch: `ENABLED` (a module attribute, read when a filter is compiled, first asked
`matches(record, now=...)` or first put on a clock), initially off when the environment variable
`AUDIENCEFILTER_FAST_MEMORY` is `0`. `tests/test_memory_fast.py` compares both paths on
generated records, wrong types included.
"""

from __future__ import annotations

import math
import os
from typing import Any

from ...language.fields import FieldType, ListOp, Op
from ...language.nodes import Aggregated, Comparison, ListTest
from ...language.relations import Aggregate

ENABLED = os.environ.get("AUDIENCEFILTER_FAST_MEMORY", "1") != "0"

STRINGS: frozenset[type] = frozenset({str, type(None)})

ITEM_TYPES: dict[FieldType, frozenset[type]] = {
    FieldType.STRING: STRINGS,
    FieldType.NUMBER: frozenset({int, type(None)}),
    FieldType.BOOLEAN: frozenset({bool, type(None)}),
}
"""The exact item types a list of each element type is read as it is (`lists.items` keeps them
unchanged); floats go the plain way, which knows NaN and infinities."""

SUMMED = frozenset({int, float})
"""The exact value types a `sum` adds as they are (`values.record_value` keeps them)."""

FAST_LIST_OPS = (ListOp.HAS, ListOp.HAS_SOME, ListOp.HAS_EVERY, ListOp.IS_EMPTY)


def list_items(node: ListTest, kind: FieldType) -> frozenset[type] | None:
    """The item types a list test can take the fast form for, or None (no fast form)."""
    if not ENABLED or node.path or node.insensitive or node.op not in FAST_LIST_OPS:
        return None
    element = kind.element
    return None if element is None else ITEM_TYPES.get(element)


def count_threshold(node: Aggregated) -> int | None:
    """For `count` tested `gte n` or `gt n`, the count at which the test is TRUE (it is FALSE
    below): counting may stop there. None for any other test."""
    test = node.test
    if not ENABLED or node.function is not Aggregate.COUNT or not isinstance(test, Comparison):
        return None
    if test.path or test.op not in (Op.GTE, Op.GT) or not _number(test.value):
        return None
    bound = float(test.value)  # type: ignore[arg-type]  # a finite number (`_number`)
    least = math.ceil(bound) if test.op is Op.GTE else math.floor(bound) + 1
    return int(least) if least > 0 else None


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def fast_sum(values: list[Any]) -> Any:
    """The sum of a sum's non-null values when they are all `int` or `float`, else None (the
    plain path then checks each)."""
    if SUMMED.issuperset(map(type, values)):
        return sum(values)
    return None
