"""RFC 3339 instants read from text, exactly: `2026-05-01T09:30:00Z`, `...09:30:00.25+02:00`.

`datetime.fromisoformat` reads ISO 8601, a much wider language, and reads it loosely: a week
date (`2026-W01-1`, 29 December 2025), the basic format (`20260501T093000Z`), hour-only or
colon-less offsets, a comma before the fraction, a space for `T`; on Python 3.11 it also drops a
trailing NUL. A value of RFC 3339's grammar (section 5.6) is read here, and anything else is
named for what it is, with the spelling to use instead:

- ASCII only, no character around the text or inside it: `T` (or `t`) between date and time,
  `Z` (or `z`) or `+hh:mm`/`-hh:mm` after it, seconds always written, a fraction after a dot of
  any length (read to the microsecond, the stored precision, by truncation: no stored instant
  lies between the value and its truncation, so an answer "up to T" is the same).
- Each part within its range: month 01-12, day up to the month's last, hour 00-23, minute 00-59,
  second 00-59, offset hours 00-23 and minutes 00-59. RFC 3339 admits a leap second (`:60`);
  the service's clock, as POSIX time, has none, so one is refused with the second to write.
- Year 0000 and instants whose UTC falls outside 0001-01-01T00:00:00Z to
  9999-12-31T23:59:59.999999Z (`0001-01-01T00:00:00+14:00`) name no instant the service can
  hold: refused, not clamped, so an answer never stands for an instant other than the one asked.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

LONGEST = 64
_SEPARATOR = len("2026-05-01")
_SHAPE = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"(?P<separator>.)(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})"
    r"(?:\.(?P<fraction>[0-9]+))?"
    r"(?P<offset>[Zz]|(?P<sign>[+-])(?P<offset_hour>[0-9]{2}):(?P<offset_minute>[0-9]{2}))?",
    re.ASCII,
)
_WEEK_DATE = re.compile(r"[0-9]{4}-?[Ww][0-9]{2}")
_ORDINAL_DATE = re.compile(r"[0-9]{4}-?[0-9]{3}(?:[Tt]|$)")
_BASIC = re.compile(r"[0-9]{8}[Tt]")
_PLUS_AS_SPACE = re.compile(r".+[0-9] [0-9]{2}:[0-9]{2}")


@dataclass(frozen=True)
class NotAnInstant(ValueError):
    """Why a text is no RFC 3339 instant (`detail`, of the value) and what to write instead."""

    detail: str
    suggestion: str

    def __str__(self) -> str:
        return f"{self.detail}: {self.suggestion}"


def rfc3339(text: str, example: str) -> datetime:
    """The instant `text` names, in UTC.

    Raises:
        NotAnInstant: naming what is wrong with the text; `example` shows the spelling to use.
    """
    _check_characters(text, example)
    found = _SHAPE.fullmatch(text)
    if found is None:
        raise _unshaped(text, example)
    if found["separator"] not in "Tt":
        raise NotAnInstant(
            f"has {found['separator']!r} as the separator of date and time",
            f"write T between them, as in {example}",
        )
    if found["offset"] is None:
        raise NotAnInstant(
            "has no offset from UTC",
            f"add its offset: Z or +02:00, as in {example}",
        )
    return _in_utc(_local(found), _offset(found), example)


def _plus_as_space(place: int) -> NotAnInstant:
    """A space where the offset's sign goes: a `+` a query string turned into a space."""
    return NotAnInstant(
        f"has a space at character {place + 1} where its offset's sign should be",
        "a + in a query string is read as a space: write it as %2B "
        "(2026-05-01T11:30:00%2B02:00), or give the instant in UTC with Z",
    )


def _check_characters(text: str, example: str) -> None:
    if len(text) > LONGEST:
        raise NotAnInstant(
            f"is longer than {LONGEST} characters ({len(text)})", f"write one as {example}"
        )
    for place, char in enumerate(text):
        if "!" <= char <= "~" or (char == " " and place == _SEPARATOR and _SHAPE.fullmatch(text)):
            continue  # a space for `T` is named as a separator below
        if char == " " and _PLUS_AS_SPACE.fullmatch(text):
            raise _plus_as_space(place)
        name = unicodedata.name(char, "a control character")
        raise NotAnInstant(
            f"has U+{ord(char):04X} ({name}) at character {place + 1}",
            f"remove it: an instant is written in ASCII letters and digits, as {example}",
        )


def _unshaped(text: str, example: str) -> NotAnInstant:
    """The refusal of a text that is not of RFC 3339's shape, naming the shape it has."""
    if _WEEK_DATE.match(text):
        return NotAnInstant(
            "is an ISO 8601 week date, not an RFC 3339 date",
            f"write the calendar date (year-month-day), as in {example}",
        )
    if _ORDINAL_DATE.match(text):
        return NotAnInstant(
            "is an ISO 8601 ordinal date (a day of the year), not an RFC 3339 date",
            f"write the calendar date (year-month-day), as in {example}",
        )
    if _BASIC.match(text):
        return NotAnInstant(
            "is in ISO 8601's basic format (no separators), not RFC 3339",
            f"separate the parts with - and :, as in {example}",
        )
    return NotAnInstant(
        "is not a date-time of RFC 3339's shape",
        f"write the date, T, the time with its seconds and the offset, as in {example}",
    )


def _part(found: re.Match[str], name: str, low: int, high: int, what: str) -> int:
    value = int(found[name])
    if not low <= value <= high:
        raise NotAnInstant(
            f"has the {what} {found[name]}, not {low:02d} to {high:02d}",
            f"write a {what} from {low:02d} to {high:02d}",
        )
    return value


def _local(found: re.Match[str]) -> datetime:
    """The date and time as written (before its offset), each part checked."""
    year = _part(found, "year", 1, 9999, "year")
    month = _part(found, "month", 1, 12, "month")
    last = calendar.monthrange(year, month)[1]
    if not 1 <= int(found["day"]) <= last:
        raise NotAnInstant(
            f"has the day {found['day']}, and {year:04d}-{month:02d} has days 01 to {last}",
            f"write a day from 01 to {last}",
        )
    hour = _part(found, "hour", 0, 23, "hour")
    minute = _part(found, "minute", 0, 59, "minute")
    if found["second"] == "60":
        raise NotAnInstant(
            "names a leap second (:60), which the service's clock (POSIX time) does not have",
            "write :59 (or :59.999999) for the leap second's instant",
        )
    second = _part(found, "second", 0, 59, "second")
    fraction = int((found["fraction"] or "0")[:6].ljust(6, "0"))
    return datetime(year, month, int(found["day"]), hour, minute, second, fraction)


def _offset(found: re.Match[str]) -> timedelta:
    if found["sign"] is None:
        return timedelta(0)
    hours = int(found["offset_hour"])
    minutes = int(found["offset_minute"])
    if hours > 23 or minutes > 59:
        raise NotAnInstant(
            f"has the offset {found['offset']}, past ±23:59",
            "write an offset of hours 00 to 23 and minutes 00 to 59, or give the instant "
            "in UTC with Z",
        )
    size = timedelta(hours=hours, minutes=minutes)
    return size if found["sign"] == "+" else -size


def _in_utc(local: datetime, offset: timedelta, example: str) -> datetime:
    try:
        return (local - offset).replace(tzinfo=UTC)
    except OverflowError:
        pass
    side = "before 0001-01-01T00:00:00Z" if offset > timedelta(0) else "after 9999-12-31T23:59:59Z"
    raise NotAnInstant(
        f"is an instant {side} in UTC, outside the range of instants the service holds",
        f"give an instant from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z, as {example}",
    )
