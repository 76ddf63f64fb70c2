"""Relative date-times: `{"ago": "P30D"}`, an instant that moves with the clock.

"Signed up in the last 30 days" is `{"createdAt": {"gte": {"ago": "P30D"}}}`: the filter is
stored once and its meaning follows the calendar. The AST holds the duration (`Ago`), never an
instant; each evaluation turns it into an instant against a clock.

Design choices (docs/semantics-calendar.md states them for users):
- A duration is ISO 8601, `PnYnMnWnDTnHnMnS`, normalized to two numbers: calendar months
  (years are 12 months) and exact microseconds (weeks are 7 days, days 24 hours: all arithmetic
  is in UTC, which has no daylight saving). So `P1W` equals `P7D` and `PT90M` equals `PT1H30M`,
  but `P1M` is not `P30D`. The canonical text is written from those two numbers.
- `now - duration`: months first, by the calendar, with the day clamped to the end of a shorter
  month (31 March minus `P1M` is 28 or 29 February); then the exact part. An instant before
  year 1 is the first instant of year 1.
- Only seconds take a fraction (`PT0.5S`, at most six digits): a fraction of a year or a month
  has no exact length, and `P1.5D` is written `P1DT12H`. A zero duration (`PT0S`) is "now".
  A negative duration (`-P1D`) is refused: `ago` looks into the past.
- Relative values go wherever a single date-time literal goes (`equals`, `gt`, `gte`, `lt`,
  `lte`, `not`), not into `in`/`notIn` lists, which hold fixed values; and never as a
  shorthand (`{"createdAt": {"ago": ...}}` would be an equality with a moving microsecond).
"""

from __future__ import annotations

import re
from calendar import monthrange
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal

Clock = Callable[[], datetime]
"""A function returning the current instant, aware; tests pass a frozen one."""

EARLIEST = datetime.min.replace(tzinfo=UTC)
MAX_YEARS = 10_000
_MICROS = {"W": 7 * 86_400_000_000, "D": 86_400_000_000, "H": 3_600_000_000, "M": 60_000_000}
_SECOND = 1_000_000
_MAX_MONTHS = 12 * MAX_YEARS
_MAX_MICROS = 366 * 86_400_000_000 * MAX_YEARS
_ISO = re.compile(
    r"P(?!\Z)(?:(?P<Y>\d+)Y)?(?:(?P<M>\d+)M)?(?:(?P<W>\d+)W)?(?:(?P<D>\d+)D)?"
    r"(?:T(?!\Z)(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+)(?:[.,](?P<f>\d+))?S)?)?",
    re.IGNORECASE,
)
_DATE_DESIGNATORS = (("year", "Y"), ("month", "M"), ("day", "D"))
_TIME_DESIGNATORS = (("hour", "H"), ("minute", "M"), ("second", "S"))
_DIGITS = 12  # more digits than any duration within the bound needs
_UNITS = ("year", "month", "week", "day", "hour", "minute", "second")
_WORDS = re.compile(r"(\d+(?:\.\d+)?)\s*((?:year|month|week|day|hour|minute|second)s?)", re.I)
_ISO_HINT = 'write an ISO 8601 duration such as "P30D", "P1Y6M" or "PT12H"'


class DurationError(ValueError):
    """A duration that cannot be read, with a suggestion where one is likely."""

    def __init__(self, message: str, suggestion: str | None = _ISO_HINT) -> None:
        super().__init__(message)
        self.suggestion = suggestion


