"""Text syntax to the AST: the grammar's rules reduced into nodes, validated as `parse` does.

Design choices:
- The parser calls these rules bottom-up as it reduces, so the AST is built without recursion.
  The rules run in a `Builder` made per call (found through a context variable, because the
  parser and its rule table are built once per process), which collects every problem and
  keeps going, like the JSON reader, so one `FilterError` lists them all.
- A condition is checked against the schema exactly as `parse` checks a field's operators:
  the same field lookup, operator/type fit, value types, list and null rules, with messages
  naming the operator as it is written here (`"starts with"` rather than `startsWith`).
- Every issue carries the line and column of the token it is about.
"""

from __future__ import annotations

import re
import sys
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from lark import Token, Transformer

from ..errors import Issue, describe_value, did_you_mean, join_path
from ..language.fields import LIST_OPS, ORDERING_OPS, PATTERN_OPS, Field, FieldType, Op, Schema
from ..language.limits import DEFAULT_LIMITS
from ..language.nodes import FALSE, TRUE, And, Comparison, IsNull, Node, Not, Or
from ..language.relative import Ago, DurationError
from ..language.values import Scalar, is_number, parse_datetime
from ..where.positions import line_column
from .literals import EscapeError, describe_literal, field_name, literal, unquote

#: How each operator is written (and printed); `==` and `!=` are read too.
SPELLINGS: dict[Op, str] = {
    Op.EQUALS: "=",
    Op.GT: ">",
    Op.GTE: ">=",
    Op.LT: "<",
    Op.LTE: "<=",
    Op.CONTAINS: "contains",
    Op.STARTS_WITH: "starts with",
    Op.ENDS_WITH: "ends with",
    Op.IN: "in",
    Op.NOT_IN: "not in",
}
_OPERATORS: dict[str, tuple[Op, bool]] = {text: (op, False) for op, text in SPELLINGS.items()}
_OPERATORS.update({"==": (Op.EQUALS, False), "!=": (Op.EQUALS, True)})

_EXPECTED = {
    FieldType.STRING: "a string",
    FieldType.NUMBER: "a number",
    FieldType.BOOLEAN: "true or false",
    FieldType.DATETIME: "an ISO 8601 date-time",
}
_PLURAL = {
    FieldType.STRING: "strings",
    FieldType.NUMBER: "numbers",
    FieldType.BOOLEAN: "booleans",
    FieldType.DATETIME: "date-times",
}
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


def operator_names(field: Field) -> str:
    """Every way to test `field`, as written in the text syntax, for hints."""
    ops = [SPELLINGS[op] for op in Op if field.accepts(op)]
    ops.insert(1, "!=")
    return ", ".join([*ops, "is null", "is not null"])


def _spelling(token: Token) -> str:
    return " ".join(token.value.lower().split())


def _describe_token(token: Token) -> str:
    if token.type == "STRING":
        try:
            return describe_value(unquote(token.value))
        except EscapeError:
            pass
    return describe_literal(token.type, token.value) or str(token.value).lower()


