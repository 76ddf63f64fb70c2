"""Many filters judged together on one record: each distinct condition computed once.

Why: a list's smart audiences are all judged on every contact write, and accounts reuse their
conditions (the same country, plan or consent test in dozens of audiences). Judged one by one,
a thousand audiences run a thousand compiled functions and a shared condition as many times as
it appears. A `FilterSet` splits each lowered tree into its conditions (the leaves: frozen,
hashable nodes, so equal conditions are one key: equal as the language's literals are,
`values.value_key`, where `true` and `1` are two) and its logic (AND, OR, NOT, constants), then
for each record:

1. computes the truth of each distinct leaf once: TRUE, FALSE or UNKNOWN (None). Equality and
   `in` on one plain field are answered by one dict lookup of the record's value (value -> the
   conditions it makes TRUE), ranges on one number field by bisecting sorted bounds, and the
   text patterns (`startsWith`, `endsWith`, `contains`) by looking the value's pieces up among
   their operands, in the spirit of the predicate indexes of publish/subscribe systems: the
   value finds its TRUE conditions without testing each. Other leaves run the in-memory
   compiler's functions.
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

import bisect
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, cast

from ...language.fields import FieldType, Op, Schema
from ...language.nodes import (
    Aggregated,
    And,
    Comparison,
    Const,
    IsNull,
    Node,
    Not,
    Or,
    Quantified,
    own_nodes,
    relative_values,
    walk,
)
from ...language.python_values import is_missing
from ...language.relative import as_now, system_clock
from ..memory.compiler import compile_node
from .graph import Graph
from .tracked import Layout, Tracked

Record = Mapping[str, Any]
Truths = list[bool | None]


class _Sink(Protocol):
    """Where a group writes truths: the set's list, or a tracker's dict of one field's."""

    def __setitem__(self, number: int, truth: bool | None, /) -> None: ...


class _Bulk(_Sink, Protocol):
    """A sink that also takes many leaves of one truth at once: `numbers[start:stop]`, a
    list of the set's indexes itself (never a copy), which the sink may keep converted."""

    def all(self, numbers: Sequence[int], truth: bool | None, start: int, stop: int, /) -> None: ...


Formula = Callable[[Truths], bool]
Instant = Any  # what a relative value stands for at one moment (`FilterClock.instants`)


class Filter(Protocol):
    """What a set needs of a filter (the facade's `Filter` is one; this back-end does not
    import the facade): its lowered tree, its schema, and its own judgement, for the filters
    and records the shared evaluation leaves to it."""

    @property
    def lowered(self) -> Node: ...

    @property
    def schema(self) -> Schema: ...

    def matches(self, record: Record, *, now: datetime | None = None) -> bool: ...


LeafKey = tuple[int, Node]  # (the schema's number in the set, the lowered leaf)

_EXACT: dict[FieldType, type] = {FieldType.STRING: str, FieldType.NUMBER: int}
_EXACT[FieldType.BOOLEAN] = bool
_LITERALS: dict[FieldType, tuple[type, ...]] = {
    FieldType.STRING: (str,),
    FieldType.NUMBER: (int, float),
    FieldType.BOOLEAN: (bool,),
}
_RANGES = (Op.GT, Op.GTE, Op.LT, Op.LTE)
PATTERNS = True
"""Whether a set answers `contains`, `endsWith` and case-insensitive `startsWith` by its
pattern index (`_ByPattern`), or one by one by the compiled functions as before it: read when
a set is built. `tests/test_memory_many.py` holds the two to each filter alone."""


