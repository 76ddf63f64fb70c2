"""The two case-folding rules of the interop formats, checked against every code point."""

from __future__ import annotations

import re
import sys

from audiencefilter.formats.folding import caseless, regex_folds_alike

CHARS = [chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i <= 0xDFFF]


def test_a_caseless_character_is_found_alike_with_and_without_folding() -> None:
    """For a caseless `c`, `c in s` agrees with `c in s.lower()`: no other character lowers
    to anything holding `c`."""
    holders: dict[str, set[str]] = {}
    for d in CHARS:
        for part in d.lower():
            holders.setdefault(part, set()).add(d)
    wrong = [c for c in CHARS if caseless(c) and holders.get(c, {c}) != {c}]
    assert wrong == []
    assert not caseless("a") and not caseless("\u0307") and caseless("@.1-")


def test_a_regular_expression_folds_a_safe_character_as_lower_does() -> None:
    """For a character `regex_folds_alike` accepts, a case-insensitive expression of it
    matches exactly the characters with the same `lower()`."""
    by_lower: dict[str, set[str]] = {}
    for d in CHARS:
        by_lower.setdefault(d.lower(), set()).add(d)
    unusual = {d for d in CHARS if len(d.lower()) != 1 or d.lower() != d.casefold()}
    wrong = []
    for c in CHARS:
        if not regex_folds_alike(c) or len(c.lower()) != 1 or c.lower() == c.upper():
            continue
        expected = by_lower[c.lower()]
        pattern = re.compile(re.escape(c), re.IGNORECASE)
        if {d for d in expected | unusual if pattern.fullmatch(d)} != expected:
            wrong.append(c)
    assert wrong == []
    assert not regex_folds_alike("s") and not regex_folds_alike("i") and regex_folds_alike("acme")
