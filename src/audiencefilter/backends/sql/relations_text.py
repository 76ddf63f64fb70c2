"""Relation conditions in SQL text: correlated subqueries over the related table.

    actions some (W)        EXISTS (SELECT 1 FROM "actions" AS "r1"
                                    WHERE "r1"."sub_id" = "contacts"."id" AND (W))
    actions none (W)        NOT EXISTS (...the same...)
    actions every (W)       NOT EXISTS (SELECT 1 ... WHERE <join> AND NOT COALESCE((W), FALSE))
    count(actions where W)  (SELECT COUNT(*) FROM "actions" AS "r1" WHERE <join> AND (W))
    sum(actions.increase)   (SELECT COALESCE(SUM("r1"."increase"), 0) FROM ... WHERE <join>)
    max(actions.createdAt)  (SELECT MAX("r1"."created_at") FROM ... WHERE <join>)

Design choices:
- W is written by a writer of the same dialect whose columns are the alias's (`RelationWriter.
  related`), so every comparison rule inside a relation (case folding, numbers, date-times as
  each engine stores them) is the scalar conditions' own, and a relation inside W (a nested
  relation) is one more correlated subquery; an aggregate's test is written by a writer whose
  one "column" is the subquery (`RelationWriter.valued`), so `count >= 3` is the ordinary
  number comparison.
- The subquery is written anew at each use (a `Callable`): a test such as `within` or an
  anniversary writes its column twice, and with placeholders each copy needs its own
  parameters, in the order they appear.
- This module does not import the writer (`text.py`): the writer implements `RelationWriter`
  and passes itself in. A dialect that cannot run correlated subqueries says so
  (`Dialect.relations`).
- `every` keeps a row out of W's answer unless W is TRUE for it (`NOT COALESCE(W, FALSE)`): an
  UNKNOWN row breaks `every`, as semantics-relations.md says.
- `SUM` over no values is NULL in SQL and 0 here (`COALESCE`); `MIN`/`MAX` over none stay NULL,
  so a comparison is UNKNOWN and `IS NULL` TRUE, as in memory. `MIN`/`MAX` over a date-time
  column compare the values as the engine stores them, with the same literal a scalar
  date-time comparison writes (SQLite's text in SQLAlchemy's format orders as instants).
- The contact row is named by `table` (`contacts` by default): the foreign key is compared with
  `"<table>"."<relation.key>"`. A many-to-many relation (`Relation.through`) reads the related
  table joined to the link table, whose foreign key is compared the same way. A related
  column is the field's name, or the relation's declared column (`Relation.columns`), or
  `columns["actions.createdAt"]`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from ...errors import FilterError, Issue
from ...language.aggregates import over_no_rows
from ...language.fields import Schema
from ...language.nodes import TRUE, Aggregated, Node, Not, Quantified, walk
from ...language.relations import (
    Aggregate,
    Quantifier,
    Relation,
    refused,
    relation_of,
    value_schema,
)
from .dialects import Dialect


class RelationWriter(Protocol):
    """What relation conditions need of the SQL writer that meets them."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def schema(self) -> Schema: ...

    @property
    def columns(self) -> Mapping[str, str]: ...

    @property
    def table(self) -> str: ...

    @property
    def tables(self) -> Mapping[str, str]: ...

    def visit(self, node: Node) -> str: ...

    def column(self, field: str) -> str: ...

    def next_alias(self) -> str:
        """A table alias not yet used in the statement."""
        ...

    def related(self, schema: Schema, columns: Mapping[str, str], alias: str) -> RelationWriter:
        """A writer of the same statement over the related rows named `alias`."""
        ...

    def valued(self, schema: Schema, field: str, value: Callable[[], str]) -> RelationWriter:
        """A writer of the same statement whose one field `field` is the SQL `value()`."""
        ...


def related_columns(relation: Relation, columns: Mapping[str, str]) -> dict[str, str]:
    """The related fields' column names: declared by the relation, then `columns` given as
    `"relation.field": "column"`."""
    found = dict(relation.columns)
    prefix = relation.name + "."
    found.update({k[len(prefix) :]: v for k, v in columns.items() if k.startswith(prefix)})
    return found


def _relation(writer: RelationWriter, name: str) -> Relation:
    relation = relation_of(writer.schema, name)
    if not writer.dialect.relations:
        raise refused(writer.dialect.title, relation.name)
    return relation


def _source(writer: RelationWriter, relation: Relation) -> tuple[str, RelationWriter]:
    """`FROM <table> AS <alias> WHERE <join>`, and a writer over the alias."""
    alias = writer.next_alias()
    quote = writer.dialect.quote
    inner = writer.related(relation.schema, related_columns(relation, writer.columns), alias)
    key = f"{quote(writer.table)}.{quote(writer.columns.get(relation.key, relation.key))}"
    rows, foreign = _from(writer, relation, alias)
    return f"{rows} WHERE {foreign} = {key}", inner


def _from(writer: RelationWriter, relation: Relation, alias: str) -> tuple[str, str]:
    """`FROM <table> AS <alias>` (joined to the link table of a many-to-many relation, under
    an alias of its own), and the column holding the contact's key."""
    quote = writer.dialect.quote
    table = writer.tables.get(relation.name, relation.table)
    rows = f"FROM {quote(table)} AS {quote(alias)}"
    if not relation.through:
        return rows, f"{quote(alias)}.{quote(relation.foreign_key)}"
    link = writer.next_alias()
    related = f"{quote(alias)}.{quote(relation.related_key)}"
    on = f"{quote(link)}.{quote(relation.through_key)} = {related}"
    rows += f" JOIN {quote(relation.through)} AS {quote(link)} ON {on}"
    return rows, f"{quote(link)}.{quote(relation.foreign_key)}"


