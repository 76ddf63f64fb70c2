"""Time zones as the language knows them: IANA names checked against this Python's database.

A ground module of `language/`: the schema (`fields.py`) checks its zone here and calendar
values (`calendar.py`) resolve theirs, and it imports nothing of the library, so neither has to
import the other.
"""

from __future__ import annotations

from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones


class CalendarError(ValueError):
    """A calendar value that cannot be read, with a suggestion where one is likely."""

    def __init__(self, message: str, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.suggestion = suggestion


@cache
def zone_names() -> frozenset[str]:
    """Every IANA zone name this Python knows (its `zoneinfo` database)."""
    return frozenset(available_timezones())


@cache
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def check_zone(name: str) -> str:
    """`name` if it is an IANA zone name known here, else a `CalendarError` naming close ones.

    Names are matched exactly (`Europe/Paris`, not `europe/paris`): the spelling a database
    knows it by.
    """
    if name in zone_names():
        try:
            _zone(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
        else:
            return name
    from difflib import get_close_matches

    by_lower = {z.lower(): z for z in zone_names()}
    close = [by_lower[z] for z in get_close_matches(name.lower(), list(by_lower), 3, 0.6)]
    if name.lower() in by_lower:
        close = [by_lower[name.lower()]]
    suggestion = (
        "did you mean " + " or ".join(f'"{z}"' for z in close) + "?"
        if close
        else 'write an IANA time zone name such as "Europe/Paris" or "America/New_York"'
    )
    raise CalendarError(f"unknown time zone {name!r}", suggestion)
