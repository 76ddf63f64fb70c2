"""Relation conditions in memory: the related rows of a record, quantified or aggregated.

A record's relation key holds a list of mappings (a to-one relation: one mapping or null); a
missing key or null holds no rows. The where clause over related rows and an aggregate's test
are compiled by `memory.compile_node` itself, against the related schema and the aggregate's
one-field schema (`relations.value_schema`), so every comparison rule inside a relation
condition is the compiled predicate's own.

The semantics, once (docs/semantics-relations.md, "Relations"): `some` is TRUE when W is TRUE for a
related row, `none` when it is for none, `every` when no row leaves W FALSE or UNKNOWN; none of
them is ever UNKNOWN. `count` counts the rows `where` holds for; `sum` adds their non-null
values (0 over none); `min`/`max` range over their non-null values (null over none, so a
comparison is UNKNOWN and `equals: null` is TRUE).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from itertools import compress, repeat
from typing import Any, Protocol

from ...language.calendar import Relative
from ...language.fields import FieldType, Schema
from ...language.nodes import TRUE, Aggregated, Node, Not, Quantified, relative_values
from ...language.relations import Aggregate, Quantifier, Relation, relation_of, value_schema
from ...language.values import accepts, record_value
from . import fast as memory_fast

Record = Mapping[str, Any]
Instants = tuple[datetime, ...]
Truth = Callable[[Record, Instants], bool | None]
"""TRUE, FALSE or None (UNKNOWN) of a relation condition for a record."""


def related_rows(relation: Relation, value: object) -> Sequence[Record]:
    """The related rows a record's value holds: a list of mappings, one mapping for a to-one
    relation, or none for null; anything else is a wrong type for the relation."""
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        return value
    if not relation.many and isinstance(value, Mapping):
        return (value,)
    raise TypeError(f'relation "{relation.name}" holds {type(value).__name__}, not a list of rows')


_HEAD = "def loop(rows, _instants):\n"
_LOOPS = {
    "count": _HEAD + " n = 0\n for record in rows:\n  if W:\n   n += 1\n return n",
    "any": _HEAD + " for record in rows:\n  if W:\n   return True\n return False",
    "all": _HEAD + " for record in rows:\n  if not W:\n   return False\n return True",
    "at_least": "def loop(rows, _instants, least):\n n = 0\n for record in rows:\n  if W:\n"
    "   n += 1\n   if n >= least:\n    return True\n return False",
}
"""The loops W is inlined into; `record` is each row, as in the compiled predicate."""


class _Placeholder(ast.NodeTransformer):
    def __init__(self, expression: ast.expr) -> None:
        self.expression = expression

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.expression if node.id == "W" else node


class Compiler(Protocol):
    """What relation conditions need of the in-memory compiler (`compiler.py` implements it and
    passes itself in, so this module never imports its host)."""

    def compile(self, node: Node, schema: Schema) -> Callable[..., bool]:
        """The predicate of `node` over records of `schema` (`compile_node`)."""
        ...

    def expression(self, node: Node, schema: Schema) -> tuple[ast.expr, Mapping[str, Any]]:
        """`node` as one fast Python expression over `record`, and the names it binds."""
        ...


def _loop(
    node: Node, schema: Schema, kind: str, compiler: Compiler
) -> Callable[[Sequence[Record], Instants], Any]:
    """W inlined into one loop over the rows (`count`, `any` or `all` of W TRUE): the
    compiled predicate's own expression for W, with no call per row. It takes the fast
    date-time path; any error sends the caller to the per-row path, which answers exactly or
    raises `RecordError`."""
    expression, bound = compiler.expression(node, schema)
    module = _Placeholder(expression).visit(ast.parse(_LOOPS[kind]))
    namespace: dict[str, Any] = dict(bound)
    exec(compile(ast.fix_missing_locations(module), "<audiencefilter>", "exec"), namespace)
    loop: Callable[[Sequence[Record], Instants], Any] = namespace["loop"]
    return loop


class _Rows:
    """W compiled against the related schema, applied to a record's rows in C loops (`map`,
    `filter`) with no Python frame per row besides W's own: the outer function's instants
    that W reads are passed on, picked once per record."""

    def __init__(
        self,
        node: Node,
        schema: Schema,
        relatives: Mapping[Relative, int],
        compiler: Compiler,
    ) -> None:
        self.always = node == TRUE
        self.evaluate = compiler.compile(node, schema)
        self.picks = tuple(relatives[ago] for ago in relative_values(node))
        #: W reads every instant of the outer function, in its order: pass them on as they are.
        self.whole = bool(self.picks) and self.picks == tuple(range(len(relatives)))
        #: The inlined loops, each built the first time it runs: a condition takes one of the
        #: four kinds, and building a loop costs more than compiling W (`_loop`). W's compiled
        #: predicate above has already refused what cannot be evaluated, at build time.
        self.loops: dict[str, Callable[..., Any]] = {}
        self._node, self._schema, self._compiler = node, schema, compiler

    def run(self, kind: str, rows: Sequence[Record], instants: Instants, *args: Any) -> Any:
        """`count`, `any`, `all` or (with the count) `at_least` of W over `rows`: the inlined
        loop, or on an error the per-row evaluation (exact answers, or `RecordError`)."""
        if self.whole:
            picked = instants
        else:
            picked = tuple([instants[i] for i in self.picks]) if self.picks else ()
        loop = self.loops.get(kind)
        if loop is None:
            loop = self.loops[kind] = _loop(self._node, self._schema, kind, self._compiler)
        try:
            return loop(rows, picked, *args)
        except (TypeError, AttributeError, ValueError):
            tests = self.tests(rows, instants)
            if kind == "count" or kind == "at_least":
                return sum(tests) if kind == "count" else sum(tests) >= args[0]
            return any(tests) if kind == "any" else all(tests)

    def tests(self, rows: Sequence[Record], instants: Instants) -> Iterator[bool]:
        """W's answer (TRUE or not) for each row."""
        if not self.picks:
            return map(self.evaluate, rows)
        return map(self.evaluate, rows, repeat(tuple([instants[i] for i in self.picks])))

    def matching(self, rows: Sequence[Record], instants: Instants) -> Sequence[Record]:
        if self.always:
            return rows
        return list(compress(rows, self.tests(rows, instants)))