class FilterSet:
    """Filters judged together: `matching(record)` is the positions of those that match.

    The same answers as each filter's `matches`, computed once per distinct condition (see the
    module docstring). Build it once and keep it: it compiles what its filters share.
    """

    def __init__(self, filters: Iterable[Filter], *, _shared: _Shared | None = None) -> None:
        self.filters = tuple(filters)
        self._shared = _Shared() if _shared is None else _shared
        self._plan = _plan(self._shared.judged(self.filters), self._shared)
        self._last: tuple[datetime | None, list[Instant]] = (None, [])
        self._layout: tuple[Layout, dict[str, list[_Group]]] | None = None

    def __len__(self) -> int:
        return len(self.filters)

    def among(self, positions: Iterable[int]) -> FilterSet:
        """The set of these of its filters (position `i` of the new set is `positions[i]`),
        sharing what is compiled already: to judge a subset often, build it once."""
        return FilterSet([self.filters[p] for p in positions], _shared=self._shared)

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

    def track(self, record: Record, *, now: datetime | None = None) -> Tracked:
        """`record` followed through its changes (`Tracked.update(new_state)` gives the
        positions entered and left): a change judges again only the conditions on the fields
        it changed and the logic they reach (`backends/filter_set/tracked.py`). Relative
        date-times are taken at `now` (default: the clock, read now) for as long as it is
        tracked.

        Raises:
            RecordError: a value of the wrong type, where one of the filters alone raises it.
        """
        moment = now if now is not None or not self._plan.relatives else system_clock()
        layout, groups = self._laid_out()
        leaves = _SetLeaves(self, groups, self._instants(moment), moment)
        return Tracked(layout, leaves, record)

    def sharing(self) -> tuple[int, int, int, int]:
        """(distinct conditions, conditions counted filter by filter, distinct nodes of logic,
        nodes of logic counted filter by filter): how much the set stores once."""
        layout, _ = self._laid_out()
        judged = self._shared.judged(self.filters)
        leaves = sum(len(_leaves_of(one.tree)) for one in judged if one.tree is not None)
        distinct = len({n for one in judged for n in one.leaves})
        return distinct, leaves, layout.graph.distinct, layout.graph.total

    def _laid_out(self) -> tuple[Layout, dict[str, list[_Group]]]:
        if self._layout is None:
            self._layout = _layout(self._shared.judged(self.filters), self._plan, self._shared)
        return self._layout

    def _instants(self, moment: datetime | None) -> list[Instant]:
        """Each relative leaf's instants at `moment`, kept for the last `moment` given."""
        last, instants = self._last  # one tuple, read at once: safe across threads
        if moment is None or last is moment:
            return instants
        instants = self._plan.instants_at(moment)
        self._last = (moment, instants)
        return instants


@dataclass(frozen=True)
class _Judged:
    """A filter as sets judge it: its logic over the leaves' truths (None: by its own
    predicate), the leaves it reads, and the leaf it requires TRUE, if any."""

    flt: Filter  # kept, so that its `id` names it for as long as this is
    logic: Formula | None
    leaves: tuple[int, ...] = ()
    access: int | None = None
    tree: Node | None = None  # the lowered tree, leaves numbered


