"""A filter as a plain-English sentence, for audience lists shown to marketers (write only).

`{"points": {"gte": 100}, "country": {"in": ["FR", "DE"]}}` reads "points at least 100 and
country is FR or DE".

Design choices:
- Every node kind has a handler of a `Visitor`, so a new kind fails loudly here as in every
  walker. Negations take their natural words where English has them ("is not", "does not
  contain", "is set", "has no action ..."), else "not (...)".
- A group inside a group is parenthesised, an OR group as "(either ... or ...)", so a
  sentence never leaves the grouping to the reader's guess; a text value with spaces or
  punctuation is quoted (“New York”), so a value never blends into the words around it.
- Field names are shown as people say them: `firstName` is "first name", a key inside a JSON
  field "data.plan". Relations read as counts and quantities: "has at least 3 actions named
  share in the last 30 days".
- Null is "not set", as a marketer sees an empty field; a null value makes a comparison
  UNKNOWN, so "country is not FR" also leaves out a contact without a country, as SQL does
  (docs/semantics.md), which the sentence does not repeat.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, Final

from ..language.calendar import Period
from ..language.fields import ALWAYS_FOLDED, ListOp, Op, Schema
from ..language.nodes import (
    TRUE,
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
)
from ..language.relations import Aggregate, Quantifier
from ..language.relative import Ago
from ..language.visitor import Visitor

NAME = "english"

_ORDER: Final = {Op.GT: "more than", Op.GTE: "at least", Op.LT: "less than", Op.LTE: "at most"}
_TIME_ORDER: Final = {
    Op.GT: "after",
    Op.GTE: "on or after",
    Op.LT: "before",
    Op.LTE: "on or before",
}
_TEXT_ORDER: Final = {
    Op.GT: "sorts after",
    Op.GTE: "sorts at or after",
    Op.LT: "sorts before",
    Op.LTE: "sorts at or before",
}
_PATTERNS: Final = {
    Op.CONTAINS: ("contains", "does not contain"),
    Op.STARTS_WITH: ("starts with", "does not start with"),
    Op.ENDS_WITH: ("ends with", "does not end with"),
}
_COUNTS: Final = {
    Op.EQUALS: "exactly",
    Op.GT: "more than",
    Op.GTE: "at least",
    Op.LT: "fewer than",
    Op.LTE: "at most",
}
_STATES: Final = ("is ", "has ")
_PLAIN_WORD = re.compile(r"[\w@.+\-/:#']+\Z")


def write(node: Node, schema: Schema) -> str:
    """The sentence for a filter: "points at least 100 and country is FR or DE"."""
    return _English(schema).visit(node)


def words(name: str) -> str:
    """A field name as people say it: `firstName` -> "first name", `is_gdpr` -> "is gdpr"."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return (
        " ".join(
            part if part.isupper() and len(part) > 1 else part.lower() for part in spaced.split()
        )
        or name
    )


