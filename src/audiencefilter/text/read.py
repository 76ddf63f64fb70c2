"""Text syntax to the AST: the grammar's rules reduced into nodes.

Design choices:
- The parser calls these rules bottom-up as it reduces, so the AST is built without recursion.
  The rules run in a `Builder` made per call (found through a context variable, because the
  parser and its rule table are built once per process), which collects every problem and
  keeps going, like the JSON reader, so one `FilterError` lists them all.
- This module reads syntax only: tokens become field names, data-path keys and operand values
  (`2025-01-31` a `BareDateTime`, `30 days ago` a `WordsAgo`). Each condition is then checked
  and built by `language.conditions`, shared with the JSON reader; `TEXT_SYNTAX` says how the
  text syntax writes what the messages name (`"starts with"` rather than `startsWith`).
- Every issue carries the line and column of the token it is about.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from lark import Token, Transformer

from ..errors import Issue, describe_value, join_path
from ..language.conditions import (
    BareDateTime,
    Conditions,
    FieldName,
    Report,
    Syntax,
    Where,
    WordsAgo,
    WordsPeriod,
    WordsStart,
    unknown_field,
)
from ..language.fields import Field, ListOp, Op, Schema
from ..language.nodes import FALSE, TRUE, And, IsNull, Node, Not, Or
from ..language.values import InexactNumber, decimal_numeral, is_number
from ..where.positions import line_column
from . import relations
from .literals import EscapeError, describe_literal, field_name, literal, quote, unquote
from .vocabulary import (
    ALIASES,
    ARRAY_SPELLINGS,
    LIST_SPELLINGS,
    NEGATED_SPELLINGS,
    PERIOD_TERMINALS,
    SPELLINGS,
)

_PERIOD_TOKENS = PERIOD_TERMINALS
_OPERATORS: dict[str, tuple[Op, bool]] = {text: (op, False) for op, text in SPELLINGS.items()}
_OPERATORS.update({text: (op, False) for text, op in ALIASES.items()})
_OPERATORS.update({text: (op, True) for op, text in NEGATED_SPELLINGS.items()})
_LIST_OPERATORS: dict[str, ListOp] = {
    text: op for op, text in LIST_SPELLINGS.items() if op is not ListOp.IS_EMPTY
}
_LIST_ONLY = frozenset(("has", "has some", "has every"))
_ARRAY_OPERATORS: dict[str, ListOp] = {
    "has": ListOp.ARRAY_CONTAINS,
    **{text: op for op, text in ARRAY_SPELLINGS.items()},
}

_WORD_VALUES: dict[str, Callable[[str], Any]] = {
    "DATETIME": BareDateTime,
    "RELATIVE": WordsAgo,
    "CALENDAR": WordsStart,
    "NAME": FieldName,
    "NULL": lambda _text: None,
}
"""Value tokens read as written: literals whose meaning the field they meet decides, a field
name, null."""

_DATETIME_HINT = "write e.g. 2025-01-31, 2025-01-31T09:30:00Z or 2025-01-31T09:30:00+02:00"

_INVALID: Any = object()
_PATH_KEY = re.compile(r"\.[ \t]*([^\W\d]\w*|`(?:[^`\\\n]|\\.)*`)")

Item = tuple[Node, Token]
"""A node and the first token of its text, for positions in messages."""


@dataclass(frozen=True, slots=True)
class ListLiteral:
    """A `[...]` operand: its opening bracket and its value tokens."""

    open: Token
    items: tuple[Token, ...]


@dataclass(frozen=True, slots=True)
class _Written:
    """A condition's operator and operand as written, with what every kind of operator reads
    them with: the field, case folding, and where problems are reported."""

    field: Field
    spelling: str
    op_token: Token
    operand: Token | ListLiteral
    insensitive: bool
    report: Report
    path: str


def _path_problem(field: Field, token: Token) -> tuple[str, str | None] | None:
    """What is wrong with the path (or its absence) after `field`, if anything."""
    if token.type != "PATH":
        return (
            f'JSON field "{field.name}" is compared through a path',
            f'write e.g. {field_name(field.name)}.plan = "pro"',
        )
    if not field.type.entry.document:
        return f'"{field.name}" is a {field.type.value} field: it has no keys', None
    return None


_LIST_TEXT = {
    ListOp.HAS: LIST_SPELLINGS[ListOp.HAS],
    ListOp.HAS_SOME: LIST_SPELLINGS[ListOp.HAS_SOME],
    ListOp.HAS_EVERY: LIST_SPELLINGS[ListOp.HAS_EVERY],
    ListOp.EQUALS: "=, !=",
    ListOp.IS_EMPTY: "is empty, is not empty",
}
"""A list operator as the hints list it: with its negation where the text has one."""


def operator_names(field: Field) -> str:
    """Every way to test `field`, as written in the text syntax, for hints."""
    if field.type.element is not None:
        listed = [text for op, text in _LIST_TEXT.items() if op in field.list_operators]
        return ", ".join([*listed, "is null", "is not null"])
    ops = [SPELLINGS[op] for op in Op if field.accepts(op)]
    ops.insert(1, "!=")
    return ", ".join([*ops, "is null", "is not null"])


def _spelling(token: Token) -> str:
    return " ".join(token.value.lower().split())


class Builder:
    """The state of one parse: the schema, the limits' array bound, and the issues found."""

    def __init__(self, text: str, schema: Schema, max_array: int) -> None:
        self.text = text
        self.schema = schema
        self.max_array = max_array
        self.issues: list[Issue] = []
        self.conditions = Conditions(TEXT_SYNTAX, max_array, schema)
        #: First token of each group node, to place limit errors.
        self.group_tokens: dict[int, Token] = {}
        #: AST nodes built; a cheap bound that spares measuring small filters against limits.
        self.nodes = 0
        #: The schemas of the relations entered, outermost first (see `relations.py`), and
        #: how many of them failed, inside which unknown fields are not reported again.
        self.schemas: list[Schema] = []
        #: Where in the JSON form the relation entered is (`orders.some`), which begins the
        #: path of every issue inside it; the outer ones, outermost first.
        self.prefix = ""
        self.prefixes: list[str] = []
        self.silent = 0

    def position(self, token: Token, offset: int = 0) -> tuple[int, int]:
        """1-based line and column of a token (tokens carry only their offset)."""
        return line_column(self.text, (token.start_pos or 0) + offset)

    def issue(
        self,
        token: Token,
        message: str,
        suggestion: str | None = None,
        path: str = "",
        offset: int = 0,
    ) -> None:
        line, column = self.position(token, offset)
        if self.prefix:
            glue = "" if path.startswith("[") or not path else "."
            path = self.prefix + glue + path
        self.issues.append(
            Issue(path=path, message=message, suggestion=suggestion, line=line, column=column)
        )

    # Rules, named as in the grammar.

    def start(self, children: list[Item]) -> Node:
        return children[0][0]

    def or_expr(self, children: list[Any]) -> Item:
        return self.group(Or, children)

    def and_expr(self, children: list[Any]) -> Item:
        return self.group(And, children)

    def group(self, kind: type[And] | type[Or], children: list[Any]) -> Item:
        # Children alternate item, connective token, item...; a nested group arrives as one item,
        # so parentheses are kept as written and a run of one connective stays n-ary.
        items: list[Item] = children[::2]
        node = kind(tuple(item[0] for item in items))
        self.nodes += 1
        self.group_tokens[id(node)] = items[0][1]
        return node, items[0][1]

    def negation(self, children: list[Any]) -> Item:
        token, (item, _) = children
        node = Not(item)
        self.nodes += 1
        self.group_tokens[id(node)] = token
        return node, token

    def parenthesized(self, children: list[Any]) -> Item:
        opening, (node, _), _closing = children
        if id(node) in self.group_tokens:
            self.group_tokens[id(node)] = opening
        return node, opening

    def constant(self, children: list[Token]) -> Item:
        token = children[0]
        self.nodes += 1
        return (TRUE if token.type == "TRUE" else FALSE), token

    def list_literal(self, children: list[Token]) -> ListLiteral:
        return ListLiteral(children[0], tuple(children[1:-1]))

    def condition(self, children: list[Any]) -> Item:
        name_token = children[0]
        self.nodes += 2  # a negated condition is two nodes
        node = self.check_condition(name_token, children[1:])
        if isinstance(node, Not):  # `!=` and `is not null` open a level, as `not` does in JSON
            self.group_tokens[id(node)] = name_token
        return node, name_token

    # Conditions: the operand as a value, then `language.conditions` checks and builds.

    def check_condition(self, name_token: Token, rest: list[Any]) -> Node:
        relation = None if self.silent else self.schema.relation(_plain_name(name_token))
        if relation is not None:
            return relations.relation_condition(self, relation, name_token, rest)
        field = self.field(name_token)
        if field is None:
            return TRUE
        return self.check_field(field, rest, "")

    def check_field(self, field: Field, rest: list[Any], at: str) -> Node:
        """The condition `rest` (path, operator and operand, or null test) on `field`."""
        path = join_path(at, field.name)
        keys: tuple[str, ...] | None = None
        if rest[0].type == "PATH" or field.type.entry.document:
            keys = self.field_path(field, rest[0], path)
            if keys is None:
                return TRUE
            rest = rest[1:]
        if rest[0].type == "NULL_TEST":
            return self.null_test(field, keys, rest[0], path)
        if rest[0].type in _PERIOD_TOKENS:
            return self.within(field, keys, rest[0], path)
        return self.operator_condition(field, keys, rest, path)

    def field_path(self, field: Field, token: Token, path: str) -> tuple[str, ...] | None:
        """The keys after a field's name: a JSON field is compared through a path, and no other
        field has one; None after an issue."""
        problem = _path_problem(field, token)
        if problem is not None:
            self.issue(token, *problem, path)
            return None
        return self.path_keys(token, path)

    def null_test(
        self, field: Field, keys: tuple[str, ...] | None, token: Token, path: str
    ) -> Node:
        """`is [not] null`, `is [not] blank` and `is [not] empty`: one token each."""
        spelling = _spelling(token)
        if spelling.endswith("blank"):
            holds = "not" not in spelling
            return self.conditions.blank(field, keys, holds, self.at(token, None, path))
        if spelling.endswith("empty"):
            return self.empty_test(field, token, path)
        node: Node = IsNull(field.name, keys or ())
        return Not(node) if "not" in spelling else node

    def operator_condition(
        self, field: Field, keys: tuple[str, ...] | None, rest: list[Any], path: str
    ) -> Node:
        """`field op operand [ignoring case]`, handed on by the kind of operator written."""
        op_token, operand = rest[0], rest[1]
        report = self.at(op_token, operand, path)
        insensitive = len(rest) > 2 and self.ignoring_case(field, rest[2], path)
        written = _Written(field, _spelling(op_token), op_token, operand, insensitive, report, path)
        spelling = written.spelling
        if keys is not None and (spelling in _ARRAY_OPERATORS or spelling == "has some"):
            return self.array_condition(written, keys)
        if spelling.startswith("array"):
            return self.misplaced_array_operator(written)
        if field.type.element is not None or spelling in _LIST_ONLY:
            return self.list_condition(written)
        return self.scalar_condition(written, keys)

    def ignoring_case(self, field: Field, token: Token, path: str) -> bool:
        return self.conditions.mode(field, "insensitive", False, self.at(token, None, path))

    def array_condition(self, written: _Written, keys: tuple[str, ...]) -> Node:
        """An operator on a JSON array at a data path (`has`, `starts with`, ...)."""
        if written.spelling == "has some":
            self.issue(
                written.op_token,
                '"has some" does not apply to a JSON array',
                "join has conditions with or, or use has every for all of them",
                written.path,
            )
            return TRUE
        value = self.operand(written.operand, written.path)
        if value is _INVALID:
            return TRUE
        array_op = _ARRAY_OPERATORS[written.spelling]
        field, insensitive, report = written.field, written.insensitive, written.report
        return self.conditions.data_array(field, keys, array_op, value, insensitive, report)

    def misplaced_array_operator(self, written: _Written) -> Node:
        """A JSON array's operator where no data path leads to an array."""
        spelling = written.spelling
        self.issue(
            written.op_token,
            f'"{spelling}" applies to a JSON array at a data path',
            f'write e.g. data.tags {spelling} "vip"',
            written.path,
        )
        return TRUE

    def scalar_condition(self, written: _Written, keys: tuple[str, ...] | None) -> Node:
        """A comparison of a field, or of a value at a data path, with one operand."""
        field, report, conditions = written.field, written.report, self.conditions
        op, negated = _OPERATORS[written.spelling]
        if keys is None and not conditions.accepts(field, op, report):
            return TRUE
        value = self.operand(written.operand, written.path)
        if value is _INVALID:
            return TRUE
        if keys is None:
            node = conditions.comparison(field, op, value, written.insensitive, report)
        else:
            node = conditions.data_comparison(field, keys, op, value, written.insensitive, report)
        return Not(node) if negated and node is not TRUE else node

    def within(self, field: Field, keys: tuple[str, ...] | None, token: Token, path: str) -> Node:
        """`field within <period>`, `field anniversary within <period>`: one token holds the
        operator and its operand."""
        report = self.at(token, token, path)
        op = _PERIOD_TOKENS[token.type]
        # The operator's words, then the period (`anniversary within` `this month`).
        words = token.value.split(None, len(SPELLINGS[op].split()))
        period = WordsPeriod(words[-1])
        if keys is not None:
            return self.conditions.data_comparison(field, keys, op, period, False, report)
        if not self.conditions.accepts(field, op, report):
            return TRUE
        return self.conditions.comparison(field, op, period, False, report)

    def empty_test(self, field: Field, token: Token, path: str) -> Node:
        """`tags is empty` and `tags is not empty`, for list fields only."""
        if field.type.element is None:
            self.issue(
                token,
                f'"is empty" applies to list fields; "{field.name}" is a {field.type.value} field',
                f'test for null with "{field.name} is null", or for no text with = ""'
                if field.takes_blank
                else f'test for null with "{field.name} is null"',
                path,
            )
            return TRUE
        empty = "not" not in _spelling(token)
        report = self.at(token, None, path)
        return self.conditions.list_condition(field, ListOp.IS_EMPTY, empty, False, report)

    def list_condition(self, written: _Written) -> Node:
        """A list operator, or `=`/`!=` on a list field; a list operator on another field, or
        another operator on a list field, is reported with the one meant."""
        field, spelling, report = written.field, written.spelling, written.report
        listed = _LIST_OPERATORS.get("=" if spelling == "==" else spelling)
        negated = spelling == "!="
        if negated:
            listed = ListOp.EQUALS
        if field.type.element is None or listed is None:
            name = listed.value if listed is not None else _OPERATORS[spelling][0].value
            if not self.conditions.misplaced_list_operator(field, name, report):
                self.conditions.accepts(field, _OPERATORS[spelling][0], report)
            return TRUE
        value = self.operand(written.operand, written.path)
        if value is _INVALID:
            return TRUE
        node = self.conditions.list_condition(field, listed, value, written.insensitive, report)
        return Not(node) if negated and node is not TRUE else node

    def at(self, op_token: Token, operand: Token | ListLiteral | None, path: str) -> Report:
        """A report of the condition builder's problems, placed at the token each is about."""

        def report(where: Where, message: str, suggestion: str | None) -> None:
            token = op_token
            if where is not None and operand is not None:
                if isinstance(operand, ListLiteral):
                    index = where[0] if where else None
                    token = operand.items[index] if isinstance(index, int) else operand.open
                else:
                    token = operand
            self.issue(token, message, suggestion, path)

        return report

    def operand(self, operand: Token | ListLiteral, path: str) -> Any:
        """An operand as the value it stands for (see `language.conditions`); `_INVALID` after
        an issue."""
        if isinstance(operand, ListLiteral):
            items = [self.value(token, path) for token in operand.items]
            return _INVALID if any(item is _INVALID for item in items) else items
        return self.value(operand, path)

    def value(self, token: Token, path: str) -> Any:
        """A value token as the operand it stands for; `_INVALID` after an issue."""
        kind = token.type
        if kind == "STRING":
            return self.unquoted(token, path)
        if kind == "QUOTED_NAME":
            name = self.unquoted(token, path)
            return name if name is _INVALID else FieldName(name)
        if kind == "NUMBER":
            number = self.number(token.value, token, path)
            return _INVALID if number is None else number
        if kind in _WORD_VALUES:
            return _WORD_VALUES[kind](token.value)
        return kind == "TRUE"

    def unquoted(self, token: Token, path: str) -> Any:
        """The text of a quoted token; `_INVALID` after an issue with an escape."""
        try:
            return unquote(token.value)
        except EscapeError as exc:
            self.issue(token, str(exc), exc.suggestion, path, exc.offset)
            return _INVALID

    def path_keys(self, token: Token, path: str) -> tuple[str, ...] | None:
        keys: list[str] = []
        for match in _PATH_KEY.finditer(token.value):
            key = match.group(1)
            if key.startswith("`"):
                try:
                    key = unquote(key)
                except EscapeError as exc:
                    self.issue(token, str(exc), exc.suggestion, path)
                    return None
            keys.append(key)
        return self.conditions.data_keys(keys, self.at(token, token, path))

    def field(self, token: Token) -> Field | None:
        name = token.value
        if token.type == "QUOTED_NAME":
            try:
                name = unquote(name)
            except EscapeError as exc:
                self.issue(token, str(exc), exc.suggestion, offset=exc.offset)
                return None
        field = self.schema.get(name)
        if field is None and self.silent:
            return None
        if field is None:
            known = (*self.schema.names, *self.schema.relation_names)
            message, hint = unknown_field(name, self.schema, known)
            self.issue(token, message, hint, join_path("", name))
        return field

    def number(self, text: str, token: Token, path: str) -> int | float | None:
        if not any(c in text for c in ".eE"):
            try:
                return int(text)
            except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
                self.issue(
                    token,
                    f"the number has more than {sys.get_int_max_str_digits()} digits",
                    None,
                    path,
                )
                return None
        try:
            value = decimal_numeral(text)
        except InexactNumber as exc:
            self.issue(token, str(exc), InexactNumber.hint, path)
            return None
        return value if is_number(value) else TooLarge(text)


