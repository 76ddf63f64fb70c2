"""DuckDB: `starts_with`/`ends_with`/`contains` for patterns, `chr(0)` for NUL in literals.

Design choices:
- Pattern functions need no escaping at all.
- Integers beyond HUGEINT become doubles: a wider literal would be cast to the column's type
  (wrapping around or failing) instead of the other way.
- JSON paths are `$."key"` with backslash escapes, or a JSON pointer when a key is empty.
- Lists are native LISTs (`VARCHAR[]`, `DOUBLE[]`, `BIGINT[]`, `DECIMAL[]`, `BOOLEAN[]`,
  `TIMESTAMPTZ[]`), tested with `list_filter`. Each number literal is its own equality: an
  integer no double holds (2^53 + 1) equals an exact item (`BIGINT`, `DECIMAL`) only, never a
  double item, which DuckDB would round it to (`_number_item`).
- A JSON array at a data path is read as a list of JSON values (`CAST(... AS JSON[])`), each
  item with its `json_type`; numbers as doubles, as every JSON number here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ....language.fields import FieldType, ListOp, Op
from ....language.nodes import ListTest
from ....language.values import double_exact
from .base import FOLD_DOTTED_I, Number, Shape, as_double, integral, sigma_refusal
from .like import like_wrapped
from .list_sql import ListWriter, all_of, literal_of
from .members import Members
from .numbers import NumberWriter, double_test
from .typed_arrays import TypedItemArrays


class DuckDB(TypedItemArrays):
    name = "duckdb"
    aliases = ()
    title = "DuckDB"
    json_exact_integers = 2**53
    grouped_aggregates = True
    exact_number_bind = "untyped"
    """SQLAlchemy's Numeric turns values into floats on the way in; DuckDB binds a Python int
    as HUGEINT itself."""
    placeholder = "?"
    text_holds_nul = True
    unifies_lists = True

    def date_month_day(self, sql: Callable[[], str]) -> str:
        return f"CAST(strftime({sql()}, '%m%d') AS INTEGER)"

    def month_day(self, sql: Callable[[], str], zone: str) -> str:
        """`AT TIME ZONE` needs the ICU extension, built into the Python package (and loaded
        without a download)."""
        return f"CAST(strftime({sql()} AT TIME ZONE {self.text(zone)}, '%m%d') AS INTEGER)"

    def text(self, value: str) -> str:
        if "\x00" not in value:
            return "'" + value.replace("'", "''") + "'"
        pieces: list[str] = []
        for index, part in enumerate(value.split("\x00")):
            if index:
                pieces.append("chr(0)")
            if part:
                pieces.append("'" + part.replace("'", "''") + "'")
        return pieces[0] if len(pieces) == 1 else "(" + " || ".join(pieces) + ")"

    def number(self, value: Number) -> str:
        value = integral(value)
        if isinstance(value, int) and not _HUGEINT_MIN <= value <= _HUGEINT_MAX:
            # Wider literals become UHUGEINT or BIGNUM, which DuckDB casts to the column's BIGINT
            # (wrapping around or failing) instead of the other way: make it a DOUBLE, which is
            # far enough from every int64 to order the same.
            return f"{value}.0"
        return super().number(value)

    def bind_number(self, value: Number) -> object:
        value = integral(value)
        if isinstance(value, int):
            return value if _HUGEINT_MIN <= value <= _HUGEINT_MAX else as_double(value)
        return value

    def fold(self, sql: str) -> str:
        return FOLD_DOTTED_I.format(sql)

    def fold_refusal(self, literal: str) -> str | None:
        return sigma_refusal(literal, self.title)

    def member_test(self, op: Op, sql: str, param: str, members: Members) -> str | None:
        """A typed LIST parameter, unnested: DuckDB plans `IN (SELECT unnest(...))` as a
        hash semi-join, faster than `list_contains` per row and far faster negated."""
        keyword = "IN" if op is Op.IN else "NOT IN"
        return f"{sql} {keyword} (SELECT unnest(CAST({param} AS {_MEMBER_TYPES[members]})))"

    def bind_members(self, values: Sequence[Any], members: Members) -> object:
        return [self.bind_member(v, members) for v in values]

    def operand(self, op: Op, value: str) -> str:
        return value

    like_folding = "simple"

    def folded_like(
        self,
        op: Op,
        sql: Callable[[], str],
        needle: Callable[[], str],
        shape: Shape,
        unsafe: str,
    ) -> str:
        """ILIKE folds the column with DuckDB's `lower()` character by character (ASCII text
        on a fast path), without the `replace` of `fold`, which costs more than the match;
        text holding an `unsafe` character is tested the exact way."""

        def subject() -> str:  # under the binary collation (NOACCENT: `i̇` ILIKE `%i`)
            return self.exact(sql())

        if not unsafe:
            return f"{subject()} ILIKE {like_wrapped(op, needle())}"
        test = " OR ".join(f"contains({subject()}, '{char}')" for char in unsafe)
        exact = self.match(op, self.fold(sql()), needle(), shape)
        return (
            f"CASE WHEN {test} THEN {exact} ELSE {subject()} ILIKE {like_wrapped(op, needle())} END"
        )

    def exact(self, sql: str) -> str:
        """The binary collation, whatever collation the column declares (`NOCASE` would
        ignore case in `=` and `IN`) or `default_collation` sets."""
        return f'{sql} COLLATE "binary"'

    def ordered(self, sql: str) -> str:
        # The binary collation compares UTF-8 bytes (code points, NUL and trailing spaces
        # count), even under `SET default_collation = 'nocase'`.
        return f'{sql} COLLATE "binary"'

    def match(self, op: Op, sql: str, operand: str, shape: Shape) -> str:
        # Every pattern function matches under the column's collation: a `NOACCENT` column's
        # `contains(x, 'é')` found `e`. The binary collation matches the text as it is.
        return f"{_DUCKDB_MATCH[op]}({self.exact(sql)}, {operand})"

    json_types = {
        FieldType.STRING: ("VARCHAR",),
        FieldType.NUMBER: ("BIGINT", "UBIGINT", "HUGEINT", "DOUBLE"),
        FieldType.BOOLEAN: ("BOOLEAN",),
    }
    json_null = "NULL"

    def json_path(self, keys: tuple[str, ...]) -> str | None:
        # `$."key"` with backslash escapes; it never indexes an array. It cannot name the empty
        # key, so a path holding one is a JSON pointer (RFC 6901), which reads the empty key
        # but takes an all-digit key as an index into an array (a documented limit). The key
        # `*` is a wildcard even in quotes, so a path holding it is a pointer too.
        if "" in keys or "*" in keys:
            return "".join("/" + key.replace("~", "~0").replace("/", "~1") for key in keys)
        return "$" + "".join(
            '."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"' for key in keys
        )

    def json_type(self, sql: str, keys: list[str], path: str | None) -> str:
        return f"json_type(CAST({sql} AS JSON), {path})"

    def double(self, value: float) -> str:
        return f"CAST({value!r} AS DOUBLE)"

    def json_number(self, out: NumberWriter, op: Op, value: Callable[[], str], literal: Any) -> str:
        """Every JSON number is read as a double (`json_value`), compared exactly."""
        return double_test(out, op, value, literal, (self.false, self.true))

    def json_value(self, sql: str, keys: list[str], path: str | None, kind: FieldType) -> str:
        """Strings as VARCHAR, numbers as DOUBLE (exact to 2^53), booleans as BOOLEAN."""
        text = f"json_extract_string(CAST({sql} AS JSON), {path})"
        if kind is FieldType.STRING:
            return text
        return f"CAST({text} AS {'DOUBLE' if kind is FieldType.NUMBER else 'BOOLEAN'})"

    # Lists (native LISTs) and JSON arrays at a data path

    def list_test(self, out: ListWriter, node: ListTest, column: str, element: FieldType) -> str:
        if node.op is ListOp.IS_EMPTY:
            return f"len({column}) = 0"
        values, render = node.value, literal_of(out, element)
        if node.op is ListOp.EQUALS:
            return self._list_equals(node, column, values, render)
        bound = None if node.insensitive else _bindable(values, element, out)
        if bound is not None:  # a long list, as one parameter
            return _has_bound(node, column, bound, element)
        if element is FieldType.NUMBER:
            return self._number_list(node, column, render)
        item = self.fold("x") if node.insensitive else "x"
        if node.op is ListOp.HAS_EVERY:
            return all_of(
                [f"len(list_filter({column}, lambda x: {item} = {render(v)})) > 0" for v in values]
            )
        choices = ", ".join(render(v) for v in values)
        return f"len(list_filter({column}, lambda x: {item} IN ({choices}))) > 0"

    def _number_list(self, node: ListTest, column: str, render: Callable[[Any], str]) -> str:
        """`has`, `hasSome`, `hasEvery` of numbers, each literal its own equality
        (`_number_item`): an `IN` list would unify its literals' types, as doubles."""

        def some(values: Sequence[Any]) -> str:
            tests = " OR ".join(_number_item("x", v, render) for v in values)
            return f"len(list_filter({column}, lambda x: {tests})) > 0"

        if node.op is ListOp.HAS_EVERY:
            return all_of([some([v]) for v in node.value])
        return some(node.value)

    def _list_equals(
        self, node: ListTest, column: str, values: tuple[Any, ...], render: Any
    ) -> str:
        tests = [f"len({column}) = {len(values)}"]
        for index, value in enumerate(values, start=1):
            at = self.fold(f"{column}[{index}]") if node.insensitive else f"{column}[{index}]"
            number = isinstance(value, int | float) and not isinstance(value, bool)
            same = _number_item(at, value, render) if number else f"{at} = {render(value)}"
            tests.append(f"COALESCE({same}, FALSE)")
        return all_of(tests)

    def array_items(self, column: str, path: str) -> str:
        return f"CAST(json_extract(CAST({column} AS JSON), {path}) AS JSON[])"

    def some_item(self, items: str, test: str) -> str:
        return f"len(list_filter({items}, lambda af_x: {test})) > 0"

    def item_count(self, items: str) -> str:
        return f"len({items})"

    def item_at(self, items: str, index: str) -> str:
        return f"{items}[{index}]"

    def item_kind(self, item: str) -> str:
        return f"json_type({item})"

    def item_value(self, item: str, kind: FieldType) -> str:
        return self.json_value(item, [], "'$'", kind)


