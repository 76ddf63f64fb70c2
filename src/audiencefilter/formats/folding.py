"""Where another product's case handling and ours give the same answer.

Our `contains` always ignores case, and ignoring case means comparing `str.lower()` of both
texts (docs/semantics.md, Strings). A JsonLogic `in` on text is case-sensitive, and a
MongoDB regular expression with the `i` option matches characters by Unicode simple case
folding, which differs from `str.lower()` on a few characters (`ſ` matches `s`, `ς` matches
`σ`, `İ` lowers to two characters). Each test below says, for a literal, whether the two
answers agree on every text; a reader or writer refuses the literals for which they do not.
`tests/test_interop_folding.py` checks both sets against every code point.
"""

from __future__ import annotations

_LOWER_SPLITS = frozenset("i\u0307")
"""The parts of the one character whose `lower()` is two (`İ` -> `i` + U+0307): a literal
holding one of them can match half of that character here and all of it elsewhere."""

_EXTRA_FOLDS = frozenset(
    "is\xb5\u0131\u017f\u0345\u0390\u03b0\u03b2\u03b5\u03b8\u03b9\u03ba\u03bc\u03c0"
    "\u03c1\u03c2\u03c3\u03c6\u03d0\u03d1\u03d5\u03d6\u03f0\u03f1\u03f5\u0432\u0434"
    "\u043e\u0441\u0442\u044a\u0463\u1c80\u1c81\u1c82\u1c83\u1c84\u1c85\u1c86\u1c87"
    "\u1c88\u1e61\u1e9b\u1fbe\u1fd3\u1fe3\ua64b\ufb05\ufb06"
)
"""Characters a case-insensitive regular expression matches with another whose `lower()`
differs (Python's `re` and PCRE fold `ſ` with `s`, `ς` with `σ`, `ϐ` with `β`, ...)."""


def caseless(text: str) -> bool:
    """Whether a case-sensitive substring test of `text` agrees with our case-insensitive
    one on every text: no character of it has case, and none is part of another's
    lowercase."""
    return all(c.lower() == c == c.upper() and c not in _LOWER_SPLITS for c in text)


def regex_folds_alike(text: str) -> bool:
    """Whether a case-insensitive regular expression of the literal `text` matches exactly
    the texts whose `lower()` holds `text.lower()`: no character of it folds differently."""
    return all(c not in _EXTRA_FOLDS and c not in _LOWER_SPLITS for c in text.lower())
