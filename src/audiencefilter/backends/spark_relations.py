"""Relation conditions as PySpark Columns: higher-order functions over an array of structs.

A relation's column is an ARRAY of STRUCT, one struct per related row (`frame_for` builds one):

    actions some (W)         coalesce(exists(actions, r -> coalesce(W(r), false)), false)
    actions every (W)        coalesce(forall(actions, r -> coalesce(W(r), false)), true)
    count(actions where W)   coalesce(size(filter(actions, r -> W(r))), 0)
    sum(actions.increase)    aggregate(transform(filter(...), r -> r.increase), 0,
                                       (s, v) -> s + coalesce(v, 0))
    max(actions.createdAt)   array_max(transform(filter(...), r -> r.createdAt))

W is built by the Spark visitor itself with each related field read from the lambda's
element, typed by the struct's field types, so every comparison rule is the scalar
conditions'; an aggregate's test is built by the same visitor over the aggregate's Column.
A NULL array is no related rows. `array_min`/`array_max` skip NULLs and are NULL over none,
as `min`/`max` are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..language.fields import Schema
from ..language.nodes import Aggregated, ListTest, Node, Quantified, walk
from ..language.relations import (
    Aggregate,
    Quantifier,
    Relation,
    refused_nested,
    relation_of,
    value_schema,
)
from .spark_types import _INT_RANGES, CANONICAL, EXACT_SUM, field_values
from .sql.dialects import DIALECTS
from .sql.text import SqlWriter


class ColumnWalker(Protocol):
    """What relation conditions need of the Spark walker that meets them (`spark.py`
    implements it and passes itself in, so this module never imports its host)."""

    schema: Schema
    dtypes: Mapping[str, Any]
    columns: Mapping[str, str]
    column_of: Callable[..., Any] | None

    def visit(self, node: Node) -> Column: ...

    def column(self, field: str) -> Column: ...

    def over(
        self, schema: Schema, dtypes: Mapping[str, Any], column_of: Callable[[str], Column]
    ) -> ColumnWalker:
        """A walker of the same rules whose fields are read by `column_of`."""
        ...


def _struct_dtypes(relation: Relation, dtype: Any) -> dict[str, Any]:
    found: dict[str, Any] = {f.name: CANONICAL[f.type] for f in relation.schema.fields}
    if dtype is None:
        return found
    element = getattr(dtype, "elementType", None)
    if not isinstance(dtype, T.ArrayType) or not isinstance(element, T.StructType):
        raise TypeError(
            f'column "{relation.name}" for relation "{relation.name}" is {dtype}; expected an '
            "ARRAY of STRUCT, one struct per related row"
        )
    found.update({f.name: f.dataType for f in element.fields if f.name in found})
    return found


def _rows(outer: ColumnWalker, node: Quantified | Aggregated) -> tuple[Relation, Column, Any, Any]:
    if outer.column_of is not None:  # a related row's walker: a relation inside one
        raise refused_nested("PySpark", node.relation)
    relation = relation_of(outer.schema, node.relation)
    name = outer.columns.get(relation.name, relation.name)
    dtypes = _struct_dtypes(relation, outer.dtypes.get(name))

    def test(where: Node) -> Any:
        def holds(element: Column) -> Column:
            built = outer.over(relation.schema, dtypes, element.getField).visit(where)
            return F.coalesce(built, F.lit(False))

        return holds

    return relation, outer.column(relation.name), dtypes, test


_ROW = "__row"


def _written_in_sql(outer: ColumnWalker, relation: Relation, where: Node) -> str | None:
    """W as a Spark SQL lambda over the related row, when W reads a list field or a JSON path.

    Those tests are the Spark SQL dialect's own (one place for their rules), written as SQL
    text naming their column. Inside a PySpark lambda such text would name the CONTACT's
    column; inside a SQL lambda it names the row's (`__row`.`tags`).
    """
    if not any(isinstance(n, ListTest) or getattr(n, "path", ()) for n in walk(where)):
        return None
    writer = SqlWriter(DIALECTS["spark"], relation.schema, {}, None)
    writer.table, writer.qualify = _ROW, True
    return f"{_ROW} -> coalesce({writer.visit(where)}, false)"


def _array_sql(outer: ColumnWalker, relation: Relation) -> str:
    return DIALECTS["spark"].quote(outer.columns.get(relation.name, relation.name))


def quantified_column(outer: ColumnWalker, node: Quantified) -> Column:
    relation, rows, _, test = _rows(outer, node)
    lambda_sql = _written_in_sql(outer, relation, node.where)
    function = "forall" if node.quantifier is Quantifier.EVERY else "exists"
    if lambda_sql is not None:
        tested = F.expr(f"{function}({_array_sql(outer, relation)}, {lambda_sql})")
    else:
        tested = (F.forall if function == "forall" else F.exists)(rows, test(node.where))
    if node.quantifier is Quantifier.EVERY:
        return F.coalesce(tested, F.lit(True))
    found = F.coalesce(tested, F.lit(False))
    return found if node.quantifier in (Quantifier.SOME, Quantifier.IS) else ~found


def aggregated_column(outer: ColumnWalker, node: Aggregated) -> Column:
    relation, rows, dtypes, test = _rows(outer, node)
    lambda_sql = _written_in_sql(outer, relation, node.where)
    if lambda_sql is not None:
        kept = F.expr(f"filter({_array_sql(outer, relation)}, {lambda_sql})")
    else:
        kept = F.filter(rows, test(node.where))
    value: Column
    dtype: Any
    if node.function is Aggregate.COUNT:
        value = F.when(rows.isNull(), F.lit(0)).otherwise(F.size(kept)).cast("bigint")
        dtype = T.LongType()
    else:
        dtype = dtypes[node.field]
        values = F.transform(kept, lambda element: element.getField(node.field))
        if node.function is Aggregate.SUM:
            if type(dtype) in _INT_RANGES:  # exact past 64 bits, as every engine's sum is
                dtype = EXACT_SUM
                values = F.transform(values, lambda v: v.cast(EXACT_SUM))
            zero = F.lit(0).cast(dtype)
            total = F.aggregate(values, zero, lambda acc, v: acc + F.coalesce(v, zero))
            value = F.coalesce(total, zero)
        elif node.function is Aggregate.MIN:
            value = F.array_min(values)
        else:
            value = F.array_max(values)
    schema = value_schema(relation, node.function, node.field)
    return outer.over(schema, {node.field: dtype}, lambda _field: value).visit(node.test)


def related_values(
    records: list[Mapping[str, Any]], relation: Relation
) -> tuple[list[Any], T.DataType]:
    """A relation's values of `records` and its column type, for `frame_for`: each row's fields
    converted as a frame's columns are (`field_values`)."""
    rows_of = []
    for record in records:
        rows = record.get(relation.name)
        rows_of.append(None if rows is None else [rows] if isinstance(rows, Mapping) else rows)
    flat = [row for rows in rows_of if rows for row in rows]
    data, types = field_values(flat, relation.schema)
    names = [f.name for f in relation.schema.fields]
    converted = iter(list(zip(*(data[name] for name in names), strict=True)))
    values = [None if rows is None else [next(converted) for _ in rows] for rows in rows_of]
    struct = T.StructType([T.StructField(name, types[name], True) for name in names])
    return values, T.ArrayType(struct, True)
