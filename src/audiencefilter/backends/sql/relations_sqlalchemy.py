"""Relation conditions as SQLAlchemy expressions: EXISTS and correlated scalar subqueries.

The related rows are found one of two ways:
- ORM: the target class has a relationship named like the relation (`Contact.actions`, or the
  name the naming convention gives); the related class's attributes are the related fields,
  and the relationship's join condition (its foreign key) correlates the subquery with the
  contact.
- Given: `relations={"actions": actions_table}` names a table (or any FROM clause, or an ORM
  class) per relation; its column `relation.foreign_key` is compared with the target's column
  `relation.key`.

Either way a related field is found as `attributes.py` finds any field: `columns` keyed by
its path (`"actions.createdAt"`), its name, the relation's declared column
(`Relation.columns`), the naming convention.

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
from typing import Any, Protocol, cast

from sqlalchemy import ColumnElement, Numeric, false, func, inspect, literal, not_, select
from sqlalchemy.ext.associationproxy import AssociationProxyInstance
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import aliased
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ColumnClause, FromClause
from sqlalchemy.sql.util import ClauseAdapter
from sqlalchemy.sql.visitors import InternalTraversal, replacement_traverse

from ...language.fields import Schema
from ...language.nodes import TRUE, Aggregated, Node, Quantified
from ...language.relations import Aggregate, Quantifier, Relation, relation_of, value_schema
from .attributes import Attributes, describe
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
    def attributes(self) -> Attributes: ...

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


def _adapted(lookup: Lookup, selectable: FromClause) -> Lookup:
    """`lookup` whose columns of the aliased table are the alias's: a column expression given
    in `columns=` names the table itself, which the subquery reads under an alias."""
    adapter = ClauseAdapter(selectable)
    return lambda name: adapter.traverse(lookup(name))


def _core_rows(builder: RelationBuilder, relation: Relation) -> _Rows | None:
    """The rows of a table (or ORM class) given in `relations`, under an alias of their own
    (so a table related to itself, `relations={"referred": contacts}`, reads other rows than
    the contact's), joined by the relation's foreign key and key, each found like any field
    (`Attributes.lookup`)."""
    path = builder.path + relation.name
    given = builder.relations.get(path, builder.relations.get(relation.name))
    if given is None:
        return None
    mapped = inspect(given, raiseerr=False)
    if not isinstance(given, FromClause) and getattr(mapped, "mapper", None) is None:
        raise ValueError(
            f"relations[{path!r}] is {given!r}, neither a table nor an ORM class; give the "
            f"related table ({{{path!r}: actions_table}}) or model ({{{path!r}: Action}})"
        )
    if isinstance(given, FromClause):
        source: Any = given.alias()
        selectable = source
        target = None
    else:
        source = target = aliased(given)
        selectable = inspect(source).selectable
    found = builder.attributes.lookup(source, path + ".", dict(relation.columns))
    lookup = _adapted(found, selectable)
    join = lookup(relation.foreign_key) == builder.column(relation.key)
    return _Rows(source, _subclass_rows(join, mapped, selectable), lookup, target)


def _orm_rows(builder: RelationBuilder, relation: Relation) -> _Rows:
    """The rows of the ORM relationship named like the relation (or by the naming
    convention), read under an alias and joined by the relationship's own join condition."""
    path = builder.path + relation.name
    attributes = builder.attributes
    prop = attributes.relationship(builder.target, builder.path, relation.name)
    if prop is None:
        if builder.target is None or isinstance(builder.target, Mapping | FromClause):
            raise ValueError(
                f"the relation {path!r} needs its related table: "
                f"relations={{{path!r}: table_or_model}}, or an ORM class as the target"
            )
        tried = attributes.names(path, relation.name)
        _refuse_proxy(builder.target, path, tried)
        message = attributes.missing(
            builder.target, path, relation.name, tried, "relationship for relation"
        )
        raise ValueError(f"{message}; or give relations={{{path!r}: table_or_model}}")
    related = aliased(prop.entity)
    selectable = inspect(related).selectable
    source, join = _joined(prop, inspect(builder.target).selectable, selectable)
    join = _subclass_rows(join, prop.mapper, selectable)
    found = attributes.lookup(related, path + ".", dict(relation.columns))
    return _Rows(source, join, _adapted(found, selectable), related)


def _subclass_rows(join: Expression, mapped: Any, selectable: FromClause) -> Expression:
    """`join` narrowed to the rows of the related class, where it is a subclass sharing its
    table with others (single-table inheritance: `BuyAction(Action)` with
    `polymorphic_identity="buy"`): its discriminator test, as SQLAlchemy's own `any()` adds it
    (the mapper's `_single_table_criterion`), read on the alias the subquery reads. A joined
    subclass's rows are those of its own table, an inner join already; a concrete one's its
    own table."""
    mapper = getattr(mapped, "mapper", None)
    criterion = None if mapper is None else mapper._single_table_criterion
    if criterion is None:
        return join
    return cast(Expression, join & ClauseAdapter(selectable).traverse(criterion))


def _refuse_proxy(target: Any, path: str, tried: list[str]) -> None:
    """Refuse an association proxy named like the relation: it is no relationship of its
    own, and the fix is the relationship it goes through."""
    for name in tried:
        proxy = getattr(target, name, None)
        if isinstance(proxy, AssociationProxyInstance):
            through = proxy.target_collection
            raise ValueError(
                f"{describe(target)}.{name} (relation {path!r}) is an association proxy (to "
                f"{through}.{proxy.value_attr}), not a relationship; follow the relationship "
                f"it goes through: columns={{{path!r}: {describe(target)}.{through}}}"
            )


def _joined(prop: Any, outer: FromClause, inner: FromClause) -> tuple[FromClause, Expression]:
    """The related rows of the relationship `prop` (`inner`, an alias of its table) joined
    to the row `outer` (the target's table, or its alias for an `aliased()` target), by the
    relationship's own conditions: `primaryjoin` between the two (which side a column is on
    read from `remote_side` when the table is related to itself), and for a `secondary`
    table, under an alias of its own, `secondaryjoin` between it and the related rows."""
    if prop.secondary is None:
        remote = set(prop.remote_side)
        join = _replaced(prop.primaryjoin, lambda c: inner if c in remote else outer)
        return inner, join
    link = prop.secondary.alias()
    linked = set(prop.secondary.c)
    primary = _replaced(prop.primaryjoin, lambda c: link if c in linked else outer)
    secondary = _replaced(prop.secondaryjoin, lambda c: link if c in linked else inner)
    return inner.join(link, secondary), primary


def _replaced(
    condition: ColumnElement[Any], side: Callable[[ColumnElement[Any]], FromClause]
) -> Expression:
    """`condition` with each table column replaced by the same column of the FROM clause
    `side` gives for it."""

    def replace(element: Any, **kw: Any) -> Any:
        if isinstance(element, ColumnClause) and element.table is not None:
            return side(element).corresponding_column(element)
        return None

    return cast(Expression, replacement_traverse(condition, {}, replace))


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
