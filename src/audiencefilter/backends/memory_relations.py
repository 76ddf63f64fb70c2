"""Relation conditions in memory: the related rows of a record, quantified or aggregated.

A record's relation key holds a list of mappings (a to-one relation: one mapping or null); a
missing key or null holds no rows. The where clause over related rows and an aggregate's test
are compiled by `memory.compile_node` itself, against the related schema and the aggregate's
one-field schema (`relations.value_schema`), so every comparison rule inside a relation
condition is the compiled predicate's own.

The semantics, once (docs/semantics.md, "Relations"): `some` is TRUE when W is TRUE for a
related row, `none` when it is for none, `every` when no row leaves W FALSE or UNKNOWN; none of
them is ever UNKNOWN. `count` counts the rows `where` holds for; `sum` adds their non-null
values (0 over none); `min`/`max` range over their non-null values (null over none, so a
comparison is UNKNOWN and `equals: null` is TRUE).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from itertools import compress, repeat
from typing import Any

from ..language.fields import FieldType, Schema
from ..language.nodes import TRUE, Aggregated, Node, Not, Quantified, relative_values
from ..language.relations import Aggregate, Quantifier, Relation, relation_of, value_schema
from ..language.relative import Ago
from ..language.values import accepts, record_datetime

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


class _Rows:
    """W compiled against the related schema, applied to a record's rows in C loops (`map`,
    `filter`) with no Python frame per row besides W's own: the outer function's instants
    that W reads are passed on, picked once per record."""

    def __init__(self, node: Node, schema: Schema, relatives: Mapping[Ago, int]) -> None:
        from .memory import compile_node

        self.always = node == TRUE
        self.evaluate = compile_node(node, schema)
        self.picks = tuple(relatives[ago] for ago in relative_values(node))

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
    node: Quantified | Aggregated, schema: Schema, relatives: Mapping[Ago, int]
) -> Truth:
    """The truth of a relation condition of a record of `schema`."""
    relation = relation_of(schema, node.relation)
    name = relation.name
    where = _Rows(node.where, relation.schema, relatives)
    if isinstance(node, Quantified):
        quantifier = node.quantifier
        if quantifier is Quantifier.EVERY:

            def every(record: Record, instants: Instants) -> bool:
                rows = record.get(name)
                if rows.__class__ is not list:
                    rows = related_rows(relation, rows)
                return all(where.tests(rows, instants))

            return every
        wanted = quantifier in (Quantifier.SOME, Quantifier.IS)

        def quantified(record: Record, instants: Instants) -> bool:
            rows = record.get(name)
            if rows.__class__ is not list:
                rows = related_rows(relation, rows)
            return any(where.tests(rows, instants)) is wanted

        return quantified
    values = value_schema(relation, node.function, node.field)
    is_true = _Rows(node.test, values, relatives)
    is_false = _Rows(Not(node.test), values, relatives)
    field = node.field
    if node.function is Aggregate.COUNT and not where.always:

        def compute(rows: Sequence[Record], instants: Instants) -> Any:
            return sum(where.tests(rows, instants))
    else:
        of_rows = _aggregate(node.function, node.field, relation)

        def compute(rows: Sequence[Record], instants: Instants) -> Any:
            return of_rows(where.matching(rows, instants))

    def aggregated(record: Record, instants: Instants) -> bool | None:
        rows = record.get(name)
        if rows.__class__ is not list:
            rows = related_rows(relation, rows)
        probe = ({field: compute(rows, instants)},)
        if next(is_true.tests(probe, instants)):
            return True
        return False if next(is_false.tests(probe, instants)) else None

    return aggregated


def _aggregate(
    function: Aggregate, field: str, relation: Relation
) -> Callable[[Sequence[Record]], Any]:
    if function is Aggregate.COUNT:
        return len
    kind = relation.schema[field].type

    def present(rows: Sequence[Record]) -> list[Any]:
        found = []
        for row in rows:
            value = row.get(field)
            if value is None:
                continue
            if not accepts(kind, value):
                raise TypeError(
                    f'field "{field}" of "{relation.name}" holds {type(value).__name__}'
                )
            found.append(record_datetime(value) if kind is FieldType.DATETIME else value)
        return found

    if function is Aggregate.SUM:
        return lambda rows: sum(present(rows))
    pick = min if function is Aggregate.MIN else max
    return lambda rows: pick(values) if (values := present(rows)) else None
