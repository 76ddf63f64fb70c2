"""Many filters judged together on one record: each distinct condition computed once.

Why: a list's smart audiences are all judged on every contact write, and accounts reuse their
conditions (the same country, plan or consent test in dozens of audiences). Judged one by one,
a thousand audiences run a thousand compiled functions and a shared condition as many times as
it appears. A `FilterSet` splits each lowered tree into its conditions (the leaves: frozen,
hashable nodes, so equal conditions are one key) and its logic (AND, OR, NOT, constants), then
for each record:

1. computes the truth of each distinct leaf once: TRUE, FALSE or UNKNOWN (None). Equality and
   `in` on one plain field are answered by one dict lookup of the record's value (value -> the
   conditions it makes TRUE), and ranges on one number field by bisecting sorted bounds, in the
   spirit of the predicate indexes of publish/subscribe systems: the value finds its TRUE
   conditions without testing each. Other leaves run the in-memory compiler's functions.
2. runs the logic of a filter only if it can be TRUE: a filter that requires a condition TRUE
   (a conjunct) is looked at only when that condition is; the others are FALSE unread.

Exactness: a leaf's truth is the compiled one (the indexes answer only for values of the
field's exact type, where they agree with it), and the logic combines truths in Kleene logic,
as the compiled function does. Every leaf is computed, where a filter alone may stop early, so
a value of the wrong type can raise here where the filter would not: then the record is judged
again by each filter's own predicate, which answers, or raises `RecordError`, exactly as
`Filter.matches` does. Filters with relation conditions are always judged by their own
predicate (their rows are not a record's field). `tests/test_memory_many.py` compares the set
with each filter alone on generated filters and records, wrong types included.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from ..filter import Filter
from ..language.fields import FieldType, Op, Schema
from ..language.nodes import (
    Aggregated,
    And,
    Comparison,
    Const,
    IsNull,
    Node,
    Not,
    Or,
    Quantified,
    relative_values,
    walk,
)
from ..language.relative import as_now, system_clock
from .memory import Evaluator, compile_node

Record = Mapping[str, Any]
Truths = list[bool | None]
Formula = Callable[[Truths], bool]
Instant = Any  # what a relative value stands for at one moment (`Filter.instants`)
LeafKey = tuple[int, Node]  # (the schema's number in the set, the lowered leaf)

_EXACT: dict[FieldType, type] = {FieldType.STRING: str, FieldType.NUMBER: int}
_EXACT[FieldType.BOOLEAN] = bool
_LITERALS: dict[FieldType, tuple[type, ...]] = {
    FieldType.STRING: (str,),
    FieldType.NUMBER: (int, float),
    FieldType.BOOLEAN: (bool,),
}
_RANGES = (Op.GT, Op.GTE, Op.LT, Op.LTE)


class FilterSet:
    """Filters judged together: `matching(record)` is the positions of those that match.

    The same answers as each filter's `matches`, computed once per distinct condition (see the
    module docstring). Build it once and keep it: it compiles what its filters share.
    """

    def __init__(self, filters: Iterable[Filter], *, _compiled: _Compiled | None = None) -> None:
        self.filters = tuple(filters)
        self._compiled = _Compiled() if _compiled is None else _compiled
        self._plan = _plan(self.filters, self._compiled)
        self._last: tuple[datetime | None, list[Instant]] = (None, [])

    def __len__(self) -> int:
        return len(self.filters)

    def among(self, positions: Iterable[int]) -> FilterSet:
        """The set of these of its filters (position `i` of the new set is `positions[i]`),
        sharing what is compiled already: to judge a subset often, build it once."""
        return FilterSet([self.filters[p] for p in positions], _compiled=self._compiled)

    def matching(self, record: Record, *, now: datetime | None = None) -> list[int]:
        """The positions of the filters `record` matches, ascending; relative date-times taken
        at `now` (default: the clock, read once for every filter of the set).

        Raises:
            RecordError: a value of the wrong type, where one of the filters alone raises it.
        """
        moment = now if now is not None or not self._plan.relatives else system_clock()
        plan = self._plan
        try:
            found = plan.shared(record, self._instants(moment))
        except Exception:  # a wrong type: each filter alone says where (module docstring)
            found = [k for k in plan.logic if self.filters[k].matches(record, now=moment)]
        found.extend(k for k in plan.alone if self.filters[k].matches(record, now=moment))
        return sorted(found) if plan.alone else found

    def _instants(self, moment: datetime | None) -> list[Instant]:
        """Each relative leaf's instants at `moment`, kept for the last `moment` given."""
        last, instants = self._last  # one tuple, read at once: safe across threads
        if moment is None or last is moment:
            return instants
        instants = self._plan.instants_at(moment)
        self._last = (moment, instants)
        return instants