def value_words(value: Any) -> str:
    """A value as a sentence shows it: bare when it is one plain word or number, quoted
    otherwise, dates as ISO 8601 days, date-times with their time and zone."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        midnight = (value.hour, value.minute, value.second, value.microsecond) == (0, 0, 0, 0)
        return value.date().isoformat() if midnight else value.strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return value if _PLAIN_WORD.match(value) else f"\u201c{value}\u201d"
    return str(getattr(value, "words", value))


def one_of(values: tuple[Any, ...], word: str = "or") -> str:
    """`FR`, `FR or DE`, `FR, DE or IT`."""
    shown = [value_words(v) for v in values]
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + f" {word} " + shown[-1]


def _singular(name: str) -> str:
    plain = words(name)
    return plain[:-1] if plain.endswith("s") and not plain.endswith("ss") else plain


class _English(Visitor[str]):
    """Each node as a clause; groups inside groups in parentheses."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def nested(self, node: Node) -> str:
        text = self.visit(node)
        if isinstance(node, Or):
            return f"(either {text})"
        return f"({text})" if isinstance(node, And) else text

    def visit_and(self, node: And) -> str:
        return " and ".join(self.nested(item) for item in node.items)

    def visit_or(self, node: Or) -> str:
        return " or ".join(self.nested(item) for item in node.items)

    def visit_const(self, node: Const) -> str:
        return "every contact" if node.value else "no contact"

    def visit_not(self, node: Not) -> str:
        natural = self.negated(node.item)
        if natural is not None:
            return natural
        inner = self.visit(node.item)
        return f"not ({inner})"

    def negated(self, item: Node) -> str | None:
        """The natural words of a negation, where English has them."""
        if isinstance(item, IsNull):
            return f"{self.subject(item.field, item.path)} is set"
        if isinstance(item, Blank):
            return f"{self.subject(item.field, item.path)} is set and not empty"
        if isinstance(item, Comparison):
            return self.comparison(item, negated=True)
        if isinstance(item, FieldComparison) and item.op is Op.EQUALS:
            return f"{words(item.field)} differs from {words(item.other)}"
        if isinstance(item, ListTest) and item.op is ListOp.IS_EMPTY:
            return f"{self.subject(item.field, item.path)} is not empty"
        if isinstance(item, Quantified) and item.quantifier is Quantifier.SOME:
            return self.visit(Quantified(item.relation, Quantifier.NONE, item.where))
        return None

    def subject(self, field: str, path: tuple[str, ...]) -> str:
        return ".".join((field, *path)) if path else words(field)

    def visit_is_null(self, node: IsNull) -> str:
        return f"{self.subject(node.field, node.path)} is not set"

    def visit_blank(self, node: Blank) -> str:
        return f"{self.subject(node.field, node.path)} is not set or empty"

    def visit_comparison(self, node: Comparison) -> str:
        text = self.comparison(node, negated=False)
        assert text is not None
        return text

    def comparison(self, node: Comparison, negated: bool) -> str | None:
        """`subject verb value`; None for a negation English has no verb for."""
        subject = self.subject(node.field, node.path)
        if type(node.value) is bool and node.op is Op.EQUALS and subject.startswith(_STATES):
            # `isVerified = true`: "is verified"; false: "is not verified".
            state, rest = subject.split(" ", 1)
            return f"{state} {'not ' if negated == node.value else ''}{rest}"
        verb = _verb(node, negated)
        if verb is None:
            return None
        case = " (ignoring case)" if node.insensitive and node.op not in ALWAYS_FOLDED else ""
        return f"{subject} {verb}{case}"

    def visit_field_comparison(self, node: FieldComparison) -> str:
        kind = self.schema.get(node.field)
        timed = kind is not None and kind.type.value in ("datetime", "date")
        verb = (
            "is the same as"
            if node.op is Op.EQUALS
            else (_TIME_ORDER if timed else _ORDER)[node.op]
        )
        return f"{words(node.field)} {verb} {words(node.other)}"

    def visit_list_test(self, node: ListTest) -> str:
        subject = self.subject(node.field, node.path)
        case = " (ignoring case)" if node.insensitive else ""
        return f"{subject} {_list_verb(node)}{case}"

    def visit_quantified(self, node: Quantified) -> str:
        relation = self.schema.relation(node.relation)
        related = _English(relation.schema if relation else self.schema)
        one = _singular(node.relation)
        described = related.rows(node.where)
        match node.quantifier:
            case Quantifier.SOME:
                return f"has at least one {one}{described}"
            case Quantifier.NONE:
                return f"has no {one}{described}"
            case Quantifier.EVERY:
                inner = related.visit(node.where)
                plural = words(node.relation)
                if node.where == TRUE:
                    return f"has any {plural} or none"
                return f"has only {plural} where {inner}, or none"
            case Quantifier.IS:
                return f"has a {one}{described}"
            case _:
                return f"has no {one}{described}"

    def rows(self, where: Node) -> str:
        """How the related rows a condition picks are described after their name: "named
        share in the last 30 days", " where increase more than 5"."""
        if where == TRUE:
            return ""
        items = list(where.items) if isinstance(where, And) else [where]
        named = [i for i in items if _is_name(i)]
        recent = [i for i in items if _is_recent(i)]
        rest = [i for i in items if i not in named and i not in recent]
        parts = [f" named {value_words(n.value)}" for n in named[:1] if isinstance(n, Comparison)]
        parts += [
            f" in the last {n.value.words.removesuffix(' ago')}"
            for n in recent[:1]
            if isinstance(n, Comparison) and isinstance(n.value, Ago)
        ]
        rest += named[1:] + recent[1:]
        if rest:
            parts.append(" where " + " and ".join(self.nested(i) for i in rest))
        return "".join(parts)

    def visit_aggregated(self, node: Aggregated) -> str:
        relation = self.schema.relation(node.relation)
        related = _English(relation.schema if relation else self.schema)
        rows = related.rows(node.where)
        if node.function is Aggregate.COUNT:
            return self.count(node, rows)
        kind = relation.schema.get(node.field) if relation else None
        timed = kind is not None and kind.type.value in ("datetime", "date")
        label = _AGGREGATE_WORDS[node.function][timed]
        subject = f"the {label} {words(node.field)} of their {words(node.relation)}{rows}"
        return _English(self.schema).tested(subject, node.test, timed)

    def count(self, node: Aggregated, rows: str) -> str:
        """`count(...) >= 3` as "has at least 3 actions ..."."""
        test = node.test
        plural = words(node.relation)
        if isinstance(test, Comparison) and test.op in _COUNTS and isinstance(test.value, int):
            number = test.value
            noun = _singular(node.relation) if number == 1 else plural
            return f"has {_COUNTS[test.op]} {number} {noun}{rows}"
        return self.tested(f"the number of their {plural}{rows}", test, False)

    def tested(self, subject: str, test: Node, timed: bool) -> str:
        """An aggregate's value under its test, as a comparison on a named value."""
        if isinstance(test, IsNull):
            return f"{subject} is not set (there are none)"
        if isinstance(test, Comparison):
            verb = _verb(test, False, timed=timed) or ""
            return f"{subject} {verb if verb.startswith(('is ', 'has ')) else 'is ' + verb}"
        return f"{subject}: {self.visit(test)}"