def system_clock() -> datetime:
    """The current instant in UTC: the clock every evaluation uses unless told otherwise."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Ago:
    """An instant relative to now: `months` calendar months and `micros` microseconds before it.

    Compared by value, so two filters written `P1W` and `P7D` are equal.
    """

    months: int
    micros: int
    delta: timedelta = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.months < 0 or self.micros < 0:
            raise ValueError("a duration before now cannot be negative")
        object.__setattr__(self, "delta", timedelta(microseconds=self.micros))

    @classmethod
    def parse(cls, text: str) -> Ago:
        """An ISO 8601 duration, `P30D`, `P1Y2M`, `PT0.5S`.

        Raises:
            DurationError: the text is not such a duration, or is out of range.
        """
        stripped = text.strip()
        if stripped.startswith("-"):
            raise DurationError(
                f"the duration {text!r} is negative; ago looks into the past",
                "write a positive duration: the instant is that long before now",
            )
        match = _ISO.fullmatch(stripped)
        if match is None:
            if re.search(r"\d[.,]\d*[YMWDH]", stripped, re.IGNORECASE):
                raise DurationError(
                    f"{text!r}: only seconds take a fraction",
                    'use a smaller unit: "P1DT12H" rather than "P1.5D"',
                )
            raise DurationError(f"{text!r} is not an ISO 8601 duration")
        found = {k: v for k, v in match.groupdict().items() if v is not None and k != "f"}
        if any(len(v) > _DIGITS for v in found.values()):
            raise _too_long(text)
        parts = {k: int(v) for k, v in found.items()}
        return _build(
            parts.get("Y", 0),
            parts.get("M", 0),
            parts.get("W", 0) * _MICROS["W"]
            + parts.get("D", 0) * _MICROS["D"]
            + parts.get("h", 0) * _MICROS["H"]
            + parts.get("m", 0) * _MICROS["M"]
            + parts.get("s", 0) * _SECOND,
            match.group("f"),
            text,
        )

    @classmethod
    def from_words(cls, text: str) -> Ago:
        """The text syntax's form without its `ago`: `30 days`, `1 year 6 months`, `0.5 seconds`.

        Raises:
            DurationError: a unit given twice, or a fraction on another unit than seconds.
        """
        seen: set[str] = set()
        years = months = micros = 0
        fraction: str | None = None
        for number, unit_text in _WORDS.findall(text):
            unit = unit_text.lower().removesuffix("s")
            if unit in seen:
                raise DurationError(f'"{unit}" is given twice', "give each unit once")
            seen.add(unit)
            whole, _, decimals = number.partition(".")
            if len(whole) > _DIGITS:
                raise _too_long(text)
            if decimals and unit != "second":
                raise DurationError(
                    f"only seconds take a fraction, found {number} {unit_text}",
                    "use a smaller unit: 36 hours rather than 1.5 days",
                )
            value = int(whole)
            if unit == "year":
                years = value
            elif unit == "month":
                months = value
            elif unit == "second":
                micros += value * _SECOND
                fraction = decimals or None
            else:
                micros += value * _MICROS[unit[0].upper()]
        return _build(years, months, micros, fraction, text)

    @property
    def iso(self) -> str:
        """The canonical ISO 8601 text: `P30D`, `P1Y6M`, `PT1H30M`, `PT0S`."""
        parts = self.parts()
        date = "".join(f"{parts[u]}{d}" for u, d in _DATE_DESIGNATORS if parts[u])
        time = "".join(f"{parts[u]}{d}" for u, d in _TIME_DESIGNATORS if parts[u])
        if not date and not time:
            return "PT0S"
        return "P" + date + ("T" + time if time else "")

    @property
    def words(self) -> str:
        """The text syntax's form: `30 days ago`, `1 year 6 months ago`, `0 seconds ago`."""
        parts = self.parts()
        words = [
            f"{parts[unit]} {unit}{'' if parts[unit] == '1' else 's'}"
            for unit in _UNITS
            if unit in parts and parts[unit]
        ]
        return " ".join(words or ["0 seconds"]) + " ago"

    def parts(self) -> dict[str, str]:
        """Canonical components as text, empty where zero; weeks are always days."""
        years, months = divmod(self.months, 12)
        days, rest = divmod(self.micros, _MICROS["D"])
        hours, rest = divmod(rest, _MICROS["H"])
        minutes, rest = divmod(rest, _MICROS["M"])
        seconds, micros = divmod(rest, _SECOND)
        second = f"{seconds}.{micros:06d}".rstrip("0").rstrip(".") if micros else str(seconds)
        shown = {"year": years, "month": months, "day": days, "hour": hours, "minute": minutes}
        parts = {unit: str(value) if value else "" for unit, value in shown.items()}
        parts["second"] = second if rest else ""
        return parts

    def resolver(self) -> Callable[[datetime], datetime]:
        """`before` as the cheapest function for this duration (a predicate calls it once per
        record): one subtraction, after the calendar part is worked out once per day."""
        if self.months:
            return self._calendar_resolver()
        delta = self.delta

        def before(now: datetime) -> datetime:
            try:
                return now - delta
            except OverflowError:
                return EARLIEST

        return before

    def _calendar_resolver(self) -> Callable[[datetime], datetime]:
        # The calendar step keeps the time of day, so `now - before(now)` depends on now's date
        # alone (away from the year-1 clamp). One entry, replaced whole: safe across threads.
        last: list[tuple[int, timedelta]] = [(0, timedelta())]
        full = self.before

        def before(now: datetime) -> datetime:
            day, offset = last[0]
            if now.toordinal() != day:
                instant = full(now)
                if instant == EARLIEST:
                    return instant
                offset = now - instant
                last[0] = (now.toordinal(), offset)
            try:
                return now - offset
            except OverflowError:
                return EARLIEST

        return before

    def next_step(self, now: datetime) -> datetime | None:
        """The first instant after `now` at which `before` jumps rather than moving with the
        clock: the next UTC midnight for a duration with months (the calendar step depends on
        the date), None for an exact duration, which moves with the clock for ever."""
        if not self.months:
            return None
        midnight = datetime.combine(now.date(), time(), UTC)
        try:
            return midnight + timedelta(days=1)
        except OverflowError:
            return None

    def before(self, now: datetime) -> datetime:
        """The instant this long before `now` (an aware UTC datetime)."""
        instant = now
        if self.months:
            year, month = divmod(now.year * 12 + now.month - 1 - self.months, 12)
            if year < 1:
                return EARLIEST
            day = min(now.day, monthrange(year, month + 1)[1])
            instant = now.replace(year=year, month=month + 1, day=day)
        try:
            return instant - self.delta
        except OverflowError:
            return EARLIEST


def _build(years: int, months: int, micros: int, fraction: str | None, text: str) -> Ago:
    if fraction is not None:
        if len(fraction) > 6:
            raise DurationError(
                f"{text!r} has more than six decimals of seconds", "round it to microseconds"
            )
        micros += int(Decimal("0." + fraction) * _SECOND)
    total_months = years * 12 + months
    if total_months > _MAX_MONTHS or micros > _MAX_MICROS:
        raise _too_long(text)
    return Ago(total_months, micros)


def _too_long(text: str) -> DurationError:
    return DurationError(
        f"the duration {text!r} is longer than {MAX_YEARS:,} years", "use a shorter duration"
    )


def as_now(value: datetime) -> datetime:
    """`now` as an aware UTC instant; a naive value is UTC, as everywhere in filters."""
    from .instants import as_utc

    return as_utc(value)
