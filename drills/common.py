"""What every drill shares: its result row, its sizes, and how a missing tool is reported.

A drill that cannot run because a binary is not installed raises `Missing`; the runner turns it
into a skipped row on a workstation and a failed one in CI (`CI=true` or
`AUDIENCEFILTER_REQUIRE_SERVERS=1`), where a drill that silently skips proves nothing.
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parent.parent

Outcome = Literal["pass", "fail", "skip"]


class Missing(Exception):
    """A tool or server the drill needs is not installed."""


@dataclass(frozen=True)
class Row:
    """One line of the summary table."""

    name: str
    outcome: Outcome
    figures: str
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"


def row(name: str, passed: bool, figures: str) -> Row:
    return Row(name, "pass" if passed else "fail", figures)


@dataclass(frozen=True)
class Sizes:
    """How much each drill does; `FULL` has the issue's numbers, `FAST` fits a CI job."""

    crash_creations: int
    crash_clients: int
    outage_clients: int
    outage_down_seconds: float
    load_contacts: int
    wrk_seconds: int
    mixed_clients: int
    mixed_operations: int
    fuzz_inputs: int


FULL = Sizes(
    crash_creations=10_000,
    crash_clients=20,
    outage_clients=8,
    outage_down_seconds=2.0,
    load_contacts=10_000,
    wrk_seconds=30,
    mixed_clients=10,
    mixed_operations=6_000,
    fuzz_inputs=100_000,
)
FAST = Sizes(
    crash_creations=2_000,
    crash_clients=20,
    outage_clients=6,
    outage_down_seconds=2.0,
    load_contacts=2_000,
    wrk_seconds=5,
    mixed_clients=6,
    mixed_operations=1_200,
    fuzz_inputs=10_000,
)


@dataclass(frozen=True)
class Context:
    """What a drill is given: its sizes and a scratch folder removed after the run."""

    sizes: Sizes
    workdir: Path
    fast: bool


Drill = Callable[[Context], Row]


def servers_required() -> bool:
    """In CI every drill must run: a missing tool fails instead of skipping."""
    return (
        os.environ.get("CI", "").lower() in ("1", "true", "yes")
        or os.environ.get("AUDIENCEFILTER_REQUIRE_SERVERS") == "1"
    )


def need_binary(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise Missing(f"{name} is not installed (Debian package `{package}`)")
    return found


EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Invalidated)\w*):")


def exception_names(log: str, top: int = 3) -> str:
    """The most frequent exception classes of a server log's tracebacks, for a failure row."""
    names = Counter(
        match.group(1) for line in log.splitlines() if (match := EXCEPTION_LINE.match(line))
    )
    return ", ".join(f"{name} x{count}" for name, count in names.most_common(top)) or "none"


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:,.0f}/s" if seconds > 0 else "-"
