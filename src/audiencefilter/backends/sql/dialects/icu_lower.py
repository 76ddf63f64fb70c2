"""Engines whose `lower()` is ICU's in a newer Unicode than Python 3.11's (Spark, ClickHouse):
where their fold differs from `str.lower()`, and which literals are refused because of it.

Both engines were measured over every code point (`tests/test_spark_folding.py`,
`tests/test_clickhouse.py`) and differ from Python on the same 55 code points, all new since
Unicode 14 (`LOWER_DIFFERS`); Python leaves each as it is. Both agree with Python on U+0130 (`i`
and a combining dot) and on final sigma. Such an engine's fold can only give another answer
when a literal holds one of those code points or what the engine folds them to
(`fold_refusal`), or, for an ordering, a character between the two folds (`order_refusal`);
such a literal is refused rather than answered differently.
"""

from __future__ import annotations

LOWER_DIFFERS: dict[str, str] = {
    chr(0x1C89): chr(0x1C8A),
    chr(0xA7CB): chr(0x0264),
    chr(0xA7CC): chr(0xA7CD),
    chr(0xA7CE): chr(0xA7CF),
    chr(0xA7D2): chr(0xA7D3),
    chr(0xA7D4): chr(0xA7D5),
    chr(0xA7DA): chr(0xA7DB),
    chr(0xA7DC): chr(0x019B),
    **{chr(0x10D50 + i): chr(0x10D70 + i) for i in range(0x16)},  # Garay capitals
    **{chr(0x16EA0 + i): chr(0x16EBB + i) for i in range(0x19)},  # Beria Erfe capitals
}
"""Each code point whose ICU `lower` differs from Python 3.11's `str.lower()`, and ICU's
lowercase of it (Python keeps it unchanged). Measured over every code point by the test suite,
on Spark (ICU folding on, the JVM locale pinned to en-US) and on ClickHouse (`lowerUTF8`)."""

_UNSAFE = frozenset(LOWER_DIFFERS) | frozenset(LOWER_DIFFERS.values())


def fold_refusal(literal: str, engine: str) -> str | None:
    """Why a case-insensitive comparison with this (folded) literal cannot run on `engine`, or
    None.

    The engine's `lower` and `str.lower()` differ on `LOWER_DIFFERS` only, each a single code
    point in and out, neither ASCII: a literal holding none of them nor their ICU folds cannot
    meet the place where the two folds of a value differ, so the native fold gives the same
    answers.
    """
    found = sorted({ch for ch in literal if ch in _UNSAFE})
    if not found:
        return None
    names = ", ".join(f"U+{ord(ch):04X}" for ch in found)
    return (
        f"{engine}'s lower() folds {names} differently from Python's str.lower() (a newer "
        f"Unicode); a case-insensitive comparison with this text is refused on {engine}"
    )


_ORDER_SPANS: tuple[tuple[str, str], ...] = (
    *((min(a, b), max(a, b)) for a, b in LOWER_DIFFERS.items()),
    ("\u03c2", "\u03c3"),  # final and medial sigma, which a new letter beside Σ may swap
)


def order_refusal(literal: str, engine: str) -> str | None:
    """Why a case-insensitive ordering (`gt`, `lt`, ...) with this folded literal cannot run on
    `engine`, or None.

    Where a value's two folds differ, Python has a code point `a` and the engine its lowercase
    `b` (`LOWER_DIFFERS`), or one sigma for the other. An ordering decided at that place
    compares `a` or `b` with the literal's character there, and the two answers differ only
    when that character lies between `a` and `b` (both included); a literal holding no such
    character orders every value as Python does.
    """
    found = sorted({ch for ch in literal for low, high in _ORDER_SPANS if low <= ch <= high})
    if not found:
        return None
    names = ", ".join(f"U+{ord(ch):04X}" for ch in found[:5]) + (", ..." if len(found) > 5 else "")
    return (
        f"{engine}'s lower() folds some letters differently from Python's str.lower() (a newer "
        f"Unicode), and this text holds {names}, which lie between such a letter's two folds; "
        f"a case-insensitive ordering with it is refused on {engine}"
    )