class _Shared:
    """What sets built from one another share: the distinct leaves, numbered once for all of
    them, each leaf's compiled truth, and each filter's compiled logic (by the filter's `id`,
    since hashing a whole tree costs more than what it saves)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.schema_numbers: dict[int, tuple[Schema, int]] = {}  # id(schema) -> number
        self.numbers: dict[LeafKey, int] = {}
        self.leaves: list[Node] = []  # by number
        self.schemas: list[Schema] = []  # by leaf number
        self.schema_of: list[int] = []  # by leaf number: its schema's number
        self.truths: dict[int, Callable[..., bool | None]] = {}
        self.filters: dict[int, _Judged] = {}

    def judged(self, filters: Sequence[Filter]) -> list[_Judged]:
        """Each filter's `_Judged`, those not seen yet numbered and compiled in one batch."""
        with self.lock:
            new = list({id(f): f for f in filters if id(f) not in self.filters}.values())
            trees = [self.numbered(f) for f in new]
            bodies = [None if tree is None else _logic(tree, True) for tree in trees]
            for flt, tree, logic in zip(new, trees, _formulas(bodies), strict=True):
                self.filters[id(flt)] = self.judge(flt, tree, logic)
            return [self.filters[id(f)] for f in filters]

    def numbered(self, flt: Filter) -> Node | None:
        """The filter's lowered tree with its leaves numbered; None if it reads relations."""
        if any(isinstance(node, Quantified | Aggregated) for node in walk(flt.lowered)):
            return None
        return _numbered(flt.lowered, self.schema_number(flt.schema), flt.schema, self)

    def judge(self, flt: Filter, tree: Node | None, logic: Formula | None) -> _Judged:
        if tree is None or logic is None:
            return _Judged(flt, None)
        required = _required(tree, True)
        access = _choose(required, self) if required else None
        leaves = tuple(sorted({leaf.number for leaf in _leaves_of(tree)}))
        return _Judged(flt, logic, leaves, access, tree)

    def schema_number(self, schema: Schema) -> int:
        found = self.schema_numbers.get(id(schema))
        if found is None:
            equal = [n for kept, n in self.schema_numbers.values() if kept == schema]
            number = equal[0] if equal else len({n for _, n in self.schema_numbers.values()})
            found = self.schema_numbers[id(schema)] = (schema, number)
        return found[1]

    def number(self, leaf: Node, schema_number: int, schema: Schema) -> int:
        key = (schema_number, leaf)
        found = self.numbers.get(key)
        if found is None:
            found = self.numbers[key] = len(self.leaves)
            self.leaves.append(leaf)
            self.schemas.append(schema)
            self.schema_of.append(schema_number)
        return found

    def truth(self, number: int) -> Callable[..., bool | None]:
        """The leaf's truth: `(record[, instants]) -> True | False | None`, compiled once."""
        with self.lock:
            found = self.truths.get(number)
            if found is None:
                found = self.truths[number] = _truth(self.leaves[number], self.schemas[number])
            return found


def _truth(leaf: Node, schema: Schema) -> Callable[..., bool | None]:
    """TRUE, FALSE or UNKNOWN (None) by the compiled tests of the leaf and of its negation."""
    is_true, is_false = compile_node(leaf, schema), compile_node(Not(leaf), schema)

    def truth(record: Record, *instants: Any) -> bool | None:
        if is_true(record, *instants):
            return True
        return False if is_false(record, *instants) else None

    return truth


@dataclass
class _Plan:
    """A set's leaves grouped for computing, and its filters' logic."""

    groups: list[_Group]
    size: int  # leaves numbered when the set was built (those of its filters among them)
    logic: dict[int, Formula]  # filter position -> its logic over the truths
    always: list[int]  # filters requiring no leaf TRUE: run whatever the record
    access: list[tuple[int, list[int]]]  # leaf -> the filters that need it TRUE
    alone: list[int]  # filters judged by their own predicate
    relatives: list[tuple[int, tuple[Callable[[datetime], Any], ...]]]  # leaf -> resolvers

    def shared(self, record: Record, instants: list[Instant]) -> list[int]:
        truths = self.leaf_truths(record, instants)
        logic = self.logic
        found = [k for k in self.always if logic[k](truths)]
        for leaf, positions in self.access:
            if truths[leaf] is True:
                found.extend(k for k in positions if logic[k](truths))
        found.sort()
        return found

    def leaf_truths(self, record: Record, instants: list[Instant]) -> Truths:
        truths: Truths = [False] * self.size
        for group in self.groups:
            group.fill(record, truths, instants)
        return truths

    def instants_at(self, now: datetime) -> list[Instant]:
        """Per leaf (by number), the instants of its relative values at `now`."""
        moment = as_now(now)
        instants: list[Instant] = [()] * self.size
        for leaf, resolvers in self.relatives:
            instants[leaf] = tuple([before(moment) for before in resolvers])
        return instants