def relation_truth(
    node: Quantified | Aggregated,
    schema: Schema,
    relatives: Mapping[Relative, int],
    compiler: Compiler,
) -> Truth:
    """The truth of a relation condition of a record of `schema`."""
    relation = relation_of(schema, node.relation)
    where = _Rows(node.where, relation.schema, relatives, compiler)
    if isinstance(node, Quantified):
        return _quantified_truth(node, relation, where)
    least = memory_fast.count_threshold(node)
    if least is not None:
        return _at_least_truth(relation, where, least)
    value_test = _ValueTest(node, relation, relatives, compiler)
    return _aggregated_truth(node, relation, where, value_test)


def _at_least_truth(relation: Relation, where: _Rows, least: int) -> Truth:
    """`count >= least` (`memory_fast.count_threshold`): TRUE once `least` rows match."""
    name = relation.name

    def at_least(record: Record, instants: Instants) -> bool:
        rows = record.get(name)
        if rows.__class__ is not list:
            rows = related_rows(relation, rows)
        if where.always:
            return len(rows) >= least
        return bool(where.run("at_least", rows, instants, least))

    return at_least


def _quantified_truth(node: Quantified, relation: Relation, where: _Rows) -> Truth:
    """`every` is whether all related rows match; `some`, `is` whether any does; `none`,
    `isNot` whether none does."""
    name = relation.name
    every = node.quantifier is Quantifier.EVERY
    kind = "all" if every else "any"
    wanted = every or node.quantifier in (Quantifier.SOME, Quantifier.IS)

    def quantified(record: Record, instants: Instants) -> bool:
        rows = record.get(name)
        if rows.__class__ is not list:
            rows = related_rows(relation, rows)
        return bool(where.run(kind, rows, instants)) is wanted

    return quantified


def _aggregated_truth(
    node: Aggregated, relation: Relation, where: _Rows, value_test: _ValueTest
) -> Truth:
    """The aggregate of the matching rows, tested as a value of its own schema."""
    if memory_fast.ENABLED and node.function is Aggregate.SUM and where.always:
        if value_test.known is not None:
            return _summed_truth(node, relation, value_test)
    compute = _aggregate_of_rows(node, relation, where)
    name = relation.name

    def aggregated(record: Record, instants: Instants) -> bool | None:
        rows = record.get(name)
        if rows.__class__ is not list:
            rows = related_rows(relation, rows)
        return value_test.truth(compute(rows, instants), instants)

    return aggregated


