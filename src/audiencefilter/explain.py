"""Why a record is in or out of an audience: each node TRUE, FALSE or UNKNOWN, and the values seen.

    ✗ FALSE    all of
      ✓ TRUE     points >= 100                 (points = 150)
      ✗ FALSE    any of
        ✗ FALSE    country in ["FR", "DE"]     (country = "US")
        ? UNKNOWN  email ends with "@acme.com" (email is missing)

Design choices:
- A second, deliberately plain evaluator: a visitor with an explicit three-valued `Outcome`,
  sharing no code with the compiled predicate of `backends/memory/compiler.py` beyond the
  value helpers (`holds`, `record_datetime`). That the two agree on every filter and record is
  a property test, so each checks the other.
- Nothing is short-circuited: an explanation shows every condition, including those that
  did not decide the result.
- Conditions are shown in the text syntax, so an explanation reads like the filter; a relative
  date-time also shows the instant it stood for (`createdAt >= 30 days ago [2025-03-01T...Z]`),
  all of them taken at one `now`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from enum import Enum
from typing import Any, cast

from .errors import RecordError
from .explain_relations import explain_relation
from .language import lists
from .language.anniversary import MonthDays
from .language.calendar import RELATIVE_TYPES, Period, StartOf
from .language.data_paths import truth
from .language.fields import ListOp, Schema
from .language.nodes import (
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
)
from .language.references import reference_truth
from .language.relative import as_now, system_clock
from .language.values import accepts, fold, holds, record_value
from .language.visitor import Visitor
from .rewrite.lower import lower
from .text.literals import literal, reference
from .text.vocabulary import NEGATED_SPELLINGS
from .text.write import to_text
from .where.write import format_datetime


class Outcome(Enum):
    """A node's value for one record, in SQL's three-valued logic."""

    TRUE = "TRUE"
    FALSE = "FALSE"
    UNKNOWN = "UNKNOWN"

    def __invert__(self) -> Outcome:
        if self is Outcome.UNKNOWN:
            return self
        return Outcome.FALSE if self is Outcome.TRUE else Outcome.TRUE

    @classmethod
    def of(cls, value: bool) -> Outcome:
        return cls.TRUE if value else cls.FALSE


_MARKS = {Outcome.TRUE: "✓", Outcome.FALSE: "✗", Outcome.UNKNOWN: "?"}
_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class Explanation:
    """One node of a filter evaluated against one record, with its children's explanations.

    Attributes:
        node: The AST node explained.
        outcome: Its value for the record: TRUE, FALSE or UNKNOWN (a null was compared).
        children: The explanations of the node's items (a group's, or a negation's one).
        field: For a condition, the field it reads.
        value: For a condition, the record's value of that field as stored (None for null).
        present: For a condition, whether the record has the field at all.
        instant: For a condition on a relative date-time, the instant it stood for.
        path: For a condition inside a JSON field, the keys leading to `value`.
        until: For a calendar period (`within`), the first instant after it; `instant` is
            its first instant.
        zone: For a calendar value that names no zone, the schema's zone it was taken in.
        days: For an anniversary, the month-days its period covered, and their zone.
        related: For a relation condition, which related rows made the outcome.
    """

    node: Node
    outcome: Outcome
    children: tuple[Explanation, ...] = ()
    field: str | None = None
    value: Any = None
    present: bool = False
    instant: datetime | None = None
    path: tuple[str, ...] = ()
    until: datetime | None = None
    zone: str | None = None
    days: MonthDays | None = None
    related: str = ""

    @property
    def matched(self) -> bool:
        """Whether the node is TRUE; at the root, whether the record is in the audience."""
        return self.outcome is Outcome.TRUE

    @property
    def is_condition(self) -> bool:
        """Shown as one line: a comparison, a null test, `!=` or `is not null`, a constant."""
        return not self.children or self.field is not None

    @property
    def label(self) -> str:
        """The node in words: the condition's text, or `all of` / `any of` / `not`."""
        if self.is_condition:
            text = to_text(self.node)
            if self.until is not None and self.instant is not None:
                text += f" [{format_datetime(self.instant)}, {format_datetime(self.until)})"
            elif self.instant is not None:
                text += f" [{format_datetime(self.instant)}]"
            if self.days is not None:
                text += f" {self.days.words}"
            elif self.zone is not None:
                text += f" in {self.zone}"
            return text
        return {"and": "all of", "or": "any of", "not": "not"}[self.node.kind]

    @property
    def seen(self) -> str:
        """The value the condition saw, e.g. `points = 42` or `email is missing`."""
        if self.related:
            return self.related
        if self.field is None:
            return ""
        name = reference(self.field, self.path)
        if not self.present:
            return f"{name} is missing"
        if self.value is None:
            return f"{name} is null"
        return f"{name} = {_shown(self.value)}"

    def render(self) -> str:
        """An indented tree, one line per node: mark, outcome, condition, value seen."""
        rows = list(self._rows(0))
        width = min(72, max(len(indent) + len(label) for indent, _, label, _ in rows))
        lines = []
        for indent, outcome, label, seen in rows:
            line = f"{indent}{_MARKS[outcome]} {outcome.value:<8} {label}"
            if seen:
                gap = max(0, width - len(indent) - len(label))
                line += " " * gap + f"   ({seen})"
            lines.append(line)
        return "\n".join(lines)

    def _rows(self, depth: int) -> Iterator[tuple[str, Outcome, str, str]]:
        yield "  " * depth, self.outcome, self.label, self.seen
        if not self.is_condition:
            for child in self.children:
                yield from child._rows(depth + 1)

    def __str__(self) -> str:
        return self.render()