def _plan(judged: Sequence[_Judged], shared: _Shared) -> _Plan:
    logic: dict[int, Formula] = {}
    always: list[int] = []
    access: dict[int, list[int]] = {}
    alone: list[int] = []
    for position, one in enumerate(judged):
        if one.logic is None:
            alone.append(position)
            continue
        logic[position] = one.logic
        if one.access is None:
            always.append(position)
        else:
            access.setdefault(one.access, []).append(position)
    numbers = sorted({n for one in judged for n in one.leaves})
    relatives = [(n, r) for n in numbers if (r := _resolvers(shared.leaves[n]))]
    size = len(shared.leaves)
    groups = _groups(numbers, shared)
    return _Plan(groups, size, logic, always, sorted(access.items()), alone, relatives)


@dataclass(frozen=True, slots=True)
class _Leaf:
    """A leaf in a filter's logic: its number among the distinct leaves."""

    number: int
    node: Node


def _numbered(node: Node, schema_number: int, schema: Schema, shared: _Shared) -> Node:
    """The tree with each leaf wrapped in `_Leaf`, so the logic reads a truth by number."""
    match node:
        case And() | Or():
            items = tuple(_numbered(item, schema_number, schema, shared) for item in node.items)
            return type(node)(items)
        case Not():
            return Not(_numbered(node.item, schema_number, schema, shared))
        case Const():
            return node
        case _:
            return cast(Node, _Leaf(shared.number(node, schema_number, schema), node))


def _leaves_of(tree: Node) -> list[_Leaf]:
    return [cast(_Leaf, node) for node in own_nodes(tree) if isinstance(node, _Leaf)]


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


def _choose(required: list[_Leaf], shared: _Shared) -> int:
    """The leaf a filter is looked up by: an equality (rarely TRUE) if it requires one."""
    for leaf in required:
        if _equality(leaf.node, shared.schemas[leaf.number]) is not None:
            return leaf.number
    return required[0].number


def _logic(node: Node, want: bool) -> str:
    """A numbered tree's logic as Python: a leaf is `t[n] is True` where TRUE is wanted and
    `is False` where FALSE is (Kleene logic, as in `backends/memory/compiler.py`: NOT swaps them,
    UNKNOWN is neither). Only leaf numbers and keywords are written: no value of a filter."""
    match node:
        case _Leaf():
            return f"t[{int(node.number)}] is {want is True}"
        case Const():
            return str(node.value is want)
        case Not():
            return _logic(node.item, not want)
        case And() | Or():
            joint = " and " if isinstance(node, And) is want else " or "
            return "(" + joint.join(_logic(item, want) for item in node.items) + ")"
    raise AssertionError(f"not a node of a numbered tree: {node!r}")


def _formulas(bodies: Sequence[str | None]) -> list[Formula | None]:
    """The logic of many filters compiled in one go; one by one if that fails (a tree too
    deep for Python's parser), a filter whose logic cannot be compiled judged alone."""
    wanted = [body for body in bodies if body is not None]
    try:
        compiled = iter(_compiled("(" + "".join(f"lambda t: {b}," for b in wanted) + ")"))
    except (SyntaxError, RecursionError, MemoryError):
        compiled = iter([_formula(body) for body in wanted])
    return [None if body is None else next(compiled) for body in bodies]


def _formula(body: str) -> Formula | None:
    try:
        return cast(Formula, _compiled(f"lambda t: {body}"))
    except (SyntaxError, RecursionError, MemoryError):
        return None


def _compiled(source: str) -> Any:
    code = compile(source, "<audiencefilter set>", "eval")
    return eval(code, {})  # noqa: S307 - leaf numbers and keywords only (`_logic`)


def _resolvers(leaf: Node) -> tuple[Callable[[datetime], Any], ...]:
    return tuple(relative.resolver() for relative in relative_values(leaf))


# Groups: how the leaves of a set are computed.


class _Group:
    """Some leaves, and how to set their truths for a record (they start FALSE)."""

    def fill(self, record: Record, truths: _Sink, instants: list[Instant]) -> None:
        raise NotImplementedError