def _plain_name(token: Token) -> str:
    """A name token's name; a quoted name with a bad escape is no name (`field` reports it)."""
    if token.type != "QUOTED_NAME":
        return str(token.value)
    try:
        return unquote(token.value)
    except EscapeError:
        return ""


class TooLarge(float):
    """A number literal beyond the range of a float (`1e999`): infinite, so no field takes
    it; it keeps its text for the message."""

    text: str

    def __new__(cls, text: str) -> TooLarge:
        number = super().__new__(cls, text)
        number.text = text
        return number


def _describe(value: Any) -> str:
    """A found operand as the text syntax names it."""
    if type(value) is TooLarge:
        return f"the number {value.text}, which is too large to represent"
    if type(value) is BareDateTime:
        return describe_literal("DATETIME", value.text) or value.text
    if type(value) is WordsAgo:
        return describe_literal("RELATIVE", value.text) or value.text
    if type(value) is WordsStart or type(value) is WordsPeriod:
        return " ".join(value.text.split())
    if isinstance(value, list):
        return f"a list of {len(value)} values"
    return describe_value(value)


def _written(value: Any) -> str:
    """A scalar operand as the text syntax writes it."""
    if type(value) in (BareDateTime, WordsAgo, WordsStart, WordsPeriod, TooLarge):
        return str(value.text)
    return literal(value)


