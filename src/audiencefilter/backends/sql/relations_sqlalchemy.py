"""Relation conditions as SQLAlchemy expressions: EXISTS and correlated scalar subqueries.

The related rows are found one of two ways:
- ORM: the target class has a relationship named like the relation (`Contact.actions`); the
  related class's attributes are the related fields, and the relationship's join condition
  correlates the subquery with the contact.
- Core: `relations={"actions": actions_table}` names a table (or any FROM clause) per relation;
  its column `relation.foreign_key` is compared with the target's column `relation.key`, and a
  related field is the column keyed by its name, else the relation's declared column
  (`Relation.columns`).

W and an aggregate's test are built by a builder of the same kind over the related columns or
over the subquery, so every per-dialect rule of the scalar conditions applies inside (see
`relations_text.py` for the SQL each construct becomes). A relation inside W (a nested
relation) is followed the same way from the related rows: the related class's relationship
(ORM), or the table given as `relations["orders.lines"]` (or `relations["lines"]`) for Core.

This module does not import the builder (`sqlalchemy.py`): the builder implements
`RelationBuilder` and passes itself in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Numeric, false, func, literal, not_, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import FromClause
from sqlalchemy.sql.visitors import InternalTraversal

from ...language.fields import Schema
from ...language.nodes import TRUE, Aggregated, Node, Quantified
from ...language.relations import Aggregate, Quantifier, Relation, relation_of, value_schema
from .dialects import DIALECTS
from .relations_text import refuse_wide_sum, wide_sum_literal

Expression = ColumnElement[bool]
Lookup = Callable[[str], ColumnElement[Any]]


class RelationBuilder(Protocol):
    """What relation conditions need of the SQLAlchemy builder that meets them."""

    @property
    def schema(self) -> Schema: ...

    @property
    def target(self) -> Any: ...

    @property
    def relations(self) -> Mapping[str, Any]: ...

    @property
    def path(self) -> str:
        """The relations followed to reach this row source, dotted (`orders.`), or empty."""
        ...

    def visit(self, node: Node) -> Expression: ...

    def column(self, field: str) -> ColumnElement[Any]: ...

    def related(self, lookup: Lookup, schema: Schema, target: Any, path: str) -> RelationBuilder:
        """A builder over related rows: `lookup` finds their columns, `target` is their ORM
        class (None for a Core table)."""
        ...

    def valued(self, schema: Schema, field: str, value: ColumnElement[Any]) -> RelationBuilder:
        """A builder whose one field `field` is the SQL expression `value`."""
        ...


@dataclass(frozen=True)
class _Rows:
    """The related row source, its join with the row it belongs to, and its columns."""

    source: Any
    join: Expression
    lookup: Lookup
    target: Any


def _core_lookup(table: FromClause, relation: Relation) -> Lookup:
    declared = dict(relation.columns)

    def core(name: str) -> ColumnElement[Any]:
        # A column keyed by the field's name, else the relation's column name for it.
        found: ColumnElement[Any] = (
            table.c[name] if name in table.c else table.c[declared.get(name, name)]
        )
        return found

    return core


def _core_rows(builder: RelationBuilder, relation: Relation) -> _Rows | None:
    path = builder.path + relation.name
    source = builder.relations.get(path, builder.relations.get(relation.name))
    if source is None:
        return None
    if not isinstance(source, FromClause):
        raise ValueError(f"relations[{path!r}] is no table: {source!r}")
    core = _core_lookup(source, relation)
    return _Rows(source, core(relation.foreign_key) == builder.column(relation.key), core, None)


def _orm_rows(builder: RelationBuilder, relation: Relation) -> _Rows:
    prop = getattr(getattr(builder.target, relation.name, None), "property", None)
    mapper = getattr(prop, "mapper", None)
    if prop is None or mapper is None:
        path = builder.path + relation.name
        raise ValueError(
            f"{builder.target!r} has no relationship {relation.name!r}; give the related table "
            f"as relations={{{path!r}: table}}"
        )
    related = mapper.class_

    def orm(name: str) -> ColumnElement[Any]:
        found = getattr(related, name, None)
        if found is None:
            raise ValueError(f"{related!r} has no column for field {name!r}")
        element: ColumnElement[Any] = found.__clause_element__()
        return element

    return _Rows(related, prop.primaryjoin, orm, related)


def _rows(builder: RelationBuilder, relation: Relation) -> tuple[_Rows, RelationBuilder]:
    """The related rows (a Core table given for the relation, else the ORM relationship),
    and a builder over them."""
    rows = _core_rows(builder, relation) or _orm_rows(builder, relation)
    inner = builder.related(
        rows.lookup, relation.schema, rows.target, builder.path + relation.name + "."
    )
    return rows, inner


def quantified_expression(builder: RelationBuilder, node: Quantified) -> Expression:
    rows, inner = _rows(builder, relation_of(builder.schema, node.relation))
    query = select(literal(1)).select_from(rows.source).where(rows.join)
    if node.quantifier is Quantifier.EVERY:
        where = inner.visit(node.where)
        return ~query.where(not_(func.coalesce(where, false()))).exists()
    if node.where != TRUE:
        query = query.where(inner.visit(node.where))
    exists = query.exists()
    return exists if node.quantifier in (Quantifier.SOME, Quantifier.IS) else ~exists


def _aggregate(rows: _Rows, node: Aggregated) -> ColumnElement[Any]:
    if node.function is Aggregate.COUNT:
        return func.count()
    if node.function is Aggregate.SUM:
        return ExactSum(rows.lookup(node.field), node)
    pick = func.min if node.function is Aggregate.MIN else func.max
    return pick(rows.lookup(node.field))


class ExactSum(ColumnElement[Any]):
    """The sum of a related column, 0 over no rows, as the dialect writes it
    (`Dialect.sum_sql`: SQLite's never stops with `integer overflow`)."""

    _traverse_internals = [
        ("column", InternalTraversal.dp_clauseelement),
        ("wide", InternalTraversal.dp_plain_obj),
    ]
    type = Numeric()
    inherit_cache = True

    def __init__(self, column: ColumnElement[Any], node: Aggregated) -> None:
        self.column = column
        self.node = node
        #: A literal beyond 64 bits the sum is compared with: refused where sums are not
        #: exact beyond them, which only the compiler's dialect tells.
        self.wide = wide_sum_literal(node)


@compiles(ExactSum)
def _compile_exact_sum(element: ExactSum, compiler: SQLCompiler, **kw: Any) -> str:
    dialect = DIALECTS.get(compiler.dialect.name, DIALECTS["postgresql"])
    refuse_wide_sum(dialect, element.node, element.wide)
    return dialect.sum_sql(compiler.process(element.column, **kw))


def aggregated_expression(builder: RelationBuilder, node: Aggregated) -> Expression:
    relation = relation_of(builder.schema, node.relation)
    rows, inner = _rows(builder, relation)
    query = select(_aggregate(rows, node)).select_from(rows.source).where(rows.join)
    if node.where != TRUE:
        query = query.where(inner.visit(node.where))
    values = value_schema(relation, node.function, node.field)
    return builder.valued(values, node.field, query.scalar_subquery()).visit(node.test)
