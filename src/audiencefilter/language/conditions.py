"""The one place where a condition is checked and built: field, operator, operand and mode in,
a node or a problem out. Both readers (the where-clause JSON and the text syntax) handle their
syntax only and call `Conditions`.

Design choices:
- Every validation rule, message, type hint and suggestion of a condition lives here once:
  operator/type fit, value types, null and list rules, date-times absolute and relative,
  `mode`, and that `contains` is always case-insensitive. A reader differs only in how it
  writes things, which a `Syntax` says: "gte" or `">="`, "array" or "list", the way a null
  test is spelled in a suggestion, how a found value is described.
- Operands are decoded values: str, int, float, bool, None, `datetime`, a list, a mapping
  (JSON's `{"ago": ...}`), or the two literals whose meaning depends on the field they meet
  and that only the text syntax writes bare: `BareDateTime` and `WordsAgo`.
- Problems are reported through a callback with a location relative to the operand: `()` for
  the operand, `(2,)` for its third item, `("ago",)` inside it, and `OPERATOR` for the
  operator itself. The reader turns that into its own kind of place: a path like
  `OR[1].points.gte` or a line and column. Nothing here knows either.
- Building keeps going after a problem and yields `TRUE` in place of the bad condition, so one
  `FilterError` lists every problem.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final, TypeVar

from ..errors import describe_value, did_you_mean
from .calendar import (
    Period,
    StartOf,
    period_from_json,
    period_from_words,
    start_from_json,
    start_from_words,
)
from .data_paths import value_type
from .fields import (
    ALWAYS_FOLDED,
    BLANK,
    CALENDAR_TYPES,
    COMPARISON_OPS,
    JSON_STRING_ALIASES,
    LIST_FIELD_OPS,
    LIST_OPS,
    OPERATORS,
    ORDERING_OPS,
    PATTERN_OPS,
    PERIOD_OPS,
    Field,
    FieldType,
    ListOp,
    Op,
    Schema,
)
from .lists import IN_JSON, in_json_hint
from .nodes import TRUE, Blank, Comparison, FieldComparison, IsNull, ListTest, Node, Not
from .relative import Ago, DurationError
from .values import Scalar, as_utc, is_number, parse_date, parse_datetime
from .zones import CalendarError

Where = tuple[str | int, ...] | None
"""Where a problem is, relative to the operand: `()` the operand, `(2,)` its third item,
`("ago",)` a key inside it; None for the operator itself."""
Report = Callable[[Where, str, str | None], None]
"""`report(where, message, suggestion)`: how a reader is told of a problem."""
At = tuple[str | int, ...]
"""Where an operand, or a part of it, is: a `Where` other than the operator."""
Keys = tuple[str, ...]
"""The keys of a path inside a JSON field."""
_C = TypeVar("_C", StartOf, Period)

OPERATOR: Final[Where] = None


@dataclass(frozen=True, slots=True)
class BareDateTime:
    """A date-time written without quotes (`2025-01-31`): a date-time for a date-time field, a
    type error anywhere else."""

    text: str


@dataclass(frozen=True, slots=True)
class FieldName:
    """A field name written where a value goes (text: `referrals > points`): a reference to
    that field of the same record, as JSON's `{"_ref": "points"}` is."""

    text: str


REF = "_ref"
"""The key of a field reference in JSON, after Prisma's field references."""
REFERENCE_OPS = COMPARISON_OPS


@dataclass(frozen=True, slots=True)
class WordsAgo:
    """A relative date-time written in words (`30 days ago`), read for date-time fields only."""

    text: str


@dataclass(frozen=True, slots=True)
class WordsStart:
    """The start of a calendar unit written in words (`start of last month`), for date-time
    fields only."""

    text: str


@dataclass(frozen=True, slots=True)
class WordsPeriod:
    """A calendar period written in words after `within` (`this month`, `last 7 days`)."""

    text: str


_PERIOD_HINT = 'write e.g. {"within": {"this": "month"}} or {"within": {"last": 7, "unit": "day"}}'
_PERIOD_VALUE = "a calendar period is a condition of its own, not a value to compare with"
_PERIOD_VALUE_HINT = "and the period, or compare with the start of a unit"
_REFERENCE_TO_PATH = "a field reference compares two fields of their own columns, not a JSON path"
_PERIOD_ON_PATH = (
    "applies to date-time fields; a value inside JSON is compared as a string, a number or a "
    "boolean"
)
_PERIOD_ON_PATH_HINT = "declare the key as a date-time field of the schema, or compare the string"
_NOT_ONE_JSON_VALUE = "JSON fields compare one value at a time; arrays and objects are not compared"
NON_FINITE_HINT = "NaN and Infinity are not numbers a filter can compare with"
LONE_SURROGATE = "the string holds a lone surrogate, not valid Unicode"
MODES = ("insensitive", "default")