def _shown(value: Any) -> str:
    """A value seen, as filters write values (`["beta"]`, `2025-01-31`), never Python's repr:
    a page shows it to people who write filters, not to Python programmers."""
    if isinstance(value, str | bool | int | float | datetime):
        return literal(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_shown(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    return repr(value)


def explain(
    root: Node, schema: Schema, record: Mapping[str, Any], *, now: datetime | None = None
) -> Explanation:
    """Evaluate the filter `root` (as the user wrote it) on `record`, keeping every node's
    outcome and the values compared.

    Relative date-times are taken at `now` (default: the system clock, read once).

    Raises:
        RecordError: `record` is not a mapping, or a field the filter reads holds a value of
            the wrong type (checked for every condition, not only those that decide).
    """
    if not isinstance(record, Mapping):
        raise RecordError(
            f"a record must be a mapping of field names to values, not {type(record).__name__}"
        )
    moment = as_now(system_clock() if now is None else now)
    return _Explainer(record, schema, moment).visit(root)


class _Explainer(Visitor[Explanation]):
    def __init__(self, record: Mapping[str, Any], schema: Schema, now: datetime) -> None:
        self.record = record
        self.schema = schema
        self.now = now

    def visit_and(self, node: And) -> Explanation:
        children = tuple(self.visit(item) for item in node.items)
        outcomes = {c.outcome for c in children}
        if Outcome.FALSE in outcomes:
            return Explanation(node, Outcome.FALSE, children)
        return Explanation(
            node, Outcome.UNKNOWN if Outcome.UNKNOWN in outcomes else Outcome.TRUE, children
        )

    def visit_or(self, node: Or) -> Explanation:
        children = tuple(self.visit(item) for item in node.items)
        outcomes = {c.outcome for c in children}
        if Outcome.TRUE in outcomes:
            return Explanation(node, Outcome.TRUE, children)
        return Explanation(
            node, Outcome.UNKNOWN if Outcome.UNKNOWN in outcomes else Outcome.FALSE, children
        )

    def visit_not(self, node: Not) -> Explanation:
        child = self.visit(node.item)
        # `email != "x"` and `company is not null` read as one condition: keep what it saw.
        spoken = (
            isinstance(node.item, IsNull | Blank)
            or (
                isinstance(node.item, Comparison | FieldComparison)
                and node.item.op in NEGATED_SPELLINGS
            )
            or (
                isinstance(node.item, ListTest) and node.item.op in (ListOp.EQUALS, ListOp.IS_EMPTY)
            )
        )
        if spoken:
            return Explanation(
                node,
                ~child.outcome,
                (child,),
                child.field,
                child.value,
                child.present,
                child.instant,
                child.path,
                child.until,
                child.zone,
                child.days,
            )
        return Explanation(node, ~child.outcome, (child,))

    def json_condition(self, node: Comparison | IsNull, lowered: Node) -> Explanation | None:
        """The explanation of a condition inside a JSON field, by `data_paths.truth`."""
        if not isinstance(lowered, Comparison | IsNull) or not lowered.path:
            return None
        column, path = lowered.field, lowered.path
        value, present = self.at_path(column, path)
        result = truth(lowered, self.record.get(column), path)
        outcome = Outcome.UNKNOWN if result is None else Outcome.of(result)
        return Explanation(node, outcome, (), column, value, present, None, path)

    def declared_in_json(self, node: Comparison | ListTest) -> bool:
        field = self.schema.get(node.field)
        return not node.path and field is not None and bool(field.source)

    def in_json(self, node: Comparison | ListTest, lowered: Node) -> Explanation:
        """A field declared inside JSON whose lowered form is several conditions at its path (a
        date's period or anniversary, a list's test): their outcome, on the user's condition."""
        source = self.schema[node.field].source
        column, path = source[0], source[1:]
        value, present = self.at_path(column, path)
        outcome = self.visit(lowered).outcome
        return Explanation(node, outcome, (), column, value, present, None, path)

    def at_path(self, column: str, path: tuple[str, ...]) -> tuple[Any, bool]:
        """The value at `path` of the record's JSON `column` (None when absent), and whether
        every key of the path was there."""
        value: Any = self.record.get(column, _MISSING)
        for key in path:
            value = value.get(key, _MISSING) if isinstance(value, Mapping) else _MISSING
        present = value is not _MISSING
        return (value if present else None), present

    def visit_is_null(self, node: IsNull) -> Explanation:
        inside = self.json_condition(node, lower(node, self.schema))
        if inside is not None:
            return inside
        value = self.record.get(node.field, _MISSING)
        present = value is not _MISSING
        value = None if not present else value
        return Explanation(node, Outcome.of(value is None), (), node.field, value, present)

    def visit_comparison(self, node: Comparison) -> Explanation:
        # The condition as the back-ends compare it (`rewrite/lower.py`): a constant for an
        # empty list, folded literals, UTC instants, a JSON read for a declared field.
        lowered = lower(node, self.schema, self.now)
        inside = self.json_condition(node, lowered)
        if inside is not None:
            return inside
        if self.declared_in_json(node):
            return self.in_json(node, lowered)
        value = self.record.get(node.field, _MISSING)
        present = value is not _MISSING
        value = None if not present else value
        instant = until = None
        zone: str | None = None
        if isinstance(lowered, Comparison) and isinstance(node.value, RELATIVE_TYPES):
            instant = cast(datetime, lowered.value)
        if isinstance(node.value, StartOf | Period) and node.value.zone is None:
            zone = self.schema.time_zone
        if type(node.value) is Period and isinstance(lowered, And):
            low, high = (cast(Comparison, item) for item in lowered.items)
            instant, until = cast(datetime, low.value), cast(datetime, high.value)
            if value is None:
                outcome = Outcome.UNKNOWN
            else:
                outcome = Outcome.of(self.compare(low, value) and self.compare(high, value))
            return Explanation(
                node, outcome, (), node.field, value, present, instant, (), until, zone
            )
        if isinstance(lowered, Const):
            outcome = Outcome.of(lowered.value)
        elif value is None:
            outcome = Outcome.UNKNOWN
        else:
            assert isinstance(lowered, Comparison)
            outcome = Outcome.of(self.compare(lowered, value))
        days = None
        if isinstance(lowered, Comparison) and isinstance(lowered.value, MonthDays):
            days = lowered.value
        return Explanation(
            node, outcome, (), node.field, value, present, instant, (), None, zone, days
        )

    def compare(self, node: Comparison, value: Any) -> bool:
        kind = self.schema[node.field].type
        if not accepts(kind, value):
            raise RecordError(
                f'field "{node.field}" holds {type(value).__name__} {value!r}; '
                f"expected {kind.value}"
            )
        try:
            value = record_value(kind, value)
            return holds(node.op, value, node.value, node.insensitive)
        except (TypeError, AttributeError, ValueError) as exc:
            raise RecordError(
                f'field "{node.field}" holds {type(value).__name__} {value!r}; '
                f"expected {kind.value} ({exc})"
            ) from None

    def array_test(self, node: ListTest) -> Explanation:
        """A JSON array at a data path, by `lists.array_truth` on the lowered node."""
        lowered = lower(node, self.schema)
        assert isinstance(lowered, ListTest)
        shown, present = self.at_path(node.field, node.path)
        result = lists.array_truth(lowered, self.record.get(node.field))
        outcome = Outcome.UNKNOWN if result is None else Outcome.of(result)
        return Explanation(node, outcome, (), node.field, shown, present, None, node.path)

    def visit_const(self, node: Const) -> Explanation:
        return Explanation(node, Outcome.of(node.value))

    def relation(self, node: Quantified | Aggregated) -> Explanation:
        def explain_at(inner: Node, schema: Schema, row: Mapping[str, Any]) -> Explanation:
            return _Explainer(row, schema, self.now).visit(inner)

        result, related = explain_relation(node, self.schema, self.record, explain_at)
        outcome = Outcome.UNKNOWN if result is None else Outcome.of(result)
        return Explanation(node, outcome, (), related=related)

    def visit_quantified(self, node: Quantified) -> Explanation:
        return self.relation(node)

    def visit_aggregated(self, node: Aggregated) -> Explanation:
        return self.relation(node)

    def visit_field_comparison(self, node: FieldComparison) -> Explanation:
        # One line; the value shown is the left field's, the right one is in the line's text.
        value = self.record.get(node.field, _MISSING)
        try:
            result = reference_truth(node, self.schema[node.field].type, self.record)
        except (TypeError, ValueError) as exc:
            raise RecordError(f"{exc}; expected {self.schema[node.field].type.value}") from None
        outcome = Outcome.UNKNOWN if result is None else Outcome.of(result)
        present = value is not _MISSING
        return Explanation(node, outcome, (), node.field, value if present else None, present)

    def visit_blank(self, node: Blank) -> Explanation:
        # One line, as written; its outcome is that of what it means (`blank_form`), and the
        # value shown is the one its null test saw.
        meaning = self.visit(blank_form(node))
        seen = meaning.children[0]
        return Explanation(
            node, meaning.outcome, (), seen.field, seen.value, seen.present, None, seen.path
        )

    def visit_list_test(self, node: ListTest) -> Explanation:
        if node.path:
            return self.array_test(node)
        if self.declared_in_json(node):
            return self.in_json(node, lower(node, self.schema, self.now))
        value = self.record.get(node.field, _MISSING)
        present = value is not _MISSING
        value = None if not present else value
        kind = self.schema[node.field].type
        try:
            result = lists.truth(_folded_as_lowered(node), kind, value)
        except (TypeError, ValueError) as exc:
            raise RecordError(f'field "{node.field}": {exc}') from None
        outcome = Outcome.UNKNOWN if result is None else Outcome.of(result)
        return Explanation(node, outcome, (), node.field, value, present)


def _folded_as_lowered(node: ListTest) -> ListTest:
    """`node` with its literals folded as lowering folds them. The user's node is evaluated,
    not the lowered one (`lists.truth` decides empty operand lists itself), so the folding is
    done here."""
    if not node.insensitive:
        return node
    folded = tuple(fold(v) if isinstance(v, str) else v for v in node.value)
    return ListTest(node.field, node.op, folded, True)