class Builder:
    """The state of one parse: the schema, the limits' array bound, and the issues found."""

    def __init__(self, text: str, schema: Schema, max_array: int) -> None:
        self.text = text
        self.schema = schema
        self.max_array = max_array
        self.issues: list[Issue] = []
        #: First token of each group node, to place limit errors.
        self.group_tokens: dict[int, Token] = {}
        #: AST nodes built; a cheap bound that spares measuring small filters against limits.
        self.nodes = 0

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

    # Validation, mirroring parse._Reader.

    def check_condition(self, name_token: Token, rest: list[Any]) -> Node:
        field = self.field(name_token)
        if field is None:
            return TRUE
        path = join_path("", field.name)
        if rest[0].type == "PATH" or field.type is FieldType.JSON:
            return self.json_condition(field, name_token, rest, path)
        if rest[0].type == "NULL_TEST":
            negated = "not" in _spelling(rest[0])
            return Not(IsNull(field.name)) if negated else IsNull(field.name)
        op_token, operand = rest[0], rest[1]
        op, negated = _OPERATORS[_spelling(op_token)]
        case_token = rest[2] if len(rest) > 2 else None
        insensitive = case_token is not None
        if insensitive and field.type is not FieldType.STRING:
            assert case_token is not None
            self.issue(
                case_token,
                f'ignoring case applies to string fields; "{field.name}" is '
                f"a {field.type.value} field",
                "remove ignoring case",
                path,
            )
        if not field.accepts(op):
            self.issue(
                op_token,
                _misplaced(field, op, _spelling(op_token)),
                f'"{field.name}" takes {operator_names(field)}',
                path,
            )
            return TRUE
        insensitive = field.type is FieldType.STRING and (insensitive or op is Op.CONTAINS)
        node = self.comparison(field, op, op_token, operand, insensitive, path)
        return Not(node) if negated and node is not TRUE else node

    def json_condition(self, field: Field, name_token: Token, rest: list[Any], path: str) -> Node:
        """A condition on a key inside a JSON field, checked by the JSON reader's rules."""
        if rest[0].type != "PATH":
            self.issue(
                rest[0],
                f'JSON field "{field.name}" is compared through a path',
                f'write e.g. {field_name(field.name)}.plan = "pro"',
                path,
            )
            return TRUE
        if field.type is not FieldType.JSON:
            self.issue(
                rest[0], f'"{field.name}" is a {field.type.value} field: it has no keys', None, path
            )
            return TRUE
        keys = self.path_keys(rest[0], path)
        if keys is None:
            return TRUE
        rest = rest[1:]
        if rest[0].type == "NULL_TEST":
            negated = "not" in _spelling(rest[0])
            return Not(IsNull(field.name, keys)) if negated else IsNull(field.name, keys)
        op_token, operand = rest[0], rest[1]
        op, negated = _OPERATORS[_spelling(op_token)]
        insensitive = len(rest) > 2
        if isinstance(operand, ListLiteral):
            items = [self.json_value(token, path) for token in operand.items]
            if any(item is _INVALID for item in items):
                return TRUE
            value: Any = items
        else:
            value = self.json_value(operand, path)
            if value is _INVALID:
                return TRUE
        from ..where.read import _Reader  # the JSON reader's rules, one definition

        reader = _Reader(self.schema, replace(DEFAULT_LIMITS, max_array=self.max_array))
        node = reader.json_comparison(field, keys, op, value, None, insensitive)
        for issue in reader.issues.issues:
            self.issue(op_token, issue.message, issue.suggestion, path)
        return Not(node) if negated and node is not TRUE else node

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
            if "\x00" in key:
                self.issue(token, "a key holds NUL", None, path)
                return None
            if self.valid_string(key, token, path) is None:
                return None
            keys.append(key)
        return tuple(keys)

    def json_value(self, token: Token, path: str) -> Any:
        """A token as the JSON value it stands for; `_INVALID` after an issue."""
        try:
            if token.type == "STRING":
                return unquote(token.value)
        except EscapeError as exc:
            self.issue(token, str(exc), exc.suggestion, path, exc.offset)
            return _INVALID
        if token.type == "NUMBER":
            number = self.number(token.value, token, path, Field("data", FieldType.NUMBER))
            return _INVALID if number is None else number
        if token.type in ("TRUE", "FALSE"):
            return token.type == "TRUE"
        if token.type == "NULL":
            return None
        self.issue(
            token,
            f"a JSON value is a string, a number or a boolean, found {_describe_token(token)}",
            "write a date as a string in quotes",
            path,
        )
        return _INVALID

    def field(self, token: Token) -> Field | None:
        name = token.value
        if token.type == "QUOTED_NAME":
            try:
                name = unquote(name)
            except EscapeError as exc:
                self.issue(token, str(exc), exc.suggestion, offset=exc.offset)
                return None
        field = self.schema.get(name)
        if field is None:
            hint = did_you_mean(name, self.schema.names)
            if hint is None:
                hint = "filterable fields are " + ", ".join(self.schema.names)
            self.issue(token, f'unknown field "{_shown(name)}"', hint, join_path("", name))
        return field

    def comparison(
        self,
        field: Field,
        op: Op,
        op_token: Token,
        operand: Token | ListLiteral,
        insensitive: bool,
        path: str,
    ) -> Node:
        written = _spelling(op_token)
        if op in LIST_OPS:
            values = self.values(field, written, operand, path)
            return TRUE if values is None else Comparison(field.name, op, values, insensitive)
        if isinstance(operand, ListLiteral):
            self.issue(
                operand.open,
                f"expected {_EXPECTED[field.type]} for {field.type.value} "
                f'field "{field.name}", found a list of {len(operand.items)} values',
                'use "in" to test against several values',
                path,
            )
            return TRUE
        if operand.type == "NULL":
            if op is Op.EQUALS:
                return IsNull(field.name)
            self.issue(
                operand,
                f'"{written}" does not take null',
                f'test for null with "{field.name} is null" or "{field.name} is not null"',
                path,
            )
            return TRUE
        value = self.literal(field, operand, path)
        return TRUE if value is None else Comparison(field.name, op, value, insensitive)

    def values(
        self, field: Field, written: str, operand: Token | ListLiteral, path: str
    ) -> tuple[Scalar, ...] | None:
        if not isinstance(operand, ListLiteral):
            hint = None if operand.type == "NULL" else f"write [{operand.value}]"
            self.issue(
                operand,
                f'"{written}" takes a list of {_PLURAL[field.type]}, found '
                f"{_describe_token(operand)}",
                hint,
                path,
            )
            return None
        if len(operand.items) > self.max_array:
            self.issue(
                operand.open,
                f"the list has {len(operand.items)} values, over the limit of {self.max_array}",
                "split the audience",
                path,
            )
            return None
        values: list[Scalar] = []
        valid = True
        for token in operand.items:
            if token.type == "NULL":
                self.issue(
                    token,
                    f'null is not allowed inside "{written}"',
                    f"to match nulls too, add: or {field.name} is null",
                    path,
                )
                valid = False
                continue
            if token.type == "RELATIVE" and field.type is FieldType.DATETIME:
                self.issue(
                    token,
                    f'a relative date-time is not allowed inside "{written}": a list holds '
                    "fixed values",
                    "compare with =, or combine conditions with or",
                    path,
                )
                valid = False
                continue
            value = self.literal(field, token, path)
            if value is None or isinstance(value, Ago):  # (a relative value was refused above)
                valid = False
            else:
                values.append(value)
        return tuple(values) if valid else None

    def literal(self, field: Field, token: Token, path: str) -> Scalar | Ago | None:
        kind, text = field.type, token.value
        try:
            if token.type == "STRING":
                value = unquote(text)
                if kind is FieldType.STRING:
                    return self.valid_string(value, token, path)
                if kind is FieldType.DATETIME:
                    return self.datetime(value, token, path, describe_value(value))
            elif token.type == "NUMBER" and kind is FieldType.NUMBER:
                return self.number(text, token, path, field)
            elif token.type == "DATETIME" and kind is FieldType.DATETIME:
                return self.datetime(text, token, path, f"the date-time {text}")
            elif token.type == "RELATIVE" and kind is FieldType.DATETIME:
                return self.relative(text, token, path)
            elif token.type in ("TRUE", "FALSE") and kind is FieldType.BOOLEAN:
                return token.type == "TRUE"
        except EscapeError as exc:
            self.issue(token, str(exc), exc.suggestion, path, exc.offset)
            return None
        self.issue(
            token,
            f"expected {_EXPECTED[kind]} for {kind.value} field "
            f'"{field.name}", found {_describe_token(token)}',
            _type_hint(kind, token),
            path,
        )
        return None

    def valid_string(self, value: str, token: Token, path: str) -> str | None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            self.issue(token, "the string holds a lone surrogate, not valid Unicode", None, path)
            return None
        return value

    def number(self, text: str, token: Token, path: str, field: Field) -> int | float | None:
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
        value = float(text)
        if is_number(value):
            return value
        self.issue(
            token,
            f'expected a number for number field "{field.name}", found the '
            f"number {text}, which is too large to represent",
            "NaN and Infinity are not numbers a filter can compare with",
            path,
        )
        return None

    def relative(self, text: str, token: Token, path: str) -> Ago | None:
        try:
            return Ago.from_words(text)
        except DurationError as exc:
            self.issue(token, str(exc), exc.suggestion, path)
            return None

    def datetime(self, text: str, token: Token, path: str, found: str) -> Scalar | None:
        try:
            return parse_datetime(text)
        except ValueError as exc:
            self.issue(
                token, f"expected an ISO 8601 date-time, found {found}: {exc}", _DATETIME_HINT, path
            )
            return None