@dataclass(frozen=True, slots=True)
class Syntax:
    """How one syntax writes what the messages name; the messages themselves are here.

    Attributes:
        op: An operator as the syntax spells it in a message (`gte`, `">="`).
        operator_names: Every way to test a field, for "takes ..." suggestions.
        describe: A found operand, for "found ..." (`the string "x"`, `the date-time ...`).
        written: A scalar operand as written, for "write [x]"-style suggestions.
        as_string: Written text quoted as a string literal of the syntax.
        list_word: What a list of values is called ("array", "list").
        datetime_quotes: The quote around date-times in examples (`"` in JSON, none in text).
        datetime_is_string: Whether a date-time is written as a string (JSON), which the
            expected-type message then says.
        null_test: The suggestion for testing a field for null, given its name.
        null_in_list: The suggestion for matching nulls besides a list, given the field name.
        data_null_test: The suggestion for testing a key of a JSON field for null.
        or_word: How the syntax writes a disjunction (`OR`, `or`).
        mode_word: What sets case-insensitivity (`mode`, `ignoring case`).
        list_op: A list field's operator as the syntax spells it.
    """

    op: Callable[[Op], str]
    operator_names: Callable[[Field], str]
    describe: Callable[[Any], str]
    written: Callable[[Any], str]
    as_string: Callable[[str], str]
    list_word: str
    datetime_quotes: str
    datetime_is_string: bool
    null_test: Callable[[str], str]
    null_in_list: Callable[[str], str]
    data_null_test: str
    or_word: str
    mode_word: str
    list_op: Callable[[ListOp], str] = str
    """A list operator as the syntax spells it in a message (`hasSome`, `"has some"`)."""

    def datetime_hint(self) -> str:
        q = self.datetime_quotes
        return (
            f"write e.g. {q}2025-01-31{q}, {q}2025-01-31T09:30:00Z{q} or "
            f"{q}2025-01-31T09:30:00+02:00{q}"
        )

    def expected(self, kind: FieldType) -> str:
        if kind is FieldType.DATETIME and self.datetime_is_string:
            return "an ISO 8601 date-time string"
        if kind is FieldType.DATE and self.datetime_is_string:
            return "an ISO 8601 date string (YYYY-MM-DD)"
        return kind.entry.noun

    def date_hint(self) -> str:
        q = self.datetime_quotes
        return f"write the day alone, e.g. {q}1990-11-23{q}: a date has no time and no zone"


def shown(text: str) -> str:
    """A name as it can be printed: lone surrogates escaped, long names cut."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= 60 else text[:57] + "..."


def is_insensitive(kind: FieldType, op: Op, insensitive: bool) -> bool:
    """Whether a comparison folds case: on strings only, when asked (`mode`), and always for
    `contains`."""
    return kind is FieldType.STRING and (insensitive or op in ALWAYS_FOLDED)


def is_valid_unicode(text: str) -> bool:
    """False for a string holding a lone surrogate, which no database can store."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def wrong_type(syntax: Syntax, field: Field, found: str) -> str:
    """The message for an operand of the wrong type."""
    kind = field.type
    return f'expected {syntax.expected(kind)} for {kind.value} field "{field.name}", found {found}'


def unknown_field(name: str, schema: Schema, candidates: Sequence[str]) -> tuple[str, str]:
    """The message and suggestion for a name that is no field (`candidates`: what the syntax
    accepts there, for "did you mean")."""
    hint = did_you_mean(name, candidates)
    if hint is None:
        hint = "filterable fields are " + ", ".join(schema.names) + relations_listed(schema)
    return f'unknown field "{shown(name)}"', hint


def relations_listed(schema: Schema) -> str:
    """The schema's relations, as an unknown name's hint goes on to list them after its fields
    (`; relations are company (to-one), orders (to-many)`); empty without relations."""
    if not schema.relations:
        return ""
    kinds = [f"{r.name} ({'to-many' if r.many else 'to-one'})" for r in schema.relations]
    return "; relations are " + ", ".join(kinds)