class _Compiled:
    """What sets built from one another share: schema numbers and each leaf's compiled
    functions (its TRUE test and its FALSE test), compiled on first use."""

    def __init__(self) -> None:
        self.schemas: dict[Schema, int] = {}
        self.tests: dict[LeafKey, tuple[Evaluator, Evaluator]] = {}

    def number(self, schema: Schema) -> int:
        return self.schemas.setdefault(schema, len(self.schemas))

    def truth(self, key: LeafKey, schema: Schema) -> Callable[..., bool | None]:
        """The leaf's truth: `(record, *instants) -> True | False | None`."""
        tests = self.tests.get(key)
        if tests is None:
            leaf = key[1]
            tests = self.tests[key] = (compile_node(leaf, schema), compile_node(Not(leaf), schema))
        is_true, is_false = tests

        def truth(record: Record, *instants: Any) -> bool | None:
            if is_true(record, *instants):
                return True
            return False if is_false(record, *instants) else None

        return truth


@dataclass
class _Leaves:
    """The distinct leaves of a set's filters, numbered in order of first appearance."""

    compiled: _Compiled
    numbers: dict[LeafKey, int] = field(default_factory=dict)
    schemas: list[Schema] = field(default_factory=list)

    def number(self, leaf: Node, schema: Schema) -> int:
        key = (self.compiled.number(schema), leaf)
        found = self.numbers.get(key)
        if found is None:
            found = self.numbers[key] = len(self.numbers)
            self.schemas.append(schema)
        return found

    def keys(self) -> list[LeafKey]:
        return list(self.numbers)


@dataclass
class _Plan:
    """A set's leaves grouped for computing, and its filters' logic."""

    groups: list[_Group]
    size: int  # distinct leaves
    logic: dict[int, Formula]  # filter position -> its logic over the truths
    always: list[int]  # filters requiring no leaf TRUE: run whatever the record
    access: list[tuple[int, list[int]]]  # leaf -> the filters that need it TRUE
    alone: list[int]  # filters judged by their own predicate
    relatives: list[tuple[int, tuple[Callable[[datetime], Any], ...]]]  # leaf -> resolvers

    def shared(self, record: Record, instants: list[Instant]) -> list[int]:
        truths: Truths = [False] * self.size
        for group in self.groups:
            group.fill(record, truths, instants)
        logic = self.logic
        found = [k for k in self.always if logic[k](truths)]
        for leaf, positions in self.access:
            if truths[leaf] is True:
                found.extend(k for k in positions if logic[k](truths))
        found.sort()
        return found

    def instants_at(self, now: datetime) -> list[Instant]:
        """Per leaf (by number), the instants of its relative values at `now`."""
        moment = as_now(now)
        instants: list[Instant] = [()] * self.size
        for leaf, resolvers in self.relatives:
            instants[leaf] = tuple([before(moment) for before in resolvers])
        return instants


def _plan(filters: Sequence[Filter], compiled: _Compiled) -> _Plan:
    leaves = _Leaves(compiled)
    alone: list[int] = []
    trees: dict[int, Node] = {}
    always: list[int] = []
    access: dict[int, list[int]] = {}
    for position, flt in enumerate(filters):
        if _has_relations(flt.lowered):
            alone.append(position)
            continue
        numbered = _numbered(flt.lowered, flt.schema, leaves)
        trees[position] = numbered
        required = _required(numbered, True)
        if required:
            access.setdefault(_choose(required, leaves), []).append(position)
        else:
            always.append(position)
    keys = leaves.keys()
    groups = _groups(keys, leaves.schemas, compiled)
    resolvers = [(n, _resolvers(key[1])) for n, key in enumerate(keys)]
    relatives = [(n, r) for n, r in resolvers if r]
    logic = _formulas(trees)
    return _Plan(groups, len(keys), logic, always, sorted(access.items()), alone, relatives)


def _has_relations(root: Node) -> bool:
    return any(isinstance(node, Quantified | Aggregated) for node in walk(root))


@dataclass(frozen=True, slots=True)
class _Leaf:
    """A leaf in a filter's logic: its number among the set's distinct leaves."""

    number: int
    node: Node


def _numbered(node: Node, schema: Schema, leaves: _Leaves) -> Node:
    """The tree with each leaf wrapped in `_Leaf`, so the logic reads a truth by number."""
    match node:
        case And() | Or():
            return type(node)(tuple(_numbered(item, schema, leaves) for item in node.items))
        case Not():
            return Not(_numbered(node.item, schema, leaves))
        case Const():
            return node
        case _:
            return cast(Node, _Leaf(leaves.number(node, schema), node))


