"""PostgreSQL: the base dialect, and lists as native arrays.

Text cannot hold NUL (a value with NUL never matches), backslashes go in `E'...'` strings,
numbers bind as `numeric` (never `float8`, which would round the bigint column too), and JSON
is read as `jsonb`, whose `->` reads object keys only.

Lists are native arrays (`text[]`, `boolean[]`, `timestamptz[]`), tested with `@>`, `&&` and
`=` (which an index on the array can serve), and through `unnest` when case-insensitive. A
string list is read as `text[]` whatever its item type (`varchar(n)[]`, `citext[]`).
Number lists are `numeric[]` or `double precision[]`: their items are compared one by one
through `unnest`, in SQL that reads either type (`_number_item`). JSON arrays at a data path
are read with `jsonb_array_elements`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ....language.fields import FieldType, ListOp, Op
from ....language.lists import without_nul
from ....language.nodes import ListTest
from ....language.values import double_exact
from .base import Dialect
from .list_sql import ListWriter, all_of, any_of, edge_index, literal_of
from .members import Members

_ARRAY_TYPES = {
    FieldType.STRING: "text",
    FieldType.NUMBER: "numeric",
    FieldType.BOOLEAN: "boolean",
    FieldType.DATETIME: "timestamptz",
    FieldType.DATE: "date",
}


_MEMBER_ARRAYS = {
    Members.TEXT: "text[]",
    Members.INTEGER: "bigint[]",
    Members.REAL: "numeric[]",
    Members.INSTANT: "timestamptz[]",
    Members.DAY: "date[]",
}
"""The array type of each kind of long list: integers as bigint (the column's own type, so
an index on it serves `= ANY`), other numbers as numeric (exact, as `bind_number`)."""


FOLD_COLLATION = '"und-x-icu"'
"""The collation case is folded under: ICU's root locale, whose `lower()` is Python's
`str.lower()` (`İ` to `i` and a combining dot, a final `Σ` to `ς`), whatever locale the
database was created with (libc's `C.UTF-8` folds `İ` to `i` and every `Σ` to `σ`)."""


class PostgreSQL(Dialect):
    """The base dialect, with native arrays for lists."""

    title = "PostgreSQL"
    grouped_aggregates = True

    def exact(self, sql: str) -> str:
        """The operand of a case-sensitive comparison under the database's default collation,
        which is deterministic, whatever collation the column declares: a nondeterministic
        one (`deterministic = false`, case-insensitive) would ignore case in `=` and refuse
        `LIKE`. A column declaring none has the default already (an index on it serves)."""
        return f'{sql} COLLATE "default"'

    def fold(self, sql: str) -> str:
        """Case folding under ICU's root locale (`FOLD_COLLATION`), never the database's or
        the column's collation."""
        return f"lower({sql} COLLATE {FOLD_COLLATION})"

    def member_test(self, op: Op, sql: str, param: str, members: Members) -> str | None:
        array = f"CAST({param} AS {_MEMBER_ARRAYS[members]})"
        return f"{sql} = ANY({array})" if op is Op.IN else f"{sql} <> ALL({array})"

    def bind_members(self, values: Sequence[Any], members: Members) -> object:
        return [self.bind_member(v, members) for v in values]

    def list_test(self, out: ListWriter, node: ListTest, column: str, element: FieldType) -> str:
        if node.op is ListOp.IS_EMPTY:
            return f"cardinality({column}) = 0"
        if element is FieldType.NUMBER:
            return self._number_list(out, node, column)
        subject = column
        if element is FieldType.STRING:
            # `@>`, `&&` and `=` need both arrays of one type: a `varchar(n)[]` (Django's
            # `ArrayField(CharField())`) or `citext[]` column is read as `text[]`, which is no
            # cast at all on a `text[]` column (an index on it still serves the test), and
            # compares `citext` items case-sensitively, as memory does.
            subject = f"CAST({column} AS text[])"
        if node.insensitive:
            subject = (
                f"ARRAY(SELECT {self.fold('v')} FROM unnest({subject}) "
                "WITH ORDINALITY AS e(v, i) ORDER BY i)"
            )
        bound = out.members(node.value, element)  # a long list, as one parameter
        if bound is None:
            bound = "ARRAY[" + ", ".join(literal_of(out, element)(v) for v in node.value) + "]"
        array = f"CAST({bound} AS {_ARRAY_TYPES[element]}[])"
        operator = {ListOp.HAS_SOME: "&&", ListOp.EQUALS: "="}.get(node.op, "@>")
        return f"{subject} {operator} {array}"

    def _number_list(self, out: ListWriter, node: ListTest, column: str) -> str:
        """A number list's test, item by item through `unnest`, so that it reads a `numeric[]`
        and a `double precision[]` column alike (`@>` needs both sides of one type)."""
        if node.op is ListOp.EQUALS:
            whens = " ".join(
                f"WHEN {i} THEN {self._number_item(out, 'e.v', v)}"
                for i, v in enumerate(node.value, 1)
            )
            return (
                f"(cardinality({column}) = {len(node.value)} AND NOT EXISTS (SELECT 1 FROM "
                f"unnest({column}) WITH ORDINALITY AS e(v, i) "
                f"WHERE NOT COALESCE(CASE e.i {whens} END, FALSE)))"
            )
        some = f"EXISTS (SELECT 1 FROM unnest({column}) AS e(v) WHERE "
        exact = all(double_exact(v) for v in node.value)
        bound = out.members(node.value, FieldType.NUMBER) if exact else None
        if bound is not None:  # a long list, as one parameter
            wanted = f"unnest(CAST({bound} AS numeric[])) AS w(x)"
            if node.op is ListOp.HAS_SOME:
                return some + f"e.v IN (SELECT w.x FROM {wanted}))"
            return f"NOT EXISTS (SELECT 1 FROM {wanted} WHERE NOT {some}e.v = w.x))"
        if node.op is ListOp.HAS_SOME:
            return some + any_of([self._number_item(out, "e.v", v) for v in node.value]) + ")"
        return all_of([some + self._number_item(out, "e.v", v) + ")" for v in node.value])

    def _number_item(self, out: ListWriter, item: str, value: Any) -> str:
        """The number item `item` equals `value`, on a `numeric` or a `double precision` item.
        The literal is written exactly (`dialects.integral`: `1e23` is the integer it equals),
        which a double item meets as the double it converts to: itself, for a number a double
        holds. An integer no double holds equals no double (as in memory), and an exact item
        (`numeric`, `bigint`, `integer`, `smallint`) that is it: it is compared as text read
        back as `numeric`, where a double item would round it, or overflow past 1e308."""
        if double_exact(value):
            return f"{item} = {out.number(value)}"
        return (
            f"(pg_typeof({item}) NOT IN ('double precision'::regtype, 'real'::regtype) AND "
            f"CAST(CAST({item} AS text) AS numeric) = {out.number(value)})"
        )

    def array_test(self, out: ListWriter, node: ListTest) -> str:
        column = out.column(node.field)

        def document() -> str:  # written anew at each use, so parameters stay in order
            return self.json_document(column, [out.text(key) for key in node.path])

        head = f"CASE WHEN jsonb_typeof({document()}) = 'array' THEN "
        if node.op is ListOp.IS_EMPTY:
            return head + f"jsonb_array_length({document()}) = 0 END"
        kept = without_nul(node)  # jsonb, as text, holds no NUL
        test = self.false if isinstance(kept, bool) else self._array_items(out, kept, document)
        return head + test + " END"  # UNKNOWN for anything but an array (lists.array_truth)

    def _array_items(self, out: ListWriter, node: ListTest, document: Callable[[], str]) -> str:
        if node.op is ListOp.ARRAY_CONTAINS:
            tests = [
                f"EXISTS (SELECT 1 FROM jsonb_array_elements({document()}) AS e(v) WHERE "
                f"{self._item(out, lambda: 'e.v', value, node.insensitive)})"
                for value in node.value
            ]
            return all_of(tests) if tests else self.true
        index = edge_index(node, "0", "-1")
        first = node.value[0]
        test = self._item(out, lambda: f"({document()} -> {index})", first, node.insensitive)
        return f"COALESCE({test}, FALSE)"

    def _item(self, out: ListWriter, item: Callable[[], str], value: Any, insensitive: bool) -> str:
        """The item `item()` (written anew at each use: it may hold placeholders) equals
        `value` as a JSON value of the literal's type."""
        if isinstance(value, bool):
            return f"{item()} = CAST({out.text('true' if value else 'false')} AS JSONB)"
        if isinstance(value, str):
            of_type = f"jsonb_typeof({item()}) = 'string'"
            text = f"({item()} #>> '{{}}')"
            text = self.fold(text) if insensitive else text
            return f"({of_type} AND {text} = {out.text(value)})"
        of_type = f"jsonb_typeof({item()}) = 'number'"
        number = lambda: f"CAST({item()} AS NUMERIC)"  # noqa: E731
        return f"({of_type} AND {self.json_number(out, Op.EQUALS, number, value)})"
