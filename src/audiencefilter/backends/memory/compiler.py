"""In-memory evaluation: the AST compiled once into one Python function over a record.

Design choices:
- Three-valued logic without a third value at run time. Each node compiles to two plain
  boolean expressions, "is TRUE" and "is FALSE"; `NOT` swaps them, and UNKNOWN is simply
  neither. De Morgan holds in Kleene logic, so `AND`'s FALSE is "any item FALSE" and so on.
  The record is in the audience when the root is TRUE.
- The function is built with the `ast` module: literals (and frozensets of them, for `in`)
  become `ast.Constant` nodes and other values (date-times) are bound as names in the
  function's namespace. No value is ever formatted into source text, so no value can change
  the code.
- It should run as fast as a lambda written by hand, so it carries no work a hand-written one
  would not:
  - A comparison reads its field with `record.get` into a local and tests it for null first,
    except where the test is FALSE for null anyway (`== literal` and case-sensitive `in` in a
    "is TRUE" position), which is most of the common filters.
  - Along a chain of conjuncts, a field already read and known to be present is not read or
    tested again: `points >= 100 and points < 1000` reads `points` once.
  - Date-time ordering compares the record's value as it is, as a hand-written lambda does.
    An aware `datetime` (or subclass) orders as its instant; anything else (a naive one, ISO
    text, a wrong type) cannot be ordered against the aware literal and raises `TypeError`,
    and then the record is evaluated again by the exact version of the function, which
    normalizes every value or names the field; so the answer is the same, and the common case
    skips a type and time-zone check per record.
    In a TRUE position it skips the NaT test too: pandas' NaT orders False against anything (as
    null is FALSE there) and NumPy's raises, so the exact version reads it as null.
- A record whose value has the wrong type ends in `RecordError` naming the field, raised by the
  exact version; the `try` costs nothing on the normal path. Where Python would compare a
  wrong type quietly (`True == 1`, `"1" == 1`, `True > 0`), the read tests the exact type
  instead of `is not None` (`v.__class__ is str or v is not None and _present(v)`: the helper
  runs for rare types only, and raises for wrong ones), or, for an equality that needs no null
  test, only once it failed (`v == "FR" or v is not None and type(v) is not str and not
  _present(v)`);
  a boolean equality is `v is True`, as a hand-written lambda has it. `contains`,
  `startsWith` and `endsWith` need no test: Python refuses them on anything but text.
- It compiles the lowered tree (`rewrite/lower.py`): empty lists are constants, literals of
  case-insensitive tests are folded (only the record's value is folded here), lists hold each
  literal once, date-time literals are UTC and declared JSON fields are path conditions.
- Relative date-times (`{"ago": "P30D"}`) stay relative in the tree this back-end receives
  (lowered without a `now`): the function takes a second argument, the tuple of their instants
  in `relative_values` order, and reads `_instants[i]` where an absolute date-time would be
  bound. The caller (`Filter`) computes the tuple from its clock on each call, so a long-lived
  predicate never goes stale; an absolute filter is called with the record alone. Its `at`
  takes a `now` instead of the tuple (`Filter.matches(record, now=...)`): the instants of the
  last `now` are kept with it, and the fast version tests that and evaluates in one function.
- A JSON data-path equality walks plain `dict`s inline (`paths.py`) and leaves any
  other document or value class to `data_paths.truth`, where the JSON type rules live.
- An anniversary of a date-time in UTC is written out in the fast version: a UTC month-day
  is surely in the period in any zone, surely not, or near its edges (`MonthDays.certain`,
  `near`), and only then converted to the zone; `astimezone` is most of the cost otherwise.
"""

from __future__ import annotations

import ast
import functools
import itertools
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Protocol, cast
from zoneinfo import ZoneInfo

from ...errors import RecordError
from ...language import lists
from ...language.anniversary import MonthDays, is_anniversary
from ...language.calendar import RELATIVE_TYPES, Period
from ...language.data_paths import lookup, truth
from ...language.fields import ORDERING_OPS, PATTERN_OPS, FieldType, ListOp, Op, Schema
from ...language.nodes import (
    Aggregated,
    And,
    Blank,
    Comparison,
    Const,
    FieldComparison,
    IsNull,
    ListTest,
    Node,
    Not,
    Or,
    Quantified,
    blank_form,
    fields_used,
    own_nodes,
    relative_values,
    unhandled,
)
from ...language.python_values import NEVER_MISSING, is_missing, plain_record, plain_value
from ...language.references import reference_truth
from ...language.relative import Clock, as_now
from ...language.values import (
    accepts,
    decimal_literals,
    fractional,
    record_date,
    record_datetime,
    record_value,
)
from . import fast as memory_fast
from . import paths as memory_paths
from .relations import relation_truth

Instants = tuple[date | str | MonthDays, ...]
"""What each relative value of a filter stands for at one `now`, in `relative_values` order."""


Record = Mapping[str, Any]
At = Callable[[Record, datetime], bool]
"""`Evaluator.at`: whether a record is in the audience with relative values taken at `now`."""


class Evaluator(Protocol):
    """The compiled function: a record, and the instants of the filter's relative values in
    order. An absolute filter's function is called with the record alone. `at(record, now)`
    takes the instants at `now` itself (`Filter.matches(record, now=...)`), and
    `on_clock(clock)` is the predicate reading `clock` on every call (`af.compile(clock=)`)."""

    at: At
    on_clock: Callable[[Clock], Callable[[Record], bool]]

    def __call__(self, record: Record, instants: Instants = (), /) -> bool: ...


