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
    BLANK,
    CALENDAR_TYPES,
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
from .nodes import TRUE, Blank, Comparison, FieldComparison, IsNull, ListTest, Node, Not
from .relative import Ago, DurationError
from .values import Scalar, as_utc, is_number, parse_date, parse_datetime
from .zones import CalendarError

Where = tuple[str | int, ...] | None
"""Where a problem is, relative to the operand: `()` the operand, `(2,)` its third item,
`("ago",)` a key inside it; None for the operator itself."""
Report = Callable[[Where, str, str | None], None]
_C = TypeVar("_C", StartOf, Period)
"""`report(where, message, suggestion)`: how a reader is told of a problem."""

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
REFERENCE_OPS = frozenset({Op.EQUALS, Op.GT, Op.GTE, Op.LT, Op.LTE})


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
_EXPECTED = {
    FieldType.STRING: "a string",
    FieldType.NUMBER: "a number",
    FieldType.BOOLEAN: "true or false",
    FieldType.DATETIME: "an ISO 8601 date-time",
    FieldType.DATE: "an ISO 8601 date",
}
_PLURAL = {
    FieldType.STRING: "strings",
    FieldType.NUMBER: "numbers",
    FieldType.BOOLEAN: "booleans",
    FieldType.DATETIME: "date-times",
    FieldType.DATE: "dates",
}
_IN_JSON = "is not read on a list kept inside JSON: it is a JSON array, tested item by item"
_IN_JSON_HINT = "use has, hasSome or hasEvery (case-sensitive), or keep the list in a column"
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
        return _EXPECTED[kind]

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
    return kind is FieldType.STRING and (insensitive or op is Op.CONTAINS)


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
        hint = "filterable fields are " + ", ".join(schema.names)
    return f'unknown field "{shown(name)}"', hint


