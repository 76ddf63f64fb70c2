"""`python -m benchmarks.run`: every engine on every filter, side by side, in one process run.

`make bench` runs it with the defaults: 100,000 and 1,000,000 contacts, in about ten minutes
on two cores. `--quick` (or `AUDIENCEFILTER_BENCH_QUICK=1`) runs small sizes in seconds, to
check the harness. The results go to docs/performance-results.md (below the
hand-written introduction, which is kept) and docs/performance.png.

For each size the contacts are generated once and loaded into every engine; then, filter by
filter, the engines run in turn, round after round, and each engine's median is kept. Rule
engines get one run, over a prefix of the contacts when a full run would exceed the time budget.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gc
import math
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import audiencefilter as af

from . import cli_memory, micro, pgserver
from .data import Contacts, generate
from .engines import Compiled, Engine, PostgresOurs, Run, available
from .filters import MAIN, STRESS, BenchFilter
from .report import write_chart, write_markdown
from .results import CliMeasure, Measure, Results
from .timing import median, once

ROOT = Path(__file__).resolve().parent.parent
QUICK_VARIABLE = "AUDIENCEFILTER_BENCH_QUICK"


@dataclass(frozen=True)
class Settings:
    """How much to run: timed runs of a row engine, and of a (cheaper) column or SQL engine;
    the least a timed sample may last; the most a rule engine's single run may take."""

    repeats: int
    cheap_runs: int
    min_sample: float
    budget: float


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    results = run(args)
    write_markdown(results, args.markdown)
    if not args.no_chart:
        write_chart(results, args.chart)
    _say(f"wrote {args.markdown}" + ("" if args.no_chart else f" and {args.chart}"))
    return 0


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--sizes", type=_sizes, help="comma-separated contact counts")
    parser.add_argument("--repeats", type=int, help="runs per fast engine (median kept)")
    parser.add_argument("--budget", type=float, help="seconds one slow-engine run may take")
    parser.add_argument("--engines", type=_names, default=[], help="engine names to run")
    parser.add_argument("--filters", type=_names, default=[], help="e.g. F1,F5,S1")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI memory measure")
    parser.add_argument("--no-micro", action="store_true", help="skip parse/compile costs")
    parser.add_argument("--no-chart", action="store_true")
    parser.add_argument("--markdown", type=Path, default=ROOT / "docs" / "performance-results.md")
    parser.add_argument("--chart", type=Path, default=ROOT / "docs" / "performance.png")
    args = parser.parse_args(argv)
    args.quick = args.quick or os.environ.get(QUICK_VARIABLE, "") not in ("", "0")
    if args.sizes is None:
        args.sizes = [2_000, 10_000] if args.quick else [100_000, 1_000_000]
    if args.budget is None:
        args.budget = 0.5 if args.quick else 10.0
    return args


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _sizes(text: str) -> list[int]:
    return [int(part.replace("_", "")) for part in text.split(",") if part.strip()]


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> Results:
    """Every measurement of one benchmark run."""
    results = Results(
        sizes=list(args.sizes), repeats={}, versions={}, machine=_machine(), budget=args.budget
    )
    if not args.no_micro:
        _say("micro-costs: parse, compile, translations")
        samples, seconds = (3, 0.005) if args.quick else (15, 0.02)
        chosen = _chosen((*MAIN, *STRESS), args.filters)
        results.micro = micro.measure(chosen, samples=samples, sample_seconds=seconds)
    with pgserver.postgres() if not args.no_postgres else _no_postgres() as (url, pg_note):
        results.notes.append(f"PostgreSQL: {pg_note}.")
        for index, size in enumerate(args.sizes):
            # Many short runs make a median that a burst of other work cannot move.
            repeats = args.repeats or (2 if args.quick else 25 if size <= 200_000 else 9)
            results.repeats[size] = repeats
            settings = Settings(
                repeats=repeats,
                cheap_runs=repeats if args.quick else max(repeats, 21),
                min_sample=0.001 if args.quick else 0.02,
                budget=args.budget,
            )
            benches = _chosen((*MAIN, *STRESS) if index == 0 else MAIN, args.filters)
            results.extra["cheap"] = f"{settings.cheap_runs} runs"
            results.extra["min_sample"] = f"{settings.min_sample * 1000:g} ms"
            _one_size(results, args, size, settings, benches, url)
    return results


