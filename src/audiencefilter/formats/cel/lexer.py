"""The tokens of a CEL (Common Expression Language) expression, each with its offset.

Design choices:
- The whole lexical grammar of CEL is read (identifiers, decimal, hexadecimal and unsigned
  integers, doubles, quoted, triple-quoted, raw and bytes strings with every escape, comments,
  every operator), so that an expression outside the subset we read is refused by what it
  means ("arithmetic", "a map literal") at its own position, not as a puzzling syntax error.
- A token keeps its offset in the text; `Tokens.error` turns an offset into CEL's line and
  column (1-based, counted in characters), so every message points at the token at fault.
- One regular expression per kind of token, tried in a fixed order: the lexer never
  backtracks and runs in time linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ...errors import FilterError, Issue
from ...where.positions import line_column

RESERVED: Final = frozenset(
    "as break const continue else for function if import let loop package namespace return "
    "var void while".split()
)
"""Words CEL reserves: never an identifier."""

_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\n\f]+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"|'''|"|'))
  | (?P<number>(?:\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?
               |0[xX][0-9a-fA-F]+[uU]?|\d+[uU]?))
  | (?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<op>&&|\|\||==|!=|<=|>=|[<>!?:.,()\[\]{}+\-*/%])
    """,
    re.VERBOSE,
)

_ESCAPES: Final = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}
_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2}|.)", re.S)


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind (`ident`, `int`, `uint`, `double`, `string`, `bytes`, `op`, `end`),
    its text as written, its value (the decoded string or number) and its offset."""

    kind: str
    text: str
    value: object
    offset: int


class Tokens:
    """The tokens of one text, read one at a time by the parser."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.items = _tokenize(self)
        self.index = 0

    @property
    def current(self) -> Token:
        return self.items[self.index]

    def advance(self) -> Token:
        token = self.items[self.index]
        self.index = min(self.index + 1, len(self.items) - 1)
        return token

    def at(self, *texts: str) -> bool:
        token = self.current
        return token.kind in ("op", "ident") and token.text in texts

    def error(self, offset: int, message: str, suggestion: str | None = None) -> FilterError:
        """The `FilterError` of a problem at `offset`, with CEL's line and column."""
        line, column = line_column(self.text, offset)
        issue = Issue(path="", message=message, suggestion=suggestion, line=line, column=column)
        return FilterError([issue], source=self.text)


def describe(token: Token) -> str:
    """A token as messages name it: `the end of the expression`, `"&&"`, `the name points`."""
    if token.kind == "end":
        return "the end of the expression"
    if token.kind == "ident":
        return f"the name {token.text}"
    if token.kind == "op":
        return f'"{token.text}"'
    return f"the literal {token.text}"


def _tokenize(tokens: Tokens) -> list[Token]:
    text = tokens.text
    found: list[Token] = []
    offset = 0
    while offset < len(text):
        match = _TOKEN.match(text, offset)
        if match is None:
            raise tokens.error(offset, f"unexpected character {text[offset]!r}", _fix(text[offset]))
        kind = match.lastgroup
        if kind == "string":
            token, offset = _string(tokens, match)
            found.append(token)
            continue
        if kind != "space":
            found.append(_plain(tokens, kind or "", match.group(), offset))
        offset = match.end()
    found.append(Token("end", "", None, len(text)))
    return found


def _fix(char: str) -> str:
    spelled = {"=": "==", "&": "&&", "|": "||"}.get(char)
    if spelled:
        return f"CEL writes {spelled}"
    return "CEL expressions use names, literals and operators such as == && || !"


def _plain(tokens: Tokens, kind: str, written: str, offset: int) -> Token:
    if kind == "number":
        return _number(written, offset)
    if kind == "ident" and written in RESERVED:
        raise tokens.error(offset, f'"{written}" is a word CEL reserves', "rename it")
    return Token(kind, written, written, offset)


def _number(written: str, offset: int) -> Token:
    if written[:2] in ("0x", "0X"):
        digits = written[2:].rstrip("uU")
        kind = "uint" if written[-1] in "uU" else "int"
        return Token(kind, written, int(digits, 16), offset)
    if written[-1] in "uU":
        return Token("uint", written, int(written[:-1]), offset)
    if any(c in written for c in ".eE"):
        return Token("double", written, float(written), offset)
    return Token("int", written, int(written), offset)


def _string(tokens: Tokens, match: re.Match[str]) -> tuple[Token, int]:
    """A quoted literal from its opening quote to its closing one."""
    start = match.start()
    opening = match.group()
    prefix = opening.rstrip("\"'").lower()
    quote = opening[len(prefix) :]
    text = tokens.text
    position = match.end()
    while True:
        if position >= len(text) or (len(quote) == 1 and text[position] == "\n"):
            raise tokens.error(start, "a string is never closed", f"end it with {quote}")
        if text.startswith(quote, position):
            break
        position += 2 if text[position] == "\\" and position + 1 < len(text) else 1
    body = text[match.end() : position]
    end = position + len(quote)
    value = body if "r" in prefix else _unescape(tokens, body, match.end())
    kind = "bytes" if "b" in prefix else "string"
    return Token(kind, text[start:end], value, start), end


def _unescape(tokens: Tokens, body: str, offset: int) -> str:
    def decoded(found: re.Match[str]) -> str:
        escape = found.group()[1:]
        if escape in _ESCAPES:
            return _ESCAPES[escape]
        if escape[0] in "xuU" and len(escape) > 1:
            code = int(escape[1:], 16)
        elif escape[0] in "0123" and len(escape) == 3:
            code = int(escape, 8)
        else:
            raise tokens.error(
                offset + found.start(),
                f"unknown escape \\{escape}",
                r"write \\ for a backslash, or \n, \t, \", \u00e9",
            )
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            raise tokens.error(offset + found.start(), f"\\{escape} is no Unicode character")
        return chr(code)

    return _ESCAPE.sub(decoded, body)
