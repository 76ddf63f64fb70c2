"""Calendar-relative date-times: the start of today, of this week, month or year, or of one
before or after it, and whole calendar periods (`this month`, `the last 7 days`), in a zone.

"Signed up this month" is `{"createdAt": {"within": {"this": "month"}}}`, and "since the start
of last month" is `{"createdAt": {"gte": {"startOf": "month", "offset": -1}}}`. Like `Ago`, the
AST holds the description, never an instant: each evaluation turns it into an instant at one
`now`, in lowering (`rewrite/lower.py`), so every back-end compares with constants.

Design choices (docs/semantics-calendar.md states them for users):
- A unit is a day, an ISO week (Monday to Sunday), a month or a year of the local calendar of
  an IANA time zone (`Europe/Paris`): the one written in the value (`"timeZone"`, text
  `in "Europe/Paris"`), else the schema's `time_zone`, else UTC.
- `offset` counts whole units from the current one: the start of the day `offset` calendar
  days after today (not 24-hour steps), of the month `offset` months after this one.
- The start of a day is the first instant whose local date is that day: local midnight; when
  midnight falls in a daylight-saving gap (America/Santiago, Asia/Beirut at some
  transitions), the instant the clocks jump (the first local time the day shows); when
  midnight occurs twice, the first time. Weeks, months and years start when their first day
  does.
- A period is a half-open range of whole units: `this` the current one, `last N` the N units
  before it, `next N` the N units after it; the current unit is in neither (`in the next 7
  days` starts tomorrow), so "today or the next 7 days" is two conditions. A period is a
  condition (`within`), never an operand of `gt` or `equals`; it is lowered to
  `gte start AND lt end`.
- Instants beyond year 1 or 9999 are clamped to the first or last representable instant.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeVar, cast
from zoneinfo import ZoneInfo

from .anniversary import CYCLE, MonthDays, cycled_local_date, month_days
from .relative import EARLIEST, Ago
from .zones import CalendarError, _zone, check_zone

LATEST = datetime.max.replace(tzinfo=UTC)
UNITS = ("day", "week", "month", "year")
MAX_OFFSET = 1_000_000
"""The largest `offset` or period length taken: beyond any representable date in days."""
DEFAULT_ZONE = "UTC"
_T = TypeVar("_T")
_R = TypeVar("_R")


def check_unit(name: str) -> str:
    """`name` if it is a calendar unit, else a `CalendarError` with a suggestion."""
    if name in UNITS:
        return name
    singular = name.lower().removesuffix("s")
    hint = (
        f'write "{singular}"'
        if singular in UNITS
        else "write one of " + ", ".join(f'"{u}"' for u in UNITS)
    )
    raise CalendarError(f"unknown calendar unit {name!r}", hint)


def check_count(value: object, what: str, *, positive: bool) -> int:
    """An offset or a period length: an integer (not a boolean) within `MAX_OFFSET`."""
    if type(value) is not int:
        raise CalendarError(
            f"{what} is a whole number, found {value!r}",
            f"write e.g. {what.split()[-1]}: {'7' if positive else '-1'}",
        )
    low = 1 if positive else -MAX_OFFSET
    if not low <= value <= MAX_OFFSET:
        raise CalendarError(
            f"{what} must be between {low:,} and {MAX_OFFSET:,}, found {value}",
            "use a smaller number" if value > 0 else None,
        )
    return value


@dataclass(frozen=True, slots=True)
class StartOf:
    """The first instant of a calendar unit, `offset` units after the current one, in a zone.

    `zone` is None where the filter names none: lowering fills in the schema's default, so a
    lowered tree always names its zone.
    """

    unit: str
    offset: int = 0
    zone: str | None = None

    def before(self, now: datetime) -> datetime:
        """The instant this value stands for at `now` (an aware datetime); named as
        `Ago.before` is, so both resolve the same way."""
        return start_of(self.unit, self.offset, self.zone or DEFAULT_ZONE, now)

    def resolver(self) -> Callable[[datetime], datetime]:
        """`before` as a function (a predicate calls it once per record): worked out again
        only when `now` leaves the current unit."""
        return _cached(self.unit, self.zone or DEFAULT_ZONE, self.before)

    def next_step(self, now: datetime) -> datetime | None:
        """The first instant after `now` at which `before` gives another instant: the start
        of the next unit (None past the last representable one)."""
        return _after(now, units_of(self.unit, self.zone or DEFAULT_ZONE).bounds(now)[1])

    def in_zone(self, default: str) -> StartOf:
        """This value with `default` as its zone if it names none."""
        return self if self.zone is not None else replace(self, zone=default)

    @property
    def words(self) -> str:
        """The text syntax's form: `start of today`, `start of last month`, `start of week -3`,
        with `in "Zone/Name"` when a zone is named."""
        return "start of " + unit_words(self.unit, self.offset) + zone_words(self.zone)

    @property
    def json(self) -> dict[str, object]:
        """The canonical JSON form: `{"startOf": "month", "offset": -1, "timeZone": ...}`."""
        data: dict[str, object] = {"startOf": self.unit}
        if self.offset:
            data["offset"] = self.offset
        if self.zone is not None:
            data["timeZone"] = self.zone
        return data


@dataclass(frozen=True, slots=True)
class Period:
    """A half-open range of `count` whole calendar units starting `start` units after the
    current one: this month is `(month, 0, 1)`, the last 7 days `(day, -7, 7)`, the next 2
    weeks `(week, 1, 2)`. Only those three shapes are built (see `this`, `last`, `next`).
    """

    unit: str
    start: int
    count: int
    zone: str | None = None

    @classmethod
    def this(cls, unit: str, zone: str | None = None) -> Period:
        return cls(unit, 0, 1, zone)

    @classmethod
    def last(cls, unit: str, count: int, zone: str | None = None) -> Period:
        return cls(unit, -count, count, zone)

    @classmethod
    def next(cls, unit: str, count: int, zone: str | None = None) -> Period:
        return cls(unit, 1, count, zone)

    def before(self, now: datetime) -> MonthDays:
        """As an anniversary period: the month-days it covers at `now` (language/anniversary)."""
        zone = self.zone or DEFAULT_ZONE
        # Near the edges of the range, the days 400 years inwards: the same month-days.
        today, _ = cycled_local_date(now, _zone(zone))
        try:
            first = _first_day(self.unit, self.start, today)
            end = _first_day(self.unit, self.start + self.count, today)
        except (OverflowError, ValueError):  # a period far longer than a year: every day
            first, end = date.min, date.max
        return month_days(first, end, zone)

    def resolver(self) -> Callable[[datetime], MonthDays]:
        """`before` as a function (a predicate calls it once per record): worked out again
        only when `now` leaves the current local day."""
        return _cached("day", self.zone or DEFAULT_ZONE, self.before)

    def next_step(self, now: datetime) -> datetime | None:
        """The first instant after `now` at which the period covers other days: the start of
        the next unit, since every bound is a whole number of units from the current one."""
        return _after(now, units_of(self.unit, self.zone or DEFAULT_ZONE).bounds(now)[1])

    def in_zone(self, default: str) -> Period:
        """This period with `default` as its zone if it names none."""
        return self if self.zone is not None else replace(self, zone=default)

    @property
    def bounds(self) -> tuple[StartOf, StartOf]:
        """The first instant in the period and the first after it."""
        return (
            StartOf(self.unit, self.start, self.zone),
            StartOf(self.unit, self.start + self.count, self.zone),
        )

    @property
    def words(self) -> str:
        """The text syntax's form: `this month`, `last 7 days`, `next week`, `today`."""
        if self.start == 0:
            text = "today" if self.unit == "day" else f"this {self.unit}"
        else:
            word = "last" if self.start < 0 else "next"
            text = f"{word} {self.unit}" if self.count == 1 else f"{word} {self.count} {self.unit}s"
        return text + zone_words(self.zone)

    @property
    def json(self) -> dict[str, object]:
        """The canonical JSON form: `{"this": "month"}`, `{"last": 7, "unit": "day"}`."""
        data: dict[str, object]
        if self.start == 0:
            data = {"this": self.unit}
        else:
            data = {"last" if self.start < 0 else "next": self.count, "unit": self.unit}
        if self.zone is not None:
            data["timeZone"] = self.zone
        return data