class _OneByOne(_Group):
    """Leaves the in-memory compiler's functions answer, one by one: compiled on the first
    record that needs them (for an index, the first value of an unusual type)."""

    def __init__(self, numbers: list[int], shared: _Shared) -> None:
        self.numbers = numbers
        self.shared = shared
        self.leaves: list[tuple[int, Callable[..., bool | None], bool]] | None = None

    def compiled(self) -> _OneByOne:
        if self.leaves is None:
            shared = self.shared
            relative = [bool(relative_values(shared.leaves[n])) for n in self.numbers]
            truths = [shared.truth(n) for n in self.numbers]
            self.leaves = list(zip(self.numbers, truths, relative, strict=True))
        return self

    def fill(self, record: Record, truths: _Sink, instants: list[Instant]) -> None:
        leaves = self.leaves if self.leaves is not None else self.compiled().leaves
        for number, truth, relative in leaves or ():
            truths[number] = truth(record, instants[number]) if relative else truth(record)


@dataclass
class _Nulls(_Group):
    """`field is null` leaves: TRUE or FALSE, never UNKNOWN. Null as the compiled functions
    read it (`is_missing`: `nan`, `pd.NA` and `NaT` too), not merely `None`."""

    leaves: list[tuple[int, str]]

    def fill(self, record: Record, truths: _Sink, instants: list[Instant]) -> None:
        for number, name in self.leaves:
            truths[number] = is_missing(record.get(name))


@dataclass
class _ByValue(_Group):
    """Equalities and `in` lists on one field: the record's value looks its TRUE leaves up."""

    name: str
    exact: type
    folded: bool  # case-insensitive: the literals are folded (lowering), the value is here
    table: dict[Any, list[int]]
    slow: _OneByOne  # a value of another type (a float, a subclass, a wrong one)

    def fill(self, record: Record, truths: _Sink, instants: list[Instant]) -> None:
        value: Any = record.get(self.name)
        if value is None:
            _all(truths, self.slow.numbers, None)
        elif value.__class__ is self.exact:
            key = cast(str, value).lower() if self.folded else value
            _all(truths, self.table.get(key, ()), True)
        else:
            self.slow.fill(record, truths, instants)


@dataclass
class _ByBound(_Group):
    """Ranges on one number or date-time field: for an `int` value, or a `datetime` in UTC
    (as the lowered bounds are: one zone, no fold, so `<` is the instants' order), bisecting
    each operator's sorted bounds splits its leaves into TRUE and FALSE."""

    name: str
    ranges: list[tuple[Op, list[Any], list[int]]]  # operator, bounds ascending, their leaves
    slow: _OneByOne
    exact: type = int  # the class of the values bisected; any other goes one by one

    def fill(self, record: Record, truths: _Sink, instants: list[Instant]) -> None:
        value = record.get(self.name)
        if value is None:
            _all(truths, self.slow.numbers, None)
        elif value.__class__ is self.exact and (
            self.exact is int or cast(datetime, value).tzinfo is UTC
        ):
            for op, bounds, numbers in self.ranges:
                _all(truths, numbers, True, *_true_bounds(op, bounds, value))
        else:
            self.slow.fill(record, truths, instants)


@dataclass
class _ByPrefix(_Group):
    """Case-sensitive `startsWith` on one text field: each prefix of the record's text looks
    up the leaves whose operand it is (`str.startswith` is a comparison of code points, so
    a leaf holds exactly when its operand is one of the text's prefixes)."""

    name: str
    table: dict[str, list[int]]  # operand -> its leaves
    longest: int  # the longest operand: prefixes beyond it find nothing
    slow: _OneByOne

    def fill(self, record: Record, truths: _Sink, instants: list[Instant]) -> None:
        text = _text_of(self.name, self.slow, record, truths, instants)
        if text is None:
            return
        table = self.table
        for end in range(min(len(text), self.longest) + 1):
            for number in table.get(text[:end], ()):
                truths[number] = True


