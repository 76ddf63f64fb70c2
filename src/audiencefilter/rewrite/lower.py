"""Lowering: the normal form every back-end evaluates, where shared decisions are made once.

Readers build the tree the user wrote; `explain`, the writers and `simplify` keep working on
it. The back-ends (memory, columnar, SQL text, SQLAlchemy) receive `lower(root, schema, now)`
instead, in which these rules (docs/semantics.md, "Lowering") are already applied:

- `in: []` is `FALSE` and `notIn: []` is `TRUE`, for every record, null values included: the
  comparison becomes a `Const`, so no back-end meets an empty list.
- A case-insensitive comparison's literals are case-folded (`values.fold`): a back-end folds
  only the column side.
- An `in`/`notIn` list holds each literal once, per type (`1` and `true` stay two literals,
  as they are two JSON values), in first-seen order, after folding.
- A field declared with a `source` (`plan` stored at `data.plan`) becomes the read it stands
  for: a condition on the JSON column at that path. Its literals already have the declared
  type (the readers check them against the declaration), so the path condition, typed by its
  literal, compares exactly as the declared field does; the `path` is the only mark a
  back-end needs, and no back-end looks a source up in the schema.
- `blank` (null or `""`) becomes the null test OR the equality with `""` (`blank_form`).
- A list field's test (`ListTest`, `language/lists.py`) holds each literal once, folded when
  case-insensitive (`1` and `1.0` are one number there: the items have one type);
  `hasSome`/`hasEvery` of one literal are `has`; `hasSome: []` is
  `isEmpty and not isEmpty` (FALSE for a present list, UNKNOWN for null) and `hasEvery: []` is
  `isEmpty or not isEmpty` (TRUE, or UNKNOWN for null); `equals: []` is `isEmpty`. So no
  back-end meets an empty operand list, and each decides null lists once, in `isEmpty`.
- Date-time literals are aware UTC instants (`values.as_utc`), whoever built the node.
- An anniversary's period takes the schema's zone if it names none, and with `now` becomes
  the month-days it covers then (`MonthDays`, language/anniversary.py).
- A calendar period (`within`, language/calendar.py) becomes `gte` its start and `lt` its
  end, two `StartOf` values; each `StartOf` without a zone takes the schema's `time_zone`.
- With `now`, each relative date-time (`Ago`, `StartOf`) becomes its instant at that one
  `now`, so every condition of a statement sees the same moment. Without it they stay
  relative: the in-memory predicate binds them per call from its clock (see
  `backends/memory/compiler.py`). With `keep_durations`, a duration compared with a column (no JSON
  path) stays an `Ago` even at a `now`: the SQLAlchemy back-end binds it as a named
  parameter supplied at execution, so the expression outlives the instant.

The lowered tree is built of the ordinary node kinds, so it is a valid filter (it can be
printed to debug a back-end), but it is not the user's filter and is never shown as theirs.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime

from ..language.anniversary import MonthDays, month_day_endings
from ..language.calendar import DayOf, Period, StartOf, local_date
from ..language.fields import LIST_OPS, ListOp, Op, Schema
from ..language.lists import as_arrays, not_in_json
from ..language.nodes import (
    FALSE,
    TRUE,
    Aggregated,
    And,
    Blank,
    Comparison,
    Const,
    IsNull,
    ListTest,
    Node,
    Not,
    Or,
    Quantified,
    Value,
    blank_form,
    walk,
)
from ..language.relations import relation_of, rows_schema, values_schema
from ..language.relative import Ago, as_now
from ..language.values import Scalar, as_utc, fold, same_value, unique
from ..language.visitor import Rebuild


def lower(
    node: Node, schema: Schema, now: datetime | None = None, *, keep_durations: bool = False
) -> Node:
    """`node` in the normal form the back-ends take (module docstring); relative date-times
    become instants at `now` when it is given, and stay relative otherwise. `keep_durations`:
    durations compared with a column stay relative whatever `now` (`durations_at`)."""
    return _Lowering(schema, None if now is None else as_now(now), keep_durations).visit(node)


def durations_at(lowered: Node) -> tuple[frozenset[Ago], frozenset[Ago]]:
    """The durations of a lowered tree (relative, lowered without `now`) compared with a
    column, which `keep_durations` keeps, and those compared at a JSON path, whose instants are
    written into the tree (one duration can be in both)."""
    at_column: set[Ago] = set()
    at_path: set[Ago] = set()
    for node in walk(lowered):
        if isinstance(node, Comparison) and isinstance(node.value, Ago):
            (at_path if node.path else at_column).add(node.value)
    return frozenset(at_column), frozenset(at_path)


def empty_list(op: Op) -> Const:
    """What `in: []` (FALSE) and `notIn: []` (TRUE) are, for every record, null values
    included: no value is among no values."""
    return TRUE if op is Op.NOT_IN else FALSE


def lower_list_test(node: ListTest) -> Node:
    """A list test in lowered form (module docstring): literals UTC, folded when insensitive,
    each once; empty operand lists written with `isEmpty`; one-literal sets as `has`."""
    if node.op is ListOp.IS_EMPTY:
        return node if not node.insensitive else ListTest(node.field, node.op, ())
    values = tuple(_Lowering.scalar(v, node.insensitive) for v in node.value)
    if node.path:  # a JSON array: literals of several JSON types, each once per type
        values = unique(values)
        return node if same_value(values, node.value) else replace(node, value=values)
    op = node.op
    if op is not ListOp.EQUALS:
        values = unique(values)
    if not values:
        empty = ListTest(node.field, ListOp.IS_EMPTY, ())
        if op is ListOp.HAS_SOME:
            return And((empty, Not(empty)))
        if op is ListOp.HAS_EVERY:
            return Or((empty, Not(empty)))
        return empty
    if op in (ListOp.HAS_SOME, ListOp.HAS_EVERY) and len(values) == 1:
        op = ListOp.HAS
    if op is node.op and same_value(values, node.value):
        return node
    return ListTest(node.field, op, values, node.insensitive)


def json_list(node: ListTest, source: tuple[str, ...]) -> Node:
    """A list declared inside JSON as the tests of the JSON array at its path
    (`language.lists.as_arrays`, the rule), each lowered."""
    return _LoweredLists().visit(as_arrays(node, source))


class _LoweredLists(Rebuild):
    """Each list test of a tree lowered, the rest copied."""

    def visit_list_test(self, node: ListTest) -> Node:
        return lower_list_test(node)


def json_date(node: Comparison, source: tuple[str, ...]) -> Node:
    """A lowered date comparison on a date kept inside JSON: the same test on its ISO 8601 text
    at the path (the text of days orders as the days do), and an anniversary at a `now` the
    text endings of the month-days it covers (`-11-23`)."""
    column, path = source[0], source[1:]
    value = node.value
    if isinstance(value, MonthDays):
        endings = [
            Comparison(column, Op.ENDS_WITH, ending, path=path)
            for ending in month_day_endings(value)
        ]
        return endings[0] if len(endings) == 1 else Or(tuple(endings))
    text: Value = value
    if isinstance(value, DayOf):
        text = replace(value, text=True)
    elif isinstance(value, tuple):
        text = tuple(v.isoformat() if isinstance(v, date) else v for v in value)
    elif isinstance(value, date):
        text = value.isoformat()
    return replace(node, field=column, path=path, value=text)


class _Lowering(Rebuild):
    """The lowering rules over `Rebuild`: a field reference has no literal and both its fields
    are columns (the readers refuse JSON ones), so it is kept as it is."""

    def __init__(self, schema: Schema, now: datetime | None, keep_durations: bool) -> None:
        self.schema = schema
        self.now = now
        self.keep_durations = keep_durations

    def visit_quantified(self, node: Quantified) -> Node:
        # The related rows' where clause, lowered by the same rules over the related schema
        # and at the same `now`, so a relative window inside it is the statement's instant.
        related = rows_schema(self.schema, relation_of(self.schema, node.relation))
        return replace(
            node, where=_Lowering(related, self.now, self.keep_durations).visit(node.where)
        )

    def visit_aggregated(self, node: Aggregated) -> Node:
        relation = relation_of(self.schema, node.relation)
        values = values_schema(self.schema, relation, node.function, node.field)
        lowered = _Lowering(values, self.now, self.keep_durations).visit(node.test)
        if isinstance(lowered, Not) and isinstance(lowered.item, Const):
            lowered = Const(not lowered.item.value)
        if isinstance(lowered, Const):  # `in: []` on an aggregate, as on any field
            return lowered
        where = _Lowering(rows_schema(self.schema, relation), self.now, self.keep_durations).visit(
            node.where
        )
        return replace(node, test=lowered, where=where)

    def visit_blank(self, node: Blank) -> Node:
        # Null or "" (`blank_form`): the back-ends meet only null tests and equality.
        return self.visit(blank_form(node))

    def visit_list_test(self, node: ListTest) -> Node:
        declared = self.schema.get(node.field)
        if not node.path and declared is not None and declared.source:
            if node.op not in declared.list_operators or node.insensitive:
                raise not_in_json(node, declared.list_operators)
            return json_list(node, declared.source)
        return lower_list_test(node)

    def visit_is_null(self, node: IsNull) -> Node:
        field = self.schema.get(node.field)
        if not node.path and field is not None and field.source:
            return IsNull(*field.read_at())
        return node

    def visit_comparison(self, node: Comparison) -> Node:
        if node.op in LIST_OPS and not node.value:
            return empty_list(node.op)
        declared = self.schema.get(node.field)
        if declared is not None and declared.type.entry.moment == "day" and not node.path:
            return self.on_dates(node)
        if type(node.value) is Period and node.op is Op.ANNIVERSARY:
            period = node.value.in_zone(self.schema.time_zone)
            resolved = period if self.now is None else period.before(self.now)
            return replace(node, value=resolved)
        if type(node.value) is Period:
            start, end = node.value.bounds
            return And(
                (
                    self.visit(replace(node, op=Op.GTE, value=start)),
                    self.visit(replace(node, op=Op.LT, value=end)),
                )
            )
        field, path = node.field, node.path
        declared = self.schema.get(field)
        if not path and declared is not None:
            field, path = declared.read_at()
        keep = self.keep_durations and not path and isinstance(node.value, Ago)
        value = node.value if keep else self.value(node.value, node.insensitive)
        if value is node.value and field is node.field and path is node.path:
            return node
        return replace(node, field=field, path=path, value=value)

    def on_dates(self, node: Comparison) -> Node:
        """A date field's comparison: relative and calendar operands become the local date
        they fall on (`DayOf`, in the value's zone or else the schema's), a period's bounds
        two such dates, and an anniversary's period its month-days (a date needs no zone)."""
        zone = self.schema.time_zone
        declared = self.schema[node.field]
        if type(node.value) is Period and node.op is Op.ANNIVERSARY:
            period = node.value.in_zone(zone)
            lowered = replace(node, value=period if self.now is None else period.before(self.now))
        elif type(node.value) is Period:
            start, end = node.value.bounds
            bounds = ((Op.GTE, start), (Op.LT, end))
            return And(tuple(self.on_dates(replace(node, op=o, value=v)) for o, v in bounds))
        else:
            lowered = replace(node, value=self.day(node.value))
        return json_date(lowered, declared.source) if declared.source else lowered

    def day(self, value: Value) -> Value:
        if isinstance(value, tuple):
            return unique(tuple(self.day(v) for v in value))
        if isinstance(value, Ago | StartOf):
            day = DayOf.of(value, self.schema.time_zone)
            return day if self.now is None else day.before(self.now)
        if isinstance(value, datetime):  # built in Python: its date in the schema's zone
            return local_date(as_utc(value), self.schema.time_zone)
        return value

    def value(self, value: Value, insensitive: bool) -> Value:
        if isinstance(value, tuple):
            return unique(tuple(self.scalar(v, insensitive) for v in value))
        if isinstance(value, StartOf):
            value = value.in_zone(self.schema.time_zone)
        if isinstance(value, Ago | StartOf):
            return value if self.now is None else value.before(self.now)
        assert not isinstance(value, Period | MonthDays | DayOf)  # handled in visit_comparison
        return self.scalar(value, insensitive)

    @staticmethod
    def scalar(value: Scalar, insensitive: bool) -> Scalar:
        if isinstance(value, datetime):
            return as_utc(value)
        if insensitive and isinstance(value, str):
            return fold(value)
        return value
