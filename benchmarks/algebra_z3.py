"""The algebra's questions asked of the SMT solver z3, for a measured comparison with the own
procedure (`python -m benchmarks.algebra --z3`, docs/algebra.md#z3-measured).

Only what z3 encodes directly is asked: comparisons of a column with literals (numbers as reals,
strings with `startsWith`/`endsWith`/`contains` and code-point order, booleans, date-times as
integer microseconds), `in`/`notIn`, and null tests, with a field's null as a separate boolean.
A condition is a pair of formulas, "is TRUE" and "is FALSE" (Kleene's rules: a comparison of a
null is neither). `a implies b` is "`a` TRUE and `b` not TRUE" unsatisfiable; `a overlaps b` is
"both TRUE" satisfiable. A case-insensitive pattern is encoded only when its literal holds no
letter (folding cannot change what it finds); anything else is not encoded, and the call counts
as undecided. A model is a witness only once `matches` accepts it, as for the own procedure.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any

import z3

import audiencefilter as af
from audiencefilter.language.fields import FieldType, Op
from audiencefilter.language.nodes import And, Comparison, Const, IsNull, Node, Not, Or

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TIMEOUT_MS = 10_000


class Unsupported(Exception):
    """A condition the encoding leaves to the own procedure."""


class Encoder:
    """The formulas of lowered trees over one schema; each field a null boolean and a value."""

    def __init__(self, schema: af.Schema) -> None:
        self.schema = schema
        self.fields: dict[str, tuple[Any, Any, FieldType]] = {}

    def field(self, name: str) -> tuple[Any, Any, FieldType]:
        found = self.fields.get(name)
        if found is None:
            declared = self.schema.get(name)
            if declared is None:
                raise Unsupported(f"unknown field {name}")
            kind = declared.type
            sorts = {
                FieldType.NUMBER: z3.Real,
                FieldType.STRING: z3.String,
                FieldType.BOOLEAN: z3.Bool,
                FieldType.DATETIME: z3.Int,
            }
            if kind not in sorts:
                raise Unsupported(f"{kind.value} fields")
            found = self.fields[name] = (z3.Bool(f"{name}?null"), sorts[kind](name), kind)
        return found

    def node(self, node: Node) -> tuple[Any, Any]:
        """(is TRUE, is FALSE) of `node`."""
        if isinstance(node, Const):
            return z3.BoolVal(node.value), z3.BoolVal(not node.value)
        if isinstance(node, Not):
            true, false = self.node(node.item)
            return false, true
        if isinstance(node, And | Or):
            parts = [self.node(item) for item in node.items]
            trues, falses = [p[0] for p in parts], [p[1] for p in parts]
            if isinstance(node, And):
                return z3.And(*trues), z3.Or(*falses)
            return z3.Or(*trues), z3.And(*falses)
        if isinstance(node, IsNull) and not node.path:
            null = self.field(node.field)[0]
            return null, z3.Not(null)
        if isinstance(node, Comparison) and not node.path:
            null, value, kind = self.field(node.field)
            held = self._relation(node, value, kind)
            return z3.And(z3.Not(null), held), z3.And(z3.Not(null), z3.Not(held))
        raise Unsupported(node.kind)

    def _relation(self, node: Comparison, value: Any, kind: FieldType) -> Any:
        literals = node.value if isinstance(node.value, tuple) else (node.value,)
        if any(v is None for v in literals):
            raise Unsupported("a null literal")
        if node.insensitive and not all(
            isinstance(v, str) and not any(c.isalpha() for c in v) for v in literals
        ):
            raise Unsupported("a case-insensitive literal holding letters")
        constants = [_constant(v, kind) for v in literals]
        op = node.op
        if op is Op.IN:
            return z3.Or(*(value == c for c in constants))
        if op is Op.NOT_IN:
            return z3.And(*(value != c for c in constants))
        (constant,) = constants
        if op is Op.EQUALS:
            return value == constant
        if kind is FieldType.STRING and op in _PATTERNS:
            return _PATTERNS[op](constant, value)
        if kind is FieldType.BOOLEAN or op not in _ORDERS:
            raise Unsupported(f"{op.value} on {kind.value}")
        return _ORDERS[op](value, constant)

    def record(self, model: Any) -> dict[str, Any]:
        """The model as a record: a field whose null is true is left out, one the model does
        not mention takes no value either."""
        found: dict[str, Any] = {}
        for name, (null, value, kind) in self.fields.items():
            if z3.is_true(model.eval(null, model_completion=True)):
                continue
            found[name] = _python(model.eval(value, model_completion=True), kind)
        return found


_PATTERNS = {
    Op.STARTS_WITH: z3.PrefixOf,
    Op.ENDS_WITH: z3.SuffixOf,
    Op.CONTAINS: lambda literal, value: z3.Contains(value, literal),
}
_ORDERS = {
    Op.GT: lambda a, b: a > b,
    Op.GTE: lambda a, b: a >= b,
    Op.LT: lambda a, b: a < b,
    Op.LTE: lambda a, b: a <= b,
}


def _constant(value: Any, kind: FieldType) -> Any:
    if kind is FieldType.NUMBER and isinstance(value, int | float) and not isinstance(value, bool):
        return z3.RealVal(Fraction(value))
    if kind is FieldType.STRING and isinstance(value, str):
        return z3.StringVal(value)
    if kind is FieldType.BOOLEAN and isinstance(value, bool):
        return z3.BoolVal(value)
    if kind is FieldType.DATETIME and isinstance(value, datetime):
        return z3.IntVal((value - EPOCH) // timedelta(microseconds=1))
    raise Unsupported(f"literal {value!r} of a {kind.value} field")


def _python(value: Any, kind: FieldType) -> Any:
    if kind is FieldType.NUMBER:
        fraction = value.as_fraction()
        return int(fraction) if fraction.denominator == 1 else float(fraction)
    if kind is FieldType.STRING:
        return value.as_string()
    if kind is FieldType.BOOLEAN:
        return z3.is_true(value)
    return EPOCH + timedelta(microseconds=value.as_long())


def ask(a: af.Filter, b: af.Filter, question: str) -> bool | None:
    """`implies` or `overlaps` through z3: the answer, or None (not encoded, the solver gave
    up, or its model failed the check)."""
    encoder = Encoder(a.schema)
    try:
        true_a = encoder.node(a.lowered_at())[0]
        true_b = encoder.node(b.lowered_at())[0]
    except Unsupported:
        return None
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    solver.add(true_a, z3.Not(true_b) if question == "implies" else true_b)
    found = solver.check()
    if found == z3.unsat:
        return question == "implies"
    if found != z3.sat:
        return None
    record = encoder.record(solver.model())
    if not _checked(a, b, question, record):
        return None
    return question != "implies"


def _checked(a: af.Filter, b: af.Filter, question: str, record: Mapping[str, Any]) -> bool:
    try:
        return bool(a.matches(record)) and (bool(b.matches(record)) == (question == "overlaps"))
    except Exception:  # noqa: BLE001 - a record the library refuses is no witness
        return False
