"""Syntax errors of the text syntax, told in words: what was found, what was expected, the fix.

Lark reports terminal names (`OPERATOR`, `RPAR`, `$END`); a person needs "an operator such as
= or contains" and, for the commonest slips, the fix itself: `startswith` -> `starts with`,
`contians` -> `contains`, `adn` -> `and`, `'FR'` -> `"FR"`, an unclosed parenthesis. The
suggestions only ever offer what the parser would accept at that very spot.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from ..errors import Issue
from ..where.positions import line_column
from .literals import describe_literal, quote
from .vocabulary import NULL_TESTS, PERIOD_STARTS, PERIOD_UNITS, every_operator

_OPERATORS = every_operator()
_KEYWORDS = frozenset(
    {"OR", "AND", "NOT", "TRUE", "FALSE", "NULL", "OPERATOR", "NULL_TEST", "WHERE"}
)
_VALUES = frozenset({"STRING", "NUMBER", "DATETIME", "RELATIVE", "TRUE", "FALSE", "NULL"})
_CONDITION_START = frozenset({"NAME", "QUOTED_NAME", "NOT", "LPAR"})
_WORDS = {
    "NULL_TEST": '"is null", "is not null"',
    "IGNORING_CASE": '"ignoring case"',
    "OR": '"or"',
    "AND": '"and"',
    "NOT": '"not"',
    "TRUE": "true",
    "FALSE": "false",
    "NULL": "null",
    "LPAR": '"("',
    "RPAR": '")"',
    "LSQB": '"["',
    "RSQB": '"]"',
    "COMMA": '","',
    "NAME": "a field name",
    "QUOTED_NAME": "a field name",
    "STRING": 'a "string"',
    "NUMBER": "a number",
    "DATETIME": "a date-time such as 2025-01-31",
    "RELATIVE": "a relative date-time such as 30 days ago",
    "QUANTIFIER": '"some (", "every (", "none (", "is (" or "is not ("',
    "AGGREGATE": '"count(", "sum(", "min(" or "max("',
    "WHERE": '"where"',
}
_ORDER = (
    "OPERATOR NULL_TEST NAME QUOTED_NAME NOT LPAR STRING NUMBER DATETIME RELATIVE TRUE FALSE NULL "
    "LSQB "
    "COMMA RSQB IGNORING_CASE AND OR RPAR $END"
).split()
_PHRASES: dict[str, tuple[str, ...]] = {
    "OPERATOR": _OPERATORS,
    "NULL_TEST": NULL_TESTS,
    "IGNORING_CASE": ("ignoring case",),
    "AND": ("and",),
    "OR": ("or",),
    "NOT": ("not",),
    "TRUE": ("true",),
    "FALSE": ("false",),
    "NULL": ("null",),
}
#: Other spellings people reach for (squashed: lower case, no spaces) -> the syntax's own.
_ALIASES = {
    "equals": "=",
    "eq": "=",
    "is": "=",
    "==": "=",
    "ne": "!=",
    "neq": "!=",
    "<>": "!=",
    "gt": ">",
    "gte": ">=",
    "=>": ">=",
    "lt": "<",
    "lte": "<=",
    "=<": "<=",
    "startswith": "starts with",
    "beginswith": "starts with",
    "endswith": "ends with",
    "notin": "not in",
    "notcontains": "not",
    "isnull": "is null",
    "isnotnull": "is not null",
    "like": "contains",
    "includes": "contains",
    "hassome": "has some",
    "hasevery": "has every",
    "isempty": "is empty",
    "isnotempty": "is not empty",
    "contain": "contains",
    "ignorecase": "ignoring case",
    "caseinsensitive": "ignoring case",
    "insensitive": "ignoring case",
    "&&": "and",
    "&": "and",
    "||": "or",
    "|": "or",
    "!": "not",
}
_SWAPPED = {"=>": ">=", "=<": "<=", "=!": "!="}
_WORDS_AT = re.compile(r"\w+(?:[ \t]+\w+){0,2}|[^\w\s\"'`()\[\],]+")
_PARENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|`(?:[^`\\\n]|\\.)*`|#[^\n]*|[()]')


def syntax_issue(error: UnexpectedInput, text: str, fields: Iterable[str] = ()) -> Issue:
    """The one issue for a syntax error, placed at the offending character.

    `fields` are the schema's field names: a field named like a keyword is a likely cause.
    """
    if not text.strip() or _only_comments(text):
        return Issue(
            path="",
            message="the filter is empty",
            line=1,
            column=1,
            suggestion="write true to select every contact",
        )
    expected = _expected(error)
    token_pos = getattr(getattr(error, "token", None), "start_pos", None)
    pos_guess = error.pos_in_stream if isinstance(error, UnexpectedCharacters) else token_pos
    period = _period_issue(text, pos_guess if isinstance(pos_guess, int) else None)
    if period is not None:
        return period
    if isinstance(error, UnexpectedCharacters):
        pos = error.pos_in_stream or 0
        return _unexpected_character(text, pos, expected)
    token: Token | None = getattr(error, "token", None)
    at_end = token is None or token.type == "$END"
    if at_end:
        pos = _end_of_input(token, text)
        found = "the end of the filter"
    else:
        assert token is not None
        pos = token.start_pos or 0
        found = _describe(token)
    suggestion = _suggest(text, pos, expected, None if at_end else token)
    if token is not None and token.type in _KEYWORDS and str(token.value) in set(fields):
        name = str(token.value)
        suggestion = f"a field named like a keyword is written between backticks: `{name}`"
    return _issue(text, pos, f"expected {_expected_words(expected)}, found {found}", suggestion)


_WITHIN = re.compile(r"(?:anniversary\s+)?within\b[ \t]*(\S*)", re.IGNORECASE)
_IN_PERIOD = re.compile(r"\bin\s+(?:the\s+)?(?:last|next|this)\b", re.IGNORECASE)


def _period_issue(text: str, pos: int | None) -> Issue | None:
    """A period written the way people say it: `within the last 7 days` (the error is at
    `the`, not at the valid `within`), `in last 30 days` (`in` takes a list)."""
    if pos is None:
        return None
    within = _WITHIN.match(text, pos)
    if within is not None:
        word = within.group(1)
        where = within.start(1)
        found = quote(word) if word else "the end of the filter"
        starts = ", ".join(PERIOD_STARTS)
        rest = text[within.end(1) :].strip()
        if word.lower() == "the" and rest:
            unit = rest.split()[0].lower().rstrip("s")
            rest = f"this {rest}" if unit in PERIOD_UNITS else rest
            hint = f'leave out "the": within {rest}'
        else:
            hint = f"write e.g. within last 7 days, within this {PERIOD_UNITS[2]} or within today"
        return _issue(text, where, f"expected {starts} after within, found {found}", hint)
    said = next((m for m in _IN_PERIOD.finditer(text) if m.start() <= pos), None)
    if said is not None:
        phrase = " ".join(text[said.start() :].split()[1:]).removeprefix("the ")
        return _issue(
            text,
            said.start(),
            f"expected a list after in, found {quote(phrase.split()[0])}",
            f"a period is written with within: within {phrase}",
        )
    return None


def _issue(text: str, pos: int, message: str, suggestion: str | None) -> Issue:
    line, column = line_column(text, pos)
    return Issue(path="", message=message, suggestion=suggestion, line=line, column=column)


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def _expected(error: UnexpectedInput) -> set[str]:
    if isinstance(error, UnexpectedCharacters):
        return set(error.allowed or ())
    if isinstance(error, UnexpectedToken):
        return set(error.expected or ())
    return set(getattr(error, "expected", None) or ())


def _end_of_input(token: Token | None, text: str) -> int:
    end = getattr(token, "end_pos", None)
    return end if isinstance(end, int) else len(text.rstrip())


def _describe(token: Token) -> str:
    kind = token.type
    as_literal = describe_literal(kind, token.value)
    if as_literal is not None:
        return as_literal
    if kind == "OPERATOR":
        return f'the operator "{" ".join(token.value.split())}"'
    if kind == "QUOTED_NAME":
        return f"the field name {token.value}"
    return quote(" ".join(token.value.split()))


def _expected_words(expected: Iterable[str]) -> str:
    names = set(expected)
    parts = []
    if "OPERATOR" in names:
        tests = ", " + ", ".join(NULL_TESTS) if "NULL_TEST" in names else ""
        ops = ", ".join(_OPERATORS) + tests
        parts.append(f"an operator ({ops})")
        names -= {"OPERATOR", "NULL_TEST"}
    if _VALUES <= names:
        listed = "LSQB" in names
        last = ', null or a ["list"])' if listed else " or null)"
        parts.append('a value ("text", 42, 2025-01-31, true, false' + last)
        names -= _VALUES | {"LSQB"}
    if _CONDITION_START <= names:
        parts.append('a condition such as points > 10, "not" or "("')
        names -= _CONDITION_START
        if {"TRUE", "FALSE"} <= names:
            parts[-1] = parts[-1].replace(' or "("', ', "(", true or false')
            names -= {"TRUE", "FALSE"}
    words = [_WORDS[n] for n in _ORDER if n in names and n in _WORDS]
    parts.extend(dict.fromkeys(words))  # a field name is NAME or QUOTED_NAME: say it once
    if "$END" in names:
        parts.append("the end of the filter")
    if not parts:
        return "something else"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def _unexpected_character(text: str, pos: int, expected: set[str]) -> Issue:
    char = text[pos]
    found = f"the character {quote(char)}"
    if char == "'":
        closing = text.find("'", pos + 1)
        content = text[pos + 1 : closing] if closing > pos else "..."
        return _issue(
            text,
            pos,
            f"expected {_expected_words(expected)}, found {found}",
            f"strings are written in double quotes: {quote(content)}",
        )
    if char == '"':
        return _issue(
            text,
            pos,
            "the string is not closed on its line",
            'end it with "; write \\n for a line break inside a string',
        )
    if char == "`":
        return _issue(text, pos, "the quoted field name is not closed on its line", "end it with `")
    message = f"expected {_expected_words(expected)}, found {found}"
    return _issue(text, pos, message, _suggest(text, pos, expected, None))


def _decimal_comma(text: str, pos: int) -> str | None:
    """`1000,5` where a number ends: the hint to write its decimal with a dot."""
    if text[pos : pos + 1] != ",":
        return None
    before = re.search(r"(?<![\w.])[+-]?\d+\Z", text[:pos])
    after = re.match(r"\d+", text[pos + 1 :])
    if before is None or after is None:
        return None
    return f"decimals are written with a dot: {before.group()}.{after.group()}"


def _suggest(text: str, pos: int, expected: set[str], token: Token | None) -> str | None:
    decimal = _decimal_comma(text, pos)
    if decimal is not None:
        return decimal
    swapped = _SWAPPED.get(text[max(0, pos - 1) : pos + 1])
    if swapped is not None and token is not None and token.type == "OPERATOR":
        return f'did you mean "{swapped}"?'
    phrase = _closest_phrase(text, pos, expected)
    if phrase is not None:
        return f'did you mean "{phrase}"?'
    found = token.type if token is not None else None
    if "RPAR" in expected and (found is None or found == "RSQB"):
        opened = _unclosed_paren(text, pos)
        if opened is not None:
            line, column = line_column(text, opened)
            return f'close the "(" opened at line {line}, column {column}'
    if found == "NAME" and _VALUES <= expected:
        assert token is not None
        return f"strings are written in double quotes: {quote(token.value)}"
    if found in _VALUES | {"LSQB"} and "OPERATOR" in expected:
        return "put an operator between the field and the value, such as = or contains"
    if found in _CONDITION_START and {"AND", "OR"} <= expected:
        return 'join conditions with "and" or "or"'
    if found == "STRING" and "NAME" in expected:
        return "field names are written without quotes, or between backticks: `first name`"
    return None


def _closest_phrase(text: str, pos: int, expected: set[str]) -> str | None:
    """The keyword or operator the user most likely meant by the words at `pos`."""
    phrases = [p for name in expected for p in _PHRASES.get(name, ())]
    match = _WORDS_AT.match(text, pos)
    if not phrases or match is None:
        return None
    words = match.group().split()
    squashed_phrases = {p.replace(" ", ""): p for p in phrases}
    candidates = ["".join(words[:n]).lower() for n in range(len(words), 0, -1)]
    for candidate in candidates:  # the most words first: "starts wiht" before "starts"
        alias = _ALIASES.get(candidate, squashed_phrases.get(candidate))
        if alias in phrases:
            return alias
        cutoff = 0.75 if len(candidate) > 3 else 0.6
        close = difflib.get_close_matches(candidate, list(squashed_phrases), n=1, cutoff=cutoff)
        if close and close[0] != candidate:
            return squashed_phrases[close[0]]
    return None


def _unclosed_paren(text: str, pos: int) -> int | None:
    """Where the innermost "(" still open at `pos` was opened."""
    opened: list[int] = []
    for match in _PARENS.finditer(text, 0, pos):
        if match.group() == "(":
            opened.append(match.start())
        elif match.group() == ")" and opened:
            opened.pop()
    return opened[-1] if opened else None