def _number_item(item: str, value: Any, render: Callable[[Any], str]) -> str:
    """The number item `item` equals `value`, on a `DOUBLE[]`, `BIGINT[]` or `DECIMAL[]`
    list alike, as memory compares them: a literal a double holds is compared as written
    (DuckDB compares a `BIGINT` with an integer, a `DECIMAL` with a decimal, exactly); an
    integer no double holds equals no double item (DuckDB would round it to one) and is
    compared with an exact item only."""
    if double_exact(value):
        return f"{item} = {render(value)}"
    return f"(typeof({item}) NOT IN ('DOUBLE', 'FLOAT') AND {item} = {render(value)})"


def _bindable(values: tuple[Any, ...], element: FieldType, out: ListWriter) -> str | None:
    """A long list's one parameter (`members.py`), or None where it is written literal by
    literal: numbers bind only below 2^53 (|v| < 2^53), since the bound list and the column
    meet as doubles, where every item of a 64-bit list column that rounds (2^53 + 1 would
    equal the double 2^53) rounds to 2^53 or beyond."""
    if element is FieldType.NUMBER and not all(abs(v) < 2**53 for v in values):
        return None
    return out.members(values, element)


def _has_bound(node: ListTest, column: str, bound: str, element: FieldType) -> str:
    """`hasSome`/`hasEvery` of a long list bound as one LIST parameter: `list_has_any` and
    `list_has_all` pass over null items, as `lists.truth` does."""
    function = "list_has_all" if node.op is ListOp.HAS_EVERY else "list_has_any"
    return f"{function}({column}, CAST({bound} AS {_LIST_ITEMS[element]}[]))"


_LIST_ITEMS = {
    FieldType.STRING: "VARCHAR",
    FieldType.NUMBER: "DOUBLE",
    FieldType.BOOLEAN: "BOOLEAN",
    FieldType.DATETIME: "TIMESTAMPTZ",
    FieldType.DATE: "DATE",
}
"""The item type of each list column (numbers are doubles: `double_items` keeps the values
a double holds)."""

_MEMBER_TYPES = {
    Members.TEXT: "VARCHAR[]",
    Members.INTEGER: "BIGINT[]",
    Members.REAL: "DOUBLE[]",
    Members.INSTANT: "TIMESTAMPTZ[]",
    Members.DAY: "DATE[]",
}
"""The LIST type of each kind of long list."""

_HUGEINT_MIN, _HUGEINT_MAX = -(2**127) + 1, 2**127 - 1
_DUCKDB_MATCH = {Op.CONTAINS: "contains", Op.STARTS_WITH: "starts_with", Op.ENDS_WITH: "ends_with"}
