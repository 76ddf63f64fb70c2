"""What a claim is: the words of a performance page it stands for, and how to measure it again.

A claim is kept apart from its measure so that the test suite can check the registry against
the pages (every marker has an entry, every entry a marker, every stated range is written in
the text it marks) without running anything.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Measure = Callable[[bool], Sequence[float]]
"""A claim's measure: called with `quick` (tiny sizes, to check the machinery), it returns the
figures the claim is about, one or several (all must be within the range)."""

UNITS = ("x", "ms", "µs", "s", "%", "count", "per s")


@dataclass(frozen=True)
class Range:
    """A stated range: `text` as the document writes it, and its bounds (either may be open)."""

    text: str
    low: float | None
    high: float | None
    unit: str

    def holds(self, values: Sequence[float]) -> bool:
        """Every value within the bounds; NaN (nothing measured) never holds."""
        return bool(values) and all(self._within(value) for value in values)

    def _within(self, value: float) -> bool:
        if math.isnan(value):
            return False
        above = self.low is None or value >= self.low
        return above and (self.high is None or value <= self.high)

    def show(self, values: Sequence[float]) -> str:
        """The values measured in the range's unit: one figure, or the lowest and highest."""
        if not values:
            return "-"
        shown = sorted({_figure(value, self.unit) for value in values}, key=_number)
        if len(shown) > 1:
            return f"{shown[0]} to {shown[-1]}"
        return shown[0]


def _figure(value: float, unit: str) -> str:
    if unit == "count":
        return f"{value:,.0f}"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "%":
        return f"{value:.3f} %"
    return f"{value:,.2f} {unit}"


def _number(shown: str) -> float:
    return float(shown.split(" ")[0].rstrip("x").replace(",", ""))


def between(text: str, low: float, high: float, unit: str = "x") -> Range:
    return Range(text, low, high, unit)


def at_most(text: str, high: float, unit: str = "x") -> Range:
    return Range(text, None, high, unit)


def at_least(text: str, low: float, unit: str = "x") -> Range:
    return Range(text, low, None, unit)


def none(text: str) -> Range:
    """A count that must be zero ("0 missing")."""
    return Range(text, 0, 0, "count")


@dataclass(frozen=True)
class Claim:
    """One claim of the performance pages.

    `section` is the heading it sits under (its text, on whichever page); `size` says the data
    it is measured on (what the document states); `long` claims take many minutes (or hours)
    at that size and run only when named (`--only`) or with `--long`; their `--quick` form
    always runs.
    """

    id: str
    section: str
    statement: str
    stated: Range
    size: str
    measure: Measure
    long: bool = False


class Unavailable(Exception):
    """A claim's measure cannot run here (a missing server, binary or package)."""
