"""Numbers written in requests: ASCII digits `0-9` and nothing else.

Python's `int()` reads more than a request may say: digits of every script (`١٢` is 12,
`１２` too), `_` between digits, a sign and surrounding white space; `str.isdigit()` also
says yes to `²` and `①`, which `int()` then refuses with a ValueError, a 500 where it is not
caught. One cursor, header or port has one spelling here: a number of the request is read by
`ascii_number` alone, never by `int()` or `isdigit()` on what the client sent.
"""

from __future__ import annotations

import re

_DIGITS = re.compile(rb"[0-9]+")


def ascii_number(text: str | bytes, max_digits: int = 18) -> int | None:
    """The number `text` writes with 1 to `max_digits` ASCII digits and nothing else; None for
    anything else (another script's digits, a sign, `_`, white space, nothing, too long)."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if len(raw) > max_digits or not _DIGITS.fullmatch(raw):
        return None
    return int(raw)
