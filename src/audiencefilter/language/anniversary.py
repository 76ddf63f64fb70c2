"""Anniversaries: whether the month and day of a date-time, in a time zone, fall in a calendar
period. "Birthday is today" is `{"birthday": {"anniversary": {"this": "day"}}}`.

The user writes a period (`language/calendar.Period`); at one `now`, lowering turns it into
`MonthDays`: the zone and the month-days the period covers, as ranges of `month * 100 + day`
(`1228..1231` and `101..103` for 28 December to 3 January). A back-end then computes, per
row, the month-day of the value's local date in that zone and tests the ranges: the only
per-row time-zone work in the library, and the reason some engines refuse it
(docs/backends-sql-rules.md).

Design choices (docs/semantics-calendar.md states them for users):
- The year is ignored: the date itself is its own anniversary (a contact created today has its
  sign-up anniversary today); add `lt start of today` to leave this year's out.
- 29 February: in a year without one, its anniversary is 28 February. So `this day` on
  28 February 2025 holds for 28 and 29 February birthdays; on 1 March it holds for 1 March only.
- A period of a year or more covers every month-day: every non-null value holds.
- The local date of a value is its date in the zone, as `start of day` defines days (a value in
  a skipped hour does not exist; a value in a repeated hour has one date either way). Near the
  edges of the range it is the proleptic Gregorian calendar's, years 0 and 10000 included:
  `0001-01-01T00:00Z` in America/Los_Angeles is 31 December (of year 0), as every database
  that stores such instants says; `cycled_local_date` works it out 400 years away.
"""

from __future__ import annotations

from calendar import isleap
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import cache, lru_cache
from zoneinfo import ZoneInfo

ALL_MONTH_DAYS: tuple[int, ...] = tuple(
    month * 100 + day
    for month in range(1, 13)
    for day in range(1, 32)
    if day <= (29 if month == 2 else 30 if month in (4, 6, 9, 11) else 31)
)
"""The 366 month-days, in calendar order, 29 February included."""
_POSITION = {md: index for index, md in enumerate(ALL_MONTH_DAYS)}
_CYCLE = len(ALL_MONTH_DAYS)
_STEPS = range(-2, 3)
LEAP_DAY = 229
CYCLE = timedelta(days=146_097)
"""400 Gregorian years: dates this far apart share their month, day, weekday and leap year."""


