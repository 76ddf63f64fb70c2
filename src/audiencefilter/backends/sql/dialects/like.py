"""An accelerator: case-insensitive `contains`, `startsWith` and `endsWith` answered by the
engine's own case-insensitive LIKE (SQLite's `LIKE`, DuckDB's `ILIKE`) where that is exact.

The plain path folds the column (`Dialect.fold`: on SQLite a Python `lower` called per row,
on DuckDB `lower(replace(...))`) and matches the folded needle. An engine's LIKE folds in C,
and for an ASCII needle it answers the same except on the few characters `like_unsafe` names,
which the dialect's `folded_like` sends to the plain test. `like_unsafe` is the one decision
of when (every dialect with a LIKE form asks it); `Dialect.like_folding` says how the engine's
LIKE folds, `Dialect.folded_like` writes it.

Switch: `ENABLED` (a module attribute, read each time a condition is written), initially off
when the environment variable `AUDIENCEFILTER_FAST_LIKE` is `0`; every pattern test then takes
the plain path. `tests/test_sql_like.py` runs both on adversarial text and compares.
"""

from __future__ import annotations

import os

from ....language.fields import Op

ENABLED = os.environ.get("AUDIENCEFILTER_FAST_LIKE", "1") != "0"

LOWERS_TO_ASCII = {"\u0130": "i\u0307", "\u212a": "k"}
"""Every character outside ASCII whose `str.lower()` holds an ASCII letter (İ, the Kelvin
sign), and that lowercase; `tests/test_sql_like.py` checks it against every code point."""

LikeFolding = str
"""How an engine's case-insensitive LIKE folds the column: `ascii` (ASCII letters only, every
other character compared as it is: SQLite's LIKE) or `simple` (each character by its simple
Unicode lowercase, one to one, as the engine's `lower()`: DuckDB's ILIKE)."""


def like_unsafe(op: Op, needle: str, folding: LikeFolding) -> str | None:
    """The characters whose presence in the column can make the engine's case-insensitive
    LIKE (`folding`) answer `op` with the folded `needle` otherwise than comparing the column
    folded by `str.lower()` does: "" when none can, None when the LIKE cannot be used. The one
    decision every dialect with such a form asks (`Dialect.like_folding`); the dialect tests
    text holding one of these characters the exact way.

    The needle must be ASCII (the LIKE would fold its other letters otherwise, or not at all)
    and hold no wildcard, backslash or NUL (`LIKE_SPECIALS`). Then an ASCII letter of the
    column folds alike both ways, and only the characters of `LOWERS_TO_ASCII` can match
    differently. The Kelvin sign lowers to `k`, which an ASCII LIKE never matches: unsafe for a
    needle with `k`. `İ` lowers to `i` and a combining dot, so it can end a match of a needle
    ending in `i` where the text goes on after the match (`contains`, `startsWith`): an ASCII
    LIKE does not see it there, and a simple folding reads it as a plain `i`, so it matches
    elsewhere too, where `str.lower()` never puts an ASCII letter after that `i`.
    """
    if not ENABLED or not needle.isascii() or any(ch in LIKE_SPECIALS for ch in needle):
        return None
    open_end = op is not Op.ENDS_WITH
    unsafe = ""
    for char, lowered in LOWERS_TO_ASCII.items():
        letter = lowered[0]
        if len(lowered) == 1:  # one to one: a simple folding agrees, an ASCII one does not
            unsafe += char if folding == "ascii" and letter in needle else ""
            continue
        last = open_end and needle.endswith(letter)
        if folding == "ascii":
            unsafe += char if last else ""
        elif letter in (needle[:-1] if last else needle):
            unsafe += char
    return unsafe


def like_wrapped(op: Op, needle: str) -> str:
    """The LIKE pattern of `op` around the SQL `needle` (a literal or a placeholder): engines
    fold the concatenation of constants once, before the scan."""
    if op is Op.STARTS_WITH:
        return f"({needle} || '%')"
    if op is Op.ENDS_WITH:
        return f"('%' || {needle})"
    return f"('%' || {needle} || '%')"


LIKE_SPECIALS = "%_\\\x00"
"""What a needle written into a LIKE pattern must not hold: the wildcards, a backslash (an
escape on some engines) and NUL (SQLite reads a pattern up to it)."""
