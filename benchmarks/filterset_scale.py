"""A `FilterSet` of 100,000 stored filters: a contact change answered, and what it costs.

    python -m benchmarks.filterset_scale [--filters N] [--changes C] [--quick]

The workload is `filterset_workload.py` (seeded: the same filters and changes every run).
Measured, in one process:

- build: parsing and lowering the filters, building the set, and laying out its graph for
  tracking (`FilterSet.track`'s first call), in seconds;
- memory: bytes per filter (tracemalloc, in a pass of its own: tracing slows the others),
  for the filters themselves and for the set with its graph;
- sharing: distinct conditions and distinct nodes of logic against their counts filter by
  filter (`FilterSet.sharing`);
- a contact changing one attribute at a time, C changes: each answered by a tracked record
  (`Tracked.update`: the filters entered and left), p50, p99 and max; the same changes judged
  whole (`FilterSet.matching`) on a sample, and the loop a user would write without a set
  (each filter's `matches`) on a sample of filters, scaled to N, as ratios.

Every answer of the tracked record is checked against `FilterSet.matching` on the sample, and
the sample's `matching` against the naive loop on the sampled filters. A measurement script:
the figures go to docs/performance-history-membership.md with the machine and its load.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass, field

import audiencefilter as af
from audiencefilter.backends.filter_set.tracked import Tracked

from .filterset_workload import Workload, parse_all


@dataclass
class Figures:
    filters: int
    parse_seconds: float = 0.0
    set_seconds: float = 0.0
    layout_seconds: float = 0.0
    track_seconds: float = 0.0
    sharing: tuple[int, int, int, int] = (0, 0, 0, 0)
    filter_bytes: float = 0.0
    set_bytes: float = 0.0
    tracked_bytes: float = 0.0
    changes_ms: list[float] = field(default_factory=list)
    changes_cpu_ms: list[float] = field(default_factory=list)  # the thread's CPU time
    entered_left: list[int] = field(default_factory=list)
    whole_ms: list[float] = field(default_factory=list)
    naive_ms: list[float] = field(default_factory=list)  # scaled to all the filters


def measure(filters: int, changes: int, sample: int, naive_filters: int) -> Figures:
    """The figures for `filters` stored filters and `changes` changes of one contact."""
    workload = Workload()
    wheres = workload.filters(filters)
    contact = workload.contact()
    states = list(workload.changes(contact, changes))
    found = Figures(filters)
    start = time.perf_counter()
    parsed = parse_all(wheres)
    found.parse_seconds = time.perf_counter() - start
    start = time.perf_counter()
    together = af.FilterSet(parsed)
    found.set_seconds = time.perf_counter() - start
    start = time.perf_counter()
    found.sharing = together.sharing()  # lays the graph out
    found.layout_seconds = time.perf_counter() - start
    start = time.perf_counter()
    tracked = together.track(contact)
    found.track_seconds = time.perf_counter() - start
    _changes(found, tracked, states)
    _whole(found, together, tracked, parsed, contact, states, sample, naive_filters)
    del tracked, together
    _memory(found, wheres, contact)
    return found


def update_cpu_ms(filters: int, changes: int) -> list[float]:
    """The thread's CPU ms of each of `changes` `Tracked.update` calls at `filters` filters: the
    set built and tracked as `measure` does, the same workload and changes, without the
    samples judged whole and the memory pass, which the claim on a change's cost does not read
    (a run of 100,000 filters spends most of its time on them)."""
    workload = Workload()
    wheres = workload.filters(filters)
    contact = workload.contact()
    states = list(workload.changes(contact, changes))
    found = Figures(filters)
    together = af.FilterSet(parse_all(wheres))
    together.sharing()  # lays the graph out, as `measure` does before tracking
    _changes(found, together.track(contact), states)
    return found.changes_cpu_ms


def _changes(found: Figures, tracked: Tracked, states: list[dict]) -> None:
    gc.collect()
    gc.disable()
    try:
        for state in states:
            start, cpu = time.perf_counter_ns(), time.thread_time_ns()
            entered, left = tracked.update(state)
            found.changes_cpu_ms.append((time.thread_time_ns() - cpu) / 1e6)
            found.changes_ms.append((time.perf_counter_ns() - start) / 1e6)
            found.entered_left.append(len(entered) + len(left))
    finally:
        gc.enable()


def _whole(
    found: Figures,
    together: af.FilterSet,
    tracked: object,
    parsed: Sequence[af.Filter],
    contact: dict,
    states: list[dict],
    sample: int,
    naive_filters: int,
) -> None:
    """The sample judged whole by the set and by the naive loop; the tracked answers checked."""
    del tracked
    again = together.track(contact)
    step = max(1, len(states) // sample)
    picked = set(range(0, len(states), step))
    subset = parsed[:naive_filters]
    scale = len(parsed) / max(1, len(subset))
    for index, state in enumerate(states):
        again.update(state)
        if index not in picked:
            continue
        start = time.perf_counter_ns()
        whole = together.matching(state)
        found.whole_ms.append((time.perf_counter_ns() - start) / 1e6)
        if whole != again.matching:
            raise SystemExit(f"change {index}: the tracked answer differs from matching")
        start = time.perf_counter_ns()
        naive = [i for i, flt in enumerate(subset) if flt.matches(state)]
        found.naive_ms.append(scale * (time.perf_counter_ns() - start) / 1e6)
        if naive != [i for i in whole if i < len(subset)]:
            raise SystemExit(f"change {index}: the set differs from each filter's matches")


def _memory(found: Figures, wheres: list[dict], contact: dict) -> None:
    """Bytes per filter: the parsed filters, then the set with its graph, then one tracker."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    parsed = parse_all(wheres)
    after_filters = tracemalloc.get_traced_memory()[0]
    together = af.FilterSet(parsed)
    together.sharing()
    after_set = tracemalloc.get_traced_memory()[0]
    tracked = together.track(contact)
    after_tracked = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    count = max(1, len(parsed))
    found.filter_bytes = (after_filters - base) / count
    found.set_bytes = (after_set - after_filters) / count
    found.tracked_bytes = (after_tracked - after_set) / count
    del tracked