Predicate = Callable[[Record], bool]
Known = dict[str, str]
"""Fields proven present at a point of the expression, and the local holding each value."""

_ORDER = {Op.GT: ast.Gt, Op.GTE: ast.GtE, Op.LT: ast.Lt, Op.LTE: ast.LtE, Op.EQUALS: ast.Eq}
_RECORD = "record"
_INSTANTS = "_instants"
_CAUGHT = ("TypeError", "AttributeError", "ValueError")
_CAUGHT_FAST = (*_CAUGHT, "OverflowError")  # an inline anniversary's local date out of range
_CONSTANT_TYPES = (str, int, float, bool)
_NO_TYPE_PARAMS: dict[str, Any] = {"type_params": []}  # a field from Python 3.12 on


def compile_node(root: Node, schema: Schema) -> Evaluator:
    """A function of a record (and, for relative date-times, their instants) that is true
    exactly when the lowered tree `root` is TRUE for the record.

    A record whose value has the wrong type for its field raises `RecordError` naming the field.
    """
    evaluator = _evaluator(root, schema)
    evaluator.at = _first_at(root, schema, evaluator)
    evaluator.on_clock = _on_clock(root, schema, evaluator)
    return evaluator


def _evaluator(root: Node, schema: Schema) -> Evaluator:
    """`compile_node`'s function: the fast version, with the exact one behind it where the
    two differ."""

    def record_error(record: Record, instants: Instants = ()) -> bool:
        plain = plain_record(record) if isinstance(record, Mapping) else None
        if plain is None:
            raise RecordError(_diagnose(record, root, schema))
        return evaluator(plain, instants) if instants else evaluator(plain)

    fast_builder = _Builder(schema, root, fast=True)
    if not fast_builder.differs:
        evaluator = _function(_Builder(schema, root, fast=False), root, record_error)
        return evaluator
    built: list[Evaluator] = []

    def exact(record: Record, instants: Instants = ()) -> bool:
        # Built on the first record the fast version hands over, which is often never.
        if not built:
            built.append(_function(_Builder(schema, root, fast=False), root, record_error))
        return built[0](record, instants) if instants else built[0](record)

    evaluator = _function(fast_builder, root, exact)
    return evaluator


def _function(builder: _Builder, root: Node, on_error: Callable[..., bool]) -> Evaluator:
    """`def audience_filter(record, _instants=())`: return whether `root` is TRUE; on a bad
    value, `on_error`. Without relative date-times it is `audience_filter(record)`: a call
    that fills no default is a few nanoseconds cheaper per record."""
    body, _ = builder.build(root, True, {})
    builder.bound["_on_error"] = on_error
    relative = bool(builder.relatives)
    names = (_RECORD, _INSTANTS) if relative else (_RECORD,)
    function = ast.FunctionDef(
        name="audience_filter",
        args=_arguments(*names, defaulted=relative),
        body=[_guarded(body, relative, _CAUGHT_FAST if builder.differs else _CAUGHT)],
        decorator_list=[],
        **_NO_TYPE_PARAMS,
    )
    evaluator: Evaluator = _compiled(function, builder.bound)
    return evaluator


def _compiled(function: ast.FunctionDef, bound: Mapping[str, Any]) -> Any:
    """The Python function `function` defines, its free names bound to `bound`'s values."""
    module = _located(ast.Module(body=[function], type_ignores=[]))
    namespace: dict[str, Any] = dict(bound)
    exec(compile(module, "<audiencefilter>", "exec"), namespace)
    return namespace[function.name]


