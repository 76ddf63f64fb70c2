"""Quoted strings, field names and literals of the text syntax, read and written.

Strings use JSON's escapes (`\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, `\\n`, `\\r`, `\\t`, `\\uXXXX`
with surrogate pairs for characters beyond the BMP), so a JSON string literal pasted into a
filter means the same; a backtick may also be escaped, for quoted field names. The writer
escapes exactly the characters Python calls non-printable (controls, format characters,
separators other than the space), so what a person reads is what the filter compares.
"""

from __future__ import annotations

import re
from datetime import datetime

from ..language.anniversary import MonthDays
from ..language.calendar import DayOf, Period, StartOf
from ..language.relative import Ago
from ..language.values import Scalar
from ..where.write import format_datetime

_SIMPLE_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "`": "`",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_WRITE_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.?)", re.DOTALL)
_IDENTIFIER = re.compile(r"[^\W\d]\w*\Z")

#: Words with a meaning in the grammar: a field named like one of them is written in backticks.
KEYWORDS = frozenset(
    (
        "and or not true false null contains starts ends with in is ignoring case where has array"
    ).split()
)


class EscapeError(ValueError):
    """A bad escape sequence; `offset` is its position inside the quoted token."""

    def __init__(self, message: str, offset: int, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.suggestion = suggestion


def unquote(token: str) -> str:
    """The value of a `"string"` or `` `name` `` token, escapes decoded.

    Raises:
        EscapeError: an unknown escape, or `\\u` without four hexadecimal digits.
    """
    body = token[1:-1]
    if "\\" not in body:
        return body
    surrogates = False

    def replace(match: re.Match[str]) -> str:
        nonlocal surrogates
        code = match.group(1)
        if code.startswith("u") and len(code) == 5:
            char = chr(int(code[1:], 16))
            surrogates = surrogates or "\ud800" <= char <= "\udfff"
            return char
        if code in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[code]
        offset = match.start() + 1
        if code == "u":
            raise EscapeError(
                r'"\u" must be followed by four hexadecimal digits',
                offset,
                r"write e.g. \u00e9 for é",
            )
        raise EscapeError(f'unknown escape "\\{code}"', offset, r"write \\ for a backslash")

    text = _ESCAPE.sub(replace, body)
    if surrogates:
        text = _join_surrogate_pairs(text)
    return text


def _join_surrogate_pairs(text: str) -> str:
    """`\\ud83d\\ude00` -> one character; a lone half stays, for the caller to reject."""
    return re.sub(
        "[\ud800-\udbff][\udc00-\udfff]",
        lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"),
        text,
    )


def quote(text: str, mark: str = '"') -> str:
    """`text` between `mark`s, escaped so that `unquote` gives it back."""
    if text.isprintable() and mark not in text and "\\" not in text:
        return mark + text + mark
    return mark + "".join(_escape_char(ch, mark) for ch in text) + mark


def _escape_char(char: str, mark: str) -> str:
    if char == mark or char == "\\":
        return "\\" + char
    if char.isprintable():
        return char
    if char in _WRITE_ESCAPES:
        return _WRITE_ESCAPES[char]
    code = ord(char)
    if code > 0xFFFF:  # beyond the BMP: a surrogate pair, as in JSON
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def field_name(name: str) -> str:
    """A field as written in a filter: bare when it is an identifier and no keyword."""
    if _IDENTIFIER.match(name) and name.lower() not in KEYWORDS:
        return name
    return quote(name, "`")


def reference(field: str, path: tuple[str, ...] = ()) -> str:
    """A field, and the keys inside it for a JSON field: `data.plan`, `data.`a b`.c`."""
    return field_name(field) + "".join("." + field_name(key) for key in path)


def literal(value: Scalar | Ago | StartOf | Period | MonthDays | DayOf) -> str:
    """A value as written in a filter: `"text"`, `42`, `1.5`, `true`, `2025-01-31T09:30:00Z`,
    `30 days ago`."""
    if isinstance(value, Ago | StartOf | Period | MonthDays | DayOf):
        return value.words
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, datetime):
        return format_datetime(value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back to the same float
    return str(value)


LITERAL_KINDS = {
    "STRING": "the string",
    "NUMBER": "the number",
    "DATETIME": "the date-time",
    "RELATIVE": "the relative date-time",
}


def describe_literal(kind: str, spelling: str) -> str | None:
    """How an error message names a literal token as written, or None for other tokens.

    The parser's syntax errors and the reader's type errors both quote the offending literal;
    one wording keeps their messages alike.
    """
    what = LITERAL_KINDS.get(kind)
    if what is None:
        return None
    # A relative date may be spread over several spaces or lines; a string is quoted verbatim.
    return f"{what} {' '.join(spelling.split()) if kind == 'RELATIVE' else spelling}"
