"""The text syntax's tokens: an accelerator standing in for lark's basic lexer.

`GrammarLexer` is a scanner compiled from the grammar's own terminals: one regular expression
of named alternatives, tried in lark's order (priority, then width). It does what lark's basic
lexer does with less work per token, which is most of the time a short filter takes to parse.
The grammar stays the only definition of every token: nothing here names one.

Design choices:
- Ignored text (spaces, comments) is consumed in front of each token by the same match, so a
  token costs one `re.match` call.
- Tokens carry their offset only; line and column are derived from it when a message needs
  them (`positions.line_column`), which keeps the loop short.

Switch: `ENABLED` (a module attribute, read on every `parse_text` call), initially off when
the environment variable `AUDIENCEFILTER_FAST_LEXER` is `0`; lark's basic lexer then runs.
`tests/test_text_lexer.py` proves that both give the same filter or the same errors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from lark import Token
from lark.common import LexerConf
from lark.exceptions import UnexpectedCharacters
from lark.lexer import Lexer, LexerState


def expected_terminals(parser_state: Any) -> set[str]:
    """The terminal names the LALR parser accepts next, for "expected ..." messages."""
    try:
        table = parser_state.parse_conf.parse_table.states[parser_state.position]
    except (AttributeError, KeyError, IndexError):
        return set()
    return {name for name in table if name.isupper()}


ENABLED = os.environ.get("AUDIENCEFILTER_FAST_LEXER", "1") != "0"
"""Whether `parse_text` tokenizes with `GrammarLexer`; False for lark's basic lexer."""


class GrammarLexer(Lexer):
    """A one-regex scanner over the grammar's terminals (see the module docstring)."""

    __future_interface__ = 2

    def __init__(self, conf: LexerConf) -> None:
        ordered = sorted(
            conf.terminals,
            key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name),
        )
        skip, parts = [], []
        for terminal in ordered:
            regexp = terminal.pattern.to_regexp()
            # `lastgroup` names the matched terminal only if terminals capture nothing themselves.
            if re.compile(regexp).groups:
                raise ValueError(f"terminal {terminal.name} must use (?:...) groups only")
            if terminal.name in conf.ignore:
                skip.append(regexp)
            else:
                parts.append(f"(?P<{terminal.name}>{regexp})")
        # Ignored text (spaces, comments) is consumed in front of each token by the same match;
        # possessively (`*+`), so a failing match never backtracks through a long run of it.
        ignored = "(?:" + "|".join(skip) + ")*+" if skip else ""
        self._token = re.compile(ignored + "(?:" + "|".join(parts) + ")", conf.g_regex_flags).match
        self._skip = re.compile(ignored, conf.g_regex_flags).match

    def lex(self, lexer_state: LexerState, parser_state: Any) -> Iterator[Token]:
        """Tokens with their offsets (see the module docstring), as lark's lexers yield them."""
        source = lexer_state.text
        text: str = source.text
        pos, end = source.start, source.end
        match = self._token
        new_str = str.__new__
        while pos < end:
            found = match(text, pos, end)
            if found is None:
                pos = self._skip(text, pos, end).end()  # type: ignore[union-attr]
                if pos == end:
                    return
                raise UnexpectedCharacters(  # type: ignore[no-untyped-call]
                    text,
                    pos,
                    0,
                    0,
                    allowed=expected_terminals(parser_state),
                    state=parser_state,
                )
            kind = found.lastgroup
            assert kind is not None
            start, pos = found.span(kind)
            if pos == start:
                raise UnexpectedCharacters(  # type: ignore[no-untyped-call]
                    text, start, 0, 0, state=parser_state
                )
            # `Token(...)` field by field: its constructor's two Python calls cost as much as
            # the match.
            value = text[start:pos]
            token = new_str(Token, value)
            token.type = kind
            token.value = value
            token.start_pos = start
            token.end_pos = pos
            token.line = token.column = token.end_line = token.end_column = None
            lexer_state.last_token = token
            yield token
