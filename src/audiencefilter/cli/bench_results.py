"""What `audiencefilter bench` measured: the filters, each engine's runs, and the differences
between engines' answers; read by the command and by its reports (table, JSON, plot)."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

import audiencefilter as af

from .bench_data import Contacts

SHOWN_IDS = 10
"""How many contacts of a difference, and bad rows, are named; all are counted."""


@dataclass(frozen=True)
class BenchFilter:
    """One filter of the command line: `F1`, `F2`... in the order given, and its text."""

    label: str
    text: str
    flt: af.Filter


@dataclass
class Timing:
    """One engine on one filter: each timed run's seconds, and the contacts it matched."""

    engine: str
    label: str
    seconds: list[float]
    positions: set[int]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


@dataclass
class EngineRun:
    """One engine's load and memory, or why it did not run (`skipped`)."""

    name: str
    load_seconds: float = 0.0
    peak_bytes: int = 0
    skipped: str | None = None
    timings: list[Timing] = field(default_factory=list)


@dataclass(frozen=True)
class Difference:
    """Contacts an engine matched that the reference did not (`extra`), and the reverse."""

    engine: str
    reference: str
    label: str
    extra: list[int]
    missing: list[int]


@dataclass
class Bench:
    """A finished run: what was measured, over what, on which machine."""

    filters: list[BenchFilter]
    contacts: Contacts
    runs: list[EngineRun]
    repeat: int
    now: datetime
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def rows(self) -> int:
        return len(self.contacts.records)

    def differences(self) -> list[Difference]:
        return differences(self.runs)


def differences(runs: list[EngineRun]) -> list[Difference]:
    """Every (engine, filter) whose contacts differ from the first engine that ran."""
    ran = [run for run in runs if run.skipped is None]
    if len(ran) < 2:
        return []
    reference = {t.label: t.positions for t in ran[0].timings}
    found = []
    for run in ran[1:]:
        for timing in run.timings:
            expected = reference.get(timing.label, set())
            if timing.positions != expected:
                extra = sorted(timing.positions - expected)
                missing = sorted(expected - timing.positions)
                found.append(Difference(run.name, ran[0].name, timing.label, extra, missing))
    return found


def describe_empty(bench: Bench) -> Iterator[str]:
    """A note per filter that matched no contact on the reference engine: a benchmark of an
    empty audience says little, and it is often a date the contacts do not reach (`30 days
    ago` over contacts dated long before `--now`)."""
    ran = [run for run in bench.runs if run.skipped is None and run.timings]
    if not ran:
        return
    for timing in ran[0].timings:
        if not timing.positions:
            text = next(f.flt.to_text() for f in bench.filters if f.label == timing.label)
            yield (
                f"note: {timing.label} matched none of the {bench.rows:,} contacts "
                f"(at --now {bench.now.isoformat()}): {text}"
            )


def describe_differences(found: list[Difference], contacts: Contacts) -> Iterator[str]:
    """One line per engine and filter that differs, naming the first contacts concerned."""
    for item in found:
        parts = []
        for what, positions in (("also matches", item.extra), ("misses", item.missing)):
            if positions:
                shown = ", ".join(contacts.label(p) for p in positions[:SHOWN_IDS])
                more = (
                    f" and {len(positions) - SHOWN_IDS} more" if len(positions) > SHOWN_IDS else ""
                )
                parts.append(f"{what} {len(positions)} ({shown}{more})")
        yield (
            f"answers differ: {item.label} on {item.engine}, against {item.reference}: "
            + "; ".join(parts)
        )