def _required(node: Node, want: bool) -> list[_Leaf]:
    """Leaves that must be TRUE for `node` to be `want`: the conjuncts, through double
    negations."""
    match node:
        case _Leaf():
            return [node] if want else []
        case Not():
            return _required(node.item, not want)
        case And() | Or() if isinstance(node, And) is want:
            return [leaf for item in node.items for leaf in _required(item, want)]
    return []


def _choose(required: list[_Leaf], leaves: _Leaves) -> int:
    """The leaf a filter is looked up by: an equality (rarely TRUE) if it requires one."""
    for leaf in required:
        if _equality(leaf.node, leaves.schemas[leaf.number]) is not None:
            return leaf.number
    return required[0].number


def _formulas(trees: Mapping[int, Node]) -> dict[int, Formula]:
    """Each filter's logic as one compiled `lambda truths: ...`, all in one module: a leaf
    is `truths[n] is True` where TRUE is wanted, `is False` where FALSE is (Kleene logic, as
    in `backends/memory.py`: NOT swaps them, UNKNOWN is neither)."""
    lambdas = [_lambda(_logic(tree, True)) for tree in trees.values()]
    table = ast.Expression(body=ast.Tuple(elts=cast(list[ast.expr], lambdas), ctx=ast.Load()))
    code = compile(ast.fix_missing_locations(table), "<audiencefilter set>", "eval")
    functions = eval(code, {})  # noqa: S307 - built from leaf numbers and constants only
    return dict(zip(trees, functions, strict=True))


def _lambda(body: ast.expr) -> ast.Lambda:
    arguments = ast.arguments(
        posonlyargs=[], args=[ast.arg(arg="t")], kwonlyargs=[], kw_defaults=[], defaults=[]
    )
    return ast.Lambda(args=arguments, body=body)


def _logic(node: Node, want: bool) -> ast.expr:
    match node:
        case _Leaf():
            read = ast.Subscript(ast.Name("t", ast.Load()), ast.Constant(node.number), ast.Load())
            return ast.Compare(left=read, ops=[ast.Is()], comparators=[ast.Constant(want)])
        case Const():
            return ast.Constant(node.value is want)
        case Not():
            return _logic(node.item, not want)
        case And() | Or():
            op: ast.boolop = ast.And() if isinstance(node, And) is want else ast.Or()
            return ast.BoolOp(op=op, values=[_logic(item, want) for item in node.items])
    raise AssertionError(f"not a node of a numbered tree: {node!r}")


def _resolvers(leaf: Node) -> tuple[Callable[[datetime], Any], ...]:
    return tuple(relative.resolver() for relative in relative_values(leaf))


# Groups: how the leaves of a set are computed.


class _Group:
    """Some leaves, and how to set their truths for a record (they start FALSE)."""

    def fill(self, record: Record, truths: Truths, instants: list[Instant]) -> None:
        raise NotImplementedError


@dataclass
class _OneByOne(_Group):
    """Leaves the in-memory compiler's functions answer, one by one."""

    leaves: list[tuple[int, Callable[..., bool | None], bool]]  # number, truth, relative

    def fill(self, record: Record, truths: Truths, instants: list[Instant]) -> None:
        for number, truth, relative in self.leaves:
            truths[number] = truth(record, instants[number]) if relative else truth(record)


@dataclass
class _Nulls(_Group):
    """`field is null` leaves: TRUE or FALSE, never UNKNOWN."""

    leaves: list[tuple[int, str]]

    def fill(self, record: Record, truths: Truths, instants: list[Instant]) -> None:
        for number, name in self.leaves:
            truths[number] = record.get(name) is None


@dataclass
class _ByValue(_Group):
    """Equalities and `in` lists on one field: the record's value looks its TRUE leaves up."""

    name: str
    exact: type
    folded: bool  # case-insensitive: the literals are folded (lowering), the value is here
    table: dict[Any, list[int]]
    slow: _OneByOne  # a value of another type (a float, a subclass, a wrong one)

    def fill(self, record: Record, truths: Truths, instants: list[Instant]) -> None:
        value: Any = record.get(self.name)
        if value is None:
            for number, _, _ in self.slow.leaves:
                truths[number] = None
        elif value.__class__ is self.exact:
            for number in self.table.get(cast(str, value).lower() if self.folded else value, ()):
                truths[number] = True
        else:
            self.slow.fill(record, truths, instants)


@dataclass
class _ByBound(_Group):
    """Ranges on one number field: for an `int` value, bisecting each operator's sorted bounds
    splits its leaves into TRUE and FALSE."""

    name: str
    ranges: list[tuple[Op, list[Any], list[int]]]  # operator, bounds ascending, their leaves
    slow: _OneByOne

    def fill(self, record: Record, truths: Truths, instants: list[Instant]) -> None:
        value = record.get(self.name)
        if value is None:
            for number, _, _ in self.slow.leaves:
                truths[number] = None
        elif value.__class__ is int:
            for op, bounds, numbers in self.ranges:
                for number in _true_bounds(op, bounds, numbers, value):
                    truths[number] = True
        else:
            self.slow.fill(record, truths, instants)