def _text_of(
    name: str, slow: _OneByOne, record: Record, truths: _Sink, instants: list[Instant]
) -> str | None:
    """The record's text in field `name`, for a group of text conditions to look up; None
    when the group is answered already: every condition NULL for a missing value, each by
    `slow` for a value of another kind."""
    value = record.get(name)
    if value is None:
        _all(truths, slow.numbers, None)
    elif value.__class__ is str:
        return value
    else:
        slow.fill(record, truths, instants)
    return None


_PATTERN_OPS = (Op.CONTAINS, Op.STARTS_WITH, Op.ENDS_WITH)


@dataclass
class _Patterns:
    """The operands of one pattern operator, folded or not, on one text field: each found
    by looking up the pieces of the text that could be it (its prefixes or suffixes of an
    operand's length; for `contains`, every piece of those lengths while they are fewer than
    the operands, else each operand searched for in the text)."""

    op: Op
    folded: bool
    table: dict[str, list[int]]  # operand -> its leaves
    lengths: list[int]  # the operands' lengths, each once

    def found(self, text: str) -> list[list[int]]:
        """The leaves of the operands `text` starts with, ends with or contains."""
        size, table = len(text), self.table
        if self.op is Op.STARTS_WITH:
            pieces = [text[:n] for n in self.lengths if n <= size]
        elif self.op is Op.ENDS_WITH:
            pieces = [text[size - n :] for n in self.lengths if n <= size]
        elif size * len(self.lengths) < len(table):
            pieces = [text[i : i + n] for n in self.lengths for i in range(size - n + 1)]
        else:
            return [numbers for operand, numbers in table.items() if operand in text]
        return [numbers for piece in pieces if (numbers := table.get(piece)) is not None]


@dataclass
class _ByPattern(_Group):
    """`contains`, `endsWith` and case-insensitive `startsWith` on one text field: for a
    `str`, the operands it holds are looked up by its pieces (`_Patterns`), on the value
    folded once for the insensitive ones (as the compiler folds it: `str.lower`), where the
    compiled functions cost two calls of Python a condition. A text field carries a hundred
    of them in the benchmark's set, all computed again at each change of a tracked record."""

    name: str
    patterns: list[_Patterns]
    slow: _OneByOne

    def fill(self, record: Record, truths: _Sink, instants: list[Instant]) -> None:
        text = _text_of(self.name, self.slow, record, truths, instants)
        if text is None:
            return
        folded = text.lower()
        for patterns in self.patterns:
            for numbers in patterns.found(folded if patterns.folded else text):
                for number in numbers:
                    truths[number] = True


def _all(
    truths: _Sink, numbers: Sequence[int], truth: bool | None, start: int = 0, stop: int = -1
) -> None:
    """Sets the leaves `numbers[start:stop]` (all of them by default) to `truth` in one call
    where the sink takes one: a dict (a tracked record's conditions on one field) or a
    tracker's codes (`Codes` of `memory_graph_fast`), as hundreds of the bounds of a range
    may hold at once. The list itself goes to a bulk sink, not a slice of it: the sink keeps
    each of the set's lists converted once."""
    if stop < 0:
        stop = len(numbers)
    if start >= stop:
        return
    if isinstance(truths, dict):
        part = numbers if start == 0 and stop == len(numbers) else numbers[start:stop]
        truths.update(dict.fromkeys(part, truth))
    elif isinstance(truths, list):
        for index in range(start, stop):
            truths[numbers[index]] = truth
    else:
        cast(_Bulk, truths).all(numbers, truth, start, stop)


