"""What one benchmark run measured, in plain data the report and the tests read."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .micro import MicroResults


@dataclass
class Measure:
    """One engine on one filter at one size."""

    engine: str
    filter: str
    size: int
    seconds: float
    runs: int
    rows: int
    matches: int
    differs: int | None = None
    diff_note: str = ""

    @property
    def rate(self) -> float:
        """Records per second; NaN when nothing was timed."""
        return self.rows / self.seconds if self.seconds > 0 else math.nan


@dataclass
class CliMeasure:
    contacts: int
    file_mib: float
    seconds: float
    peak_mib: float
    ok: bool
    output: str


@dataclass
class Results:
    sizes: list[int]
    repeats: dict[int, int]
    versions: dict[str, str]
    machine: dict[str, str]
    measures: list[Measure] = field(default_factory=list)
    loads: dict[tuple[str, int], float] = field(default_factory=dict)
    micro: MicroResults = field(default_factory=MicroResults)
    cli: CliMeasure | None = None
    notes: list[str] = field(default_factory=list)
    engines: list[str] = field(default_factory=list)
    slow: set[str] = field(default_factory=set)
    ours: set[str] = field(default_factory=set)
    budget: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def get(self, engine: str, name: str, size: int) -> Measure | None:
        for m in self.measures:
            if m.engine == engine and m.filter == name and m.size == size:
                return m
        return None

    def ratio(self, engine: str, other: str, name: str, size: int) -> float | None:
        """How many times faster `engine` is than `other` (records/s over records/s)."""
        mine, theirs = self.get(engine, name, size), self.get(other, name, size)
        if mine is None or theirs is None or not (mine.rate > 0 and theirs.rate > 0):
            return None
        return mine.rate / theirs.rate
