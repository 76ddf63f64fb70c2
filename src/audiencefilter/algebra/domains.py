"""Representative values of one field: finitely many values that stand for every value a record
can hold there, as far as a set of conditions on that field can tell.

Why representatives: each modelled condition compares the field with literals, so its truth is
the same for every value between two neighbouring literals (numbers, strings in code-point
order, instants and days are totally ordered), at each literal, and for null. Picking one value
per region and asking the in-memory back-end (the oracle) about it decides a conjunction of such
conditions exactly; a region whose representative cannot be built makes the set `complete=False`
(then no proof is drawn from it, only witnesses).

Numbers are read twice: a double record value compares with a literal's double, an exact one
(`int`, `Decimal`) with the literal's numeral (`values.decimal_literal`), so the regions of
both are represented. A value on which the oracle raises (a decimal NaN) holds no record.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, localcontext
from itertools import combinations
from typing import Any

from ..language.fields import ORDERING_OPS, FieldType, ListOp, Op
from ..language.nodes import Comparison, IsNull, ListTest, Node
from ..language.values import decimal_literal, fold

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
"""A field left out of the record (as opposed to present and null)."""
_ORDERED = frozenset({Op.EQUALS, Op.IN, Op.NOT_IN}) | ORDERING_OPS
_SCALARS = (
    FieldType.NUMBER,
    FieldType.STRING,
    FieldType.BOOLEAN,
    FieldType.DATETIME,
    FieldType.DATE,
)
_LIST_OPS = frozenset({ListOp.HAS, ListOp.HAS_SOME, ListOp.HAS_EVERY, ListOp.IS_EMPTY})
_MAX_SUBSETS = 5


@dataclass(frozen=True)
class Candidates:
    """Values for one field; `complete`: every value a record can hold behaves as one of them
    under the conditions they were built for."""

    values: tuple[Any, ...]
    complete: bool


def modelled(node: Node, kind: FieldType | None) -> bool:
    """Whether `node` is a condition on one column whose regions `candidates` represents."""
    if kind is None or (isinstance(node, Comparison | IsNull | ListTest) and node.path):
        return False
    if isinstance(node, IsNull):
        return kind in _SCALARS or kind.element is not None
    if isinstance(node, ListTest):
        return kind.element is not None
    if isinstance(node, Comparison) and kind in _SCALARS:
        values = node.value if isinstance(node.value, tuple) else (node.value,)
        return all(isinstance(v, str | int | float | bool | date) for v in values)
    return False


def candidates(kind: FieldType, atoms: Sequence[Node], demanded: Sequence[Node]) -> Candidates:
    """Representatives of a field of type `kind` under `atoms` (all `modelled`); `demanded`:
    those of them a branch demands TRUE (an `equals` among them bounds the values)."""
    builder = _BUILDERS.get(kind)
    if builder is None:
        if kind.element is None:
            return Candidates((MISSING, None), False)
        found = _lists(kind.element, [a for a in atoms if isinstance(a, ListTest)])
    else:
        compared = [a for a in atoms if isinstance(a, Comparison)]
        finite = _finite_strings(compared, demanded) if kind is FieldType.STRING else None
        found = finite or builder(compared)
    return Candidates((*found.values, None, MISSING), found.complete)


def _literals(atoms: Iterable[Comparison]) -> list[Any]:
    found: list[Any] = []
    for atom in atoms:
        found.extend(atom.value if isinstance(atom.value, tuple) else (atom.value,))
    return found


def _between(
    points: Sequence[Any],
    step: Callable[[Any, Any], Any | None],
    outside: Callable[[Any, int], Any],
) -> Candidates:
    """The points, one value strictly between each neighbouring pair (`step(low, high)`, None
    when none was found), one below and one above."""
    ordered = sorted(set(points))
    if not ordered:
        return Candidates((), True)
    found: list[Any] = list(ordered)
    complete = True
    for low, high in zip(ordered, ordered[1:], strict=False):
        middle = step(low, high)
        if middle is None:
            complete = False
        elif middle is not False:
            found.append(middle)
    for end, direction in ((ordered[0], -1), (ordered[-1], 1)):
        try:
            found.append(outside(end, direction))
        except (OverflowError, ValueError):
            complete = False
    return Candidates(tuple(found), complete)


def _numbers(atoms: list[Comparison]) -> Candidates:
    literals = [v for v in _literals(atoms) if not isinstance(v, bool)]
    if len(literals) != len(_literals(atoms)) or not all(
        isinstance(v, int | float) for v in literals
    ):
        return Candidates((0, 1), False)
    exact = _between([decimal_literal(v) for v in literals], _decimal_step, _decimal_out)
    points = _double_points(literals)
    doubles = _between(points or [], _float_step, _float_out)
    extra = (0, math.nan, math.inf, -math.inf)
    values = (*(s for v in exact.values for s in _spellings(v)), *doubles.values, *extra)
    complete = exact.complete and doubles.complete and points is not None
    return Candidates(values, complete and all(_finite(v) for v in literals))


def _double_points(literals: list[int | float]) -> list[float] | None:
    """The doubles at each literal, and around an integer no double holds (a double record
    value compares with it exactly, between its two neighbours); None past the doubles."""
    points: list[float] = []
    try:
        for value in literals:
            double = float(value)
            points.append(double)
            if isinstance(value, int) and double != value:
                points += [math.nextafter(double, -math.inf), math.nextafter(double, math.inf)]
    except OverflowError:
        return None
    return [p for p in points if math.isfinite(p)]


def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _spellings(value: Any) -> tuple[Any, ...]:
    """An exact number as an `int` when whole (an int compares as the numeral does); a
    `Decimal` a double holds exactly also as that double, first (a witness any engine loads),
    the `Decimal` kept for its own region."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return (int(value),)
    if isinstance(value, Decimal) and float(value) == value:
        return (float(value), value)
    return (value,)