@dataclass(frozen=True, slots=True)
class MonthDays:
    """The month-days an anniversary period covers at one `now`, in `zone`: inclusive ranges of
    `month * 100 + day`, in calendar order."""

    zone: str
    ranges: tuple[tuple[int, int], ...]
    #: The month-days covered, as a set: a lookup per row instead of a walk of the ranges.
    covered: frozenset[int] = field(init=False, repr=False, compare=False)
    #: The zone, looked up once.
    tzinfo: ZoneInfo = field(init=False, repr=False, compare=False)
    #: UTC month-days whose local month-day is covered in any zone (`around`).
    certain: frozenset[int] = field(init=False, repr=False, compare=False)
    #: UTC month-days whose local month-day may be covered or not: the zone decides.
    near: frozenset[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        covered = (md for md in ALL_MONTH_DAYS for low, high in self.ranges if low <= md <= high)
        object.__setattr__(self, "covered", frozenset(covered))
        object.__setattr__(self, "tzinfo", _zone(self.zone))
        certain, near = around(self.covered)
        object.__setattr__(self, "certain", certain)
        object.__setattr__(self, "near", near)

    def __contains__(self, month_day: object) -> bool:
        return month_day in self.covered

    @property
    def words(self) -> str:
        shown = ", ".join(f"{_md(low)}..{_md(high)}" for low, high in self.ranges)
        return f"[{shown}] in {self.zone}"


def around(covered: frozenset[int]) -> tuple[frozenset[int], frozenset[int]]:
    """The UTC month-days whose local month-day is surely covered, and those where it may be.

    A UTC offset is less than a day (Python refuses more), so a UTC date D is D-1, D or D+1 in
    any zone, and their month-days lie within two steps of D's in the 366-day cycle (two
    across a 29 February a common year skips; 31 December is next to 1 January). A UTC
    month-day with every month-day within two steps covered is covered in any zone; one with
    none covered is covered in none; only the rest need the zone. A local date out of range
    is its proleptic one (`cycled_local_date`), one step from D's as anywhere else.
    """
    positions = {_POSITION[md] for md in covered}
    reach = {(p + step) % _CYCLE for p in positions for step in _STEPS}
    sure = {p for p in reach if all((p + step) % _CYCLE in positions for step in _STEPS)}
    return _month_days_at(sure), _month_days_at(reach - sure)


def _month_days_at(positions: set[int]) -> frozenset[int]:
    return frozenset(ALL_MONTH_DAYS[p] for p in positions)


def _md(value: int) -> str:
    return f"{value // 100:02d}-{value % 100:02d}"


@lru_cache(maxsize=4096)
def month_days(first: date, end: date, zone: str) -> MonthDays:
    """The month-days of the local dates `first` (included) to `end` (excluded), with 29
    February for 28 February of a common year. Remembered: every anniversary filter of a zone
    asks it again at each day it is resolved for, and building one walks the 366 month-days."""
    if (end - first).days >= 366:
        return MonthDays(zone, ((ALL_MONTH_DAYS[0], ALL_MONTH_DAYS[-1]),))
    found: set[int] = set()
    day = first
    while day < end:
        md = day.month * 100 + day.day
        found.add(md)
        if md == 228 and not isleap(day.year):
            found.add(LEAP_DAY)
        day += timedelta(days=1)
    return MonthDays(zone, _ranges(found))


def _ranges(found: set[int]) -> tuple[tuple[int, int], ...]:
    positions = sorted(_POSITION[md] for md in found)
    ranges: list[tuple[int, int]] = []
    for position in positions:
        if ranges and _POSITION[ranges[-1][1]] == position - 1:
            ranges[-1] = (ranges[-1][0], ALL_MONTH_DAYS[position])
        else:
            ranges.append((ALL_MONTH_DAYS[position], ALL_MONTH_DAYS[position]))
    return tuple(ranges)


@cache
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def is_anniversary(instant: datetime | date | str, days: MonthDays) -> bool:
    """Whether an aware instant's local month-day in the period's zone is one it covers; a
    date (which has no zone) is its own month-day."""
    if type(instant) is datetime:  # the common case first
        try:
            local = instant.astimezone(days.tzinfo)
        except OverflowError:  # within a day of year 1 or 9999: the local date is out of range
            return local_month_day(instant, days.zone) in days.covered
        return local.month * 100 + local.day in days.covered
    if type(instant) is date:
        return instant.month * 100 + instant.day in days.covered
    if type(instant) is str:  # a date kept inside JSON: its ISO text's last five characters
        return text_month_day(instant) in days.covered
    assert isinstance(instant, datetime)
    return local_month_day(instant, days.zone) in days.covered


def text_month_day(text: str) -> int | None:
    """`month * 100 + day` of a date kept as text, read from its end (`...-MM-DD`), as the
    engines test it (`endsWith "-11-23"`); None when the text does not end so."""
    tail = text[-6:]
    digits = tail[1:3] + tail[4:6]
    if (
        len(tail) != 6
        or tail[0] != "-"
        or tail[3] != "-"
        or not (digits.isascii() and digits.isdigit())
    ):
        return None
    return int(digits)


def month_day_endings(days: MonthDays) -> tuple[str, ...]:
    """The text endings (`-11-23`) of the month-days `days` covers, in calendar order."""
    covered = [md for md in ALL_MONTH_DAYS if md in days]
    return tuple(f"-{md // 100:02d}-{md % 100:02d}" for md in covered)


def local_month_day(instant: datetime, zone: str) -> int:
    """`month * 100 + day` of an aware instant's date in `zone` (proleptic near the edges of
    the range: `cycled_local_date`)."""
    tz = _zone(zone)
    try:
        local = instant.astimezone(tz)
    except OverflowError:  # within a day of year 1 or 9999: the local date is out of range
        local_day, _ = cycled_local_date(instant, tz)
        return local_day.month * 100 + local_day.day
    return local.month * 100 + local.day


def cycled_local_date(instant: datetime, tz: ZoneInfo) -> tuple[date, int]:
    """The date of an aware instant in `tz` in the proleptic Gregorian calendar, and the number
    of 400-year cycles it is moved by (`CYCLE`; 0 away from the edges): within two years of
    year 1 or 9999 the instant is moved a cycle inwards before it is converted, so that the
    date exists even where the true one is in year 0 or 10000 and a year of calendar
    arithmetic either side of it stays in range. Its month, day, weekday and leap year are the
    true date's, and the zone's offset is too (the earliest years are before any zone's first
    transition, the latest after its last rule, in both places)."""
    cycles = 1 if instant.year <= 2 else -1 if instant.year >= 9998 else 0
    return (instant + cycles * CYCLE).astimezone(tz).date(), cycles
