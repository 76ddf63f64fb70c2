"""`audiencefilter bench`: filters timed over one set of contacts on several engines.

The contacts are read once and normalized (`bench_data`), then each engine in turn loads them
(timed apart: the load time is reported, not counted), runs each filter once untimed (a warm-up
that also gives the matching contacts) and `--repeat` times timed; the median run gives the
rows per second. Engines run one after another, each closed before the next is loaded, so the
peak memory shown is the engine's own: the peak resident memory of the process while it ran,
above what the process held before it started.

Every engine must find the same contacts: the first engine (the compiled predicate, the
library's reference semantics, when it is in the list) is the reference, and any contact
another engine adds or leaves out is listed and turns the exit status to 4.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import audiencefilter as af

from .bench_data import Contacts, read_contacts
from .bench_engines import ENGINES, Engine, make, unavailable
from .bench_report import render_table, write_json, write_plot
from .bench_results import (
    SHOWN_IDS,
    Bench,
    BenchFilter,
    EngineRun,
    Timing,
    describe_differences,
    describe_empty,
)
from .contacts import InputError
from .inputs import UsageError, detect_syntax, load_filter, read_text
from .output import Step, step_progress, write

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_BAD_ROWS, EXIT_DIFFERENT = 0, 1, 2, 3, 4
DEFAULT_ENGINES = "memory,polars,duckdb,sqlite"


def run_bench(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """The `bench` command: read, measure, report; the exit status."""
    try:
        filters = load_filters(args.filters, args.syntax)
    except _InvalidFilter as exc:
        write(err, f"{exc.label}: {af.render_error(exc.error, exc.text)}")
        return EXIT_INVALID
    names = engine_names(args.engines, args.postgresql)
    # One instant for the synthetic contacts' dates and every engine's relative dates.
    args.now = args.now or datetime.now(UTC)
    try:
        contacts = read_contacts(
            args.contacts, args.contacts_format, args.rows, args.seed, args.now
        )
    except InputError as exc:
        err.write(f"{args.contacts}: {exc}\n")
        return EXIT_INVALID
    _report_bad_rows(contacts, err)
    if not contacts.records:
        err.write(f"{args.contacts}: no contacts to run the filters on\n")
        return EXIT_INVALID
    bench = measure(filters, contacts, names, args, err)
    return _report(bench, args, out, err)


class _InvalidFilter(Exception):
    def __init__(self, label: str, text: str, error: af.FilterError) -> None:
        super().__init__(str(error))
        self.label, self.text, self.error = label, text, error


def load_filters(arguments: Sequence[str], syntax: str) -> list[BenchFilter]:
    """Each FILTERS argument as one filter or, from `@file`, several: a JSON array holds one
    per element (objects or text), any other file one per line (blank lines and `#` comments
    skipped), unless it is one JSON object. Raises `_InvalidFilter` for the first bad one."""
    texts = [text for argument in arguments for text in _filter_texts(argument)]
    if not texts:
        raise UsageError("give at least one filter")
    filters = []
    for number, text in enumerate(texts, 1):
        label = f"F{number}"
        try:
            flt = load_filter(text, detect_syntax(text, syntax), af.CONTACT)
        except af.FilterError as exc:
            raise _InvalidFilter(label, text, exc) from None
        filters.append(BenchFilter(label, text, flt))
    return filters


def _filter_texts(argument: str) -> list[str]:
    if not argument.startswith("@"):
        return [read_text(argument, None)]
    text = read_text(argument, None).strip()
    if text.startswith("["):
        return _json_array(argument, text)
    if text.startswith("{"):
        return [text]
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _json_array(argument: str, text: str) -> list[str]:
    try:
        items = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{argument[1:]}: not a JSON array of filters: {exc.msg}") from None
    if not all(isinstance(item, dict | str) for item in items):
        raise UsageError(f"{argument[1:]}: each element must be a filter object or text")
    return [item if isinstance(item, str) else json.dumps(item) for item in items]


def engine_names(requested: str, postgresql_url: str | None) -> list[str]:
    """The `--engines` list, checked: known names, once each, a URL for PostgreSQL."""
    names = [name.strip().lower() for name in requested.split(",") if name.strip()]
    unknown = [name for name in names if name not in ENGINES]
    if unknown or not names:
        raise UsageError(
            f"unknown engine {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"choose from {', '.join(ENGINES)}"
        )
    if "postgresql" in names and not postgresql_url:
        raise UsageError("the postgresql engine needs --postgresql URL (postgresql://...)")
    return list(dict.fromkeys(names))


def _report_bad_rows(contacts: Contacts, err: IO[str]) -> None:
    for problem in contacts.bad_rows[:SHOWN_IDS]:
        err.write(f"{contacts.source}: {problem}\n")
    if len(contacts.bad_rows) > SHOWN_IDS:
        err.write(f"{contacts.source}: more bad rows: counted, not shown\n")


def measure(
    filters: list[BenchFilter],
    contacts: Contacts,
    names: list[str],
    args: argparse.Namespace,
    err: IO[str],
) -> Bench:
    """Each engine in turn: load, then each filter (a warm-up, then `repeat` timed runs)."""
    bench = Bench(filters, contacts, [], max(1, args.repeat), args.now or datetime.now(UTC))
    steps = len(names) * (1 + len(filters) * (bench.repeat + 1))
    with step_progress(err, steps, args.progress) as step:
        for name in names:
            reason = unavailable(name)
            run = EngineRun(name, skipped=reason) if reason is not None else None
            bench.runs.append(run if run else _run_engine(make(name, args.postgresql), bench, step))
    bench.load_average = os.getloadavg()
    return bench


def _run_engine(engine: Engine, bench: Bench, step: Step) -> EngineRun:
    run = EngineRun(engine.name)
    baseline = _reset_peak()
    step(f"{engine.name}: loading {bench.rows:,} contacts")
    try:
        started = time.perf_counter()
        engine.load(bench.contacts.records)
        run.load_seconds = time.perf_counter() - started
        run.timings = [_time(engine, bench, f, step) for f in bench.filters]
    except Exception as exc:  # noqa: BLE001 - an engine's own failure is reported, not fatal
        run.skipped = _failure(exc)
        run.timings = []
    finally:
        run.peak_bytes = max(0, _peak() - baseline)
        engine.close()
    return run


def _time(engine: Engine, bench: Bench, item: BenchFilter, step: Step) -> Timing:
    positions = engine.positions(item.flt, bench.now)  # also the warm-up
    count = engine.counter(item.flt, bench.now)
    step(f"{engine.name}: {item.label}")
    seconds = []
    for _ in range(bench.repeat):
        started = time.perf_counter()
        count()
        seconds.append(time.perf_counter() - started)
        step(f"{engine.name}: {item.label}")
    return Timing(engine.name, item.label, seconds, positions)


def _failure(exc: Exception) -> str:
    """Why an engine failed; a package missing at run time (one its own packages import,
    as DuckDB imports pyarrow to read a polars frame) is named with the line to install it."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        package = exc.name.split(".")[0]
        return f"needs {package} (pip install {package})"
    return f"failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _reset_peak() -> int:
    """The resident memory now, after resetting the peak the kernel keeps (Linux); elsewhere
    the peak cannot be reset and the process's peak so far is the baseline."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return _peak()
    return _status_bytes("VmRSS") or _peak()


def _peak() -> int:
    """The peak resident memory of the process: since the last reset on Linux."""
    found = _status_bytes("VmHWM")
    if found:
        return found
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _status_bytes(key: str) -> int:
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _report(bench: Bench, args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    out.write(render_table(bench))
    for run in bench.runs:
        if run.skipped is not None:
            err.write(f"note: {run.name} skipped: {run.skipped}\n")
    found = bench.differences()
    for line in describe_differences(found, bench.contacts):
        err.write(line + "\n")
    for line in describe_empty(bench):
        err.write(line + "\n")
    if args.json:
        write_json(bench, args.json)
    if args.plot:
        write_plot(bench, args.plot)
    if found:
        return EXIT_DIFFERENT
    return EXIT_BAD_ROWS if bench.contacts.bad_rows else EXIT_OK