def _cached(unit: str, zone: str, compute: Callable[[datetime], _R]) -> Callable[[datetime], _R]:
    """`compute`, whose answer depends only on which `unit` of `zone` holds `now`, remembered
    per unit (the unit found by `units_of`): a search for a record's next change walks from
    unit to unit and back for every record, so one remembered unit would be computed again
    at each step. At most `UNITS_KEPT` values, forgotten all at once past that."""
    units = units_of(unit, zone)
    values: dict[datetime, _R] = {}

    def resolve(now: datetime) -> _R:
        low = units.bounds(now)[0]
        found = values.get(low, _MISSING)
        if found is not _MISSING:
            return cast(_R, found)
        value = compute(now)
        if len(values) >= UNITS_KEPT:
            values.clear()
        values[low] = value
        return value

    return resolve


UNITS_KEPT = 512
"""Units remembered per calendar (`Units`) and values per resolver (`_cached`)."""
_MISSING = object()


class Units:
    """The units (days, weeks, ...) of one zone's calendar met so far, by their bounds: the
    start of the unit holding `now` and of the next (`start_of` with offsets 0 and 1, each a
    zone conversion or two) are looked up by bisection once met. Kept as one pair of sorted
    tuples replaced whole, so readers in other threads need no lock."""

    def __init__(self, unit: str, zone: str) -> None:
        self.unit = unit
        self.zone = zone
        self._kept: tuple[tuple[datetime, ...], tuple[datetime, ...]] = ((), ())

    def bounds(self, now: datetime) -> tuple[datetime, datetime]:
        """`(start_of(unit, 0, zone, now), start_of(unit, 1, zone, now))`."""
        lows, highs = self._kept
        index = bisect_right(lows, now) - 1
        if index >= 0 and now < highs[index]:
            return lows[index], highs[index]
        low, high = start_of(self.unit, 0, self.zone, now), start_of(self.unit, 1, self.zone, now)
        if low <= now < high:  # not a clamped bound at the edges of the range
            pairs = set(zip(lows, highs, strict=True)) if len(lows) < UNITS_KEPT else set()
            ordered = sorted(pairs | {(low, high)})
            self._kept = (tuple(p[0] for p in ordered), tuple(p[1] for p in ordered))
        return low, high