def _located(tree: ast.Module) -> ast.Module:
    """`tree` with a position on every node `compile` needs one on (line 1 where none is
    given): `ast.fix_missing_locations` in a loop instead of a recursion, which cost about as
    much as compiling itself, and a filter's conditions are compiled one by one by the audience
    algebra and `FilterSet`."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            node.lineno = node.end_lineno = 1  # type: ignore[attr-defined]
            node.col_offset = node.end_col_offset = 0  # type: ignore[attr-defined]
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, ast.AST))
    return tree


def _first_at(root: Node, schema: Schema, evaluator: Evaluator) -> At:
    """`evaluator.at` until its first call, which builds the real one (`_at`) and puts it in
    its place: only filters asked `matches(record, now=...)` pay for compiling it."""

    def first(record: Record, now: datetime) -> bool:
        evaluator.at = _at(root, schema, evaluator)
        return evaluator.at(record, now)

    return first


def _at(root: Node, schema: Schema, evaluator: Evaluator) -> At:
    """`evaluator` at `now`, keeping the instants of the last `now` (held with that `now`, so
    the test is an identity, safe across threads). The fast version (`memory_fast`) is one
    generated function that tests the identity and evaluates: no call between, so a loop of
    `matches(record, now=t)` costs what the compiled predicate does."""
    relatives = relative_values(root)
    if not relatives:
        return lambda record, now: evaluator(record)
    memo, remember = _remembering(tuple(value.resolver() for value in relatives))
    if not memory_fast.ENABLED:
        return lambda record, now: evaluator(record, remember(now))
    builder = _Builder(schema, root, fast=True)
    builder.bound.update(_on_error=evaluator, _memo=memo, _remember=remember)
    at: At = _function_at(builder, root)
    return at


def _on_clock(root: Node, schema: Schema, evaluator: Evaluator) -> Callable[[Clock], Predicate]:
    """`evaluator.on_clock`: the predicate reading a clock on every call. The function behind
    it is compiled on the first call and shared by every clock after (a service puts each
    audience on a clock of its own for each write): a clock is bound to it with
    `functools.partial`, which adds no Python frame."""
    built: list[Callable[[Clock, Record], bool]] = []

    def on_clock(clock: Clock) -> Predicate:
        if not built:
            built.append(_clock_function(root, schema, evaluator))
        return functools.partial(built[0], clock)

    return on_clock


def _clock_function(
    root: Node, schema: Schema, evaluator: Evaluator
) -> Callable[[Clock, Record], bool]:
    """`(clock, record) -> bool`. The fast version keeps the instants of the last `now` a
    clock gave, as `at` does, and reads the clock inside the one generated function: a clock
    returning the same `now` for a batch (a service's, a test's) resolves its instants once,
    not once per record. The plain version resolves them on every call."""
    relatives = relative_values(root)
    if not relatives:
        return lambda clock, record: evaluator(record)
    resolvers = tuple(value.resolver() for value in relatives)
    if not memory_fast.ENABLED:
        return lambda clock, record: evaluator(record, _instants_at(resolvers, clock()))
    memo, remember = _remembering(resolvers)
    builder = _Builder(schema, root, fast=True)
    builder.bound.update(_on_error=evaluator, _memo=memo, _remember=remember)
    clocked: Callable[[Clock, Record], bool] = _function_at(builder, root, clock=True)
    return clocked


def _instants_at(
    resolvers: tuple[Callable[[datetime], date | str | MonthDays], ...], now: datetime
) -> Instants:
    moment = now if now.tzinfo is UTC else as_now(now)
    return tuple([before(moment) for before in resolvers])


def _function_at(builder: _Builder, root: Node, *, clock: bool = False) -> Any:
    """`def audience_filter_at(record, _now)`: the instants of `_now` (`_LOOK_UP`), then
    `_function`'s body; on a bad value, the evaluator, which answers exactly or raises. With
    `clock`, `audience_filter_at(_clock, record)` reads `_now` from `_clock()` first."""
    read_clock = ast.parse(f"{_NOW} = _clock()").body if clock else []
    args = _arguments("_clock", _RECORD) if clock else _arguments(_RECORD, _NOW)
    return _function_now(builder, root, args, read_clock)


def _function_now(
    builder: _Builder, root: Node, args: ast.arguments, prelude: list[ast.stmt]
) -> Any:
    """A function of `args` whose `prelude` sets `_now`, then `_LOOK_UP` and the body."""
    body, _ = builder.build(root, True, {})
    function = ast.FunctionDef(
        name="audience_filter_at",
        args=args,
        body=[*prelude, *ast.parse(_LOOK_UP).body, _guarded(body, True, _CAUGHT_FAST)],
        decorator_list=[],
        **_NO_TYPE_PARAMS,
    )
    return _compiled(function, builder.bound)


def matcher(root: Node, schema: Schema, evaluator: Evaluator, clock: Clock) -> Matcher:
    """`Filter.matches` of a relative filter: `(record, *, now=None)`, with `now` taken from
    `clock` when not given. The fast version is one generated function keeping the instants
    of the last `now` (as `at` does), so `matches(record, now=t)` in a loop costs one call a
    record, as the compiled predicate on a clock does."""
    if not memory_fast.ENABLED:
        predicate = _on_clock(root, schema, evaluator)(clock)

        def matches(record: Record, *, now: datetime | None = None) -> bool:
            return predicate(record) if now is None else evaluator.at(record, now)

        return matches
    memo, remember = _remembering(tuple(value.resolver() for value in relative_values(root)))
    builder = _Builder(schema, root, fast=True)
    builder.bound.update(_on_error=evaluator, _memo=memo, _remember=remember, _clock=clock)
    args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(arg=_RECORD)],
        kwonlyargs=[ast.arg(arg="now")],
        kw_defaults=[ast.Constant(None)],
        defaults=[],
    )
    prelude = ast.parse(f"{_NOW} = _clock() if now is None else now").body
    found: Matcher = _function_now(builder, root, args, prelude)
    return found


class Matcher(Protocol):
    """`Filter.matches`: a record, and the instant relative date-times are taken at."""

    def __call__(self, record: Record, *, now: datetime | None = None) -> bool: ...


_NOW = "_now"
_LOOK_UP = """
_seen, _instants = _memo[0]
if _seen is not _now:
    _instants = _remember(_now)