def _decimal_step(low: Any, high: Any) -> Any:
    if isinstance(low, int) and isinstance(high, int) and high - low >= 2:
        return low + 1
    with localcontext() as context:
        context.prec = 200
        middle = (Decimal(low) + Decimal(high)) / 2
    return middle if low < middle < high else None


def _decimal_out(end: Any, direction: int) -> Any:
    return (math.floor(end) if direction < 0 else math.ceil(end)) + direction


def _float_step(low: float, high: float) -> Any:
    middle = math.nextafter(low, math.inf)
    return middle if middle < high else False  # False: no double lies between (no region)


def _float_out(end: float, direction: int) -> float:
    return math.nextafter(end, direction * math.inf) if math.isfinite(end) else end


def _booleans(atoms: list[Comparison]) -> Candidates:
    return Candidates((True, False), all(isinstance(v, bool) for v in _literals(atoms)))


def _instants(atoms: list[Comparison]) -> Candidates:
    literals = _literals(atoms)
    if not all(isinstance(v, datetime) and v.tzinfo is not None for v in literals):
        return Candidates((datetime(2020, 1, 1, tzinfo=UTC),), False)
    if not literals:
        return Candidates((datetime(2020, 1, 1, tzinfo=UTC),), True)
    return _between(literals, _tick(timedelta(microseconds=1)), _outside(timedelta(days=1)))


def _days(atoms: list[Comparison]) -> Candidates:
    literals = _literals(atoms)
    if not all(type(v) is date for v in literals):
        return Candidates((date(2020, 1, 1),), False)
    if not literals:
        return Candidates((date(2020, 1, 1),), True)
    return _between(literals, _tick(timedelta(days=1)), _outside(timedelta(days=1)))


def _tick(unit: timedelta) -> Callable[[Any, Any], Any]:
    def step(low: Any, high: Any) -> Any:
        for gap in (timedelta(days=1), timedelta(seconds=1), unit):
            if gap >= unit and low + gap < high:
                return low + gap
        return False  # neighbours: nothing lies between

    return step


def _outside(gap: timedelta) -> Callable[[Any, int], Any]:
    return lambda end, direction: end + direction * gap


def _strings(atoms: list[Comparison]) -> Candidates:
    modes = {a.insensitive for a in atoms}
    literals = [str(v) for v in _literals(atoms)]
    if all(a.op in _ORDERED for a in atoms) and len(modes) <= 1:
        found = _between(literals, _string_step, _string_out)
        folded = not modes or not next(iter(modes)) or all(fold(v) == v for v in found.values)
        return Candidates((*found.values, "a"), found.complete and folded)
    return Candidates(tuple(_pattern_guesses(atoms, literals)), False)