_AGGREGATE_WORDS: Final = {
    Aggregate.SUM: ("total", "total"),
    Aggregate.MIN: ("lowest", "earliest"),
    Aggregate.MAX: ("highest", "latest"),
    Aggregate.COUNT: ("number of", "number of"),
}


def _is_name(node: Node) -> bool:
    return (
        isinstance(node, Comparison)
        and node.field == "name"
        and node.op is Op.EQUALS
        and not node.insensitive
        and isinstance(node.value, str)
    )


def _is_recent(node: Node) -> bool:
    return (
        isinstance(node, Comparison)
        and node.op is Op.GTE
        and isinstance(node.value, Ago)
        and node.field == "createdAt"
    )


def _verb(node: Comparison, negated: bool, timed: bool | None = None) -> str | None:
    """The verb and object of a comparison, negated or not; None for a negation with no
    words of its own."""
    value, op = node.value, node.op
    if timed is None:
        timed = (
            isinstance(value, datetime | date) or isinstance(value, Ago) or hasattr(value, "unit")
        )
    if op in _PATTERNS:
        return f"{_PATTERNS[op][negated]} {value_words(value)}"
    if op is Op.EQUALS:
        return f"is {'not ' if negated else ''}{value_words(value)}"
    if op in (Op.IN, Op.NOT_IN):
        return _in_verb(value, negated != (op is Op.NOT_IN))
    if negated:
        return None
    if op is Op.WITHIN:
        return f"is in {_period_words(value)}"
    if op is Op.ANNIVERSARY:
        return f"has its anniversary in {_period_words(value)}"
    if timed and isinstance(value, Ago) and op in (Op.GT, Op.GTE):
        return f"is in the last {value.words.removesuffix(' ago')}"
    orders = _TIME_ORDER if timed else _TEXT_ORDER if isinstance(value, str) else _ORDER
    return f"{orders[op]} {value_words(value)}"


def _in_verb(values: Any, negated: bool) -> str:
    """`is FR or DE`, `is neither FR nor DE`, `is none of FR, DE and IT`."""
    shown = tuple(values)
    if not shown:
        return "is in an empty list (never)" if not negated else "is anything (always)"
    if not negated:
        return f"is {one_of(shown)}"
    if len(shown) == 1:
        return f"is not {value_words(shown[0])}"
    if len(shown) == 2:
        return f"is neither {value_words(shown[0])} nor {value_words(shown[1])}"
    return f"is none of {one_of(shown, 'and')}"


def _period_words(value: Any) -> str:
    text: str = value.words if isinstance(value, Period) else str(getattr(value, "words", value))
    return text


_EMPTY_OPERAND: Final = {
    ListOp.HAS_SOME: "include one of an empty list (never)",
    ListOp.HAS_EVERY: "are any list (every value of an empty list is in it)",
    ListOp.ARRAY_CONTAINS: "is any array (every value of an empty list is in it)",
    ListOp.EQUALS: "are empty",
}
"""A list test with no values, which the words of `_list_verb` would leave unfinished."""


_LIST_VERBS: dict[ListOp, Callable[[Any], str]] = {
    ListOp.HAS: lambda values: f"include {one_of(values, 'and')}",
    ListOp.ARRAY_CONTAINS: lambda values: f"include {one_of(values, 'and')}",
    ListOp.HAS_SOME: lambda values: f"include at least one of {one_of(values)}",
    ListOp.HAS_EVERY: lambda values: f"include all of {one_of(values, 'and')}",
    ListOp.IS_EMPTY: lambda values: "is empty",
    ListOp.EQUALS: lambda values: (
        f"are exactly [{', '.join(value_words(v) for v in values)}] in that order"
    ),
    ListOp.ARRAY_STARTS_WITH: lambda values: f"start with {value_words(values[0])}",
}
"""The words of each list test but `array_ends_with` (`_list_verb`)."""


def _list_verb(node: ListTest) -> str:
    values = node.value
    if not values and node.op in _EMPTY_OPERAND:
        return _EMPTY_OPERAND[node.op]
    verb = _LIST_VERBS.get(node.op)
    return verb(values) if verb else f"end with {value_words(values[-1])}"


__all__ = ["NAME", "value_words", "words", "write"]
