"""The measures of the library's claims: each calls a benchmark module's own functions at the
size its claim states (or a tiny one with `quick`), so a claim measures what the module would
print. One run of a module serves every claim it holds (the runs are cached by their sizes)."""

from __future__ import annotations

import functools
import multiprocessing
import os
import statistics
from collections.abc import Callable

from .. import cost_model, gaps, gates, gates_constructs, judging, relations
from .. import run as engines_run
from ..results import Results

COMPILED = "audiencefilter compile()"
JSON_LOGIC = "json-logic"
POLARS_OURS = "audiencefilter to_polars()"
POLARS_HAND = "polars hand-written expression"
THREADS = "POLARS_MAX_THREADS"


@functools.cache
def _gates(size: int, quick: bool) -> dict[str, float]:
    rounds, seconds = (1, 0.002) if quick else (3, 0.05)
    rows = gates.measure(size, sample_seconds=seconds, rounds=rounds)
    return {row.what: row.ratio for row in rows}


def _gate(prefix: str, size: int, quick: bool) -> list[float]:
    found = _gates(2_000 if quick else size, quick)
    picked = [ratio for what, ratio in found.items() if what.startswith(prefix)]
    if not picked:  # a renamed gate must not read as a claim that does not hold
        raise KeyError(f"no gate starting with {prefix!r} among {sorted(found)}")
    return picked


def gate_compile(quick: bool) -> list[float]:
    """The compiled predicate's speed ÷ the lambda's, F1-F5 (above 1: ours faster)."""
    return _gate("compile ", 30_000, quick)


def gate_parse(quick: bool) -> list[float]:
    return _gate("parse F5", 30_000, quick)


def gate_to_sql(quick: bool) -> list[float]:
    return _gate("to_sql F5", 30_000, quick)


def gate_matches(quick: bool) -> list[float]:
    """`matches(record, now=t)` ÷ the compiled predicate on a clock, at 20,000 contacts."""
    return _gate("matches(now=)", 20_000, quick)


@functools.cache
def _constructs(quick: bool) -> dict[str, float]:
    size, rounds = (2_000, 1) if quick else (50_000, 5)
    return {gate.what: gate.ratio for gate in gates_constructs.measure(size, rounds)}


def construct(*names: str) -> functools.partial[list[float]]:
    """The hand ÷ ours ratios of the named rows of `benchmarks.gates_constructs`."""
    return functools.partial(_picked, _constructs, names)


@functools.cache
def _gaps(quick: bool) -> dict[str, float]:
    size, rounds = (2_000, 1) if quick else (50_000, 7)
    found = gaps.memory_gaps(size, rounds) + gaps.sqlite_gaps(size, rounds)
    return {gap.what: gap.ratio for gap in found} | _one_polars_thread(_polars_gaps, size, rounds)


def _polars_gaps(size: int, rounds: int) -> dict[str, float]:
    return {gap.what: gap.ratio for gap in gaps.polars_gaps(size, rounds)}


def _one_polars_thread(
    function: Callable[[int, int], dict[str, float]], size: int, rounds: int
) -> dict[str, float]:
    """`function` in a new process whose polars has one thread, as `benchmarks.gaps` holds it
    (the process's CPU time of a pool of threads moves by 2x on a shared machine); polars sets
    its pool when first imported, so this process's own cannot be changed."""
    previous = os.environ.get(THREADS)
    os.environ[THREADS] = "1"
    try:
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            return pool.apply(function, (size, rounds))
    finally:
        os.environ.pop(THREADS, None)
        if previous is not None:
            os.environ[THREADS] = previous


def gap(*names: str) -> functools.partial[list[float]]:
    """The ours ÷ hand ratios of the named rows of `benchmarks.gaps`."""
    return functools.partial(_picked, _gaps, names)


def _picked(
    source: Callable[[bool], dict[str, float]], names: tuple[str, ...], quick: bool
) -> list[float]:
    found = source(quick)
    picked = [ratio for what, ratio in found.items() if what.startswith(names)]
    if not picked:  # a renamed row must not read as a claim that does not hold
        raise KeyError(f"no row starting with {names} among {sorted(found)}")
    return picked


@functools.cache
def _engines(quick: bool) -> Results:
    size = 2_000 if quick else 100_000
    argv = ["--sizes", str(size), "--filters", "F1,F2,F3", "--no-postgres", "--no-cli"]
    argv += ["--no-micro", "--no-chart", "--budget", "0.5" if quick else "10"]
    if quick:
        argv += ["--repeats", "2"]
    return engines_run.run(engines_run._arguments(argv))


def engine_ratio(engine: str, other: str, *names: str) -> functools.partial[list[float]]:
    """How many times `engine` is faster than `other` on the named filters, 100,000 contacts."""
    return functools.partial(_engine_ratios, engine, other, names)


def _engine_ratios(engine: str, other: str, names: tuple[str, ...], quick: bool) -> list[float]:
    results = _engines(quick)
    size = results.sizes[0]
    ratios = [results.ratio(engine, other, name, size) for name in names]
    return [float("nan") if ratio is None else ratio for ratio in ratios]


@functools.cache
def _relations(quick: bool) -> dict[tuple[str, str], float]:
    contacts, actions, repeats = (300, 3_000, 1) if quick else (100_000, 1_000_000, 5)
    rows = relations.run(contacts, actions, repeats, use_postgres=False)
    return {(row.engine, row.segment): row.ratio for row in rows}


def relation(engines: tuple[str, ...], segments: tuple[str, ...]) -> functools.partial[list[float]]:
    """hand ÷ ours of the named segments on the named engines (`benchmarks.relations`)."""
    return functools.partial(_relation_ratios, engines, segments)


def _relation_ratios(
    engines: tuple[str, ...], segments: tuple[str, ...], quick: bool
) -> list[float]:
    found = _relations(quick)
    return [
        r for (engine, segment), r in found.items() if engine in engines and segment in segments
    ]


@functools.cache
def _cost(quick: bool) -> list[cost_model.Measure]:
    contacts, runs = (100, 1) if quick else (5_000, 7)
    return cost_model.measure(contacts, 10.0, runs)


def cost_worst(quick: bool) -> list[float]:
    """The worst factor either way between the estimate and the time, memory and SQLite."""
    measures = _cost(quick)
    engines = (cost_model.on_memory, cost_model.on_sqlite)
    return [cost_model.worst(measures, e, cost_model.fitted(measures, e)) for e in engines]


def cost_held_out(quick: bool) -> list[float]:
    """The same, the constant fitted on the even filters and judged on the odd ones."""
    measures = _cost(quick)
    fit, check = measures[::2], measures[1::2]
    engines = (cost_model.on_memory, cost_model.on_sqlite)
    return [cost_model.worst(check, e, cost_model.fitted(fit, e)) for e in engines]


@functools.cache
def _cost_times() -> tuple[float, float, float, float]:
    """`cost_model.cost_times`, one run for both claims it holds."""
    return cost_model.cost_times()


def cost_check_fixed(quick: bool) -> list[float]:
    """Microseconds of the largest uncached `cost()` over the 30 fixed filters."""
    return [_cost_times()[1]]


def cost_call_at_budget(quick: bool) -> list[float]:
    """Microseconds of one uncached `cost()` of a filter of 500 conditions."""
    return [_cost_times()[2]]


def judging_ratio(quick: bool) -> list[float]:
    """Median time of the thousand predicates in turn ÷ one `FilterSet`, per row."""
    filters, rows = (50, 20) if quick else (1_000, 200)
    each, joined = judging.measure(filters, rows)
    return [statistics.median(each) / statistics.median(joined)]