class _no_postgres:
    def __enter__(self) -> tuple[None, str]:
        return None, "skipped (--no-postgres)"

    def __exit__(self, *exc: object) -> None:
        return None


def _chosen(benches: Sequence[BenchFilter], names: Sequence[str]) -> list[BenchFilter]:
    return [b for b in benches if not names or b.name in names]


def _machine() -> dict[str, str]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpus": str(os.cpu_count()),
        "load": " ".join(f"{x:.2f}" for x in load),
        "date": time.strftime("%Y-%m-%d"),
    }


def _one_size(
    results: Results,
    args: argparse.Namespace,
    size: int,
    settings: Settings,
    benches: Sequence[BenchFilter],
    pg_url: str | None,
) -> None:
    _say(f"{size:,} contacts: generating")
    contacts = generate(size)
    _ = contacts.rows
    gc.collect()
    gc.freeze()  # a million live dicts would otherwise make every collection slow
    engines = available(args.engines)
    if pg_url is not None and (not args.engines or PostgresOurs.name in args.engines):
        engines.append(PostgresOurs(pg_url))
    loaded: list[Engine] = []
    for engine in engines:
        try:
            seconds, _ = once(lambda engine=engine: engine.load(contacts))
        except Exception as exc:  # noqa: BLE001 - one engine failing to load must not stop a run
            results.notes.append(f"{engine.name}: not run at {size:,} ({exc}).")
            continue
        results.loads[(engine.name, size)] = seconds
        results.versions[engine.name] = engine.version()
        loaded.append(engine)
    for engine in loaded:
        _register(results, engine)
    for bench in benches:
        _say(f"{size:,} contacts: {bench.name} {bench.title}")
        fewer = dataclasses.replace(settings, repeats=min(settings.repeats, 5))
        _one_filter(results, loaded, contacts, bench, size, fewer if bench.stress else settings)
    if not args.no_cli and size == max(args.sizes) and cli_memory.available():
        _say(f"{size:,} contacts: audiencefilter eval (peak memory)")
        found = cli_memory.measure(contacts, MAIN[4].json)  # F5
        results.cli = CliMeasure(
            found.contacts, found.file_mib, found.seconds, found.peak_mib, found.ok, found.output
        )
    for engine in loaded:
        engine.close()
    gc.unfreeze()
    gc.collect()


def _register(results: Results, engine: Engine) -> None:
    if engine.name not in results.engines:
        results.engines.append(engine.name)
    if engine.slow:
        results.slow.add(engine.name)
    if engine.ours:
        results.ours.add(engine.name)


def _one_filter(
    results: Results,
    engines: Sequence[Engine],
    contacts: Contacts,
    bench: BenchFilter,
    size: int,
    settings: Settings,
) -> None:
    flt = af.parse(bench.json)
    plans: dict[str, Run] = {}
    for engine in engines:
        limit = _prefix(engine, bench, flt, size, settings.budget) if engine.slow else None
        try:
            plan = engine.plan(bench, flt, limit)
        except Exception as exc:  # noqa: BLE001 - e.g. a translation a database rejects
            results.notes.append(f"{engine.name} on {bench.name}: not run ({exc}).")
            continue
        if plan is not None:
            plans[engine.name] = plan
    timings: dict[str, list[float]] = {name: [] for name in plans}
    outcome: dict[str, object] = {}
    calls: dict[str, int] = {}
    for engine in engines:  # one untimed run each: warms up, sizes the samples, keeps the ids
        plan = plans.get(engine.name)
        if plan is None:
            continue
        try:
            seconds, outcome[engine.name] = once(plan.call, cpu=engine.family == "rows")
        except Exception as exc:  # noqa: BLE001 - a rule engine may crash on some data
            results.notes.append(f"{engine.name} on {bench.name}: failed ({exc!r}).")
            plans.pop(engine.name)
            continue
        calls[engine.name] = _calls_per_sample(engine, seconds, settings)
        if engine.slow:  # its one run is the measure
            timings[engine.name].append(seconds)
    order = list(engines)
    shuffle = random.Random(f"{bench.name}:{size}").shuffle
    for round_ in range(max(_runs(e, settings) for e in engines)):
        # A new order each round: no engine always runs first, or always right after the
        # row engines have swept a million dicts through the CPU caches.
        shuffle(order)
        for engine in order:
            plan = plans.get(engine.name)
            if plan is None or engine.slow or round_ >= _runs(engine, settings):
                continue
            number = calls[engine.name]
            call = functools.partial(_repeat, plan.call, number)
            seconds, _ = once(call, cpu=engine.family == "rows")
            timings[engine.name].append(seconds / number)
    _record(results, plans, timings, outcome, contacts, flt, bench, size)


