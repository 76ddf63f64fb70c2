"""Relation conditions in polars: a relation's column is a List of Struct, one struct per
related row, and each condition is a list expression over it.

    actions some (W)         col("actions").list.eval(W).list.any()      (null list: FALSE)
    actions none (W)         ~ the same
    actions every (W)        col("actions").list.eval(W).list.all()      (null list: TRUE)
    count(actions where W)   col("actions").list.eval(W).list.sum()      (null list: 0)
    sum(actions.increase)    col("actions").list.eval(when(W).then(increase)).list.sum()
    max(actions.createdAt)   ... .list.max()                             (no value: null)

Design choices:
- W is built by the columnar visitor itself with each related field read from the list's
  element (`pl.element().struct.field(name)`) and typed by the struct's field types, so every
  comparison rule (exact numbers, date-time ticks, case folding) is the scalar conditions' own.
  W's UNKNOWN counts as not TRUE (`fill_null(False)`), as semantics.md says.
- An aggregate's test is built by the same visitor over one "column", the aggregate
  expression, of the aggregate's type: `count >= 3` is the ordinary number comparison.
- A missing relation column is an error (the frame does not fit the filter); a null list is no
  related rows, as a missing key is in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import polars as pl

from ..errors import FrameError
from ..language.fields import FieldType, Schema
from ..language.nodes import Aggregated, Const, Node, Quantified
from ..language.relations import (
    Aggregate,
    Quantifier,
    Relation,
    refused_nested,
    relation_of,
    value_schema,
)
from .columnar_types import CANONICAL, field_columns


class FrameWalker(Protocol):
    """What relation conditions need of the columnar walker that meets them (`columnar.py`
    implements it and passes itself in, so this module never imports its host)."""

    schema: Schema
    dtypes: Mapping[str, Any]
    columns: Mapping[str, str]
    column_of: Callable[..., Any] | None

    def visit(self, node: Node) -> pl.Expr: ...

    def over(
        self, schema: Schema, dtypes: Mapping[str, Any], column_of: Callable[[str], pl.Expr]
    ) -> FrameWalker:
        """A walker of the same rules whose fields are read by `column_of`."""
        ...


def _struct_dtypes(relation: Relation, dtype: Any) -> dict[str, Any]:
    found: dict[str, Any] = {f.name: CANONICAL[f.type] for f in relation.schema.fields}
    if dtype is None:
        return found
    inner = getattr(dtype, "inner", None)
    if not isinstance(dtype, pl.List) or not isinstance(inner, pl.Struct):
        raise FrameError(
            f'column "{relation.name}" for relation "{relation.name}" is {dtype}; expected a '
            "List of Struct, one struct per related row"
        )
    found.update({f.name: f.dtype for f in inner.fields if f.name in found})
    return found


class _Rows:
    """The related rows of one relation condition: the list column and the row test."""

    def __init__(self, outer: FrameWalker, node: Quantified | Aggregated) -> None:
        if outer.column_of is not None:  # a related row's walker: a relation inside one
            raise refused_nested("polars", node.relation)
        self.relation = relation_of(outer.schema, node.relation)
        name = outer.columns.get(self.relation.name, self.relation.name)
        self.list = pl.col(name)
        self.dtypes = _struct_dtypes(self.relation, outer.dtypes.get(name))
        self.builder = outer.over(self.relation.schema, self.dtypes, _struct_field)

    def test(self, where: Node) -> pl.Expr:
        """W for each element, TRUE or FALSE (UNKNOWN is not TRUE)."""
        if isinstance(where, Const):  # an element-wise constant, never null
            element = pl.element().is_null()
            return (element | True) if where.value else (element & False)
        return self.builder.visit(where).fill_null(False)

    def field(self, name: str) -> pl.Expr:
        return pl.element().struct.field(name)


def _struct_field(name: str) -> pl.Expr:
    return pl.element().struct.field(name)


def quantified_expression(outer: FrameWalker, node: Quantified) -> pl.Expr:
    rows = _Rows(outer, node)
    tests = rows.list.list.eval(rows.test(node.where))
    if node.quantifier is Quantifier.EVERY:
        return tests.list.all().fill_null(True)
    found = tests.list.any().fill_null(False)
    return found if node.quantifier in (Quantifier.SOME, Quantifier.IS) else ~found


def aggregated_expression(outer: FrameWalker, node: Aggregated) -> pl.Expr:
    rows = _Rows(outer, node)
    value: pl.Expr
    kind = FieldType.NUMBER
    if node.function is Aggregate.COUNT:
        value = rows.list.list.eval(rows.test(node.where)).list.sum().fill_null(0)
        dtype: Any = pl.Int64
        value = value.cast(pl.Int64)
    else:
        kind = rows.relation.schema[node.field].type
        dtype = rows.dtypes[node.field]
        field = rows.field(node.field)
        if node.function is Aggregate.SUM and dtype.is_integer():
            dtype, field = pl.Int128, field.cast(pl.Int128)  # exact past 64 bits, no wrapping
        picked = pl.when(rows.test(node.where)).then(field)
        listed = rows.list.list.eval(picked)
        if node.function is Aggregate.SUM:
            value = listed.list.sum().fill_null(0)
        elif node.function is Aggregate.MIN:
            value = listed.list.min()
        else:
            value = listed.list.max()
    values: Schema = value_schema(rows.relation, node.function, node.field)
    assert values[node.field].type is kind
    return outer.over(values, {node.field: dtype}, lambda _field: value).visit(node.test)


def related_column(
    records: list[Mapping[str, Any]], relation: Relation
) -> tuple[list[Any], pl.DataType]:
    """A relation's values of `records` and its column type, for `frame_for`: each row's fields
    converted as a frame's columns are (`field_columns`), floats where a number field holds one."""
    rows_of = []
    for record in records:
        rows = record.get(relation.name)
        rows_of.append(None if rows is None else [rows] if isinstance(rows, Mapping) else rows)
    flat = [row for rows in rows_of if rows for row in rows]
    data, types = field_columns(flat, relation.schema)
    converted = iter(
        [dict(zip(data, values, strict=True)) for values in zip(*data.values(), strict=True)]
    )
    values = [None if rows is None else [next(converted) for _ in rows] for rows in rows_of]
    return values, pl.List(pl.Struct(types))
