"""The text syntax's grammar file, and the LALR parser built from it once per process.

Design choices:
- The grammar lives in the repository's top-level `grammar/` folder; the package reaches it
  through `audiencefilter/grammar`, a link in a source checkout (so an editable install reads
  the file being edited) and a real folder in the wheel (the build follows the link). One
  loader, one path, both ways.
- The parser is built lazily on first use and kept (`functools.cache`): importing the library
  costs nothing, and no cache file is ever written beside the module.
- Tokens come from `GrammarLexer`, a scanner compiled from the grammar's own terminals: one
  regular expression of named alternatives, tried in lark's order (priority, then width). It
  does what lark's basic lexer does with less work per token, which is most of the time a
  short filter takes to parse. The grammar stays the only definition of every token.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer
from lark.common import LexerConf
from lark.exceptions import UnexpectedCharacters
from lark.lexer import Lexer, LexerState

GRAMMAR_PACKAGE = "audiencefilter"
GRAMMAR_FILE = "filter.lark"


def grammar_text() -> str:
    """The text of `grammar/filter.lark`, wherever the package is installed from."""
    return (
        resources.files(GRAMMAR_PACKAGE)
        .joinpath("grammar", GRAMMAR_FILE)
        .read_text(encoding="utf-8")
    )


def expected_terminals(parser_state: Any) -> set[str]:
    """The terminal names the LALR parser accepts next, for "expected ..." messages."""
    try:
        table = parser_state.parse_conf.parse_table.states[parser_state.position]
    except (AttributeError, KeyError, IndexError):
        return set()
    return {name for name in table if name.isupper()}


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
        """Tokens with their offsets; line and column are derived from an offset only when a
        message needs them (`jsonpos.line_column`), which keeps the loop short."""
        source = lexer_state.text
        text: str = source.text
        pos, end = source.start, source.end
        match = self._token
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
            token = Token(kind, text[start:pos], start, None, None, None, None, pos)
            lexer_state.last_token = token
            yield token


@functools.cache
def text_parser(transformer: Transformer[Token, Any]) -> Lark:
    """The LALR parser with `transformer` applied as each rule is reduced.

    Reducing bottom-up inside the parser loop builds the AST without a recursive tree walk,
    so no nesting depth can exhaust the stack.
    """
    return Lark(
        grammar_text(),
        parser="lalr",
        lexer=GrammarLexer,
        transformer=transformer,
        maybe_placeholders=False,
    )
