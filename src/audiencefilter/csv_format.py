"""How a CSV file writes its dates, decimals and separators: what French or German Excel saves.

A file exported in Europe writes `26/11/2026` or `26.11.2026` for a date, `1234,56` or
`1 234,56` for a decimal, and separates its cells with `;` (the comma is the decimal mark).
`CsvFormat` states a file's conventions; nothing is guessed cell by cell, because one file
cannot be read two ways: `01/02/2026` is the first of February under `DMY` and the second of
January under `MDY`, and only whoever made the file knows which.

What the library does offer is evidence (`FormatEvidence`): fed the cells of a file's date
and number columns, it proposes the format the file looks written in (`26/11/2026` can only
be day first) and says why, and a cell no stated format reads names every reading it has,
so a person decides once for the whole file.

Rules, each in this one place:
- ISO 8601 (`2026-11-26`) is read under every date order: it is never ambiguous;
- `dateOrder` `DMY` or `MDY` reads `D/M/Y`, `D.M.Y` and `D-M-Y` (or month first) with a
  four-digit year, and a date-time cell as that date, a space and `HH:MM` or `HH:MM:SS`
  (UTC, as an ISO date-time without an offset is);
- `decimal` `,` reads `1234,56`, and groups of three digits split by a space (also the
  no-break spaces Excel writes) or a dot: `1 234,56`, `1.234.567,8`; `.` (the default) reads
  numbers as JSON writes them;
- `delimiter` is `,`, `;`, a tab or `|`; left unstated it is read from the header line (the
  separator it holds when it holds no comma), since a header split wrong reads no field.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Literal

DateOrder = Literal["ISO", "DMY", "MDY"]
DATE_ORDERS: tuple[DateOrder, ...] = ("ISO", "DMY", "MDY")
DELIMITERS = (",", ";", "\t", "|")
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}

_LOCAL_DATE = re.compile(r"(\d{1,2})([/.\-])(\d{1,2})\2(\d{4})\Z")
_LOCAL_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\Z")
_COMMA_DECIMAL = re.compile(r"[+-]?(?:\d{1,3}(?:[ \u00a0\u202f.]\d{3})+|\d+)(?:,\d+)?\Z")
_GROUPS = str.maketrans("", "", " \u00a0\u202f.")
_MONTHS = (
    "January February March April May June July August September October November December"
).split()


@dataclass(frozen=True, slots=True)
class CsvFormat:
    """A file's conventions (the module's rules); the default is ISO dates, a decimal point
    and a delimiter read from the header."""

    date_order: DateOrder = "ISO"
    decimal: Literal[".", ","] = "."
    delimiter: str | None = None

    def __post_init__(self) -> None:
        if self.date_order not in DATE_ORDERS:
            raise ValueError(f"dateOrder must be one of {', '.join(DATE_ORDERS)}")
        if self.decimal not in (".", ","):
            raise ValueError('decimal must be "." or ","')
        if self.delimiter is not None and self.delimiter not in DELIMITERS:
            raise ValueError("delimiter must be a comma, a semicolon, a tab or |")

    def delimiter_of(self, header_line: str) -> str:
        """The stated delimiter, or the one the header line is written with."""
        if self.delimiter is not None:
            return self.delimiter
        if "," in header_line:
            return ","
        counts = {d: header_line.count(d) for d in DELIMITERS[1:]}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","


def _words(day: date) -> str:
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


def local_date(text: str, order: DateOrder) -> date | None:
    """The date `text` writes under a day-first or month-first order; None when it is no such
    date (ValueError when it is one, but not a day of the calendar)."""
    found = _LOCAL_DATE.match(text)
    if found is None or order == "ISO":
        return None
    first, _, second, year = found.groups()
    day, month = (first, second) if order == "DMY" else (second, first)
    return calendar_date(int(year), int(month), int(day))


def calendar_date(year: int, month: int, day: int) -> date:
    """The date, or a ValueError saying which day does not exist (`there is no 31 February`)."""
    if not 1 <= month <= 12:
        raise ValueError(f"there is no month {month}")
    try:
        return date(year, month, day)
    except ValueError:
        raise ValueError(f"there is no {day} {_MONTHS[month - 1]} {year}") from None


def readings(text: str) -> dict[DateOrder, date]:
    """Every day `text` writes under some order (none for ISO text or no date at all)."""
    found: dict[DateOrder, date] = {}
    for order in ("DMY", "MDY"):
        try:
            day = local_date(text, order)
        except ValueError:
            continue
        if day is not None:
            found[order] = day
    return found


def unread_date(cell: str) -> str:
    """Why a date cell that is not ISO 8601 reads under no stated order, with its readings."""
    found = readings(cell.split(" ")[0])
    if not found:
        return f'expected an ISO 8601 date (YYYY-MM-DD), found "{cell}"'
    ways = " or ".join(f"{_words(day)} with dateOrder={order}" for order, day in found.items())
    return f'"{cell}" is {ways}: state the file\'s date order (dateOrder=DMY or MDY)'


def local_datetime(text: str, order: DateOrder) -> datetime | None:
    """A `D/M/Y HH:MM[:SS]` cell (UTC) under `order`; None when it is not written so."""
    day_text, _, time_text = text.partition(" ")
    day = local_date(day_text, order)
    if day is None:
        return None
    hour = minute = second = 0
    if time_text:
        clock = _LOCAL_TIME.match(time_text.strip())
        if clock is None:
            return None
        hour, minute, second = (int(part or 0) for part in clock.groups())
    try:
        return datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        raise ValueError(f'there is no time "{time_text}"') from None


def comma_decimal(text: str) -> str | None:
    """`1 234,56` as `1234.56` (a number's text as JSON writes it), or None."""
    if _COMMA_DECIMAL.match(text) is None:
        return None
    return text.translate(_GROUPS).replace(",", ".")


@dataclass
class FormatEvidence:
    """What a file's cells say of its format, fed one cell at a time by `date` and `number`;
    `proposal` names the format they point to and why."""

    day_first: Counter[str] = field(default_factory=Counter)
    month_first: Counter[str] = field(default_factory=Counter)
    either: Counter[str] = field(default_factory=Counter)
    comma: Counter[str] = field(default_factory=Counter)
    point: Counter[str] = field(default_factory=Counter)
    example: dict[str, str] = field(default_factory=dict)

    def date(self, column: str, cell: str) -> None:
        """A cell of a date or date-time column."""
        found = tuple(readings(cell.strip().split(" ")[0]))
        kind = self._kind_of(found)
        if kind is not None:
            kind[column] += 1
            self.example.setdefault(f"{'+'.join(found)}:{column}", cell)

    def _kind_of(self, found: tuple[DateOrder, ...]) -> Counter[str] | None:
        if found == ("DMY",):
            return self.day_first
        if found == ("MDY",):
            return self.month_first
        return self.either if found else None

    def number(self, column: str, cell: str) -> None:
        """A cell of a number column."""
        text = cell.strip()
        if "," in text and comma_decimal(text) is not None:
            self.comma[column] += 1
            self.example.setdefault(f"number:{column}", cell)
        elif "." in text:
            self.point[column] += 1

    def proposal(self) -> tuple[dict[str, str], list[str]]:
        """The options the cells point to (`{"dateOrder": "DMY", "decimal": ","}`) and a
        sentence for each, naming a cell; an order the cells leave open is said, not chosen."""
        options: dict[str, str] = {}
        reasons: list[str] = []
        order = self._order()
        if order is not None:
            options["dateOrder"] = order
            reasons.append(self._order_reason(order))
        elif self.either:
            reasons.append(self._open_order())
        if self.comma and not self.point:
            column = next(iter(self.comma))
            options["decimal"] = ","
            reasons.append(
                f'decimal comma: "{self.example[f"number:{column}"]}" in column {column}'
            )
        return options, reasons

    def _open_order(self) -> str:
        column = next(iter(self.either))
        cell = self.example[f"DMY+MDY:{column}"]
        shown = f'dates such as "{cell}" (column {column})'
        return f"{shown} read day first or month first: state dateOrder"

    def _order(self) -> DateOrder | None:
        if self.day_first and not self.month_first:
            return "DMY"
        if self.month_first and not self.day_first:
            return "MDY"
        return None

    def _order_reason(self, order: DateOrder) -> str:
        seen = self.day_first if order == "DMY" else self.month_first
        column = next(iter(seen))
        shape = "DD/MM/YYYY" if order == "DMY" else "MM/DD/YYYY"
        cell = self.example[f"{order}:{column}"]
        return f'dates look like {shape}: "{cell}" in column {column}'