"""
"""The instants at `_now`: those kept for the last `now` if it is the same object."""

Memo = list[tuple[datetime | None, Instants]]


def _remembering(
    resolvers: tuple[Callable[[datetime], date | str | MonthDays], ...],
) -> tuple[Memo, Callable[[datetime], Instants]]:
    """A memo of the last `now` and its instants, and the function that fills it: the
    instants of the relative values (one resolver each) at `now`, kept with `now`."""
    memo: Memo = [(None, ())]

    def remember(now: datetime) -> Instants:
        seen, instants = memo[0]  # one tuple, read at once: safe across threads
        if seen is not now:
            moment = as_now(now)
            instants = tuple([before(moment) for before in resolvers])
            memo[0] = (now, instants)
        return instants

    return memo, remember


def _arguments(*names: str, defaulted: bool = False) -> ast.arguments:
    """The parameters `names`, the last one defaulting to `()` when `defaulted`."""
    return ast.arguments(
        posonlyargs=[],
        args=[ast.arg(arg=name) for name in names],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[ast.Constant(cast(Any, ()))] if defaulted else [],
    )


def _guarded(body: ast.expr, relative: bool, caught: tuple[str, ...]) -> ast.Try:
    """`try: return body` / `except (TypeError, ...): return _on_error(record, ...)`."""
    passed = [_name(_RECORD), _name(_INSTANTS)] if relative else [_name(_RECORD)]
    handler = ast.ExceptHandler(
        type=ast.Tuple(elts=[_name(n) for n in caught], ctx=ast.Load()),
        name=None,
        body=[ast.Return(value=_call(_name("_on_error"), *passed))],
    )
    return ast.Try(body=[ast.Return(value=body)], handlers=[handler], orelse=[], finalbody=[])


def _diagnose(record: Record, root: Node, schema: Schema) -> str:
    for name in sorted(fields_used(root)):
        value = record.get(name) if isinstance(record, Mapping) else None
        field = schema.get(name)  # a JSON column a declared field reads may be undeclared
        if value is None or field is None or field.type is FieldType.JSON:
            continue
        problem = _value_problem(name, field.type, value)
        if problem is not None:
            return problem
    if not isinstance(record, Mapping):
        return f"a record must be a mapping of field names to values, not {type(record).__name__}"
    return _json_problem(record, root) or "a record value has the wrong type for its field"


def _json_problem(record: Record, root: Node) -> str | None:
    """What makes a JSON document the filter reads unreadable (`data_paths.lookup`: two keys
    written alike), in the words of `RecordError`; None if nothing."""
    for node in own_nodes(root):
        if isinstance(node, Comparison | IsNull) and node.path:
            try:
                lookup(record.get(node.field), node.path)
            except RecordError as exc:
                return f'field "{node.field}" at path {list(node.path)}: {exc}'
    return None


def _value_problem(name: str, kind: FieldType, value: object) -> str | None:
    """What is wrong with a field's value, in the words of `RecordError`; None if nothing."""
    try:
        if kind.element is not None:
            lists.items(kind, value)
            return None
        if not accepts(kind, value):
            return f'field "{name}" holds {type(value).__name__} {value!r}; expected {kind.value}'
        record_value(kind, value)  # date-times and dates read as comparisons read them
    except (TypeError, ValueError) as exc:
        return f'field "{name}": {exc}'
    return None


