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
    LIKE (`folding`) answer `op` with the folded `needle` otherwise than folding the column by
    `str.lower()` does ("" when none can), or None when the LIKE cannot be used: the needle
    must be ASCII (else the LIKE folds its other letters, or none) with no wildcard, backslash
    or NUL. The one decision every dialect with a LIKE form asks; why, in `_unsafe`."""
    if not ENABLED or not needle.isascii() or any(ch in LIKE_SPECIALS for ch in needle):
        return None
    open_end = op is not Op.ENDS_WITH
    return "".join(
        char
        for char, lowered in LOWERS_TO_ASCII.items()
        if _unsafe(lowered, needle, folding, open_end)
    )


def _unsafe(lowered: str, needle: str, folding: LikeFolding, open_end: bool) -> bool:
    """Whether a character lowering to `lowered` can match otherwise. For an ASCII needle an
    ASCII letter folds alike both ways; the Kelvin sign lowers to `k` one to one, which a
    simple folding does too and an ASCII LIKE never. `İ` lowers to `i` and a combining dot,
    so it ends a match of a needle ending in `i` where the text goes on (`open_end`: contains,
    startsWith), which an ASCII LIKE misses; a simple folding reads a plain `i`, which also
    matches where `str.lower()` puts the dot after it."""
    letter = lowered[0]
    if len(lowered) == 1:
        return folding == "ascii" and letter in needle
    last = open_end and needle.endswith(letter)
    if folding == "ascii":
        return last
    return letter in (needle[:-1] if last else needle)


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