def _finite_strings(atoms: list[Comparison], demanded: Sequence[Node]) -> Candidates | None:
    """Where one atom demanded TRUE allows only listed values (`equals`/`in`), the values
    themselves: case-folded ones stand for every spelling when every atom folds."""
    for atom in atoms:
        if atom in demanded and atom.op in (Op.EQUALS, Op.IN):
            values = atom.value if isinstance(atom.value, tuple) else (atom.value,)
            if atom.insensitive and any(a.insensitive is False for a in atoms):
                continue
            if not atom.insensitive or all(fold(str(v)) == v for v in values):
                return Candidates(tuple(values), True)
    return None


def _string_step(low: str, high: str) -> Any:
    for tail in ("a", "0", " ", "\x00"):
        if low + tail < high:
            return low + tail
    return False


def _string_out(end: str, direction: int) -> str:
    if direction > 0:
        return end + "a"
    if end == "":
        raise ValueError("no string lies below the empty string")  # the region is empty
    return ""


def _pattern_guesses(atoms: list[Comparison], literals: list[str]) -> list[str]:
    """Strings likely to meet a mix of patterns: each literal, and the starts, middles and
    ends asked for joined in order, as written and in upper case."""
    parts = {op: [str(v) for a in atoms if a.op is op for v in _as_tuple(a.value)] for op in Op}
    joined = "".join(
        (parts[Op.STARTS_WITH][:1] or [""]) + parts[Op.CONTAINS] + (parts[Op.ENDS_WITH][:1] or [""])
    )
    found = [*literals, joined, joined.upper(), "", "zq"]
    found += (
        [v.upper() for v in literals] + [v + "zq" for v in literals] + ["zq" + v for v in literals]
    )
    return list(dict.fromkeys(found))


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return value if isinstance(value, tuple) else (value,)


def _lists(element: FieldType, atoms: list[ListTest]) -> Candidates:
    items = list(dict.fromkeys(v for a in atoms for v in a.value))
    modes = {a.insensitive for a in atoms}
    complete = all(a.op in _LIST_OPS for a in atoms) and len(modes) <= 1
    if modes == {True}:
        complete = complete and all(fold(v) == v for v in items if isinstance(v, str))
    fresh = _fresh(element, items)
    subsets = _subsets(items)
    complete = complete and len(items) <= _MAX_SUBSETS
    values: list[Any] = []
    for subset in subsets:
        values.append(list(subset))
        if fresh is not None:
            values.append([*subset, fresh])
    values.extend(list(a.value) for a in atoms if a.op is ListOp.EQUALS)
    return Candidates(tuple(values), complete)


def _subsets(items: list[Any]) -> list[tuple[Any, ...]]:
    if len(items) > _MAX_SUBSETS:
        return [(), *((v,) for v in items), tuple(items)]
    return [c for size in range(len(items) + 1) for c in combinations(items, size)]


def _fresh(element: FieldType, items: list[Any]) -> Any:
    """An item equal to none of `items` (None when the type has no other value)."""
    numbers = [v for v in items if isinstance(v, int | float) and _finite(v)]
    pool: dict[FieldType, Sequence[Any]] = {
        FieldType.STRING: ["zq", "zq0", "zq1"] + [str(v) + "zq" for v in items],
        FieldType.NUMBER: [math.floor(max([0, *numbers])) + 1],
        FieldType.BOOLEAN: [True, False],
        FieldType.DATE: [date(2020, 1, 1) + timedelta(days=len(items) + 1)],
        FieldType.DATETIME: [datetime(2020, 1, 1, tzinfo=UTC) + timedelta(days=len(items) + 1)],
    }
    for value in pool.get(element, ()):
        if not any(type(value) is type(v) and value == v for v in items):
            return value
    return None


_BUILDERS: dict[FieldType, Callable[[list[Comparison]], Candidates]] = {
    FieldType.NUMBER: _numbers,
    FieldType.STRING: _strings,
    FieldType.BOOLEAN: _booleans,
    FieldType.DATETIME: _instants,
    FieldType.DATE: _days,
}