def _misplaced(field: Field, op: Op, written: str) -> str:
    if op in ORDERING_OPS:
        applies = "number and date-time fields"
    elif op in PATTERN_OPS:
        applies = "string fields"
    else:
        applies = "string, number and date-time fields"
    return f'"{written}" applies to {applies}; "{field.name}" is a {field.type.value} field'


def _type_hint(kind: FieldType, token: Token) -> str | None:
    if token.type == "STRING":
        try:
            inner = unquote(token.value).strip()
        except EscapeError:
            return None
        if kind is FieldType.NUMBER and _is_number_text(inner):
            return f"write the number without quotes: {inner}"
        if kind is FieldType.BOOLEAN and inner.lower() in ("true", "false"):
            return f"write {inner.lower()} without quotes"
        return None
    if kind is FieldType.STRING and token.type != "NULL":
        return f"write it as a string: {literal(token.value)}"
    if kind is FieldType.DATETIME:
        return _DATETIME_HINT
    return None


def _is_number_text(text: str) -> bool:
    try:
        return is_number(float(text)) and text.lower() not in ("nan", "inf", "infinity")
    except ValueError:
        return False


def _shown(text: str) -> str:
    """A name as it can be printed: lone surrogates escaped, long names cut."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= 60 else text[:57] + "..."


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