_UNITS: dict[tuple[str, str], Units] = {}
_UNITS_LOCK = threading.Lock()


def units_of(unit: str, zone: str) -> Units:
    """The one `Units` of this calendar in the process."""
    found = _UNITS.get((unit, zone))
    if found is None:
        with _UNITS_LOCK:
            found = _UNITS.setdefault((unit, zone), Units(unit, zone))
    return found


@dataclass(frozen=True, slots=True)
class DayOf:
    """The local date, in `zone`, of a relative date-time: what a date field is compared with
    where the filter wrote `30 days ago` or `start of this week` (lowering makes it).

    A date has no zone, so the instant becomes the day it falls on in the zone of the
    calendar value (the schema's zone when the filter names none): `start of this week in
    Europe/Paris` is the Monday of that week, `30 days ago` the date 30 days before today.
    """

    value: Ago | StartOf
    zone: str
    text: bool = False
    """The date as ISO 8601 text, for a date kept inside JSON (compared as its text)."""

    @classmethod
    def of(cls, value: Ago | StartOf, default_zone: str) -> DayOf:
        """The day of `value` for a date field: in the value's own zone, else `default_zone`
        (the schema's)."""
        if isinstance(value, StartOf):
            value = value.in_zone(default_zone)
        return cls(value, getattr(value, "zone", None) or default_zone)

    def before(self, now: datetime) -> date | str:
        day = local_date(self.value.before(now), self.zone)
        return day.isoformat() if self.text else day

    def resolver(self) -> Callable[[datetime], date | str]:
        instant_at, zone, text = self.value.resolver(), self.zone, self.text

        def at(now: datetime) -> date | str:
            day = local_date(instant_at(now), zone)
            return day.isoformat() if text else day

        return at

    def next_step(self, now: datetime) -> datetime | None:
        """The first instant after `now` at which the date given changes: when the calendar
        value steps, or, for a duration, when the instant it stands for reaches the next
        local midnight (the duration's own step, for months, may come first)."""
        if isinstance(self.value, StartOf):
            return self.value.next_step(now)
        instant = self.value.before(now)
        midnight = start_of("day", 1, self.zone, instant)
        crossing = _after(now, now + (midnight - instant))
        steps = [s for s in (crossing, self.value.next_step(now)) if s is not None]
        return min(steps, default=None)

    @property
    def words(self) -> str:
        return self.value.words


