"""In-memory evaluation: the AST compiled once into one Python function over a record.

Design choices:
- Three-valued logic without a third value at run time. Each node compiles to two plain
  boolean expressions, "is TRUE" and "is FALSE"; `NOT` swaps them, and UNKNOWN is simply
  neither. De Morgan holds in Kleene logic, so `AND`'s FALSE is "any item FALSE" and so on.
  The record is in the audience when the root is TRUE.
- The function is built with the `ast` module: literals become `ast.Constant` nodes and other
  values (sets, date-times) are bound as names in the function's namespace. No value is ever
  formatted into source text, so no value can change the code.
- Each comparison reads its field once, with `record.get`, into a local (`:=`).
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ..fields import FieldType, Op, Schema
from ..nodes import And, Comparison, Const, IsNull, Node, Not, Or
from ..values import fold, record_datetime

Record = Mapping[str, Any]
Predicate = Callable[[Record], bool]

_ORDER = {Op.GT: ast.Gt, Op.GTE: ast.GtE, Op.LT: ast.Lt, Op.LTE: ast.LtE, Op.EQUALS: ast.Eq}
_RECORD = "record"


class RecordError(TypeError):
    """A record holds a value of the wrong type for a field the filter reads."""


def compile_node(root: Node, schema: Schema) -> Predicate:
    """A predicate that is true exactly when `root` is TRUE for a record.

    A record whose value has the wrong type for its field raises `RecordError` naming the field;
    the `try` costs nothing on the normal path.
    """
    builder = _Builder(schema)
    body = builder.true(root)

    def record_error(record: Record) -> bool:
        raise RecordError(_diagnose(record, root, schema))

    builder.bound["_record_error"] = record_error
    guarded = ast.Try(
        body=[ast.Return(value=body)],
        handlers=[
            ast.ExceptHandler(
                type=ast.Tuple(elts=[ast.Name(n, ast.Load()) for n in _CAUGHT], ctx=ast.Load()),
                name=None,
                body=[
                    ast.Return(
                        value=ast.Call(
                            func=ast.Name("_record_error", ast.Load()),
                            args=[ast.Name(_RECORD, ast.Load())],
                            keywords=[],
                        )
                    )
                ],
            )
        ],
        orelse=[],
        finalbody=[],
    )
    function = ast.FunctionDef(
        name="audience_filter",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=_RECORD)],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        ),
        body=[guarded],
        decorator_list=[],
        type_params=[],
    )
    module = ast.fix_missing_locations(ast.Module(body=[function], type_ignores=[]))
    namespace: dict[str, Any] = dict(builder.bound)
    exec(compile(module, "<audiencefilter>", "exec"), namespace)
    predicate: Predicate = namespace["audience_filter"]
    return predicate


_CAUGHT = ("TypeError", "AttributeError", "ValueError")


def _diagnose(record: Record, root: Node, schema: Schema) -> str:
    from ..nodes import fields_used

    expected = {
        FieldType.STRING: str,
        FieldType.NUMBER: (int, float),
        FieldType.BOOLEAN: bool,
        FieldType.DATETIME: (datetime, str),
    }
    for name in sorted(fields_used(root)):
        value = record.get(name) if isinstance(record, Mapping) else None
        kind = schema[name].type
        if value is None:
            continue
        if not isinstance(value, expected[kind]) or (
            kind is FieldType.NUMBER and isinstance(value, bool)
        ):
            return f'field "{name}" holds {type(value).__name__} {value!r}; expected {kind.value}'
        if kind is FieldType.DATETIME:
            try:
                record_datetime(value)
            except (TypeError, ValueError) as exc:
                return f'field "{name}": {exc}'
    if not isinstance(record, Mapping):
        return f"a record must be a mapping of field names to values, not {type(record).__name__}"
    return "a record value has the wrong type for its field"


class _Builder:
    """Builds the "is TRUE" / "is FALSE" expressions of each node."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.bound: dict[str, Any] = {"_as_instant": _as_instant, "_datetime": datetime}
        self.names = itertools.count()

    def true(self, node: Node) -> ast.expr:
        return self.build(node, True)

    def build(self, node: Node, want: bool) -> ast.expr:
        """An expression that holds when `node` evaluates to `want` (TRUE or FALSE)."""
        if isinstance(node, Const):
            return ast.Constant(node.value is want)
        if isinstance(node, Not):
            return self.build(node.item, not want)
        if isinstance(node, And | Or):
            # AND is TRUE when all items are; FALSE when any item is. OR the other way round.
            all_needed = isinstance(node, And) is want
            op: ast.boolop = ast.And() if all_needed else ast.Or()
            return ast.BoolOp(op=op, values=[self.build(item, want) for item in node.items])
        if isinstance(node, IsNull):
            compare: ast.cmpop = ast.Is() if want else ast.IsNot()
            return ast.Compare(
                left=self.read(node.field), ops=[compare], comparators=[ast.Constant(None)]
            )
        return self.comparison(node, want)

    def read(self, field: str) -> ast.expr:
        return ast.Call(
            func=ast.Attribute(value=ast.Name(_RECORD, ast.Load()), attr="get", ctx=ast.Load()),
            args=[ast.Constant(field)],
            keywords=[],
        )

    def bind(self, value: Any) -> ast.expr:
        name = f"_k{next(self.names)}"
        self.bound[name] = value
        return ast.Name(name, ast.Load())

    def comparison(self, node: Comparison, want: bool) -> ast.expr:
        if node.op in (Op.IN, Op.NOT_IN) and not node.value:
            # `in: []` is FALSE and `notIn: []` TRUE for every record, null ones included.
            return ast.Constant((node.op is Op.NOT_IN) is want)
        local = f"_v{next(self.names)}"
        present = ast.Compare(
            left=ast.NamedExpr(target=ast.Name(local, ast.Store()), value=self.read(node.field)),
            ops=[ast.IsNot()],
            comparators=[ast.Constant(None)],
        )
        test = self.test(node, ast.Name(local, ast.Load()))
        if not want:
            test = ast.UnaryOp(op=ast.Not(), operand=test)
        return ast.BoolOp(op=ast.And(), values=[present, test])

    def test(self, node: Comparison, value: ast.expr) -> ast.expr:
        """The comparison itself, for a value known not to be null."""
        kind = self.schema[node.field].type
        constant: Any = node.value
        if kind is FieldType.DATETIME:
            value = self.instant(value)
        if node.insensitive:
            value = _call_method(value, "lower")
            constant = (
                tuple(fold(v) for v in constant)
                if node.op in (Op.IN, Op.NOT_IN)
                else fold(constant)
            )
        op = node.op
        if op in (Op.IN, Op.NOT_IN):
            compare: ast.cmpop = ast.In() if op is Op.IN else ast.NotIn()
            return ast.Compare(
                left=value, ops=[compare], comparators=[self.bind(frozenset(constant))]
            )
        if op is Op.CONTAINS:
            return ast.Compare(left=self.literal(constant), ops=[ast.In()], comparators=[value])
        if op in (Op.STARTS_WITH, Op.ENDS_WITH):
            method = "startswith" if op is Op.STARTS_WITH else "endswith"
            return _call_method(value, method, self.literal(constant))
        return ast.Compare(left=value, ops=[_ORDER[op]()], comparators=[self.literal(constant)])

    def literal(self, value: Any) -> ast.expr:
        if isinstance(value, str | int | float | bool):
            return ast.Constant(value)
        return self.bind(value)

    def instant(self, value: ast.expr) -> ast.expr:
        """An aware datetime passes through; anything else is normalized by a helper call."""
        is_aware = ast.BoolOp(
            op=ast.And(),
            values=[
                ast.Compare(
                    left=ast.Attribute(value=value, attr="__class__", ctx=ast.Load()),
                    ops=[ast.Is()],
                    comparators=[ast.Name("_datetime", ast.Load())],
                ),
                ast.Compare(
                    left=ast.Attribute(value=value, attr="tzinfo", ctx=ast.Load()),
                    ops=[ast.IsNot()],
                    comparators=[ast.Constant(None)],
                ),
            ],
        )
        normalized = ast.Call(func=ast.Name("_as_instant", ast.Load()), args=[value], keywords=[])
        return ast.IfExp(test=is_aware, body=value, orelse=normalized)


def _call_method(target: ast.expr, method: str, *args: ast.expr) -> ast.expr:
    return ast.Call(
        func=ast.Attribute(value=target, attr=method, ctx=ast.Load()), args=list(args), keywords=[]
    )


def _as_instant(value: object) -> datetime:
    return record_datetime(value)