class _Builder:
    """Builds the "is TRUE" / "is FALSE" expressions of each node.

    With `fast`, date-time ordering skips the time-zone check (see the module docstring) and a
    list of strings is type-checked by joining it (`plain_items`); `differs` tells whether that
    changed anything, i.e. whether a fast version is worth having.
    """

    def __init__(self, schema: Schema, root: Node, *, fast: bool) -> None:
        self.schema = schema
        self.fast = fast
        self.differs = fast and (
            _orders_datetimes(root, schema)
            or _joins_lists(root, schema)
            or _inline_anniversaries(root, schema)
        )
        self.bound: dict[str, Any] = _base_bindings()
        self.checked: set[str] = set()  # locals whose value's type was tested when read
        self.names = itertools.count()
        reads = Counter(n.field for n in own_nodes(root) if isinstance(n, Comparison | IsNull))
        self.repeated = frozenset(name for name, count in reads.items() if count > 1)
        self.relatives = {ago: index for index, ago in enumerate(relative_values(root))}

    def build(self, node: Node, want: bool, known: Known) -> tuple[ast.expr, Known]:
        """An expression that holds when `node` evaluates to `want` (TRUE or FALSE).

        `known` lists the fields proven present where the expression runs; the second result
        lists those the expression proves present when it holds.
        """
        match node:
            case Const():
                return ast.Constant(node.value is want), known
            case Not():
                return self.build(node.item, not want, known)
            case And() | Or():
                # AND is TRUE when all items are; FALSE when any item is. OR the other way round.
                if isinstance(node, And) is want:
                    return self.conjunction(node.items, want, known)
                values = [self.build(item, want, known)[0] for item in node.items]
                return ast.BoolOp(op=ast.Or(), values=values), known
            case IsNull() | Comparison() if node.path:
                return self.json_condition(node, want), known
            case IsNull():
                return self.is_null(node.field, want, known)
            case Comparison():
                return self.comparison(node, want, known)
            case Quantified() | Aggregated():
                return self.relation(node, want), known
            case Blank():  # lowering writes it out; as it does
                return self.build(blank_form(node), want, known)
            case FieldComparison():  # `reference_truth` of the record: `is True`/`is False`
                kind = self.schema[node.field].type
                test = self.bind(functools.partial(_reference_truth, node, kind))
                return _compare(_call(test, _name(_RECORD)), ast.Is(), ast.Constant(want)), known
            case ListTest():
                return self.list_test(node, want), known
            case _:
                unhandled("the in-memory compiler", node)

    def relation(self, node: Quantified | Aggregated, want: bool) -> ast.expr:
        """`_truth(record, _instants) is want`: the related rows' answer
        (`relations.py`), with this function's instants passed on."""
        truth = self.bind(relation_truth(node, self.schema, self.relatives, _COMPILER))
        instants = _name(_INSTANTS) if self.relatives else ast.Constant(cast(Any, ()))
        return _compare(_call(truth, _name(_RECORD), instants), ast.Is(), ast.Constant(want))

    def list_test(self, node: ListTest, want: bool) -> ast.expr:
        """`lists.truth` of the record's list: `is True` or `is False`."""
        if node.path:
            truth = self.bind(functools.partial(_array_truth, node))
            return _compare(_call(truth, _name(_RECORD)), ast.Is(), ast.Constant(want))
        kind = self.schema[node.field].type
        truth = self.bind(functools.partial(_list_truth, node, kind, node.field))
        plain = _compare(_call(truth, _name(_RECORD)), ast.Is(), ast.Constant(want))
        items = memory_fast.list_items(node, kind)
        return plain if items is None else self.fast_list(node, want, items, plain)

    def fast_list(
        self, node: ListTest, want: bool, items: frozenset[type], plain: ast.expr
    ) -> ast.expr:
        """`memory_fast`'s set operation on a `list` of plain items, else `plain`; a null
        list is UNKNOWN (`lists.truth`), so neither TRUE nor FALSE, without the call."""
        local = self.local(node.field)
        value = _name(local)
        read = _attribute(self.assign(local, node.field), "__class__")
        simple = _all(_compare(read, ast.Is(), _name("_list")), self.plain_items(value, items))
        other = _all(_compare(value, ast.IsNot(), ast.Constant(None)), plain)
        return ast.IfExp(test=simple, body=_holds(want, self.set_test(node, value)), orelse=other)

    def plain_items(self, value: ast.expr, items: frozenset[type]) -> ast.expr:
        """Whether the list's items are all of `items`' types. In the fast version a list of
        strings is joined instead, which costs less and raises `TypeError` on any other item
        (None included), sending the record to the exact version."""
        if self.fast and str in items:
            return _compare(_call(_name("_join"), value), ast.IsNot(), ast.Constant(None))
        item_types = _call(_name("map"), _name("type"), value)
        return _method(self.bind(items), "issuperset", item_types)

    def set_test(self, node: ListTest, value: ast.expr) -> ast.expr:
        """`has`, `hasSome`: some literal is an item; `hasEvery`: all are; `isEmpty`."""
        if node.op is ListOp.IS_EMPTY:
            return ast.UnaryOp(op=ast.Not(), operand=value)
        wanted = self.literal(frozenset(node.value))
        if node.op is ListOp.HAS_EVERY:
            return _method(wanted, "issubset", value)
        return ast.UnaryOp(op=ast.Not(), operand=_method(wanted, "isdisjoint", value))

    def json_condition(self, node: Comparison | IsNull, want: bool) -> ast.expr:
        """`data_paths.truth` of the record's JSON document: `is True` or `is False`. A date
        kept in JSON may compare with a relative value: its text (or month-days) per call."""
        if isinstance(node, Comparison) and isinstance(node.value, (*RELATIVE_TYPES, Period)):
            truth = self.bind(functools.partial(_json_truth_at, node))
            call = _call(truth, _name(_RECORD), self.literal(node.value))
        else:
            truth = self.bind(functools.partial(_json_truth, node, node.field, node.path))
            call = _call(truth, _name(_RECORD))
        plain = _compare(call, ast.Is(), ast.Constant(want))
        if isinstance(node, Comparison) and memory_paths.inlined(node):
            document = self.read(node.field)
            local = functools.partial(self.local, "")
            return memory_paths.equality(node, want, document, plain, local, self.bind)
        return plain

    def conjunction(
        self, items: tuple[Node, ...], want: bool, known: Known
    ) -> tuple[ast.expr, Known]:
        """Each item runs only once the ones before it held, so it may use what they proved."""
        values = []
        for item in items:
            value, known = self.build(item, want, known)
            values.append(value)
        return ast.BoolOp(op=ast.And(), values=values), known

    def is_null(self, field: str, want: bool, known: Known) -> tuple[ast.expr, Known]:
        if field in known:
            return ast.Constant(not want), known
        local = self.local(field)
        value = _name(local)
        plain = _compare(_attribute(value, "__class__"), ast.In(), _name("_plain_classes"))
        if want:  # `v is None or v.__class__ not in _plain_classes and _missing(v)`
            other = _all(ast.UnaryOp(op=ast.Not(), operand=plain), _call(_name("_missing"), value))
            null = _compare(self.assign(local, field), ast.Is(), ast.Constant(None))
            return _any(null, other), known
        not_missing = ast.UnaryOp(op=ast.Not(), operand=_call(_name("_missing"), value))
        present = _all(
            _compare(self.assign(local, field), ast.IsNot(), ast.Constant(None)),
            _any(plain, not_missing),
        )
        return present, {**known, field: local} if field in self.repeated else known

    def read(self, field: str) -> ast.expr:
        return _call(ast.Attribute(value=_name(_RECORD), attr="get", ctx=ast.Load()), field)

    def local(self, field: str) -> str:
        return f"_v{next(self.names)}"

    def assign(self, local: str, field: str) -> ast.expr:
        return ast.NamedExpr(target=ast.Name(local, ast.Store()), value=self.read(field))

    def bind(self, value: Any) -> ast.expr:
        name = f"_k{next(self.names)}"
        self.bound[name] = value
        return _name(name)

    def comparison(self, node: Comparison, want: bool, known: Known) -> tuple[ast.expr, Known]:
        """A comparison of a field, read (into a local the rest of a conjunction can use)
        unless an earlier conjunct has read it."""
        if node.field in known:
            return self.known_comparison(node, want, known[node.field]), known
        if want and self.false_for_null(node):
            return self.string_match(node, known)
        kind = self.schema[node.field].type
        if want and kind is FieldType.BOOLEAN and node.op is Op.EQUALS:
            return self.boolean_match(node, known)
        return self.read_comparison(node, want, known)

    def known_comparison(self, node: Comparison, want: bool, local: str) -> ast.expr:
        """A comparison of a field an earlier conjunct proved present: its type is tested
        here unless that read tested it too."""
        kind = self.schema[node.field].type
        test = _holds(want, self.test(node, _name(local)))
        if local in self.checked or kind not in _PRESENT or node.op in PATTERN_OPS:
            return test
        return _all(self.present(kind, local), test)

    def string_match(self, node: Comparison, known: Known) -> tuple[ast.expr, Known]:
        """`None == literal` and `None in {literals}` are False: no null test needed, and
        the type is tested only when the test failed (a match is a str)."""
        kind = self.schema[node.field].type
        local = self.local(node.field)
        test = self.test(node, self.assign(local, node.field))
        value = _name(local)
        guard = _all(
            _compare(value, ast.IsNot(), ast.Constant(None)),
            _compare(_attribute(value, "__class__"), ast.IsNot(), _name("_str")),
            ast.UnaryOp(op=ast.Not(), operand=_call(_name(_PRESENT[kind]), value)),
        )
        self.checked.add(local)
        return _any(test, guard), {**known, node.field: local}

    def boolean_match(self, node: Comparison, known: Known) -> tuple[ast.expr, Known]:
        """`v is True`, else null (FALSE) or another type (RecordError)."""
        local = self.local(node.field)
        value = _name(local)
        guard = _all(
            _compare(value, ast.IsNot(), ast.Constant(not node.value)),
            _compare(value, ast.IsNot(), ast.Constant(None)),
            _call(_name(_PRESENT[FieldType.BOOLEAN]), value),
        )
        literal = ast.Constant(node.value is True)
        test = _compare(self.assign(local, node.field), ast.Is(), literal)
        self.checked.add(local)
        return _any(test, guard), {**known, node.field: local}

    def read_comparison(self, node: Comparison, want: bool, known: Known) -> tuple[ast.expr, Known]:
        """Read the field, test that it is there (and of its type, where Python would compare
        a wrong one quietly), then compare."""
        kind = self.schema[node.field].type
        local = self.local(node.field)
        if kind in _PRESENT and not (kind is FieldType.STRING and node.op in PATTERN_OPS):
            present = self.present(kind, local, assign=node.field)
            self.checked.add(local)
        else:
            present = _compare(self.assign(local, node.field), ast.IsNot(), ast.Constant(None))
            if kind in _TIME_CLASSES and not self.nat_orders_false(node, want):
                # NaT is a datetime that compares as none does
                exact = _compare(
                    _attribute(_name(local), "__class__"), ast.Is(), _name(_TIME_CLASSES[kind])
                )
                present = _all(present, _any(exact, _call(_name("_present_time"), _name(local))))
        test = _holds(want, self.test(node, _name(local)))
        return _all(present, test), {**known, node.field: local}

    def nat_orders_false(self, node: Comparison, want: bool) -> bool:
        """Whether the fast version's ordering of a date-time, in a TRUE position, needs no
        test for NaT: pandas' NaT orders False against anything, as null is FALSE there; a
        NumPy NaT raises and takes the exact version, which reads it as null."""
        kind = self.schema[node.field].type
        return self.fast and want and kind is FieldType.DATETIME and node.op in ORDERING_OPS

    def present(self, kind: FieldType, local: str, assign: str | None = None) -> ast.expr:
        """`type(v) is T or v is not None and _present(v)`: the value is there and of its
        field's type; the helper, called for rare types only, raises for a wrong one."""
        value = _name(local) if assign is None else self.assign(local, assign)
        # `v.__class__ is T` is the cheapest exact-type test (cheaper than `type(v) is T`);
        # a float number or a str subclass takes the helper.
        exact = ast.Attribute(value=value, attr="__class__", ctx=ast.Load())
        fast = _compare(exact, ast.Is(), _name(_EXACT[kind]))
        slow = ast.BoolOp(
            op=ast.And(),
            values=[
                _compare(_name(local), ast.IsNot(), ast.Constant(None)),
                _call(_name(_PRESENT[kind]), _name(local)),
            ],
        )
        return ast.BoolOp(op=ast.Or(), values=[fast, slow])

    def false_for_null(self, node: Comparison) -> bool:
        """Whether the test alone is False, without raising, when the field is null, and a
        match proves the value's type (a string equal to a string literal)."""
        plain = not node.insensitive and self.schema[node.field].type is FieldType.STRING
        return plain and node.op in (Op.EQUALS, Op.IN)

    def test(self, node: Comparison, value: ast.expr) -> ast.expr:
        """The comparison itself, for a value known not to be null."""
        kind = self.schema[node.field].type
        if kind is FieldType.DATETIME and self.fast and _inline_anniversary(node, kind):
            return self.anniversary(node, value)
        if kind is FieldType.DATETIME:
            value = self.instant(value, ordering=node.op in ORDERING_OPS)
        elif kind is FieldType.DATE:  # a date, never a datetime (`record_date` says why)
            value = _call(_name("_as_date"), value)
        if node.insensitive:  # the literals are folded already (lowering)
            value = _method(value, "lower")
        elif kind is FieldType.NUMBER and fractional(node.value):
            return self.decimal_or_double(node, value)
        return self.operation(node.op, value, node.value)

    def decimal_or_double(self, node: Comparison, value: ast.expr) -> ast.expr:
        """A `Decimal` value meets the literal as written (`values.decimal_literal`: `0.3` is
        3/10), any other number the literal's double; only a double literal with a fraction
        differs between the two, so only it pays for the type test."""
        is_decimal = _call(_name("isinstance"), value, _name("_Decimal"))
        exact = self.operation(node.op, value, decimal_literals(node.value))
        return ast.IfExp(
            test=is_decimal, body=exact, orelse=self.operation(node.op, value, node.value)
        )

    def operation(self, op: Op, value: ast.expr, constant: Any) -> ast.expr:
        """`value op constant` in Python: a comparison, a membership or a string method."""
        if op is Op.ANNIVERSARY:  # the month-days of a period (language/anniversary.py)
            return _call(_name("_anniversary"), value, self.literal(constant))
        if op in (Op.IN, Op.NOT_IN):
            compare: ast.cmpop = ast.In() if op is Op.IN else ast.NotIn()
            return _compare(value, compare, self.literal(frozenset(constant)))
        if op is Op.CONTAINS:
            return _compare(self.literal(constant), ast.In(), value)
        if op in (Op.STARTS_WITH, Op.ENDS_WITH):
            method = "startswith" if op is Op.STARTS_WITH else "endswith"
            return _method(value, method, self.literal(constant))
        return _compare(value, _ORDER[op](), self.literal(constant))

    def anniversary(self, node: Comparison, value: ast.expr) -> ast.expr:
        """`is_anniversary` inline for a UTC `datetime`: its UTC month-day is surely covered
        (`MonthDays.certain`), surely not, or `near` and then converted to the zone. Any other
        value takes the call; a local date out of range (`OverflowError`) sends the record to
        the exact version."""
        period = node.value
        assert isinstance(period, MonthDays | Period)  # an anniversary's, lowered
        month_day = _name(self.local(node.field))
        utc_day = ast.NamedExpr(target=ast.Name(month_day.id, ast.Store()), value=_month_day(value))
        in_zone = _compare(
            self.local_month_day(period, value), ast.In(), self.days(period, "covered")
        )
        inline = _any(
            _compare(utc_day, ast.In(), self.days(period, "certain")),
            _all(_compare(month_day, ast.In(), self.days(period, "near")), in_zone),
        )
        plain = self.operation(node.op, _call(_name("_as_instant"), value), period)
        in_utc = _compare(_attribute(value, "tzinfo"), ast.Is(), _name("_UTC"))
        return ast.IfExp(test=in_utc, body=inline, orelse=plain)

    def days(self, period: MonthDays | Period, name: str) -> ast.expr:
        """A set of month-days of the anniversary: a constant when lowered at a `now`, else
        read from this call's instant."""
        if isinstance(period, MonthDays):
            return ast.Constant(cast(Any, getattr(period, name)))
        return _attribute(self.literal(period), name)

    def local_month_day(self, period: MonthDays | Period, value: ast.expr) -> ast.expr:
        """`month * 100 + day` of `value` converted to the period's zone."""
        zone = period.tzinfo if isinstance(period, MonthDays) else ZoneInfo(period.zone or "UTC")
        local = self.local("")
        converted = ast.NamedExpr(
            target=ast.Name(local, ast.Store()), value=_method(value, "astimezone", self.bind(zone))
        )
        return _month_day(converted, _name(local))

    def literal(self, value: Any) -> ast.expr:
        if isinstance(value, _CONSTANT_TYPES) or (
            isinstance(value, frozenset) and all(isinstance(v, _CONSTANT_TYPES) for v in value)
        ):
            return ast.Constant(cast(Any, value))  # the compiler takes frozensets of literals
        if isinstance(value, (*RELATIVE_TYPES, Period)):  # per call: an instant, or month-days
            index = ast.Constant(self.relatives[value])
            return ast.Subscript(value=_name(_INSTANTS), slice=index, ctx=ast.Load())
        return self.bind(value)

    def instant(self, value: ast.expr, *, ordering: bool) -> ast.expr:
        """A datetime an ordering can use, or a UTC one for equality; anything else is
        normalized by a helper call.

        An ordering compares any two aware date-times as instants, so an aware value passes
        through; the fast version lets every value through (whatever is not an aware
        date-time raises `TypeError` there, which sends the record to the exact version).
        Equality and `in` need the UTC instant (see `record_datetime`): a value in UTC passes,
        any other is converted.
        """
        if self.fast and ordering:
            return value
        exact_type = _compare(_call(_name("type"), value), ast.Is(), _name("_datetime"))
        zone = ast.Attribute(value=value, attr="tzinfo", ctx=ast.Load())
        if ordering:
            has_zone = _compare(zone, ast.IsNot(), ast.Constant(None))
            is_aware = ast.BoolOp(op=ast.And(), values=[exact_type, has_zone])
        else:
            in_utc = _compare(zone, ast.Is(), _name("_UTC"))
            is_aware = ast.BoolOp(op=ast.And(), values=[exact_type, in_utc])
        normalized = _call(_name("_as_instant"), value)
        return ast.IfExp(test=is_aware, body=value, orelse=normalized)