class Conditions:
    """Checks and builds the conditions of one read, reporting problems to the reader."""

    def __init__(self, syntax: Syntax, max_array: int, schema: Schema | None = None) -> None:
        self.syntax = syntax
        self.max_array = max_array
        self.schema_fields = schema  # the fields a field reference may name
        # Set while reading what a reference cannot stand in (an aggregate's test, "count(rows)"):
        # the value compared there is no field of a record, and no back-end compares it with one.
        self.no_reference_in = ""

    def accepts(self, field: Field, op: Op, report: Report) -> bool:
        """Whether `field` takes `op`; if not, says which fields do."""
        if field.accepts(op):
            return True
        report(
            OPERATOR,
            f'{self.syntax.op(op)} applies to {_applies_to(op)}; "{field.name}" is a '
            f"{field.type.value} field",
            f'"{field.name}" takes {self.syntax.operator_names(field)}',
        )
        return False

    def mode(self, field: Field, value: Any, inside_not: bool, report: Report) -> bool:
        """Whether `value` (JSON's `mode`; text's `ignoring case` is "insensitive") makes
        `field`'s comparisons case-insensitive; a mode anywhere but on a string field is a
        problem."""
        folds = _holds_strings(field)
        if inside_not:
            self.mode_inside_not(report)
        elif not folds:
            self.mode_off_strings(field, report)
        elif value not in MODES:
            report(
                (),
                f'expected "insensitive" or "default", found {describe_value(value)}',
                did_you_mean(str(value), MODES),
            )
        return value == "insensitive" and folds

    def mode_inside_not(self, report: Report) -> None:
        """A mode under `not`, which takes its mode from the field's object around it."""
        word = self.syntax.mode_word
        report(
            (),
            f"{word} is not allowed inside not",
            f"put {word} beside not, in the field's object; not inherits it",
        )

    def mode_off_strings(self, field: Field, report: Report) -> None:
        """A mode on a field whose values have no case."""
        word = self.syntax.mode_word
        report(
            (),
            f'{word} applies to string fields; "{field.name}" is a {field.type.value} field',
            f"remove {word}",
        )

    def comparison(
        self, field: Field, op: Op, value: Any, insensitive: bool, report: Report
    ) -> Node:
        """`field op value`, for a field `accepts` found to take `op`."""
        if _is_reference(value):
            return self.reference(field, op, value, insensitive, report)
        insensitive = is_insensitive(field.type, op, insensitive)
        if op in LIST_OPS and value is None:
            return null_list(op, IsNull(field.name))
        if op in PERIOD_OPS:
            period = self.period(op, value, report)
            return TRUE if period is None else Comparison(field.name, op, period)
        if op in LIST_OPS:
            values = self.values(field, op, value, report)
            return TRUE if values is None else Comparison(field.name, op, values, insensitive)
        return self.scalar_comparison(field, op, value, insensitive, report)

    def scalar_comparison(
        self, field: Field, op: Op, value: Any, insensitive: bool, report: Report
    ) -> Node:
        """`field op value` for an operator that takes one value."""
        if value is None:
            return self.null_comparison(field, op, report)
        if _is_list(value):
            report(
                (),
                wrong_type(self.syntax, field, self.syntax.describe(value)),
                f"use {self.syntax.op(Op.IN)} to test against several values",
            )
            return TRUE
        literal = self.literal(field, value, (), report)
        return TRUE if literal is None else Comparison(field.name, op, literal, insensitive)

    def null_comparison(self, field: Field, op: Op, report: Report) -> Node:
        """`field op null`: a null test for `equals`, a problem for any other operator."""
        if op is Op.EQUALS:
            return IsNull(field.name)
        report((), f"{self.syntax.op(op)} does not take null", self.syntax.null_test(field.name))
        return TRUE

    def over_limit(self, value: Sequence[Any], report: Report) -> bool:
        """Whether a list operand holds more values than one read takes (and if so, says so)."""
        if len(value) <= self.max_array:
            return False
        report(
            (),
            f"the {self.syntax.list_word} has {len(value)} values, over the limit of "
            f"{self.max_array}",
            "split the audience",
        )
        return True

    def values(self, field: Field, op: Op, value: Any, report: Report) -> tuple[Scalar, ...] | None:
        """The literals of an `in` or `notIn` list; None after a problem."""
        if not _is_list(value):
            self.not_a_list(op, field.type.entry.nouns, value, report)
            return None
        if self.over_limit(value, report):
            return None
        items = [self.value_item(field, op, item, (i,), report) for i, item in enumerate(value)]
        literals = tuple(item for item in items if item is not None)
        return literals if len(literals) == len(items) else None

    def not_a_list(self, op: Op, plural: str, value: Any, report: Report) -> None:
        """`in` or `notIn` with one value (or none) where a list of `plural` goes."""
        syntax = self.syntax
        report(
            (),
            f"{syntax.op(op)} takes {_article(syntax.list_word)} of {plural}, "
            f"found {syntax.describe(value)}",
            None if value is None or _is_map(value) else f"write [{syntax.written(value)}]",
        )

    def value_item(self, field: Field, op: Op, item: Any, at: At, report: Report) -> Scalar | None:
        """One value of an `in` or `notIn` list, fixed and not null; None after a problem."""
        inside = self.syntax.op(op)
        if item is None:
            report(at, f"null is not allowed inside {inside}", self.syntax.null_in_list(field.name))
            return None
        if field.type in CALENDAR_TYPES and _is_relative(item):
            report(
                at,
                _relative_in_list(inside),
                f"compare with {self.syntax.op(Op.EQUALS)}, "
                f"or combine conditions with {self.syntax.or_word}",
            )
            return None
        literal = self.literal(field, item, at, report)
        return None if isinstance(literal, Ago | StartOf) else literal

    def literal(
        self, field: Field, value: Any, at: At, report: Report
    ) -> Scalar | Ago | StartOf | None:
        """`value` as a literal of `field`'s type; None after a problem."""
        kind = field.type
        exact = type(value)
        if kind is FieldType.STRING and exact is str:
            return self.text_literal(value, at, report)
        if kind is FieldType.NUMBER and is_number(value):
            return int(value) if isinstance(value, int) else float(value)
        if kind is FieldType.BOOLEAN and exact is bool:
            return value  # type: ignore[no-any-return]
        if kind is FieldType.DATE and (exact in (str, BareDateTime, date) or exact is datetime):
            return self.day(value, at, report)
        if kind in CALENDAR_TYPES and _is_datetime_operand(value):
            return self.datetime_literal(value, at, report)
        report(
            at, wrong_type(self.syntax, field, self.syntax.describe(value)), self.hint(kind, value)
        )
        return None

    @staticmethod
    def text_literal(value: str, at: At, report: Report) -> str | None:
        """A string operand, which must be valid Unicode to be stored or sent anywhere."""
        if is_valid_unicode(value):
            return value
        report(at, LONE_SURROGATE, None)
        return None

    def datetime_literal(
        self, value: Any, at: At, report: Report
    ) -> datetime | Ago | StartOf | None:
        """A date-time operand, fixed or relative to now, in any of the ways one is written;
        None after a problem."""
        exact = type(value)
        if exact is str or exact is BareDateTime or isinstance(value, datetime):
            return self.instant(value, at, report)
        if exact is WordsAgo:
            return self.ago(value.text, Ago.from_words, at, report)
        if exact is WordsStart:
            return self.calendar(lambda: start_from_words(value.text), at, report)
        if exact is WordsPeriod or _is_period(value):
            report(at, _PERIOD_VALUE, f"write {self.syntax.op(Op.WITHIN)} {_PERIOD_VALUE_HINT}")
            return None
        return self.relative_mapping(value, at, report)

    def relative_mapping(
        self, value: Mapping[Any, Any], at: At, report: Report
    ) -> Ago | StartOf | None:
        """A JSON date-time relative to now: the start of a calendar unit, or `{"ago": ...}`."""
        if "startOf" not in value:
            return self.relative(value, at, report)
        if getattr(value, "duplicates", ()):
            report(at, "a key of the start of a calendar unit appears twice", None)
            return None
        return self.calendar(lambda: start_from_json(dict(value)), at, report)

    def instant(self, value: Any, at: At, report: Report) -> datetime | None:
        try:
            if isinstance(value, datetime):
                return as_utc(value)
            return parse_datetime(value.text if type(value) is BareDateTime else value)
        except ValueError as exc:
            report(
                at,
                f"expected an ISO 8601 date-time, found {self.syntax.describe(value)}: {exc}",
                self.syntax.datetime_hint(),
            )
            return None

    def day(self, value: Any, at: At, report: Report) -> date | None:
        """A date field's literal: a calendar date, never a date-time (its date would depend
        on a zone)."""
        if type(value) is date:
            return value
        text = value.text if type(value) is BareDateTime else value
        try:
            if not isinstance(text, str):
                raise ValueError("a datetime is not a date")
            return parse_date(text)
        except ValueError as exc:
            report(
                at,
                f"expected an ISO 8601 date, found {self.syntax.describe(value)}: {exc}",
                self.syntax.date_hint(),
            )
            return None

    def relative(self, value: Mapping[Any, Any], at: At, report: Report) -> Ago | None:
        """`{"ago": "<ISO 8601 duration>"}`: a date-time relative to the moment of evaluation."""
        text = value.get("ago")
        if getattr(value, "duplicates", ()):  # a decoder's mark of repeated keys
            report((*at, "ago"), 'the key "ago" appears more than once', None)
            return None
        if len(value) != 1 or not isinstance(text, str):
            report(
                at,
                'expected a date-time, or {"ago": "<ISO 8601 duration>"} for one relative to '
                f"now, found {describe_value(value)}",
                'write e.g. {"ago": "P30D"} for 30 days ago',
            )
            return None
        return self.ago(text, Ago.parse, (*at, "ago"), report)

    def ago(self, text: str, read: Callable[[str], Ago], at: At, report: Report) -> Ago | None:
        try:
            return read(text)
        except DurationError as exc:
            report(at, str(exc), exc.suggestion)
            return None

    def period(self, op: Op, value: Any, report: Report) -> Period | None:
        """The operand of `within`: a calendar period; None after a problem."""
        if type(value) is WordsPeriod:
            return self.calendar(lambda: period_from_words(value.text), (), report)
        if _is_map(value) and not getattr(value, "duplicates", ()):
            return self.calendar(lambda: period_from_json(dict(value)), (), report)
        report(
            (),
            f"{self.syntax.op(op)} takes a calendar period, found " + self.syntax.describe(value),
            _PERIOD_HINT if self.syntax.datetime_is_string else "write e.g. within this month",
        )
        return None

    def calendar(self, read: Callable[[], _C], at: At, report: Report) -> _C | None:
        """The calendar value `read` makes, or None after reporting its problem (at the key
        it names, if any)."""
        try:
            return read()
        except CalendarError as exc:
            key = getattr(exc, "key", None)
            report(at if key is None else (*at, key), str(exc), exc.suggestion)
            return None

    def hint(self, kind: FieldType, value: Any) -> str | None:
        """A suggestion for an operand of the wrong type, when one can be given."""
        syntax = self.syntax
        if type(value) is str:
            inner = value.strip()
            if kind is FieldType.NUMBER and _is_number_text(inner):
                return f"write the number without quotes: {inner}"
            if kind is FieldType.BOOLEAN and inner.lower() in ("true", "false"):
                return f"write {inner.lower()} without quotes"
            return None
        if kind is FieldType.NUMBER and isinstance(value, float):
            return NON_FINITE_HINT
        if kind is FieldType.STRING and _is_scalar(value):
            return f"write it as a string: {syntax.as_string(syntax.written(value))}"
        if kind is FieldType.DATETIME and not syntax.datetime_is_string and _is_scalar(value):
            return syntax.datetime_hint()
        if kind is FieldType.DATE and not syntax.datetime_is_string and _is_scalar(value):
            return syntax.date_hint()
        return None

    def reference(
        self, field: Field, op: Op, value: Any, insensitive: bool, report: Report
    ) -> Node:
        """`field op other`, for a field reference (`{"_ref": "other"}`, or a bare field name
        in text): both fields of one type, neither stored inside JSON, no case folding."""
        named = self.reference_name(value, report)
        if named is None:
            return TRUE
        name, at = named
        if self.no_reference_in:
            report(
                at,
                f"a field reference cannot be compared with {self.no_reference_in}: its value is "
                f'compared with a literal; found the field "{shown(name)}"',
                "compare it with a literal value; a field reference compares two fields of one "
                "record or of one related row",
            )
            return TRUE
        other = self.referenced_field(name, type(value) is FieldName, at, report)
        if other is None or not self.reference_fits(field, op, other, at, insensitive, report):
            return TRUE
        return FieldComparison(field.name, op, other.name)

    def reference_fits(
        self, field: Field, op: Op, other: Field, at: At, insensitive: bool, report: Report
    ) -> bool:
        """Whether `field op other` is a reference one can evaluate; reports the first misfit."""
        return (
            self.reference_takes(op, report)
            and self.reference_columns(field, other, at, report)
            and self.reference_types(field, other, at, report)
            and self.reference_exact(insensitive, report)
        )

    def reference_name(self, value: Any, report: Report) -> tuple[str, At] | None:
        """The field a reference names and where that name is written; None when a JSON
        reference is not one (extra keys, a name that is no string)."""
        if type(value) is FieldName:
            return value.text, ()
        name = value.get(REF)
        if len(value) != 1 or type(name) is not str:
            report(
                (),
                f'expected a field reference {{"{REF}": "<field name>"}}, found '
                f"{describe_value(value)}",
                f'write e.g. {{"{REF}": "points"}}',
            )
            return None
        return name, (REF,)

    def referenced_field(self, name: str, bare: bool, at: At, report: Report) -> Field | None:
        """The schema's field `name`; None (reported) when there is none. A `bare` word of the
        text syntax may as well be a misspelt keyword or unquoted text, which the hint says."""
        fields = self.schema_fields
        other = fields.get(name) if fields is not None else None
        if other is not None:
            return other
        names = () if fields is None else fields.names
        if bare:
            hint = did_you_mean(name, (*names, "true", "false", "null")) or (
                f"strings are written in double quotes: {self.syntax.as_string(name)}"
            )
        else:
            hint = did_you_mean(name, names) or "filterable fields are " + ", ".join(names)
        report(at, f'unknown field "{shown(name)}" in a field reference', hint)
        return None

    def reference_takes(self, op: Op, report: Report) -> bool:
        """Whether a field reference can stand after `op`: equality and ordering only."""
        if op in REFERENCE_OPS:
            return True
        syntax = self.syntax
        report(
            (),
            f"a field reference compares with {syntax.op(Op.EQUALS)}, {syntax.op(Op.GT)}, "
            f"{syntax.op(Op.GTE)}, {syntax.op(Op.LT)} or {syntax.op(Op.LTE)}, not "
            f"{syntax.op(op)}",
            None,
        )
        return False

    @staticmethod
    def reference_columns(field: Field, other: Field, at: At, report: Report) -> bool:
        """Whether both fields of a reference are columns of their own, not read inside JSON."""
        inside_json = [f.name for f in (field, other) if f.type is FieldType.JSON or f.source]
        if not inside_json:
            return True
        report(
            at,
            "a field reference compares two fields of their own columns; "
            f'"{inside_json[0]}" is read from inside JSON',
            None,
        )
        return False

    def reference_types(self, field: Field, other: Field, at: At, report: Report) -> bool:
        """Whether the two fields of a reference have one type; if not, names those that do."""
        if other.type is field.type:
            return True
        same = [
            f.name
            for f in self.schema_fields or ()
            if f.type is field.type and not f.source and f.name != field.name
        ]
        report(
            at,
            f'"{field.name}" is a {field.type.value} field and "{other.name}" is a '
            f"{other.type.value} field: a field reference compares fields of one type",
            f"compare with a {field.type.value} field: " + ", ".join(same) if same else None,
        )
        return False

    def reference_exact(self, insensitive: bool, report: Report) -> bool:
        """Whether a reference is free of case folding, which it does not support."""
        if not insensitive:
            return True
        word = self.syntax.mode_word
        report(
            (),
            f"{word} does not apply to a field reference: it compares the fields as they are",
            f"remove {word}",
        )
        return False

    def blank(self, field: Field, keys: Keys | None, value: Any, report: Report) -> Node:
        """`blank: true` (null or `""`) or `blank: false` (neither), on a string field or a
        data path (`keys`)."""
        if not self.blank_applies(field, keys, report):
            return TRUE
        if type(value) is not bool:
            report(
                (),
                f"{BLANK} takes true or false, found {self.syntax.describe(value)}",
                f"write {BLANK}: true for null or empty, {BLANK}: false for neither",
            )
            return TRUE
        node = Blank(field.name, keys or ())
        return node if value else Not(node)

    def blank_applies(self, field: Field, keys: Keys | None, report: Report) -> bool:
        """Whether `blank` can test `field`: only strings and JSON values can be empty."""
        if field.type is FieldType.STRING or keys is not None:
            return True
        report(
            OPERATOR,
            f'{BLANK} applies to string fields and JSON paths; "{field.name}" is a '
            f"{field.type.value} field",
            self.syntax.null_test(field.name),
        )
        return False

    def json_alias(
        self,
        field: Field,
        keys: Keys | None,
        name: str,
        value: Any,
        insensitive: bool,
        report: Report,
    ) -> Node:
        """Prisma's `string_contains`, `string_starts_with` or `string_ends_with` at a data path:
        the `contains`, `startsWith` or `endsWith` it names, with its rules (`contains` ignores
        case); elsewhere a problem that names the operator to use."""
        op = JSON_STRING_ALIASES[name]
        if keys is None:
            self.alias_off_path(field, name, op, report)
        elif self.alias_takes(name, value, report):
            return self.data_comparison(field, keys, op, value, insensitive, report)
        return TRUE

    def alias_takes(self, name: str, value: Any, report: Report) -> bool:
        """Whether `value` is the string a JSON string alias compares with."""
        if type(value) is str:
            return True
        report(
            (),
            f"{name} takes a string, found {self.syntax.describe(value)}",
            None if value is None else f"write {name}: {self.syntax.as_string(str(value))}",
        )
        return False

    def alias_off_path(self, field: Field, name: str, op: Op, report: Report) -> None:
        """A JSON string alias on a field of its own, which takes the plain operator."""
        report(
            OPERATOR,
            f'{name} is the name of {self.syntax.op(op)} on JSON paths; "{field.name}" is a '
            f"{field.type.value} field",
            f"write {self.syntax.op(op)}",
        )

    # Conditions on a key inside a JSON field (see `data_paths`).

    def data_keys(self, keys: Any, report: Report) -> tuple[str, ...] | None:
        """The keys of a data path; None after a problem."""
        if not _is_list(keys) or not keys or not all(isinstance(k, str) for k in keys):
            report(
                (),
                f"expected a non-empty array of keys (strings), found {describe_value(keys)}",
                'write e.g. "path": ["plan"] or "path": ["address", "city"]',
            )
            return None
        for key in keys:
            if "\x00" in key or not is_valid_unicode(key):
                report((), "a key holds NUL or a lone surrogate", None)
                return None
        return tuple(keys)

    def data_comparison(
        self, field: Field, keys: Keys, op: Op, value: Any, insensitive: bool, report: Report
    ) -> Node:
        """`field.keys op value`: the literal's own JSON type decides the comparison."""
        if self.data_operand_refused(op, value, report):
            return TRUE
        if op in LIST_OPS:
            return self.data_list_comparison(field, keys, op, value, insensitive, report)
        if value is None:
            return self.data_null_comparison(field, keys, op, report)
        literal = self.data_literal(op, value, (), report)
        if literal is None:
            return TRUE
        folded = is_insensitive(value_type(literal), op, insensitive)
        return Comparison(field.name, op, literal, folded, keys)

    def data_operand_refused(self, op: Op, value: Any, report: Report) -> bool:
        """Whether `op value` is refused at a data path whatever the value there: a field
        reference, or a calendar period (JSON holds no date-times)."""
        if _is_reference(value):
            report((), _REFERENCE_TO_PATH, None)
            return True
        if op in PERIOD_OPS:
            report(OPERATOR, f"{self.syntax.op(op)} {_PERIOD_ON_PATH}", _PERIOD_ON_PATH_HINT)
            return True
        return False

    def data_list_comparison(
        self, field: Field, keys: Keys, op: Op, value: Any, insensitive: bool, report: Report
    ) -> Node:
        """`in` or `notIn` at a data path (null: a null test, as on a field)."""
        if value is None:
            return null_list(op, IsNull(field.name, keys))
        literals = self.data_values(op, value, report)
        if literals is None:
            return TRUE
        string = bool(literals) and value_type(literals[0]) is FieldType.STRING
        return Comparison(field.name, op, literals, string and insensitive, keys)

    def data_null_comparison(self, field: Field, keys: Keys, op: Op, report: Report) -> Node:
        """`field.keys op null`: a null test for `equals`, a problem for any other operator."""
        if op is Op.EQUALS:
            return IsNull(field.name, keys)
        report((), f"{self.syntax.op(op)} does not take null", self.syntax.data_null_test)
        return TRUE

    def data_values(self, op: Op, value: Any, report: Report) -> tuple[Scalar, ...] | None:
        """The literals of `in` or `notIn` at a data path, all of one JSON type (which decides
        how they compare); None after a problem."""
        if not _is_list(value):
            self.not_a_list(op, "strings, numbers or booleans", value, report)
            return None
        if self.over_limit(value, report):
            return None
        items = [self.data_literal(op, item, (i,), report) for i, item in enumerate(value)]
        literals = tuple(item for item in items if item is not None)
        if len(literals) != len(items) or not self.one_json_type(op, literals, report):
            return None
        return literals

    def one_json_type(self, op: Op, literals: tuple[Scalar, ...], report: Report) -> bool:
        """Whether a list's values share one JSON type, which says how a path's value compares
        with them."""
        kinds = {value_type(item) for item in literals}
        if len(kinds) <= 1:
            return True
        report(
            (),
            f"the values of {self.syntax.op(op)} must all have one JSON type, found "
            + " and ".join(sorted(k.value for k in kinds)),
            f"split it into several conditions joined with {self.syntax.or_word}",
        )
        return False

    def data_literal(self, op: Op, value: Any, at: At, report: Report) -> Scalar | None:
        """A string, number or boolean that `op` can compare with; None after a problem."""
        if value is None:
            report(at, f"null is not allowed inside {self.syntax.op(op)}", None)
            return None
        literal = self.json_scalar(value, at, report)
        if literal is None or not self.applies_to_json_value(op, literal, value, at, report):
            return None
        return literal

    def applies_to_json_value(
        self, op: Op, literal: Scalar, value: Any, at: At, report: Report
    ) -> bool:
        """Whether `op` compares values of `literal`'s JSON type (no `lt` on booleans)."""
        kind = value_type(literal)
        if op in OPERATORS[kind]:
            return True
        report(
            at,
            f"{self.syntax.op(op)} does not apply to a {kind.value} value "
            f"({self.syntax.describe(value)})",
            f"with a {kind.value}, use "
            + ", ".join(sorted(self.syntax.op(o) for o in OPERATORS[kind])),
        )
        return False

    def json_scalar(self, value: Any, at: At, report: Report) -> Scalar | None:
        """`value` as a string, number or boolean, the values a JSON path compares with; None
        after a problem."""
        if type(value) is str:
            return self.text_literal(value, at, report)
        if isinstance(value, bool):
            return value
        if is_number(value):
            return int(value) if isinstance(value, int) else float(value)
        bare = type(value) is BareDateTime or type(value) is WordsAgo
        report(
            at,
            "expected a string, a number or a boolean, found " + self.syntax.describe(value),
            "write a date as a string in quotes" if bare else _NOT_ONE_JSON_VALUE,
        )
        return None

    # Conditions on a list field (see `lists`).

    def list_condition(
        self, field: Field, op: ListOp, value: Any, insensitive: bool, report: Report
    ) -> Node:
        """`field op value` for a list field: one item for `has`, a list for `hasSome`,
        `hasEvery` and `equals`, true or false for `isEmpty`."""
        element = field.type.element
        assert element is not None
        insensitive = insensitive and element is FieldType.STRING
        if op not in field.list_operators or (insensitive and not field.takes_mode):
            self.list_in_json(field, op, insensitive, report)
            return TRUE
        if op is ListOp.IS_EMPTY:
            return self.list_is_empty(field, value, report)
        if op is ListOp.HAS:
            literal = self.list_has_item(field, value, report)
            return TRUE if literal is None else ListTest(field.name, op, (literal,), insensitive)
        found = self.list_items(field, op, value, report)
        return TRUE if found is None else ListTest(field.name, op, found, insensitive)

    def list_in_json(self, field: Field, op: ListOp, insensitive: bool, report: Report) -> None:
        """A list test a list kept inside JSON does not take (`Field.list_operators`)."""
        name = self.syntax.list_op(op)
        taken = [self.syntax.list_op(o) for o in field.list_operators]
        report(
            (), f"{name}{' ignoring case' if insensitive else ''} {IN_JSON}", in_json_hint(taken)
        )

    def list_is_empty(self, field: Field, value: Any, report: Report) -> Node:
        """`isEmpty: true` (no items) or `isEmpty: false` (some)."""
        syntax = self.syntax
        if type(value) is not bool:
            report(
                (),
                f"{syntax.list_op(ListOp.IS_EMPTY)} takes true or false, found "
                f"{syntax.describe(value)}",
                f"write {syntax.written(True)}, or {syntax.written(False)} for a list with items",
            )
            return TRUE
        test = ListTest(field.name, ListOp.IS_EMPTY, ())
        return test if value else Not(test)

    def list_has_item(self, field: Field, value: Any, report: Report) -> Scalar | None:
        """The one item `has` looks for; None after a problem (null, or several values)."""
        syntax = self.syntax
        element = _element_field(field)
        name = syntax.list_op(ListOp.HAS)
        if value is None:
            report((), f"{name} does not take null", syntax.null_test(field.name))
            return None
        if _is_list(value):
            report(
                (),
                f"{name} takes one {element.type.value}, found {syntax.describe(value)}",
                f"use {syntax.list_op(ListOp.HAS_SOME)} or "
                f"{syntax.list_op(ListOp.HAS_EVERY)} to test several values",
            )
            return None
        return self.list_item(element, name, value, (), report)

    def list_items(
        self, field: Field, op: ListOp, value: Any, report: Report
    ) -> tuple[Scalar, ...] | None:
        """The items of `hasSome`, `hasEvery` or `equals`; None after a problem."""
        name = self.syntax.list_op(op)
        element = _element_field(field)
        if not _is_list(value):
            self.not_a_list_of_items(field, op, value, report)
            return None
        if self.over_limit(value, report):
            return None
        literals = [self.list_item(element, name, v, (i,), report) for i, v in enumerate(value)]
        found = tuple(literal for literal in literals if literal is not None)
        return found if len(found) == len(literals) else None

    def not_a_list_of_items(self, field: Field, op: ListOp, value: Any, report: Report) -> None:
        """A list operator with one value (or none) where a list of items goes."""
        syntax = self.syntax
        element = field.type.element
        assert element is not None
        report(
            (),
            f"{syntax.list_op(op)} takes {_article(syntax.list_word)} of {element.entry.nouns}, "
            f"found {syntax.describe(value)}",
            self.not_a_list_hint(field, op, value),
        )

    def not_a_list_hint(self, field: Field, op: ListOp, value: Any) -> str | None:
        """What to write instead of a single operand where a list operator wants a list."""
        if value is None:
            return self.syntax.null_test(field.name)
        if op is not ListOp.EQUALS and not _is_map(value):
            return f"use {self.syntax.list_op(ListOp.HAS)} to test one value"
        return None

    def list_item(
        self, field: Field, name: str, value: Any, at: At, report: Report
    ) -> Scalar | None:
        """One item of a list operand, of the list's item type; None after a problem."""
        if value is None:
            report(
                at,
                f"null is not allowed inside {name}: a null item matches no value",
                self.syntax.null_test(field.name),
            )
            return None
        if field.type in CALENDAR_TYPES and _is_relative(value):
            report(at, _relative_in_list(name), None)
            return None
        literal = self.literal(field, value, at, _as_list_item(report, field))
        return None if isinstance(literal, Ago | StartOf) else literal

    def data_array(
        self, field: Field, keys: Keys, op: ListOp, value: Any, insensitive: bool, report: Report
    ) -> Node:
        """`field.keys op value` on a JSON array: `array_contains` takes a value or a list of
        them (each must be an item), `array_starts_with`/`array_ends_with` one value; strings,
        numbers or booleans, each compared as its own JSON type."""
        listed = _is_list(value)
        if listed and not self.array_operand_fits(op, value, report):
            return TRUE
        literals = self.array_items(op, value, listed, report)
        if literals is None:
            return TRUE
        folds = insensitive and any(isinstance(v, str) for v in literals)
        return ListTest(field.name, op, literals, folds, keys)

    def array_operand_fits(self, op: ListOp, value: Sequence[Any], report: Report) -> bool:
        """Whether a list is an operand `op` takes: only `array_contains` looks for several
        items, and no more than one read allows."""
        if op is ListOp.ARRAY_CONTAINS:
            return not self.over_limit(value, report)
        report(
            (),
            f"{self.syntax.list_op(op)} takes one string, number or boolean, found "
            f"{self.syntax.describe(value)}",
            "arrays and objects are not compared as items",
        )
        return False

    def array_items(
        self, op: ListOp, value: Any, listed: bool, report: Report
    ) -> tuple[Scalar, ...] | None:
        """The items a JSON array test looks for (`value` itself unless `listed`); None at the
        first problem."""
        literals = []
        for index, item in enumerate(value if listed else [value]):
            at: At = (index,) if listed else ()
            if item is None:
                report(
                    at, f"{self.syntax.list_op(op)} does not take null", self.syntax.data_null_test
                )
                return None
            literal = self.data_literal(Op.EQUALS, item, at, report)
            if literal is None:
                return None
            literals.append(literal)
        return tuple(literals)

    def misplaced_list_operator(self, field: Field, name: str, report: Report) -> bool:
        """Report a list operator on a scalar field, or a scalar operator on a list field, with
        the operator meant; False when `name` is neither."""
        if name in _LIST_OP_NAMES and field.type.element is None:
            json = field.type is FieldType.JSON
            report(
                OPERATOR,
                f"{self.syntax.list_op(ListOp(name))} applies to list fields; "
                f'"{field.name}" is a {"JSON" if json else field.type.value} field',
                self.json_field_hint() if json else self.scalar_field_hint(field),
            )
            return True
        return self.scalar_operator_on_list(field, name, report)

    def json_field_hint(self) -> str:
        """What a JSON field takes instead of a list field's operator."""
        return f"for a JSON array, use {self.syntax.list_op(ListOp.ARRAY_CONTAINS)}"

    def scalar_field_hint(self, field: Field) -> str:
        """What a scalar field takes instead of a list operator."""
        syntax = self.syntax
        if field.type is FieldType.STRING:
            return f"use {syntax.op(Op.EQUALS)}, or {syntax.op(Op.CONTAINS)} for part of the text"
        return f'"{field.name}" takes {syntax.operator_names(field)}'

    def scalar_operator_on_list(self, field: Field, name: str, report: Report) -> bool:
        """Report a scalar operator with a list counterpart (`contains`, `in`) on a list field;
        False when that is not what `name` is."""
        meant = _LIST_OP_MEANT.get(name)
        if field.type.element is None or meant is None:
            return False
        report(
            OPERATOR,
            f'{self.syntax.op(Op(name))} does not apply to list field "{field.name}" '
            f"({field.type.value})",
            f"use {self.syntax.list_op(meant)}",
        )
        return True


