"""The text syntax's own lexer (`text/lexer.py`) tokenizes as lark's basic lexer does.

`parse_text` must give the same filter, or the same issues at the same places, with either
lexer: on the text of valid filters, on text mangled from it, and on random token soup. One
difference is by design: at a character no token starts with, lark's basic lexer lists every
terminal as expected, where `GrammarLexer` lists those the parser accepts there; so for those
messages only what was found is compared, with the path, line and column as for all.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.testing.strategies import filters
from audiencefilter.text import lexer

_PIECES = [
    "points",
    "email",
    "createdAt",
    "data",
    ".plan",
    ".`a b`",
    "`first name`",
    " ",
    "\n",
    "and",
    "or",
    "not",
    "(",
    ")",
    "[",
    "]",
    ",",
    "=",
    "==",
    "!=",
    ">=",
    "<",
    "contains",
    "starts with",
    "ends  with",
    "not in",
    "in",
    "is null",
    "is not null",
    "ignoring case",
    '"x"',
    '"a\\"b"',
    '"\\u00e9"',
    '"\\q"',
    "10",
    "-1.5e3",
    "2025-01-31",
    "2025-01-31T09:30:00Z",
    "30 days ago",
    "1 year 6 months ago",
    "true",
    "false",
    "null",
    "# note\n",
    "@",
    "'",
    "é",
    "android",
    "Notes",
    "IN",
    "`",
    '"',
]


def outcome(text: str, fast: bool) -> Any:
    previous = lexer.ENABLED
    lexer.ENABLED = fast
    try:
        return af.parse_text(text).root
    except af.FilterError as exc:
        return [_comparable(issue.model_dump()) for issue in exc.errors]
    finally:
        lexer.ENABLED = previous


def _comparable(issue: dict[str, Any]) -> dict[str, Any]:
    message = issue["message"]
    found = message.find(", found the character ")
    if message.startswith("expected ") and found >= 0:
        issue["message"] = message[found:]
        issue["suggestion"] = None  # drawn from the expected tokens
    return issue


def assert_same(text: str) -> None:
    assert outcome(text, True) == outcome(text, False)


@given(filters())
def test_both_lexers_read_valid_filters_alike(flt: af.Filter) -> None:
    assert_same(flt.to_text())


@given(filters(), st.integers(0, 10_000), st.integers(1, 5), st.sampled_from(_PIECES))
def test_both_lexers_read_mangled_filters_alike(
    flt: af.Filter, at: int, cut: int, piece: str
) -> None:
    text = flt.to_text()
    at %= len(text) + 1
    assert_same(text[:at] + piece + text[at + cut :])


@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_both_lexers_read_token_soup_alike(pieces: list[str]) -> None:
    assert_same(" ".join(pieces))


@pytest.mark.parametrize(
    "text",
    ["", "   ", "# only a comment", "points >", "points >= 100 @", 'email = "open', "`a"],
)
def test_both_lexers_read_edge_cases_alike(text: str) -> None:
    assert_same(text)


def test_the_switch_selects_the_lexer() -> None:
    from audiencefilter.text.grammar import text_parser
    from audiencefilter.text.lexer import GrammarLexer
    from audiencefilter.text.read import RULES

    assert text_parser(RULES, True).options.lexer is GrammarLexer
    assert text_parser(RULES, False).options.lexer == "basic"