class Conditions:
    """Checks and builds the conditions of one read, reporting problems to the reader."""

    def __init__(self, syntax: Syntax, max_array: int, schema: Schema | None = None) -> None:
        self.syntax = syntax
        self.max_array = max_array
        self.schema_fields = schema  # the fields a field reference may name

    def accepts(self, field: Field, op: Op, report: Report) -> bool:
        """Whether `field` takes `op`; if not, says which fields do."""
        if field.accepts(op):
            return True
        if op in ORDERING_OPS:
            applies = "string, number and date-time fields"
        elif op in PATTERN_OPS:
            applies = "string fields"
        elif op in PERIOD_OPS:
            applies = "date-time fields"
        else:
            applies = "string, number and date-time fields"
        report(
            OPERATOR,
            f'{self.syntax.op(op)} applies to {applies}; "{field.name}" is a '
            f"{field.type.value} field",
            f'"{field.name}" takes {self.syntax.operator_names(field)}',
        )
        return False

    def mode(self, field: Field, value: Any, inside_not: bool, report: Report) -> bool:
        """Whether `value` (JSON's `mode`; text's `ignoring case` is "insensitive") makes
        `field`'s comparisons case-insensitive; a mode anywhere but on a string field is a
        problem."""
        word = self.syntax.mode_word
        if inside_not:
            report(
                (),
                f"{word} is not allowed inside not",
                f"put {word} beside not, in the field's object; not inherits it",
            )
        elif (
            field.type is not FieldType.STRING
            and field.type is not FieldType.JSON
            and (field.type.element is not FieldType.STRING)
        ):
            report(
                (),
                f'{word} applies to string fields; "{field.name}" is a {field.type.value} field',
                f"remove {word}",
            )
        elif value not in MODES:
            report(
                (),
                f'expected "insensitive" or "default", found {describe_value(value)}',
                did_you_mean(str(value), MODES),
            )
        folds = field.type is FieldType.STRING or field.type is FieldType.JSON
        folds = folds or field.type.element is FieldType.STRING
        return value == "insensitive" and folds

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
        if value is None:
            if op is Op.EQUALS:
                return IsNull(field.name)
            report(
                (), f"{self.syntax.op(op)} does not take null", self.syntax.null_test(field.name)
            )
            return TRUE
        if _is_list(value):
            report(
                (),
                wrong_type(self.syntax, field, self.syntax.describe(value)),
                f"use {self.syntax.op(Op.IN)} to test against several values",
            )
            return TRUE
        literal = self.literal(field, value, (), report)
        return TRUE if literal is None else Comparison(field.name, op, literal, insensitive)

    def values(self, field: Field, op: Op, value: Any, report: Report) -> tuple[Scalar, ...] | None:
        """The literals of an `in` or `notIn` list; None after a problem."""
        syntax = self.syntax
        if not _is_list(value):
            report(
                (),
                f"{syntax.op(op)} takes {_article(syntax.list_word)} of {_PLURAL[field.type]}, "
                f"found {syntax.describe(value)}",
                None if value is None or _is_map(value) else f"write [{syntax.written(value)}]",
            )
            return None
        if len(value) > self.max_array:
            report(
                (),
                f"the {syntax.list_word} has {len(value)} values, over the limit of "
                f"{self.max_array}",
                "split the audience",
            )
            return None
        items: list[Scalar] = []
        valid = True
        for index, item in enumerate(value):
            if item is None:
                report(
                    (index,),
                    f"null is not allowed inside {syntax.op(op)}",
                    syntax.null_in_list(field.name),
                )
                valid = False
                continue
            if field.type in CALENDAR_TYPES and _is_relative(item):
                report(
                    (index,),
                    f"a relative date-time is not allowed inside {syntax.op(op)}: a list holds "
                    "fixed values",
                    f"compare with {syntax.op(Op.EQUALS)}, "
                    f"or combine conditions with {syntax.or_word}",
                )
                valid = False
                continue
            literal = self.literal(field, item, (index,), report)
            if literal is None or isinstance(literal, Ago | StartOf):
                valid = False
            else:
                items.append(literal)
        return tuple(items) if valid else None

    def literal(
        self, field: Field, value: Any, at: tuple[str | int, ...], report: Report
    ) -> Scalar | Ago | StartOf | None:
        """`value` as a literal of `field`'s type; None after a problem."""
        kind = field.type
        exact = type(value)
        if kind is FieldType.STRING and exact is str:
            if is_valid_unicode(value):
                return value  # type: ignore[no-any-return]
            report(at, LONE_SURROGATE, None)
            return None
        if kind is FieldType.NUMBER and is_number(value):
            return int(value) if isinstance(value, int) else float(value)
        if kind is FieldType.BOOLEAN and exact is bool:
            return value  # type: ignore[no-any-return]
        if kind is FieldType.DATE and (exact in (str, BareDateTime, date) or exact is datetime):
            return self.day(value, at, report)
        if kind in CALENDAR_TYPES:
            if exact is str or exact is BareDateTime or isinstance(value, datetime):
                return self.instant(value, at, report)
            if exact is WordsAgo:
                return self.ago(value.text, Ago.from_words, at, report)
            if exact is WordsStart:
                return self.calendar(lambda: start_from_words(value.text), at, report)
            if exact is WordsPeriod or (_is_map(value) and _is_period(value)):
                report(
                    at,
                    "a calendar period is a condition of its own, not a value to compare with",
                    f"write {self.syntax.op(Op.WITHIN)} and the period, or compare with the "
                    "start of a unit",
                )
                return None
            if _is_map(value) and "startOf" in value:
                if getattr(value, "duplicates", ()):
                    report(at, "a key of the start of a calendar unit appears twice", None)
                    return None
                return self.calendar(lambda: start_from_json(dict(value)), at, report)
            if _is_map(value):
                return self.relative(value, at, report)
        report(
            at, wrong_type(self.syntax, field, self.syntax.describe(value)), self.hint(kind, value)
        )
        return None

    def instant(self, value: Any, at: tuple[str | int, ...], report: Report) -> datetime | None:
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

    def day(self, value: Any, at: tuple[str | int, ...], report: Report) -> date | None:
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

    def relative(
        self, value: Mapping[Any, Any], at: tuple[str | int, ...], report: Report
    ) -> Ago | None:
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

    def ago(
        self, text: str, read: Callable[[str], Ago], at: tuple[str | int, ...], report: Report
    ) -> Ago | None:
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

    def calendar(
        self, read: Callable[[], _C], at: tuple[str | int, ...], report: Report
    ) -> _C | None:
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
        syntax = self.syntax
        if type(value) is FieldName:
            name: Any = value.text
            at: tuple[str | int, ...] = ()
        else:
            name, at = value.get(REF), (REF,)
            if len(value) != 1 or type(name) is not str:
                report(
                    (),
                    f'expected a field reference {{"{REF}": "<field name>"}}, found '
                    f"{describe_value(value)}",
                    f'write e.g. {{"{REF}": "points"}}',
                )
                return TRUE
        fields = self.schema_fields
        other = fields.get(name) if fields is not None else None
        if other is None:
            names = () if fields is None else fields.names
            if type(value) is FieldName:  # a bare word in text: a misspelt keyword, or text
                hint = did_you_mean(name, (*names, "true", "false", "null")) or (
                    f"strings are written in double quotes: {syntax.as_string(name)}"
                )
            else:
                hint = did_you_mean(name, names) or "filterable fields are " + ", ".join(names)
            report(at, f'unknown field "{shown(name)}" in a field reference', hint)
            return TRUE
        same = [
            f.name
            for f in fields or ()
            if f.type is field.type and not f.source and f.name != field.name
        ]
        if op not in REFERENCE_OPS:
            report(
                (),
                f"a field reference compares with {syntax.op(Op.EQUALS)}, {syntax.op(Op.GT)}, "
                f"{syntax.op(Op.GTE)}, {syntax.op(Op.LT)} or {syntax.op(Op.LTE)}, not "
                f"{syntax.op(op)}",
                None,
            )
            return TRUE
        inside_json = [f.name for f in (field, other) if f.type is FieldType.JSON or f.source]
        if inside_json:
            report(
                at,
                "a field reference compares two fields of their own columns; "
                f'"{inside_json[0]}" is read from inside JSON',
                None,
            )
            return TRUE
        if other.type is not field.type:
            report(
                at,
                f'"{field.name}" is a {field.type.value} field and "{name}" is a '
                f"{other.type.value} field: a field reference compares fields of one type",
                f"compare with a {field.type.value} field: " + ", ".join(same) if same else None,
            )
            return TRUE
        if insensitive:
            report(
                (),
                f"{syntax.mode_word} does not apply to a field reference: it compares the "
                "fields as they are",
                f"remove {syntax.mode_word}",
            )
            return TRUE
        return FieldComparison(field.name, op, other.name)

    def blank(self, field: Field, keys: tuple[str, ...] | None, value: Any, report: Report) -> Node:
        """`blank: true` (null or `""`) or `blank: false` (neither), on a string field or a
        data path (`keys`)."""
        if field.type is not FieldType.STRING and keys is None:
            report(
                OPERATOR,
                f'{BLANK} applies to string fields and JSON paths; "{field.name}" is a '
                f"{field.type.value} field",
                self.syntax.null_test(field.name),
            )
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

    def json_alias(
        self,
        field: Field,
        keys: tuple[str, ...] | None,
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
            report(
                OPERATOR,
                f'{name} is the name of {self.syntax.op(op)} on JSON paths; "{field.name}" is a '
                f"{field.type.value} field",
                f"write {self.syntax.op(op)}",
            )
            return TRUE
        if type(value) is not str:
            report(
                (),
                f"{name} takes a string, found {self.syntax.describe(value)}",
                None if value is None else f"write {name}: {self.syntax.as_string(str(value))}",
            )
            return TRUE
        return self.data_comparison(field, keys, op, value, insensitive, report)

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
        self,
        field: Field,
        keys: tuple[str, ...],
        op: Op,
        value: Any,
        insensitive: bool,
        report: Report,
    ) -> Node:
        """`field.keys op value`: the literal's own JSON type decides the comparison."""
        syntax = self.syntax
        if _is_reference(value):
            report(
                (),
                "a field reference compares two fields of their own columns, not a JSON path",
                None,
            )
            return TRUE
        if op in LIST_OPS and value is None:
            return null_list(op, IsNull(field.name, keys))
        if op in PERIOD_OPS:
            report(
                OPERATOR,
                f"{syntax.op(op)} applies to date-time fields; a value inside JSON is compared "
                "as a string, a number or a boolean",
                "declare the key as a date-time field of the schema, or compare the string",
            )
            return TRUE
        if op in LIST_OPS:
            if not _is_list(value):
                report(
                    (),
                    f"{syntax.op(op)} takes {_article(syntax.list_word)} of strings, numbers or "
                    f"booleans, found {syntax.describe(value)}",
                    None if value is None or _is_map(value) else f"write [{syntax.written(value)}]",
                )
                return TRUE
            if len(value) > self.max_array:
                report(
                    (),
                    f"the {syntax.list_word} has {len(value)} values, over the limit of "
                    f"{self.max_array}",
                    "split the audience",
                )
                return TRUE
            items = [self.data_literal(op, item, (i,), report) for i, item in enumerate(value)]
            literals = tuple(item for item in items if item is not None)
            if len(literals) != len(items):
                return TRUE
            kinds = {value_type(item) for item in literals}
            if len(kinds) > 1:
                report(
                    (),
                    f"the values of {syntax.op(op)} must all have one JSON type, found "
                    + " and ".join(sorted(k.value for k in kinds)),
                    f"split it into several conditions joined with {syntax.or_word}",
                )
                return TRUE
            string = kinds == {FieldType.STRING}
            return Comparison(field.name, op, literals, string and insensitive, keys)
        if value is None:
            if op is Op.EQUALS:
                return IsNull(field.name, keys)
            report((), f"{syntax.op(op)} does not take null", syntax.data_null_test)
            return TRUE
        literal = self.data_literal(op, value, (), report)
        if literal is None:
            return TRUE
        folded = is_insensitive(value_type(literal), op, insensitive)
        return Comparison(field.name, op, literal, folded, keys)

    def data_literal(
        self, op: Op, value: Any, at: tuple[str | int, ...], report: Report
    ) -> Scalar | None:
        """A string, number or boolean that `op` can compare with; None after a problem."""
        if value is None:
            report(at, f"null is not allowed inside {self.syntax.op(op)}", None)
            return None
        literal: Scalar
        if type(value) is str:
            if not is_valid_unicode(value):
                report(at, LONE_SURROGATE, None)
                return None
            literal = value
        elif isinstance(value, bool):
            literal = value
        elif is_number(value):
            literal = int(value) if isinstance(value, int) else float(value)
        else:
            bare = type(value) is BareDateTime or type(value) is WordsAgo
            report(
                at,
                "expected a string, a number or a boolean, found " + self.syntax.describe(value),
                "write a date as a string in quotes"
                if bare
                else "JSON fields compare one value at a time; arrays and objects are not compared",
            )
            return None
        kind = value_type(literal)
        if op not in OPERATORS[kind]:
            report(
                at,
                f"{self.syntax.op(op)} does not apply to a {kind.value} value "
                f"({self.syntax.describe(value)})",
                f"with a {kind.value}, use "
                + ", ".join(sorted(self.syntax.op(o) for o in OPERATORS[kind])),
            )
            return None
        return literal

    # Conditions on a list field (see `lists`).

    def list_condition(
        self, field: Field, op: ListOp, value: Any, insensitive: bool, report: Report
    ) -> Node:
        """`field op value` for a list field: one item for `has`, a list for `hasSome`,
        `hasEvery` and `equals`, true or false for `isEmpty`."""
        syntax = self.syntax
        element = field.type.element
        assert element is not None
        insensitive = insensitive and element is FieldType.STRING
        name = syntax.list_op(op)
        if field.source and (op in (ListOp.IS_EMPTY, ListOp.EQUALS) or insensitive):
            report((), f"{name}{' ignoring case' if insensitive else ''} {_IN_JSON}", _IN_JSON_HINT)
            return TRUE
        if op is ListOp.IS_EMPTY:
            if type(value) is not bool:
                report(
                    (),
                    f"{name} takes true or false, found {syntax.describe(value)}",
                    f"write {syntax.written(True)}, or {syntax.written(False)} for a list "
                    "with items",
                )
                return TRUE
            test = ListTest(field.name, op, ())
            return test if value else Not(test)
        item_field = Field(field.name, element)
        if op is ListOp.HAS:
            if value is None:
                report((), f"{name} does not take null", syntax.null_test(field.name))
                return TRUE
            if _is_list(value):
                report(
                    (),
                    f"{name} takes one {element.value}, found {syntax.describe(value)}",
                    f"use {syntax.list_op(ListOp.HAS_SOME)} or "
                    f"{syntax.list_op(ListOp.HAS_EVERY)} to test several values",
                )
                return TRUE
            literal = self.list_item(item_field, name, value, (), report)
            return TRUE if literal is None else ListTest(field.name, op, (literal,), insensitive)
        if not _is_list(value):
            report(
                (),
                f"{name} takes {_article(syntax.list_word)} of {_PLURAL[element]}, "
                f"found {syntax.describe(value)}",
                syntax.null_test(field.name)
                if value is None
                else f"use {syntax.list_op(ListOp.HAS)} to test one value"
                if op is not ListOp.EQUALS and not _is_map(value)
                else None,
            )
            return TRUE
        if len(value) > self.max_array:
            report(
                (),
                f"the {syntax.list_word} has {len(value)} values, over the limit of "
                f"{self.max_array}",
                "split the audience",
            )
            return TRUE
        literals = [self.list_item(item_field, name, v, (i,), report) for i, v in enumerate(value)]
        if any(literal is None for literal in literals):
            return TRUE
        found = tuple(literal for literal in literals if literal is not None)
        return ListTest(field.name, op, found, insensitive)

    def list_item(
        self, field: Field, name: str, value: Any, at: tuple[str | int, ...], report: Report
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
            report(
                at,
                f"a relative date-time is not allowed inside {name}: a list holds fixed values",
                None,
            )
            return None
        scalar = f'{field.type.value} field "{field.name}"'
        listed = f'an item of {field.type.value}[] field "{field.name}"'

        def retold(where: Where, message: str, suggestion: str | None) -> None:
            report(where, message.replace(scalar, listed), suggestion)

        literal = self.literal(field, value, at, retold)
        return None if isinstance(literal, Ago | StartOf) else literal

    def data_array(
        self,
        field: Field,
        keys: tuple[str, ...],
        op: ListOp,
        value: Any,
        insensitive: bool,
        report: Report,
    ) -> Node:
        """`field.keys op value` on a JSON array: `array_contains` takes a value or a list of
        them (each must be an item), `array_starts_with`/`array_ends_with` one value; strings,
        numbers or booleans, each compared as its own JSON type."""
        syntax = self.syntax
        name = syntax.list_op(op)
        listed = _is_list(value)
        if listed and op is not ListOp.ARRAY_CONTAINS:
            report(
                (),
                f"{name} takes one string, number or boolean, found {syntax.describe(value)}",
                "arrays and objects are not compared as items",
            )
            return TRUE
        if listed and len(value) > self.max_array:
            report(
                (),
                f"the {syntax.list_word} has {len(value)} values, over the limit of "
                f"{self.max_array}",
                "split the audience",
            )
            return TRUE
        items = list(value) if listed else [value]
        literals = []
        for index, item in enumerate(items):
            at: tuple[str | int, ...] = (index,) if listed else ()
            if item is None:
                report(at, f"{name} does not take null", syntax.data_null_test)
                return TRUE
            literal = self.data_literal(Op.EQUALS, item, at, report)
            if literal is None:
                return TRUE
            literals.append(literal)
        folds = insensitive and any(isinstance(v, str) for v in literals)
        return ListTest(field.name, op, tuple(literals), folds, keys)

    def misplaced_list_operator(self, field: Field, name: str, report: Report) -> bool:
        """Report a list operator on a scalar field, or a scalar operator on a list field, with
        the operator meant; False when `name` is neither."""
        syntax = self.syntax
        if (
            field.type.element is None
            and field.type is not FieldType.JSON
            and (name in _LIST_OP_NAMES)
        ):
            if field.type is FieldType.STRING:
                hint = (
                    f"use {syntax.op(Op.EQUALS)}, or {syntax.op(Op.CONTAINS)} for part of the text"
                )
            else:
                hint = f'"{field.name}" takes {syntax.operator_names(field)}'
            report(
                OPERATOR,
                f"{syntax.list_op(ListOp(name))} applies to list fields; "
                f'"{field.name}" is a {field.type.value} field',
                hint,
            )
            return True
        if field.type is FieldType.JSON and name in _LIST_OP_NAMES:
            report(
                OPERATOR,
                f"{syntax.list_op(ListOp(name))} applies to list fields; "
                f'"{field.name}" is a JSON field',
                f"for a JSON array, use {syntax.list_op(ListOp.ARRAY_CONTAINS)}",
            )
            return True
        meant = _LIST_OP_MEANT.get(name)
        if field.type.element is not None and meant is not None:
            report(
                OPERATOR,
                f'{syntax.op(Op(name))} does not apply to list field "{field.name}" '
                f"({field.type.value})",
                f"use {syntax.list_op(meant)}",
            )
            return True
        return False


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