def _after(now: datetime, instant: datetime) -> datetime | None:
    """`instant` if it is later than `now`; None for a clamped bound that is not."""
    return instant if instant > now else None


def local_date(instant: datetime, zone: str) -> date:
    """The date an aware instant falls on in `zone` (the first or last date where the local
    date is out of range)."""
    try:
        return instant.astimezone(_zone(zone)).date()
    except OverflowError:
        return date.min if instant.year == 1 else date.max


Relative = Ago | StartOf | Period | DayOf
"""An operand that moves with the clock (a `Period` as an anniversary's, month-days)."""
RELATIVE_TYPES = (Ago, StartOf, DayOf)


def unit_words(unit: str, offset: int) -> str:
    if unit == "day" and -1 <= offset <= 1:
        return ("yesterday", "today", "tomorrow")[offset + 1]
    if -1 <= offset <= 1:
        return f"{('last', 'this', 'next')[offset + 1]} {unit}"
    return f"{unit} {offset:+d}"


def zone_words(zone: str | None) -> str:
    return "" if zone is None else f' in "{zone}"'


# --- reading the JSON forms -------------------------------------------------------------------

START_KEYS = ("startOf", "offset", "timeZone")
PERIOD_KEYS = ("this", "last", "next", "unit", "timeZone")


def start_from_json(value: dict[str, object]) -> StartOf:
    """`{"startOf": unit, "offset"?: int, "timeZone"?: name}`; raises `CalendarError` with
    the key at fault as `key` (an attribute) where there is one."""
    unknown = [k for k in value if k not in START_KEYS]
    if unknown:
        raise _at(
            str(unknown[0]),
            CalendarError(
                f'unknown key "{unknown[0]}" in a start of a calendar unit',
                "the keys are startOf, offset and timeZone",
            ),
        )
    unit = value["startOf"]
    if not isinstance(unit, str):
        raise _at("startOf", CalendarError(f"startOf names a unit, found {unit!r}", _UNIT_HINT))
    offset = value.get("offset", 0)
    zone = value.get("timeZone")
    return StartOf(
        _keyed("startOf", check_unit, unit),
        _keyed("offset", lambda v: check_count(v, "offset", positive=False), offset),
        None if zone is None else _keyed("timeZone", _zone_text, zone),
    )