_APPLIES_TO: Final = (
    (ORDERING_OPS, "string, number and date-time fields"),
    (PATTERN_OPS, "string fields"),
    (PERIOD_OPS, "date-time fields"),
)
"""Which fields an operator applies to, for the message when a field does not take it."""


def _applies_to(op: Op) -> str:
    return next((fields for ops, fields in _APPLIES_TO if op in ops), _APPLIES_TO[0][1])


_LIST_OP_NAMES = frozenset(op.value for op in LIST_FIELD_OPS if op is not ListOp.EQUALS)
_LIST_OP_MEANT = {
    Op.CONTAINS.value: ListOp.HAS,
    Op.IN.value: ListOp.HAS_SOME,
    Op.NOT_IN.value: ListOp.HAS_SOME,
}


def null_list(op: Op, is_null: IsNull) -> Node:
    """`in: null` and `notIn: null`, read as Prisma reads them: a null test (`in: null` is
    `equals: null`, `notIn: null` is `not: null`), never a list."""
    return is_null if op is Op.IN else Not(is_null)


def _holds_strings(field: Field) -> bool:
    """Whether case can matter to `field`'s comparisons: a string field, a list of strings, or
    a JSON field (whose values may be strings)."""
    kind = field.type
    return kind is FieldType.STRING or kind is FieldType.JSON or kind.element is FieldType.STRING