_PRESENT = {
    FieldType.STRING: "_present_string",
    FieldType.NUMBER: "_present_number",
    FieldType.BOOLEAN: "_present_boolean",
}
_EXACT = {FieldType.STRING: "_str", FieldType.NUMBER: "_int", FieldType.BOOLEAN: "_bool"}


_TIME_CLASSES = {FieldType.DATETIME: "_datetime", FieldType.DATE: "_date"}


def _present_time(value: object) -> bool:
    """True for a date-time or date value of another class (text, a pandas `Timestamp`);
    `TypeError` for `NaT`, which the function then reads as null (`python_values`)."""
    if value != value:
        raise TypeError("NaT for a date-time field")
    return True


def _present(kind: FieldType, value: object) -> bool:
    """False for null, True for a value a `kind` field compares, else `TypeError` (which the
    function turns into `RecordError` naming the field)."""
    if value is None:
        return False
    if accepts(kind, value) and plain_value(value) is value:  # else read as `python_values`
        return True
    raise TypeError(f"{type(value).__name__} for a {kind.value} field")


def _present_string(value: object) -> bool:
    return _present(FieldType.STRING, value)


def _present_number(value: object) -> bool:
    return _present(FieldType.NUMBER, value)


def _present_boolean(value: object) -> bool:
    return _present(FieldType.BOOLEAN, value)