def period_from_json(value: dict[str, object]) -> Period:
    """`{"this": unit}` or `{"last"|"next": count, "unit": unit}`, each with an optional
    `"timeZone"`; raises `CalendarError` (with `key`) otherwise."""
    unknown = [k for k in value if k not in PERIOD_KEYS]
    if unknown:
        raise _at(
            str(unknown[0]),
            CalendarError(
                f'unknown key "{unknown[0]}" in a calendar period',
                'write {"this": "month"}, {"last": 7, "unit": "day"} or {"next": 2, '
                '"unit": "week"}, with an optional "timeZone"',
            ),
        )
    kinds = [k for k in ("this", "last", "next") if k in value]
    if len(kinds) != 1:
        raise CalendarError(
            "a calendar period takes exactly one of this, last and next",
            'write {"this": "month"}, {"last": 7, "unit": "day"} or {"next": 1, "unit": "week"}',
        )
    kind = kinds[0]
    zone_value = value.get("timeZone")
    zone = None if zone_value is None else _keyed("timeZone", _zone_text, zone_value)
    if kind == "this":
        if "unit" in value:
            raise _at(
                "unit",
                CalendarError(
                    '"this" names its unit itself', 'write {"this": "month"} without "unit"'
                ),
            )
        unit = value["this"]
        if not isinstance(unit, str):
            raise _at("this", CalendarError(f"this names a unit, found {unit!r}", _UNIT_HINT))
        return Period.this(_keyed("this", check_unit, unit), zone)
    if "unit" not in value:
        raise CalendarError(
            f'"{kind}" counts units: "unit" is missing',
            f'write e.g. {{"{kind}": 7, "unit": "day"}}',
        )
    unit = value["unit"]
    if not isinstance(unit, str):
        raise _at("unit", CalendarError(f"unit names a unit, found {unit!r}", _UNIT_HINT))
    count = _keyed(kind, lambda v: check_count(v, kind, positive=True), value[kind])
    build = Period.last if kind == "last" else Period.next
    return build(_keyed("unit", check_unit, unit), count, zone)


_UNIT_HINT = 'write "day", "week", "month" or "year"'


def _zone_text(value: object) -> str:
    if not isinstance(value, str):
        raise CalendarError(
            f"timeZone is an IANA zone name, found {value!r}", 'write e.g. "Europe/Paris"'
        )
    return check_zone(value)


def _keyed(key: str, check: Callable[[Any], _T], value: object) -> _T:
    try:
        return check(value)
    except CalendarError as exc:
        raise _at(key, exc) from None


def _at(key: str, error: CalendarError) -> CalendarError:
    error.key = key  # type: ignore[attr-defined]
    return error


# --- reading the text forms -------------------------------------------------------------------

_ZONE = r'(?:\s+in\s+"(?P<zone>(?:[^"\\\n]|\\.)*)")?'
_START_WORDS = re.compile(
    r"start\s+of\s+(?:(?P<named>today|yesterday|tomorrow)"
    r"|(?P<rel>this|last|next)\s+(?P<unit>\w+)"
    r"|(?P<unit2>\w+)\s*(?P<offset>[+-]\s*\d+))" + _ZONE + r"\Z",
    re.IGNORECASE,
)
_PERIOD_WORDS = re.compile(
    r"(?:(?P<today>today|yesterday|tomorrow)|this\s+(?P<unit>\w+)"
    r"|(?P<rel>last|next)\s+(?:(?P<count>\d+)\s+)?(?P<unit2>\w+))" + _ZONE + r"\Z",
    re.IGNORECASE,
)


def start_from_words(text: str) -> StartOf:
    """`start of today`, `start of last month`, `start of week -3`, `... in "Europe/Paris"`."""
    match = _START_WORDS.fullmatch(" ".join(text.split()))
    if match is None:
        raise CalendarError(
            f"{text!r} is not a start of a calendar unit",
            'write e.g. start of today, start of last month or start of week -2 in "Europe/Paris"',
        )
    zone = _words_zone(match.group("zone"))
    named = match.group("named")
    if named:
        return StartOf("day", {"yesterday": -1, "today": 0, "tomorrow": 1}[named.lower()], zone)
    if match.group("rel"):
        offset = {"last": -1, "this": 0, "next": 1}[match.group("rel").lower()]
        return StartOf(check_unit(match.group("unit").lower()), offset, zone)
    offset = int(match.group("offset").replace(" ", ""))
    return StartOf(
        check_unit(match.group("unit2").lower()),
        check_count(offset, "offset", positive=False),
        zone,
    )