TEXT_SYNTAX = Syntax(
    op=lambda op: f'"{SPELLINGS[op]}"',
    operator_names=operator_names,
    describe=_describe,
    written=_written,
    as_string=quote,
    list_word="list",
    datetime_quotes="",
    datetime_is_string=False,
    null_test=lambda name: f'test for null with "{name} is null" or "{name} is not null"',
    null_in_list=lambda name: f"to match nulls too, add: or {name} is null",
    data_null_test='test for null with "is null" or "is not null"',
    or_word="or",
    mode_word="ignoring case",
    list_op=lambda op: f'"{LIST_SPELLINGS.get(op) or ARRAY_SPELLINGS[op]}"',
)
"""How the text syntax writes what condition messages name."""


_ACTIVE: ContextVar[Builder] = ContextVar("audiencefilter_text_builder")


class Rules(Transformer[Token, Any]):
    """The grammar's rule callbacks, forwarding to the `Builder` of the parse in progress."""

    def start(self, children: list[Any]) -> Node:
        return _ACTIVE.get().start(children)

    def or_expr(self, children: list[Any]) -> Item:
        return _ACTIVE.get().or_expr(children)

    def and_expr(self, children: list[Any]) -> Item:
        return _ACTIVE.get().and_expr(children)

    def negation(self, children: list[Any]) -> Item:
        return _ACTIVE.get().negation(children)

    def group(self, children: list[Any]) -> Item:
        return _ACTIVE.get().parenthesized(children)

    def constant(self, children: list[Any]) -> Item:
        return _ACTIVE.get().constant(children)

    def condition(self, children: list[Any]) -> Item:
        return _ACTIVE.get().condition(children)

    def relation_open(self, children: list[Any]) -> Any:
        return relations.relation_open(_ACTIVE.get(), children)

    def quantified(self, children: list[Any]) -> Item:
        return relations.quantified(_ACTIVE.get(), children)

    def aggregate_open(self, children: list[Any]) -> Any:
        return relations.aggregate_open(_ACTIVE.get(), children)

    def aggregated(self, children: list[Any]) -> Item:
        return relations.aggregated(_ACTIVE.get(), children)

    def list(self, children: list[Any]) -> ListLiteral:
        return _ACTIVE.get().list_literal(children)


RULES = Rules()


def build(parse: Any, text: str, schema: Schema, max_array: int) -> tuple[Node, Builder]:
    """Run `parse(text)` with a fresh `Builder` active; the root node and the builder."""
    builder = Builder(text, schema, max_array)
    reset = _ACTIVE.set(builder)
    try:
        root = parse(text)
    finally:
        _ACTIVE.reset(reset)
    return root, builder
