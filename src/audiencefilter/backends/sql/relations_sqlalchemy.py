"""Relation conditions as SQLAlchemy expressions: EXISTS and correlated scalar subqueries.

The related rows are found one of two ways:
- ORM: the target class has a relationship named like the relation (`Contact.actions`); the
  related class's attributes are the related fields, and the relationship's join condition
  correlates the subquery with the contact.
- Core: `relations={"actions": actions_table}` names a table (or any FROM clause) per relation;
  its column `relation.foreign_key` is compared with the target's column `relation.key`, and a
  related field is the column keyed by its name, else the relation's declared column
  (`Relation.columns`).

W and an aggregate's test are built by an `ExpressionBuilder` over the related columns or over
the subquery, so every per-dialect rule of the scalar conditions applies inside (see
`relations_text.py` for the SQL each construct becomes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, false, func, literal, not_, select
from sqlalchemy.sql.expression import FromClause

from ...language.nodes import TRUE, Aggregated, Quantified
from ...language.relations import Aggregate, Quantifier, Relation, relation_of, value_schema

if TYPE_CHECKING:
    from .sqlalchemy import ExpressionBuilder

Expression = ColumnElement[bool]


def _rows(
    builder: ExpressionBuilder, relation: Relation
) -> tuple[Any, ColumnElement[bool], Callable[[str], ColumnElement[Any]]]:
    """The related row source, its join with the contact, and a lookup of related fields."""
    source = builder.relations.get(relation.name)
    declared = dict(relation.columns)
    if source is not None:
        if not isinstance(source, FromClause):
            raise ValueError(f"relations[{relation.name!r}] is no table: {source!r}")
        table = source

        def core(name: str) -> ColumnElement[Any]:
            # A column keyed by the field's name, else the relation's column name for it.
            found: ColumnElement[Any] = (
                table.c[name] if name in table.c else table.c[declared.get(name, name)]
            )
            return found

        return table, core(relation.foreign_key) == builder.column(relation.key), core
    attribute = getattr(builder.target, relation.name, None)
    prop = getattr(attribute, "property", None)
    mapper = getattr(prop, "mapper", None)
    if mapper is None:
        raise ValueError(
            f"{builder.target!r} has no relationship {relation.name!r}; give the related table "
            f"as relations={{{relation.name!r}: table}}"
        )
    related = mapper.class_

    def orm(name: str) -> ColumnElement[Any]:
        found = getattr(related, name, None)
        if found is None:
            raise ValueError(f"{related!r} has no column for field {name!r}")
        element: ColumnElement[Any] = found.__clause_element__()
        return element

    assert prop is not None  # it has a mapper
    return related, prop.primaryjoin, orm


def _where(
    builder: ExpressionBuilder, relation: Relation, lookup: Callable[[str], Any], node: Any
) -> Expression:
    from .sqlalchemy import ExpressionBuilder

    return ExpressionBuilder(lookup, relation.schema, target=None).visit(node)


def quantified_expression(builder: ExpressionBuilder, node: Quantified) -> Expression:
    relation = relation_of(builder.schema, node.relation)
    source, join, lookup = _rows(builder, relation)
    query = select(literal(1)).select_from(source).where(join)
    if node.quantifier is Quantifier.EVERY:
        where = _where(builder, relation, lookup, node.where)
        return ~query.where(not_(func.coalesce(where, false()))).exists()
    if node.where != TRUE:
        query = query.where(_where(builder, relation, lookup, node.where))
    exists = query.exists()
    return exists if node.quantifier in (Quantifier.SOME, Quantifier.IS) else ~exists


def aggregated_expression(builder: ExpressionBuilder, node: Aggregated) -> Expression:
    from .sqlalchemy import ExpressionBuilder, _column_lookup

    relation = relation_of(builder.schema, node.relation)
    source, join, lookup = _rows(builder, relation)
    value: ColumnElement[Any]
    if node.function is Aggregate.COUNT:
        value = func.count()
    elif node.function is Aggregate.SUM:
        value = func.coalesce(func.sum(lookup(node.field)), 0)
    else:
        pick = func.min if node.function is Aggregate.MIN else func.max
        value = pick(lookup(node.field))
    query = select(value).select_from(source).where(join)
    if node.where != TRUE:
        query = query.where(_where(builder, relation, lookup, node.where))
    column: Mapping[str, Any] = {node.field: query.scalar_subquery()}
    values = value_schema(relation, node.function, node.field)
    return ExpressionBuilder(_column_lookup(column), values, target=None).visit(node.test)
