"""Relation conditions in SQL text: correlated subqueries over the related table.

    actions some (W)        EXISTS (SELECT 1 FROM "actions" AS "r1"
                                    WHERE "r1"."sub_id" = "contacts"."id" AND (W))
    actions none (W)        NOT EXISTS (...the same...)
    actions every (W)       NOT EXISTS (SELECT 1 ... WHERE <join> AND NOT COALESCE((W), FALSE))
    count(actions where W)  (SELECT COUNT(*) FROM "actions" AS "r1" WHERE <join> AND (W))
    sum(actions.increase)   (SELECT COALESCE(SUM("r1"."increase"), 0) FROM ... WHERE <join>)
    max(actions.createdAt)  (SELECT MAX("r1"."created_at") FROM ... WHERE <join>)

Design choices:
- W is written by a `SqlWriter` of the same dialect whose columns are the alias's, so every
  comparison rule inside a relation (case folding, numbers, date-times as each engine stores
  them) is the scalar conditions' own; an aggregate's test is written by a `SqlWriter` whose one
  "column" is the subquery, so `count >= 3` is the ordinary number comparison.
- `every` keeps a row out of W's answer unless W is TRUE for it (`NOT COALESCE(W, FALSE)`): an
  UNKNOWN row breaks `every`, as semantics.md says.
- `SUM` over no values is NULL in SQL and 0 here (`COALESCE`); `MIN`/`MAX` over none stay NULL,
  so a comparison is UNKNOWN and `IS NULL` TRUE, as in memory. `MIN`/`MAX` over a date-time
  column compare the values as the engine stores them, with the same literal a scalar
  date-time comparison writes (SQLite's text in SQLAlchemy's format orders as instants).
- The contact row is named by `table` (`contacts` by default): the foreign key is compared with
  `"<table>"."<relation.key>"`. A related column is the field's name, or the relation's
  declared column (`Relation.columns`), or `columns["actions.createdAt"]`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ...language.nodes import TRUE, Aggregated, Quantified
from ...language.relations import (
    Aggregate,
    Quantifier,
    Relation,
    refused,
    relation_of,
    value_schema,
)

if TYPE_CHECKING:
    from .text import SqlWriter


def related_columns(relation: Relation, columns: Mapping[str, str]) -> dict[str, str]:
    """The related fields' column names: declared by the relation, then `columns` given as
    `"relation.field": "column"`."""
    found = dict(relation.columns)
    prefix = relation.name + "."
    found.update({k[len(prefix) :]: v for k, v in columns.items() if k.startswith(prefix)})
    return found


def _source(writer: SqlWriter, node: Quantified | Aggregated) -> tuple[Relation, str, SqlWriter]:
    """The relation, `FROM <table> AS <alias> WHERE <join>`, and a writer over the alias."""
    from .text import SqlWriter

    relation = relation_of(writer.schema, node.relation)
    if writer.dialect.name == "spark":
        raise refused("Spark SQL", relation.name)
    writer.aliases[0] += 1
    alias = f"r{writer.aliases[0]}"
    quote = writer.dialect.quote
    inner = SqlWriter(
        writer.dialect,
        relation.schema,
        related_columns(relation, writer.columns),
        writer.params,
        table=alias,
        aliases=writer.aliases,
        qualify=True,
    )
    key = f"{quote(writer.table)}.{quote(writer.columns.get(relation.key, relation.key))}"
    join = f"{quote(alias)}.{quote(relation.foreign_key)} = {key}"
    table = writer.tables.get(relation.name, relation.table)
    return relation, f"FROM {quote(table)} AS {quote(alias)} WHERE {join}", inner


def quantified_sql(writer: SqlWriter, node: Quantified) -> str:
    _, source, inner = _source(writer, node)
    if node.quantifier is Quantifier.EVERY:
        false = writer.dialect.boolean(False)
        return (
            f"NOT EXISTS (SELECT 1 {source} AND NOT COALESCE(({inner.visit(node.where)}), {false}))"
        )
    rows = source if node.where == TRUE else f"{source} AND ({inner.visit(node.where)})"
    exists = f"EXISTS (SELECT 1 {rows})"
    if node.quantifier in (Quantifier.SOME, Quantifier.IS):
        return exists
    return f"NOT {exists}"


def aggregated_sql(writer: SqlWriter, node: Aggregated) -> str:
    from .text import SqlWriter

    relation, source, inner = _source(writer, node)
    if node.function is Aggregate.COUNT:
        value = "COUNT(*)"
    else:
        column = inner.column(node.field)
        function = node.function.value.upper()
        value = f"{function}({column})"
        if node.function is Aggregate.SUM:
            value = f"COALESCE({value}, 0)"
    rows = source if node.where == TRUE else f"{source} AND ({inner.visit(node.where)})"
    subquery = f"(SELECT {value} {rows})"
    test = SqlWriter(
        writer.dialect,
        value_schema(relation, node.function, node.field),
        {},
        writer.params,
        expressions={node.field: subquery},
    )
    return test.visit(node.test)
