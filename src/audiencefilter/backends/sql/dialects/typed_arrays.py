"""JSON arrays read item by item, each item's JSON type tested before its value: DuckDB and
Spark SQL write `array_*` tests at a data path this one way (`lists.array_truth`).

The array is UNKNOWN where the path finds nothing, JSON null or another JSON type, else the
test of its items. An item equals a literal only when it has the literal's JSON
type, and the type is tested in a `CASE` before the value is read: an engine would otherwise
cast a string item to a number before testing its type. What differs between the engines is
spelling: how the items are listed, how one is taken by position, how "some item" is asked,
and how an item's JSON type and value are read; each dialect gives those (the hooks below).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....language.fields import FieldType, ListOp
from ....language.lists import refused
from ....language.nodes import ListTest
from .base import Dialect
from .list_sql import ListWriter, all_of, double_literals, edge_index, json_kind, literal_of


class TypedItemArrays(Dialect):
    """A dialect whose JSON arrays are tested item by item (see the module)."""

    def array_test(self, out: ListWriter, node: ListTest) -> str:
        path = self.json_path(node.path)
        if path is None or not path.startswith("$"):
            raise refused(node, self.title, "JSON arrays at a data path are not read there yet")
        column = out.column(node.field)

        def kind() -> str:
            return self.json_type(column, [], out.text(path))

        if node.op is ListOp.IS_EMPTY:  # no items: the head first, so literals stay in order
            head = f"CASE WHEN {kind()} = 'ARRAY' THEN "
            return head + f"{self.item_count(self.array_items(column, out.text(path)))} = 0 END"
        values = double_literals(node)
        if values is None:
            return f"CASE WHEN {kind()} = 'ARRAY' THEN FALSE END"
        head = f"CASE WHEN {kind()} = 'ARRAY' THEN "
        test = self._array_items(out, node, values, column, path)
        return head + test + " END"  # UNKNOWN for anything but an array

    def _array_items(
        self, out: ListWriter, node: ListTest, values: tuple[Any, ...], column: str, path: str
    ) -> str:
        def items() -> str:
            return self.array_items(column, out.text(path))

        if node.op is ListOp.ARRAY_CONTAINS:
            tests = [
                self.some_item(items(), self._item(out, node, lambda: "af_x", value))
                for value in values
            ]
            return all_of(tests) if tests else self.true
        index = edge_index(node, "1", "-1")
        test = self._item(out, node, lambda: self.item_at(items(), index), values[0])
        return f"COALESCE({test}, FALSE)"

    def _item(self, out: ListWriter, node: ListTest, item: Callable[[], str], value: Any) -> str:
        """The JSON item `item()` equals `value`, as a value of the literal's JSON type."""
        found = json_kind(value)
        names = ", ".join(f"'{name}'" for name in self.json_types[found])
        of_type = f"{self.item_kind(item())} IN ({names})"  # written first, as it reads
        read = self.item_value(item(), found)
        if found is FieldType.STRING and node.insensitive:
            read = self.fold(read)
        literal = (
            self.boolean(value) if found is FieldType.BOOLEAN else literal_of(out, found)(value)
        )
        return f"CASE WHEN {of_type} THEN {read} = {literal} ELSE FALSE END"

    # ---- each engine's spelling -----------------------------------------------------------

    def array_items(self, column: str, path: str) -> str:
        """The array at `path` (SQL text) of the JSON text `column`, as a list of JSON items."""
        raise NotImplementedError

    def some_item(self, items: str, test: str) -> str:
        """Whether some item `af_x` of `items` passes `test`."""
        raise NotImplementedError

    def item_count(self, items: str) -> str:
        """How many items `items` holds (a null item counts)."""
        raise NotImplementedError

    def item_at(self, items: str, index: str) -> str:
        """The item at a 1-based `index` (negative from the end), NULL past the end."""
        raise NotImplementedError

    def item_kind(self, item: str) -> str:
        """The item's JSON type, named as `json_types` names them."""
        raise NotImplementedError

    def item_value(self, item: str, kind: FieldType) -> str:
        """The item's value as the SQL type of `kind`."""
        raise NotImplementedError