_DAY_PERIODS = {"yesterday": ("day", -1, 1), "today": ("day", 0, 1), "tomorrow": ("day", 1, 1)}


def period_from_words(text: str) -> Period:
    """`today`, `this month`, `last 7 days`, `next week`, `... in "Europe/Paris"`; `yesterday`
    and `tomorrow` are `last day` and `next day`, as after `start of`."""
    match = _PERIOD_WORDS.fullmatch(" ".join(text.split()))
    if match is None:
        raise CalendarError(
            f"{text!r} is not a calendar period",
            "write e.g. today, yesterday, this month, last 7 days or next week",
        )
    zone = _words_zone(match.group("zone"))
    day = (match.group("today") or "").lower()
    if day:
        return Period(*_DAY_PERIODS[day], zone=zone)
    if match.group("unit"):
        return Period.this(check_unit(match.group("unit").lower()), zone)
    count_text = match.group("count")
    unit = match.group("unit2").lower()
    count = 1 if count_text is None else int(count_text)
    if count_text is not None and unit.removesuffix("s") in UNITS:
        unit = unit.removesuffix("s")  # `last 7 days`, and `next 1 weeks` as well
    build = Period.last if match.group("rel").lower() == "last" else Period.next
    return build(check_unit(unit), check_count(count, match.group("rel"), positive=True), zone)


def _words_zone(text: str | None) -> str | None:
    if text is None:
        return None
    return check_zone(text.replace('\\"', '"').replace("\\\\", "\\"))


# --- the instants -----------------------------------------------------------------------------


def start_of(unit: str, offset: int, zone: str, now: datetime) -> datetime:
    """The first instant (UTC) of the `unit` `offset` units after the one holding `now`, in
    `zone`'s calendar (module docstring)."""
    tz = _zone(zone)
    # Near the edges, the day 400 years inwards (`cycled_local_date`), whose start is moved
    # back: the start of a day of year 10000 may be an instant of 9999.
    today, cycles = cycled_local_date(now, tz)
    try:
        first = _first_day(unit, offset, today)
    except (OverflowError, ValueError):
        return EARLIEST if offset < 0 else LATEST
    start = start_of_day(first, tz)
    if cycles == 0 or start in (EARLIEST, LATEST):
        return start
    try:
        return start - cycles * CYCLE
    except OverflowError:  # a start before year 1 or after 9999
        return EARLIEST if cycles > 0 else LATEST


def _first_day(unit: str, offset: int, today: date) -> date:
    if unit == "day":
        return today + timedelta(days=offset)
    if unit == "week":
        return today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
    if unit == "month":
        year, month = divmod(today.year * 12 + today.month - 1 + offset, 12)
        return date(year, month + 1, 1)
    return date(today.year + offset, 1, 1)


def start_of_day(day: date, tz: ZoneInfo) -> datetime:
    """The first instant whose local date in `tz` is `day`, in UTC (see the module docstring
    for daylight-saving gaps and folds)."""
    midnight = datetime(day.year, day.month, day.day)
    try:
        first = midnight.replace(tzinfo=tz, fold=0).astimezone(UTC)
        second = midnight.replace(tzinfo=tz, fold=1).astimezone(UTC)
    except OverflowError:
        return EARLIEST if day.year < 2 else LATEST
    low, high = min(first, second), max(first, second)
    if _local(low, tz) >= midnight:
        return low
    # Midnight falls in a gap: the day starts at the transition, between the two readings.
    while high - low > timedelta(microseconds=1):
        middle = low + (high - low) / 2
        middle = middle.replace(microsecond=middle.microsecond)
        if _local(middle, tz) >= midnight:
            high = middle
        else:
            low = middle
    return high


def _local(instant: datetime, tz: ZoneInfo) -> datetime:
    return instant.astimezone(tz).replace(tzinfo=None)