def _true_bounds(op: Op, bounds: list[Any], value: Any) -> tuple[int, int]:
    """Where in the sorted bounds (and their leaves) `value op bound` holds: a prefix or a
    suffix, as `start, stop`."""
    if op is Op.GT:  # bound < value
        return 0, bisect.bisect_left(bounds, value)
    if op is Op.GTE:  # bound <= value
        return 0, bisect.bisect_right(bounds, value)
    if op is Op.LT:  # bound > value
        return bisect.bisect_right(bounds, value), len(bounds)
    return bisect.bisect_left(bounds, value), len(bounds)  # LTE: bound >= value


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
    """Whether `leaf` orders a number field against a number, or a date-time field against
    a fixed instant in UTC (the bound index)."""
    if not isinstance(leaf, Comparison) or leaf.path or leaf.op not in _RANGES:
        return False
    kind, value = schema[leaf.field].type, leaf.value
    if kind is FieldType.DATETIME:
        return value.__class__ is datetime and value.tzinfo is UTC
    return kind is FieldType.NUMBER and value.__class__ in (int, float)


def _prefixed(leaf: Node, schema: Schema) -> bool:
    """Whether `leaf` is a case-sensitive `startsWith` of a text field (the prefix index)."""
    if not isinstance(leaf, Comparison) or leaf.path or leaf.insensitive:
        return False
    if leaf.op is not Op.STARTS_WITH or leaf.value.__class__ is not str:
        return False
    return schema[leaf.field].type is FieldType.STRING


def _patterned(leaf: Node, schema: Schema) -> bool:
    """Whether `leaf` is a `contains`, `endsWith` or case-insensitive `startsWith` of a text
    field against a text (the pattern index; case-sensitive `startsWith` has the prefixes')."""
    if not PATTERNS or not isinstance(leaf, Comparison) or leaf.path:
        return False
    if leaf.op not in _PATTERN_OPS or leaf.value.__class__ is not str:
        return False
    return schema[leaf.field].type is FieldType.STRING


def _groups(numbers: list[int], shared: _Shared) -> list[_Group]:
    """The leaves sorted into value indexes, bound indexes, null tests and the rest."""
    sorted_out: dict[tuple[str, int, str, bool], list[int]] = {}
    for number in numbers:
        leaf, schema = shared.leaves[number], shared.schemas[number]
        way = _way(leaf, schema)
        name = getattr(leaf, "field", "")
        folded = getattr(leaf, "insensitive", False) and way == "value"
        key = (way, shared.schema_of[number], name, folded)
        sorted_out.setdefault(key, []).append(number)
    groups: list[_Group] = []
    nulls: list[tuple[int, str]] = []
    rest: list[int] = []
    for (way, _, name, folded), found in sorted_out.items():
        if way == "value":
            groups.append(_by_value(name, folded, found, shared))
        elif way == "bound":
            groups.append(_by_bound(name, found, shared))
        elif way == "prefix":
            groups.append(_by_prefix(name, found, shared))
        elif way == "pattern":
            groups.append(_by_pattern(name, found, shared))
        elif way == "null":
            nulls.extend((number, name) for number in found)
        else:
            rest.extend(found)
    # Empty groups left out: a tracked record computes each group of the field it changed.
    groups += [_Nulls(nulls)] if nulls else []
    return groups + ([_OneByOne(rest, shared).compiled()] if rest else [])


def _way(leaf: Node, schema: Schema) -> str:
    """How a leaf is computed: by a value index, a bound index, as a null test, or alone."""
    if _equality(leaf, schema) is not None:
        return "value"
    if _bounded(leaf, schema):
        return "bound"
    if _prefixed(leaf, schema):
        return "prefix"
    if _patterned(leaf, schema):
        return "pattern"
    return "null" if isinstance(leaf, IsNull) and not leaf.path else "alone"


def _by_value(name: str, folded: bool, numbers: list[int], shared: _Shared) -> _ByValue:
    table: dict[Any, list[int]] = {}
    for number in numbers:
        leaf = cast(Comparison, shared.leaves[number])
        literals = leaf.value if isinstance(leaf.value, tuple) else (leaf.value,)
        for literal in dict.fromkeys(literals):
            table.setdefault(literal, []).append(number)
    exact = _EXACT[shared.schemas[numbers[0]][name].type]
    return _ByValue(name, exact, folded, table, _OneByOne(numbers, shared))