def _summed_truth(node: Aggregated, relation: Relation, value_test: _ValueTest) -> Truth:
    """`_aggregated_truth` of a sum over every row, in one call (`memory_fast`): the values
    added by `sum` when they are all `int` or `float`, the test's answer remembered per sum."""
    name, field, known = relation.name, node.field, value_test.known
    assert field is not None and known is not None, "a sum reads a field; its test no instant"
    exact = _aggregate(Aggregate.SUM, field, relation)

    def summed(record: Record, instants: Instants) -> bool | None:
        rows = record.get(name)
        if rows.__class__ is not list:
            rows = related_rows(relation, rows)
        values = [value for row in rows if (value := row.get(field)) is not None]
        total = sum(values) if memory_fast.SUMMED.issuperset(map(type, values)) else exact(rows)
        found = known.get(total)
        return value_test.truth(total, instants) if found is None else found

    return summed


def _aggregate_of_rows(
    node: Aggregated, relation: Relation, where: _Rows
) -> Callable[[Sequence[Record], Instants], Any]:
    """The aggregate over the rows `where` matches: a count runs the inlined loop."""
    if node.function is Aggregate.COUNT and not where.always:

        def count(rows: Sequence[Record], instants: Instants) -> Any:
            return where.run("count", rows, instants)

        return count
    of_rows = _aggregate(node.function, node.field, relation)

    def compute(rows: Sequence[Record], instants: Instants) -> Any:
        return of_rows(where.matching(rows, instants))

    return compute


class _ValueTest:
    """An aggregate's test, run on the one-field row `{field: value}`: TRUE, FALSE, or (for
    a null value only) UNKNOWN."""

    def __init__(
        self,
        node: Aggregated,
        relation: Relation,
        relatives: Mapping[Relative, int],
        compiler: Compiler,
    ) -> None:
        self.field = node.field
        values = value_schema(relation, node.function, node.field)
        self.is_true = _Rows(node.test, values, relatives, compiler)
        self.is_false = _Rows(Not(node.test), values, relatives, compiler)
        #: Answers by value (`memory_fast`), for a count or sum whose test reads no instant.
        self.known: dict[Any, bool] | None = None
        numeric = node.function in (Aggregate.COUNT, Aggregate.SUM)
        if memory_fast.ENABLED and numeric and not relative_values(node.test):
            self.known = {}

    def truth(self, value: Any, instants: Instants) -> bool | None:
        """The test on `value`; for a count or sum (a number, never null: TRUE or FALSE) the
        answer is remembered per value, so the probe runs once for each count met."""
        known = self.known
        if known is None:
            return self.probe(value, instants)
        found = known.get(value)
        if found is None:
            if len(known) >= 4096:
                known.clear()
            found = known[value] = bool(self.probe(value, instants))
        return found

    def probe(self, value: Any, instants: Instants) -> bool | None:
        probe = ({self.field: value},)
        if next(self.is_true.tests(probe, instants)):
            return True
        if value is not None:  # a present value makes a condition TRUE or FALSE
            return False
        return False if next(self.is_false.tests(probe, instants)) else None


def _aggregate(
    function: Aggregate, field: str, relation: Relation
) -> Callable[[Sequence[Record]], Any]:
    if function is Aggregate.COUNT:
        return len
    kind = relation.schema[field].type

    def present(rows: Sequence[Record]) -> list[Any]:
        return _present_values(rows, field, kind, relation.name)

    if function is Aggregate.SUM:
        return _sum(field, present)
    pick = min if function is Aggregate.MIN else max
    return lambda rows: pick(values) if (values := present(rows)) else None


def _present_values(
    rows: Sequence[Record], field: str, kind: FieldType, relation: str
) -> list[Any]:
    """The field's non-null values over `rows` (date-times as instants), which a sum, minimum
    or maximum is taken of; a wrong type raises as a comparison's does."""
    found = []
    for row in rows:
        value = row.get(field)
        if value is None:
            continue
        if not accepts(kind, value):
            raise TypeError(f'field "{field}" of "{relation}" holds {type(value).__name__}')
        found.append(record_value(kind, value))
    return found


def _sum(field: str, present: Callable[[Sequence[Record]], list[Any]]) -> Callable[..., Any]:
    """The sum of the field's values: `memory_fast.fast_sum` of the non-null values, or the
    values `present` checks one by one."""
    if not memory_fast.ENABLED:
        return lambda rows: sum(present(rows))

    def total(rows: Sequence[Record]) -> Any:
        values = [value for row in rows if (value := row.get(field)) is not None]
        found = memory_fast.fast_sum(values)
        return sum(present(rows)) if found is None else found

    return total
