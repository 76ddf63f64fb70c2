"""What every dialect's list SQL shares: the writer it writes through, and small helpers.

Each engine stores lists its own way, so each dialect module writes its own list tests
(`Dialect.list_test`) and tests of JSON arrays at a data path (`Dialect.array_test`); the
rules they share (docs/backends-sql-rules.md, "Lists"):

- Every literal goes through the writer (`ListWriter`), in the order it appears in the text,
  so placeholders and parameters stay in step; a piece written twice is written anew.
- The writer wraps a list test in `CASE WHEN <column> IS NOT NULL THEN ... END`, so a null
  list is UNKNOWN whatever the operator (`lists.truth`); null items are passed over.
- An engine comparing numbers as doubles drops the integers no double holds (`double_items`):
  they equal no item, and the engine would round them to a neighbour.
- A JSON array at a data path is UNKNOWN where the path finds nothing, JSON null or another
  JSON type (`CASE WHEN <type> = 'array' THEN ... END`), else the test of the items, each
  literal against items of its own JSON type (`lists.array_truth`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ....language.fields import FieldType, ListOp
from ....language.nodes import ListTest
from ....language.values import double_exact


class ListWriter(Protocol):
    """What a dialect's list SQL needs of the writer: literals (inlined, or placeholders with
    the value appended to the parameters) and a JSON column's values at a path."""

    def text(self, value: str) -> str: ...

    def number(self, value: Any) -> str: ...

    def double(self, value: float) -> str:
        """A double, typed as one (`numbers.double_test`)."""
        ...

    def scalar(self, value: Any) -> str:
        """A date-time or a boolean."""
        ...

    def column(self, field: str) -> str: ...

    def members(self, values: tuple[Any, ...], element: FieldType) -> str | None:
        """A long list of items bound as one parameter (`members.py`): its placeholder, or
        None where each value is written (inlined text, a short list, a mixed one)."""
        ...

    def json_type(self, field: str, keys: tuple[str, ...]) -> str: ...

    def json_value(self, field: str, keys: tuple[str, ...], kind: FieldType) -> str: ...


def literal_of(out: ListWriter, element: FieldType) -> Callable[[Any], str]:
    """The writer's literal of an item of `element` type."""
    if element is FieldType.STRING:
        return out.text
    return out.number if element is FieldType.NUMBER else out.scalar


def all_of(tests: list[str]) -> str:
    return "(" + " AND ".join(tests) + ")" if len(tests) > 1 else tests[0]


def any_of(tests: list[str]) -> str:
    return "(" + " OR ".join(tests) + ")" if len(tests) > 1 else tests[0]


def double_items(
    node: ListTest, element: FieldType, holds: Callable[[Any], bool] = double_exact
) -> tuple[Any, ...] | None:
    """The literals an engine comparing numbers as doubles can match: an integer no double
    holds (`holds` says which it does) equals no item. None when the test is then FALSE for
    every present list."""
    if element is not FieldType.NUMBER:
        return node.value
    values = tuple(v for v in node.value if holds(v))
    if not values or (len(values) < len(node.value) and node.op is not ListOp.HAS_SOME):
        return None
    return values


def double_literals(node: ListTest) -> tuple[Any, ...] | None:
    """The literals of a JSON-array test an engine reading JSON numbers as doubles can match;
    None when one is an integer no double holds (the test is then FALSE for an array)."""
    values = tuple(v for v in node.value if isinstance(v, bool | str) or double_exact(v))
    return values if len(values) == len(node.value) else None


def json_kind(value: Any) -> FieldType:
    """The filter type of a JSON-array literal."""
    if isinstance(value, bool):
        return FieldType.BOOLEAN
    return FieldType.STRING if isinstance(value, str) else FieldType.NUMBER


def edge_index(node: ListTest, first: str, last: str) -> str:
    """The index of the item `arrayStartsWith` (`first`) or `arrayEndsWith` (`last`) reads."""
    return first if node.op is ListOp.ARRAY_STARTS_WITH else last