def _by_bound(name: str, numbers: list[int], shared: _Shared) -> _ByBound:
    ranges = []
    leaves = [(cast(Comparison, shared.leaves[n]), n) for n in numbers]
    for op in _RANGES:
        found = sorted((leaf.value, n) for leaf, n in leaves if leaf.op is op)
        ranges.append((op, [bound for bound, _ in found], [n for _, n in found]))
    kind = shared.schemas[numbers[0]][name].type
    exact = datetime if kind is FieldType.DATETIME else int
    return _ByBound(name, ranges, _OneByOne(numbers, shared), exact)


def _by_prefix(name: str, numbers: list[int], shared: _Shared) -> _ByPrefix:
    table: dict[str, list[int]] = {}
    for number in numbers:
        operand = cast(str, cast(Comparison, shared.leaves[number]).value)
        table.setdefault(operand, []).append(number)
    longest = max(len(operand) for operand in table)
    return _ByPrefix(name, table, longest, _OneByOne(numbers, shared))


def _by_pattern(name: str, numbers: list[int], shared: _Shared) -> _ByPattern:
    tables: dict[tuple[Op, bool], dict[str, list[int]]] = {}
    for number in numbers:
        leaf = cast(Comparison, shared.leaves[number])
        table = tables.setdefault((leaf.op, leaf.insensitive), {})
        table.setdefault(cast(str, leaf.value), []).append(number)
    patterns = [
        _Patterns(op, folded, table, sorted({len(operand) for operand in table}))
        for (op, folded), table in tables.items()
    ]
    return _ByPattern(name, patterns, _OneByOne(numbers, shared))


# Tracking: a set's graph of logic, and its conditions grouped by the field they read.


def _layout(
    judged: Sequence[_Judged], plan: _Plan, shared: _Shared
) -> tuple[Layout, dict[str, list[_Group]]]:
    graph = Graph(plan.size)
    roots: dict[int, list[int]] = {}
    for position, one in enumerate(judged):
        if one.tree is not None and position in plan.logic:
            roots.setdefault(graph.add(one.tree), []).append(position)
    leaves_on: dict[str, list[int]] = {}
    crossing: dict[str, list[int]] = {}
    for number in sorted({n for one in judged if one.tree is not None for n in one.leaves}):
        names = _reads(shared.leaves[number])
        for name in names:
            leaves_on.setdefault(name, []).append(number)
            if len(names) > 1:
                crossing.setdefault(name, []).append(number)
    groups = {name: _groups(numbers, shared) for name, numbers in leaves_on.items()}
    alone = list(plan.alone)
    layout = Layout(graph, roots, tuple(leaves_on), alone, leaves_on, crossing)
    return layout, groups


def _reads(leaf: Node) -> list[str]:
    """The fields a condition reads, each once: its field, and the other one of a field
    comparison unless it is the same (a field compared with itself is one condition of that
    field, which a change moves once; listed twice, the fast climb moved its parents twice)."""
    names = [getattr(leaf, "field", None), getattr(leaf, "other", None)]
    return list(dict.fromkeys(name for name in names if isinstance(name, str)))


@dataclass
class _SetLeaves:
    """A set's conditions computed for a tracker (`tracked.Leaves`), at one instant."""

    owner: FilterSet
    groups: dict[str, list[_Group]]
    instants: list[Instant]
    moment: datetime | None

    def all(self, record: Record) -> list[bool | None]:
        return self.owner._plan.leaf_truths(record, self.instants)

    def on(self, name: str, record: Record) -> dict[int, bool | None]:
        found: dict[int, bool | None] = {}
        self.fill(name, record, found)
        return found

    def fill(self, name: str, record: Record, sink: _Sink) -> None:
        for group in self.groups.get(name, ()):
            group.fill(record, sink, self.instants)

    def judge(self, position: int, record: Record) -> bool:
        return self.owner.filters[position].matches(record, now=self.moment)
