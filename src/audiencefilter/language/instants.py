"""Instants as the language holds them: aware, in UTC.

A ground module of `language/`: relative dates (`relative.py`), values (`values.py`) and the
facade normalise date-times here, and it imports nothing of the library.
"""

from __future__ import annotations

from datetime import UTC, datetime


def as_utc(value: datetime) -> datetime:
    """The same instant in UTC; a naive value is taken to be UTC already. One already in UTC
    is given back at once (what `astimezone` would give): clocks and imports read many."""
    if value.tzinfo is UTC:
        return value
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(
            "the instant falls outside years 1 to 9999 once converted to UTC"
        ) from None