def _true_bounds(op: Op, bounds: list[Any], numbers: list[int], value: int) -> list[int]:
    """The leaves `value op bound` holds for: a prefix or a suffix of the sorted bounds."""
    if op is Op.GT:  # bound < value
        return numbers[: bisect.bisect_left(bounds, value)]
    if op is Op.GTE:  # bound <= value
        return numbers[: bisect.bisect_right(bounds, value)]
    if op is Op.LT:  # bound > value
        return numbers[bisect.bisect_right(bounds, value) :]
    return numbers[bisect.bisect_left(bounds, value) :]  # LTE: bound >= value


def _equality(leaf: Node, schema: Schema) -> FieldType | None:
    """The field's type if `leaf` is an equality or `in` the value index can answer."""
    if not isinstance(leaf, Comparison) or leaf.path or leaf.op not in (Op.EQUALS, Op.IN):
        return None
    kind = schema[leaf.field].type
    literals = leaf.value if isinstance(leaf.value, tuple) else (leaf.value,)
    if kind not in _LITERALS or (leaf.insensitive and kind is not FieldType.STRING):
        return None
    if not all(literal.__class__ in _LITERALS[kind] for literal in literals):
        return None
    return kind


def _bounded(leaf: Node, schema: Schema) -> bool:
    """Whether `leaf` orders a number field against a number (the bound index)."""
    if not isinstance(leaf, Comparison) or leaf.path or leaf.op not in _RANGES:
        return False
    kind = schema[leaf.field].type
    return kind is FieldType.NUMBER and leaf.value.__class__ in (int, float)


def _groups(keys: list[LeafKey], schemas: list[Schema], compiled: _Compiled) -> list[_Group]:
    """The leaves sorted into value indexes, bound indexes, null tests and the rest."""
    by_value: dict[tuple[int, str, bool], list[int]] = {}
    by_bound: dict[tuple[int, str], list[int]] = {}
    nulls: list[tuple[int, str]] = []
    rest: list[int] = []
    for number, (schema_number, leaf) in enumerate(keys):
        schema = schemas[number]
        if isinstance(leaf, Comparison) and _equality(leaf, schema) is not None:
            by_value.setdefault((schema_number, leaf.field, leaf.insensitive), []).append(number)
        elif isinstance(leaf, Comparison) and _bounded(leaf, schema):
            by_bound.setdefault((schema_number, leaf.field), []).append(number)
        elif isinstance(leaf, IsNull) and not leaf.path:
            nulls.append((number, leaf.field))
        else:
            rest.append(number)
    made = _Made(keys, schemas, compiled)
    groups: list[_Group] = [made.by_value(key, numbers) for key, numbers in by_value.items()]
    groups.extend(made.by_bound(key[1], numbers) for key, numbers in by_bound.items())
    groups.extend([_Nulls(nulls), made.one_by_one(rest)])
    return groups


@dataclass
class _Made:
    """Builds the groups of a set's leaves."""

    keys: list[LeafKey]
    schemas: list[Schema]
    compiled: _Compiled

    def one_by_one(self, numbers: list[int]) -> _OneByOne:
        return _OneByOne([self.compiled_leaf(n) for n in numbers])

    def compiled_leaf(self, number: int) -> tuple[int, Callable[..., bool | None], bool]:
        key = self.keys[number]
        truth = self.compiled.truth(key, self.schemas[number])
        return number, truth, bool(relative_values(key[1]))

    def by_value(self, key: tuple[int, str, bool], numbers: list[int]) -> _ByValue:
        _, name, folded = key
        table: dict[Any, list[int]] = {}
        for number in numbers:
            leaf = cast(Comparison, self.keys[number][1])
            literals = leaf.value if isinstance(leaf.value, tuple) else (leaf.value,)
            for literal in dict.fromkeys(literals):
                table.setdefault(literal, []).append(number)
        exact = _EXACT[self.schemas[numbers[0]][name].type]
        return _ByValue(name, exact, folded, table, self.one_by_one(numbers))

    def by_bound(self, name: str, numbers: list[int]) -> _ByBound:
        ranges = []
        for op in _RANGES:
            found = [
                (cast(Comparison, self.keys[n][1]).value, n)
                for n in numbers
                if cast(Comparison, self.keys[n][1]).op is op
            ]
            found.sort(key=lambda pair: cast(float, pair[0]))
            ranges.append((op, [bound for bound, _ in found], [n for _, n in found]))
        return _ByBound(name, ranges, self.one_by_one(numbers))