def quantile(values: list[float], q: float) -> float:
    """The value below which a share `q` of `values` lies, as the tables print it."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _cpu(found: Figures, q: float) -> str:
    return f"{quantile(found.changes_cpu_ms, q):.3f}"


def report(found: Figures) -> str:
    conditions, conditions_counted, nodes, nodes_counted = found.sharing
    changes = found.changes_ms
    p50, p99 = statistics.median(changes), quantile(changes, 0.99)
    whole, naive = statistics.median(found.whole_ms), statistics.median(found.naive_ms)
    moved = statistics.mean(found.entered_left)
    lines = [
        f"{found.filters:,} filters; {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "",
        "| build | seconds |",
        "|---|---:|",
        f"| parse and lower the filters | {found.parse_seconds:.1f} |",
        f"| `FilterSet(filters)` | {found.set_seconds:.1f} |",
        f"| its graph (first `sharing()` or `track`) | {found.layout_seconds:.1f} |",
        f"| `track(contact)`: one record judged whole | {found.track_seconds:.2f} |",
        "",
        "| memory per filter | bytes |",
        "|---|---:|",
        f"| the parsed, lowered filter | {found.filter_bytes:,.0f} |",
        f"| the set and its graph | {found.set_bytes:,.0f} |",
        f"| one tracked record (its truths) | {found.tracked_bytes:,.0f} |",
        "",
        "| stored once | distinct | counted filter by filter |",
        "|---|---:|---:|",
        f"| conditions | {conditions:,} | {conditions_counted:,} |",
        f"| AND/OR/NOT nodes | {nodes:,} | {nodes_counted:,} |",
        "",
        f"| one contact change ({len(changes):,} changes, {moved:.1f} filters entered or left "
        "on average) | p50 | p99 | max |",
        "|---|---:|---:|---:|",
        f"| `Tracked.update` | {p50:.3f} ms | {p99:.3f} ms | {max(changes):.3f} ms |",
        f"| `Tracked.update`, CPU time of the thread | {_cpu(found, 0.5)} ms "
        f"| {_cpu(found, 0.99)} ms | {max(found.changes_cpu_ms):.3f} ms |",
        f"| `FilterSet.matching`, the record judged whole ({len(found.whole_ms)} changes) "
        f"| {whole:.1f} ms | {quantile(found.whole_ms, 0.99):.1f} ms "
        f"| {max(found.whole_ms):.1f} ms |",
        f"| each filter's `matches` in a loop (scaled from a sample) | {naive:.0f} ms "
        f"| {quantile(found.naive_ms, 0.99):.0f} ms | {max(found.naive_ms):.0f} ms |",
        "",
        f"The loop of `matches` takes {naive / p50:,.0f} times `Tracked.update` (p50) and "
        f"{naive / whole:,.1f} times `FilterSet.matching`.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filters", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=2_000)
    parser.add_argument("--sample", type=int, default=100, help="changes judged whole")
    parser.add_argument("--naive", type=int, default=5_000, help="filters of the naive loop")
    parser.add_argument("--quick", action="store_true", help="5,000 filters, 300 changes")
    args = parser.parse_args(argv)
    if args.quick:
        args.filters, args.changes, args.sample, args.naive = 5_000, 300, 30, 1_000
    print(report(measure(args.filters, args.changes, args.sample, args.naive)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
