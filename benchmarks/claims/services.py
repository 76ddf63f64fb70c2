"""The measures of the service's claims, each on a fresh SQLite database in a temporary folder,
through the benchmark module that printed the figure (`benchmarks.service_*`, `webhooks`,
`scheduler_lag`), at the size the claim states (or a tiny one with `quick`)."""

from __future__ import annotations

import functools
import os
import statistics
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import (
    scheduler_lag,
    service_actions,
    service_import,
    service_membership,
    service_residual,
    webhooks,
)
from .registry import Unavailable


@contextmanager
def sqlite_url() -> Iterator[str]:
    """A service database URL in a temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="af-claims-") as folder:
        yield f"sqlite:///{Path(folder) / 'bench.db'}"


def membership_ratios(contacts: int, audiences: int, runs: int) -> dict[str, float]:
    """`benchmarks.service_membership`'s ratios (with audiences ÷ none) by request, on a
    throw-away SQLite database."""
    with sqlite_url() as url:
        bench = service_membership.Bench(url, contacts, audiences)
        try:
            found = service_membership.measure(bench, runs)
        finally:
            bench.close()
    return {label: ratio for label, _, _, ratio in found}


@functools.cache
def _membership(quick: bool) -> dict[str, float]:
    return membership_ratios(*((40, 10, 3) if quick else (2_000, 100, 41)))


def membership(label: str) -> functools.partial[list[float]]:
    """with 100 audiences ÷ none, for one request of `benchmarks.service_membership`."""
    return functools.partial(_membership_ratio, label)


def _membership_ratio(label: str, quick: bool) -> list[float]:
    return [_membership(quick)[label]]


@functools.cache
def _actions(quick: bool) -> dict[str, tuple[float, float]]:
    contacts, audiences, runs = (40, 10, 3) if quick else (10_000, 50, 61)
    with sqlite_url() as url:
        bench = service_actions.ActionsBench(url, contacts, audiences)
        try:
            return service_actions.measure(bench, runs)
        finally:
            bench.close()


def actions_ratio(label: str) -> functools.partial[list[float]]:
    """`POST /v4/actions`, 50 audiences ÷ none, on the clock named by `label`."""
    return functools.partial(_actions_ratio, label)


def _actions_ratio(label: str, quick: bool) -> list[float]:
    with_ms, without_ms = _actions(quick)[label]
    return [with_ms / without_ms]


def residual_cpu(quick: bool) -> list[float]:
    """Process CPU of both writes, residuals on ÷ off (`benchmarks.service_residual`)."""
    contacts, audiences, runs = (40, 10, 3) if quick else (2_000, 20, 21)
    with sqlite_url() as url:
        on = service_residual.ResidualBench(url, contacts, audiences, residual=True)
        off = service_residual.ResidualBench(url, contacts, audiences, residual=False)
        try:
            found = service_residual.measure(on, off, runs)
        finally:
            on.close()
            off.close()
    return [mine / theirs for label, (mine, theirs) in found.items() if label.endswith("CPU")]


def import_ratio(quick: bool) -> list[float]:
    """Import of 1,000 contacts into the list of 100 audiences ÷ into the list of none."""
    contacts, audiences, runs = (20, 5, 1) if quick else (1_000, 100, 5)
    with sqlite_url() as url:
        bench = service_membership.Bench(url, contacts, audiences)
        try:
            with_ms, without_ms, _ = service_import.measure(bench, runs)
        finally:
            bench.close()
    return [with_ms / without_ms]


def webhook_duplicates(quick: bool) -> list[float]:
    """Deliveries received twice, one worker then two (`benchmarks.webhooks`, SQLite)."""
    events, contacts = (40, 10) if quick else (2_000, 500)
    with sqlite_url() as url:
        list_id = webhooks.prepare(url, events, contacts)
        found = [webhooks.measure(url, list_id, events, count)[1] for count in (1, 2)]
    return [float(duplicates) for duplicates in found]


def scheduler_median_lag(quick: bool) -> list[float]:
    """The scheduler's median lag (ms) of the `audience.left` events, 20,000 contacts of which
    500 turn old, five duration audiences, 20 s (`benchmarks.scheduler_lag`)."""
    try:
        if quick:  # a tiny list is stored and planned in well under a short lead
            found = scheduler_lag.measure(100, 5, 1.0, 20, lead=3.0, settle=2.0)
        else:
            found = scheduler_lag.measure(20_000, 5, 20.0, 500)
    except SystemExit as exc:  # the contacts' setup outlasted the lead before the first turn
        raise Unavailable(f"{exc} (load average {os.getloadavg()[0]:.1f})") from None
    lags, _ = found["instants (the scheduler)"]
    return [statistics.median(lags) * 1000 if lags else float("nan")]