def _record(
    results: Results,
    plans: dict[str, Run],
    timings: dict[str, list[float]],
    outcome: dict[str, object],
    contacts: Contacts,
    flt: af.Filter,
    bench: BenchFilter,
    size: int,
) -> None:
    """Each engine's median, and how its answer differs from the compiled predicate's."""
    reference = plans.get(Compiled.name)
    reference_ids = reference.ids(outcome[Compiled.name]) if reference else None
    for name, plan in plans.items():
        ids = plan.ids(outcome[name])
        measure = Measure(name, bench.name, size, median(timings[name]), len(timings[name]),
                          plan.rows, len(ids))  # fmt: skip
        if reference_ids is not None:
            expected = {i for i in reference_ids if i < plan.rows}
            different = ids ^ expected
            measure.differs = len(different)
            measure.diff_note = _explain(different, ids, contacts, flt)
        results.measures.append(measure)


def _calls_per_sample(engine: Engine, seconds: float, settings: Settings) -> int:
    """Calls per timed sample so that one sample lasts at least `min_sample` (a
    sub-millisecond polars query timed alone would measure the clock and the scheduler)."""
    if engine.slow:
        return 1
    return max(1, min(1000, math.ceil(settings.min_sample / max(seconds, 1e-7))))


def _repeat(call: Callable[[], object], number: int) -> None:
    for _ in range(number):
        call()


def _runs(engine: Engine, settings: Settings) -> int:
    """Rule engines run once; column and SQL engines' runs are cheap, so they get more."""
    if engine.slow:
        return 1
    return settings.repeats if engine.family == "rows" else settings.cheap_runs


def _prefix(engine: Engine, bench: BenchFilter, flt: af.Filter, size: int, budget: float) -> int:
    """How many contacts a slow engine can evaluate within the budget (all, if it can).

    Estimated from a run over the first 50 contacts; rounded down to two significant digits.
    """
    probe = engine.plan(bench, flt, min(size, 50))
    if probe is None:
        return size
    seconds, _ = once(probe.call, cpu=True)
    per_record = seconds / max(probe.rows, 1)
    if per_record * size <= budget:
        return size
    allowed = int(budget / per_record)
    step = 10 ** max(0, len(str(allowed)) - 2)
    return max(probe.rows, allowed // step * step)


def _explain(different: set[int], selected: set[int], contacts: Contacts, flt: af.Filter) -> str:
    """Why the records differ: extra or missing, and what they hold in the fields read."""
    if not different:
        return ""
    reasons: dict[str, int] = {}
    for record_id in different:
        record = contacts.rows[record_id]
        side = "extra" if record_id in selected else "missing"
        nulls = sorted(name for name in flt.fields if record.get(name) is None)
        if nulls:
            reason = f"{side}: {', '.join(nulls)} null"
        elif any(isinstance(record.get(n), str) and record[n] != record[n].lower()
                 for n in flt.fields):  # fmt: skip
            reason = f"{side}: capitals"
        else:
            reason = f"{side}: other"
        reasons[reason] = reasons.get(reason, 0) + 1
    return "; ".join(f"{count:,} {reason}" for reason, count in sorted(reasons.items()))


if __name__ == "__main__":
    raise SystemExit(main())