_PRESENT_CHECKS = {
    FieldType.STRING: _present_string,
    FieldType.NUMBER: _present_number,
    FieldType.BOOLEAN: _present_boolean,
}


def _reference_truth(node: FieldComparison, kind: FieldType, record: Record) -> bool | None:
    return reference_truth(node, kind, record)


def _json_truth(
    node: Comparison | IsNull, column: str, path: tuple[str, ...], record: Record
) -> bool | None:
    return truth(node, record.get(column), path)


def _json_truth_at(node: Comparison, record: Record, value: Any) -> bool | None:
    """`_json_truth` of `node` with its relative value taken for this call."""
    return truth(replace(node, value=value), record.get(node.field), node.path)


def _array_truth(node: ListTest, record: Record) -> bool | None:
    return lists.array_truth(node, record.get(node.field))


def _list_truth(node: ListTest, kind: FieldType, column: str, record: Record) -> bool | None:
    return lists.truth(node, kind, record.get(column))


def _name(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _call(func: ast.expr, *args: ast.expr | str) -> ast.expr:
    values = [ast.Constant(a) if isinstance(a, str) else a for a in args]
    return ast.Call(func=func, args=values, keywords=[])


def _method(target: ast.expr, method: str, *args: ast.expr) -> ast.expr:
    return _call(ast.Attribute(value=target, attr=method, ctx=ast.Load()), *args)


def _compare(left: ast.expr, op: ast.cmpop, right: ast.expr) -> ast.expr:
    return ast.Compare(left=left, ops=[op], comparators=[right])


def _attribute(target: ast.expr, name: str) -> ast.expr:
    return ast.Attribute(value=target, attr=name, ctx=ast.Load())


def _all(*values: ast.expr) -> ast.expr:
    return ast.BoolOp(op=ast.And(), values=list(values))


def _any(*values: ast.expr) -> ast.expr:
    return ast.BoolOp(op=ast.Or(), values=list(values))


def _holds(want: bool, test: ast.expr) -> ast.expr:
    """`test` where the comparison is wanted TRUE, `not test` where FALSE (a value known not
    to be null compares to True or False, never UNKNOWN)."""
    return test if want else ast.UnaryOp(op=ast.Not(), operand=test)


def _orders_datetimes(root: Node, schema: Schema) -> bool:
    """Whether `root` orders a date-time field, where the fast version skips a check."""
    return any(
        isinstance(n, Comparison)
        and not n.path
        and n.op in ORDERING_OPS
        and schema[n.field].type is FieldType.DATETIME
        for n in own_nodes(root)
    )


def _joins_lists(root: Node, schema: Schema) -> bool:
    """Whether `root` tests a list of strings the fast version joins (`plain_items`)."""
    return any(
        isinstance(n, ListTest)
        and not n.path
        and memory_fast.list_items(n, schema[n.field].type) == memory_fast.STRINGS
        for n in own_nodes(root)
    )


def _month_day(value: ast.expr, again: ast.expr | None = None) -> ast.expr:
    """`value.month * 100 + value.day` (`again` names the value where `value` assigns it)."""
    month = ast.BinOp(_attribute(value, "month"), ast.Mult(), ast.Constant(100))
    return ast.BinOp(month, ast.Add(), _attribute(value if again is None else again, "day"))


def _inline_anniversary(node: Comparison, kind: FieldType) -> bool:
    """Whether the fast version writes this comparison as an inline anniversary test."""
    return memory_fast.ENABLED and kind is FieldType.DATETIME and node.op is Op.ANNIVERSARY


def _inline_anniversaries(root: Node, schema: Schema) -> bool:
    """Whether `root` holds an anniversary of a date-time field the fast version inlines."""
    return any(
        isinstance(n, Comparison) and not n.path and _inline_anniversary(n, schema[n.field].type)
        for n in own_nodes(root)
    )


def _base_bindings() -> dict[str, Any]:
    """The names every compiled function may call, before the values of its own literals."""
    bound: dict[str, Any] = {
        "_as_instant": record_datetime,
        "_as_date": record_date,
        "_anniversary": is_anniversary,
        "_datetime": datetime,
        "_UTC": UTC,
        "_date": date,
        "_str": str,
        "_int": int,
        "_Decimal": Decimal,
        "_bool": bool,
        "_list": list,
        "_join": "".join,
        "_plain_classes": NEVER_MISSING,
        "_missing": is_missing,
        "_present_time": _present_time,
    }
    for kind, name in _PRESENT.items():
        bound[name] = _PRESENT_CHECKS[kind]
    return bound


class _MemoryCompiler:
    """This module's compiler as `relations.Compiler`: a related row's where clause
    is compiled by the same rules as the contact's."""

    def compile(self, node: Node, schema: Schema) -> Callable[..., bool]:
        return compile_node(node, schema)

    def expression(self, node: Node, schema: Schema) -> tuple[ast.expr, Mapping[str, Any]]:
        builder = _Builder(schema, node, fast=True)
        expression, _ = builder.build(node, True, {})
        return expression, builder.bound


_COMPILER = _MemoryCompiler()