def _relative_in_list(inside: str) -> str:
    return f"a relative date-time is not allowed inside {inside}: a list holds fixed values"


def _as_list_item(report: Report, field: Field) -> Report:
    """`report` with the scalar rules' messages retold of an item of the list field `field`
    names ("an item of string[] field ..." for "string field ...")."""
    scalar = f'{field.type.value} field "{field.name}"'
    listed = f'an item of {field.type.value}[] field "{field.name}"'

    def retold(where: Where, message: str, suggestion: str | None) -> None:
        report(where, message.replace(scalar, listed), suggestion)

    return retold


def _is_datetime_operand(value: object) -> bool:
    """Whether `value` is written as a date-time can be (a string, a parsed date-time, a literal
    of the text syntax, or a mapping: relative or calendar), as opposed to another type."""
    return type(value) is str or isinstance(value, datetime) or _is_literal(value) or _is_map(value)


def _element_field(field: Field) -> Field:
    """A list field's items as a field of their own, so the scalar rules check each item."""
    element = field.type.element
    assert element is not None
    return Field(field.name, element)


def _is_reference(value: object) -> bool:
    return type(value) is FieldName or (_is_map(value) and REF in value)  # type: ignore[operator]


def _article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _is_list(value: object) -> bool:
    return type(value) is list or isinstance(value, list | tuple) and not _is_literal(value)


def _is_literal(value: object) -> bool:
    return type(value) in (BareDateTime, WordsAgo, WordsStart, WordsPeriod)


def _is_map(value: object) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _is_scalar(value: object) -> bool:
    return isinstance(value, bool | int | float | str) or _is_literal(value)


def _is_relative(value: object) -> bool:
    if type(value) is WordsAgo or type(value) is WordsStart or type(value) is WordsPeriod:
        return True
    return _is_map(value) and ("ago" in value or "startOf" in value or _is_period(value))  # type: ignore[operator]


def _is_period(value: Any) -> bool:
    return any(key in value for key in ("this", "last", "next"))


def _is_number_text(text: str) -> bool:
    """Whether a string holds a JSON number, which was meant as one."""
    try:
        return is_number(json.loads(text))
    except ValueError:
        return False
