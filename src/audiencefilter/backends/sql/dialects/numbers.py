"""How a number inside JSON compares with a literal: the one home of that rule for every engine
(`Dialect.json_number`, docs/semantics.md "Numbers").

A JSON number is read as memory reads the JSON text (Python's `json`): an integer as the exact
integer, a number with a fraction or an exponent as the double nearest it. Each engine keeps
JSON numbers its own way, so each reads them its own way, but every comparison with the
literal is then exact: no literal is rounded to meet the value.

- `exact_test`: the value is exact (an integer, or a decimal), compared as the literal is
  written for a number column (`Dialect.number`).
- `double_test`: the value is a double, compared with the literal as a double compares with
  any number (`values.double_bound`): an integer no double holds equals none and orders like
  the doubles around it.

Each test writes the value (`value()`, which may hold placeholders) and the literals in the
order they appear in the text, so parameters stay in step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ....language.fields import Op
from ....language.values import double_bound, double_exact

SIGNS = {Op.EQUALS: "=", Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}


class NumberWriter(Protocol):
    """The writer's number literals: inlined, or placeholders with the value appended."""

    def number(self, value: Any) -> str: ...

    def double(self, value: float) -> str:
        """A literal of the double `value`, typed as a double (never a decimal)."""
        ...


def exact_test(out: NumberWriter, op: Op, value: Callable[[], str], literal: Any) -> str:
    """`value() op literal`, the literal written exactly."""
    if op in (Op.IN, Op.NOT_IN):
        subject = value()
        items = ", ".join([out.number(v) for v in literal])
        return f"{subject} {'IN' if op is Op.IN else 'NOT IN'} ({items})"
    return f"{value()} {SIGNS[op]} {out.number(literal)}"


def double_test(
    out: NumberWriter, op: Op, value: Callable[[], str], literal: Any, constants: Sequence[str]
) -> str:
    """`value() op literal` for a value held as a double; `constants` are the engine's FALSE
    and TRUE, the answer where it does not depend on the (present) value."""
    if op in (Op.IN, Op.NOT_IN):
        doubles = list(dict.fromkeys(float(v) for v in literal if double_exact(v)))
        if not doubles:
            return constants[op is Op.NOT_IN]
        subject = value()
        items = ", ".join([out.double(v) for v in doubles])
        return f"{subject} {'IN' if op is Op.IN else 'NOT IN'} ({items})"
    bound = double_bound(op, literal)
    if isinstance(bound, bool):
        return constants[bound]
    compared, number = bound
    if math.isinf(number):  # a JSON number is finite: beyond every double, or below every one
        return constants[compared is Op.LT if number > 0 else compared is Op.GT]
    return f"{value()} {SIGNS[compared]} {out.double(number)}"
