"""The text syntax's grammar file, and the LALR parser built from it once per process.

Design choices:
- The grammar lives in the repository's top-level `grammar/` folder; the package reaches it
  through `audiencefilter/grammar`, a link in a source checkout (so an editable install reads
  the file being edited) and a real folder in the wheel (the build follows the link). One
  loader, one path, both ways.
- The parser is built lazily on first use and kept (`functools.cache`): importing the library
  costs nothing, and no cache file is ever written beside the module.
- Tokens come from `GrammarLexer` (`lexer.py`), compiled from the grammar's own terminals, or
  from lark's basic lexer when it is switched off; the grammar is the only definition of
  every token either way.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer

from .lexer import GrammarLexer

GRAMMAR_PACKAGE = "audiencefilter"
GRAMMAR_FILE = "filter.lark"


def grammar_text() -> str:
    """The text of `grammar/filter.lark`, wherever the package is installed from."""
    return (
        resources.files(GRAMMAR_PACKAGE)
        .joinpath("grammar", GRAMMAR_FILE)
        .read_text(encoding="utf-8")
    )


@functools.cache
def text_parser(transformer: Transformer[Token, Any], fast_lexer: bool = True) -> Lark:
    """The LALR parser with `transformer` applied as each rule is reduced.

    Reducing bottom-up inside the parser loop builds the AST without a recursive tree walk,
    so no nesting depth can exhaust the stack. Tokens come from `GrammarLexer` (`lexer.py`),
    or with `fast_lexer=False` from lark's basic lexer, which it stands in for.
    """
    return Lark(
        grammar_text(),
        parser="lalr",
        lexer=GrammarLexer if fast_lexer else "basic",
        transformer=transformer,
        maybe_placeholders=False,
    )