def _rows(source: str, inner: RelationWriter, where: Node) -> str:
    return source if where == TRUE else f"{source} AND ({inner.visit(where)})"


def quantified_sql(writer: RelationWriter, node: Quantified) -> str:
    source, inner = _source(writer, _relation(writer, node.relation))
    if node.quantifier is Quantifier.EVERY:
        false = writer.dialect.boolean(False)
        broken = f"NOT COALESCE(({inner.visit(node.where)}), {false})"
        return f"NOT EXISTS (SELECT 1 {source} AND {broken})"
    exists = f"EXISTS (SELECT 1 {_rows(source, inner, node.where)})"
    if node.quantifier in (Quantifier.SOME, Quantifier.IS):
        return exists
    return f"NOT {exists}"


def _aggregate(inner: RelationWriter, node: Aggregated) -> str:
    if node.function is Aggregate.COUNT:
        return "COUNT(*)"
    if node.function is Aggregate.SUM:
        return inner.dialect.sum_sql(inner.column(node.field))
    return f"{node.function.value.upper()}({inner.column(node.field)})"


def wide_sum_literal(node: Aggregated) -> int | float | None:
    """A literal beyond 64-bit integers that a `sum` is compared with, or None."""
    if node.function is not Aggregate.SUM:
        return None
    for item in walk(node.test):
        values = getattr(item, "value", None)
        for value in values if isinstance(values, tuple) else (values,):
            if isinstance(value, int | float) and not -(2**63) <= value < 2**63:
                return value
    return None


def refuse_wide_sum(dialect: Dialect, node: Aggregated, value: int | float | None) -> None:
    """A `FilterError` for a sum compared with `value`, a number beyond 64 bits
    (`wide_sum_literal`), on an engine holding sums exactly only within them
    (`Dialect.sums_within_64_bits`): a sum beyond is a rounded REAL there, which such a
    literal could meet, so no answer would be sure."""
    if value is None or not dialect.sums_within_64_bits:
        return
    raise FilterError(
        [
            Issue(
                path=f"{node.relation}.sum.{node.field}",
                message=f"{dialect.title} holds a sum exactly within 64-bit integers only, "
                f"and {value!r} lies beyond them",
                suggestion="compare the sum with a number between -2^63 and 2^63 - 1, or "
                "evaluate this filter in memory or on another engine",
            )
        ]
    )


def aggregated_sql(writer: RelationWriter, node: Aggregated) -> str:
    relation = _relation(writer, node.relation)
    refuse_wide_sum(writer.dialect, node, wide_sum_literal(node))
    empty = over_no_rows(node.function, node.test)
    if writer.dialect.grouped_aggregates and empty is not None:
        return grouped_sql(writer, relation, node, empty)

    def subquery() -> str:
        source, inner = _source(writer, relation)
        return f"(SELECT {_aggregate(inner, node)} {_rows(source, inner, node.where)})"

    values = value_schema(relation, node.function, node.field)
    return writer.valued(values, node.field, subquery).visit(node.test)


def grouped_sql(writer: RelationWriter, relation: Relation, node: Aggregated, empty: bool) -> str:
    """A `count` or `sum` test over groups of related rows, one uncorrelated subquery planned
    as a hash join, where the correlated form runs a subquery per contact:

        "id" IS NOT NULL AND "id" IN (SELECT r."sub_id" FROM actions AS r WHERE r."sub_id"
            IS NOT NULL AND (W) GROUP BY r."sub_id" HAVING COUNT(*) >= 3)

    Exact whatever surrounds it, NOT included: the value is never null, so the test is TRUE
    or FALSE for each group, and `empty` (`over_no_rows`) is the answer for a contact with no
    group. When that is TRUE, the contacts whose group fails are left out instead:
    `"id" IS NULL OR "id" NOT IN (... HAVING NOT (test))`. Rows with a null foreign key
    belong to no contact, and a contact with a null key has no rows."""
    quote = writer.dialect.quote
    key = f"{quote(writer.table)}.{quote(writer.columns.get(relation.key, relation.key))}"
    groups = _groups(writer, relation, node, node.test if not empty else Not(node.test))
    if empty:
        return f"({key} IS NULL OR {key} NOT IN ({groups}))"
    return f"({key} IS NOT NULL AND {key} IN ({groups}))"


def _groups(writer: RelationWriter, relation: Relation, node: Aggregated, having: Node) -> str:
    """The foreign keys of the groups of related rows (those meeting W) that meet `having`."""
    alias = writer.next_alias()
    inner = writer.related(relation.schema, related_columns(relation, writer.columns), alias)
    rows_from, foreign = _from(writer, relation, alias)
    source = f"{rows_from} WHERE {foreign} IS NOT NULL"
    rows = _rows(source, inner, node.where)
    values = value_schema(relation, node.function, node.field)
    test = writer.valued(values, node.field, lambda: _aggregate(inner, node)).visit(having)
    return f"SELECT {foreign} {rows} GROUP BY {foreign} HAVING {test}"
