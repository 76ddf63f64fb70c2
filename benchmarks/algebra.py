"""The audience algebra on the `FilterSet` workload: the share of questions decided and the time
per call.

    python -m benchmarks.algebra [--filters N] [--pairs P] [--seed S] [--z3]

Pairs are drawn the way accounts build audiences (`filterset_workload.py`): from the filters
that share a common piece (a reused sub-tree), two filters holding the same piece, and a filter
with a piece it holds. Each pair is asked `implies` both ways and `overlaps` (the three calls
of `af.compare`); a call is decided when `holds` is not None. Reported: the share decided per
question and for the relation (`compare` not `unknown`), and p50/p99/max time per call, on the
first call (which compiles each condition for the in-memory back-end once, kept per schema)
and asked again (what a service pays for filters it holds).

`--z3` asks the same calls of the SMT solver z3 too (`pip install audiencefilter[z3]`,
`benchmarks/algebra_z3.py`), for the fragment it encodes, side by side: decided share, p50/p99
per call, and how often the two answers differ where both decided (never, if both are right).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

import audiencefilter as af

from .filterset_scale import quantile
from .filterset_workload import SCHEMA, Workload


def _pieces_of(where: Any, known: dict[str, int]) -> set[int]:
    """The indexes of the common pieces inside `where`."""
    found: set[int] = set()
    stack = [where]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            index = known.get(json.dumps(node, sort_keys=True, default=str))
            if index is not None:
                found.add(index)
            stack.extend(v for k, v in node.items() if k in ("AND", "OR", "NOT"))
        elif isinstance(node, list):
            stack.extend(node)
    return found


def pairs(filters: int, count: int, seed: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """`count` pairs: two filters sharing a piece, or a filter and a piece it holds."""
    workload = Workload(seed)
    wheres = workload.filters(filters)
    known = {json.dumps(p, sort_keys=True, default=str): i for i, p in enumerate(workload.pieces)}
    holders: dict[int, list[int]] = {}
    for position, where in enumerate(wheres):
        for piece in _pieces_of(where, known):
            holders.setdefault(piece, []).append(position)
    shared = sorted(holders)
    chooser = random.Random(seed)
    found: list[tuple[dict[str, Any], dict[str, Any]]] = []
    while len(found) < count and shared:
        piece = chooser.choice(shared)
        group = holders[piece]
        if len(group) > 1 and chooser.random() < 0.5:
            first, second = chooser.sample(group, 2)
            found.append((wheres[first], wheres[second]))
        else:
            found.append((wheres[chooser.choice(group)], workload.pieces[piece]))
    return found


def _timed(a: af.Filter, b: af.Filter, times: list[float], cpu: list[float]) -> list[bool | None]:
    """`a implies b`, `b implies a`, `a overlaps b`, each call's wall-clock time appended to
    `times` and its CPU time (the thread's) to `cpu`: on a shared machine the wall clock
    counts the waits for a core, the CPU time only the work."""
    answers = []
    for first, second, question in ((a, b, "implies"), (b, a, "implies"), (a, b, "overlaps")):
        start, start_cpu = time.perf_counter(), time.thread_time()
        answers.append(getattr(first, question)(second).holds)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        times.append((time.perf_counter() - start) * 1000)
    return answers


def measure(drawn: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    times: list[float] = []
    warm: list[float] = []
    cpu: list[float] = []
    warm_cpu: list[float] = []
    decided = {"implies": 0, "overlaps": 0, "relation": 0}
    relations: dict[str, int] = {}
    for left, right in drawn:
        a, b = af.parse(left, SCHEMA), af.parse(right, SCHEMA)
        answers = _timed(a, b, times, cpu)
        _timed(a, b, warm, warm_cpu)
        decided["implies"] += (answers[0] is not None) + (answers[1] is not None)
        decided["overlaps"] += answers[2] is not None
        relation = af.compare(a, b).relation
        relations[relation] = relations.get(relation, 0) + 1
        decided["relation"] += relation != "unknown"
    found = {"pairs": len(drawn), "times": times, "warm": warm, "decided": decided}
    return {**found, "cpu": cpu, "warm_cpu": warm_cpu, "relations": relations}


def _line(title: str, times: list[float]) -> str:
    return (
        f"{title}: p50 {statistics.median(times):.2f} ms, p99 {quantile(times, 0.99):.2f} ms, "
        f"max {max(times):.1f} ms"
    )


def report(found: dict[str, Any]) -> str:
    n, times, decided = found["pairs"], found["times"], found["decided"]
    calls = len(times)
    share = (decided["implies"] + decided["overlaps"]) / calls
    return "\n".join(
        [
            f"pairs: {n}, calls: {calls}",
            f"decided: {share:.1%} of calls (implies {decided['implies'] / (2 * n):.1%}, "
            f"overlaps {decided['overlaps'] / n:.1%}); relation known for "
            f"{decided['relation'] / n:.1%} of pairs",
            _line("time per call, first (conditions compiled)", times),
            _line("  CPU time", found["cpu"]),
            _line("time per call, asked again", found["warm"]),
            _line("  CPU time", found["warm_cpu"]),
            f"relations: {json.dumps(found['relations'], sort_keys=True)}",
        ]
    )


def measure_z3(drawn: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """Each call of `measure` through z3 and through the own procedure (asked again, so its
    time is after the first call's compiling: z3 is given every call cold)."""
    from . import algebra_z3

    calls: dict[str, list[float]] = {"z3": [], "z3_cpu": [], "own_cpu": []}
    decided = {"z3": 0, "own": 0, "both": 0, "differ": 0, "encoded": 0}
    for left, right in drawn:
        a, b = af.parse(left, SCHEMA), af.parse(right, SCHEMA)
        for first, second, question in ((a, b, "implies"), (b, a, "implies"), (a, b, "overlaps")):
            start, start_cpu = time.perf_counter(), time.thread_time()
            solved = algebra_z3.ask(first, second, question)
            calls["z3_cpu"].append((time.thread_time() - start_cpu) * 1000)
            calls["z3"].append((time.perf_counter() - start) * 1000)
            start_cpu = time.thread_time()
            own = getattr(first, question)(second).holds
            calls["own_cpu"].append((time.thread_time() - start_cpu) * 1000)
            decided["encoded"] += _encoded(first, second)
            decided["z3"] += solved is not None
            decided["own"] += own is not None
            decided["both"] += solved is not None and own is not None
            decided["differ"] += solved is not None and own is not None and solved != own
    return {"calls": calls, "decided": decided}


def _encoded(a: af.Filter, b: af.Filter) -> bool:
    from . import algebra_z3

    encoder = algebra_z3.Encoder(a.schema)
    try:
        encoder.node(a.lowered_at())
        encoder.node(b.lowered_at())
    except algebra_z3.Unsupported:
        return False
    return True


def report_z3(found: dict[str, Any]) -> str:
    calls, decided = found["calls"], found["decided"]
    n = len(calls["z3"])
    return "\n".join(
        [
            f"z3: calls {n}, encoded {decided['encoded'] / n:.1%}, decided {decided['z3'] / n:.1%}"
            f" (own procedure: {decided['own'] / n:.1%}); both decided {decided['both']},"
            f" answers differ {decided['differ']}",
            _line("z3 time per call (encoding, solving, checking the model)", calls["z3"]),
            _line("  CPU time", calls["z3_cpu"]),
            _line("own procedure, CPU time (asked after z3)", calls["own_cpu"]),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filters", type=int, default=10_000)
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--z3", action="store_true", help="the same calls through z3 too")
    args = parser.parse_args(argv)
    drawn = pairs(args.filters, args.pairs, args.seed)
    print(report(measure(drawn)), flush=True)
    if args.z3:
        print(report_z3(measure_z3(drawn)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
