"""`python -m benchmarks.gaps`: the known gaps to hand code, each as ours ÷ hand (above 1: slower).

docs/performance-history.md, *Known gaps to hand code*, lists where the library is slower than
what one would write by hand; this measures each of them in one process, ours and the
hand-written code taking turns round after round (so a busy moment on a shared machine hits
both), on the thread's CPU clock wherever the work runs on this thread (the row engines and
SQLite), on the process's CPU time for polars, held to one thread (`POLARS_MAX_THREADS=1`,
unless set):

- a JSON data-path equality in the compiled predicate, against `r.get("data", {}).get(...)`;
- `matches(record)` on the field filters F1-F5, against their hand-written lambdas;
- `compile(clock=)` and `select(now=)` on an anniversary, a count in a window and a sum,
  against the loops of `benchmarks.gates_constructs`;
- polars `sum` of related rows, against `list.eval(...).list.sum()`;
- SQLite `hasSome` and case-insensitive `contains`, against `EXISTS (... json_each ...)` and
  `LIKE`.

Each cell is the median over `--rounds` rounds of one pass over the data. The load average is
printed first: the figures are only as steady as the machine was.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import audiencefilter as af

from . import gates_constructs, relations
from .data import generate
from .filters import MAIN
from .timing import median

PLANS = ("free", "pro", "team", "enterprise")


@dataclass(frozen=True)
class Gap:
    """One gap: our time and the hand-written time, in seconds (medians)."""

    what: str
    ours: float
    hand: float

    @property
    def ratio(self) -> float:
        return self.ours / self.hand


def _pair(
    what: str,
    ours: Callable[[], Any],
    hand: Callable[[], Any],
    rounds: int,
    *,
    clock: Callable[[], float] = time.thread_time,
) -> Gap:
    """Medians of `rounds` alternating timings on `clock`; the two must give the same answer."""
    mine, theirs = [], []
    for turn in range(rounds):
        first, second = (ours, hand) if turn % 2 == 0 else (hand, ours)
        a, got_a = _once(first, clock)
        b, got_b = _once(second, clock)
        if got_a != got_b:
            raise AssertionError(f"{what}: ours and hand-written differ")
        mine.append(a if first is ours else b)
        theirs.append(b if first is ours else a)
    return Gap(what, median(mine), median(theirs))


def _once(call: Callable[[], Any], clock: Callable[[], float]) -> tuple[float, Any]:
    start = clock()
    result = call()
    return clock() - start, result


def _count(predicate: Callable[[Any], bool], rows: Sequence[Any]) -> Callable[[], int]:
    return lambda: sum(1 for row in rows if predicate(row))


def _with_data(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each contact with a `data` object: a plan (one in ten missing), a seat count."""
    out = []
    for row in rows:
        n = row["id"]
        data: dict[str, Any] = {"seats": n % 50}
        if n % 10:
            data["plan"] = PLANS[n % len(PLANS)]
        out.append({**row, "data": None if n % 17 == 0 else data})
    return out


def memory_gaps(size: int, rounds: int) -> list[Gap]:
    rows = _with_data(generate(size).rows)
    json_eq = af.compile(af.parse({"data": {"path": ["plan"], "equals": "pro"}}))
    hand = lambda r: (r.get("data") or {}).get("plan") == "pro"  # noqa: E731
    gaps = [_pair("memory: data.plan equals", _count(json_eq, rows), _count(hand, rows), rounds)]
    for bench in MAIN[:5]:
        if bench.lambda_ is None:
            continue
        flt = af.parse(bench.json)
        gaps.append(
            _pair(
                f"memory: matches() {bench.name}",
                _count(flt.matches, rows),
                _count(bench.lambda_, rows),
                rounds,
            )
        )
    return gaps + _clock_gaps(rows, size, rounds)


def _clock_gaps(rows: list[dict[str, Any]], size: int, rounds: int) -> list[Gap]:
    """Relative filters on a clock, and with `select(now=)`, against hand loops at `NOW`."""
    now = gates_constructs.NOW
    days = gates_constructs._week_month_days()

    def anniversary(r: dict[str, Any]) -> bool:
        c = r.get("createdAt")
        if c is None:
            return False
        local = c.astimezone(gates_constructs.PARIS)
        return (local.month, local.day) in days

    cases: list[tuple[str, Any, Callable[[Any], bool], list[dict[str, Any]]]] = [
        ("anniversary", gates_constructs.ANNIVERSARY, anniversary, rows)
    ]
    data = relations.generate(max(size // 5, 100), size * 2)
    hands = gates_constructs._relation_hands()
    cases.append(("count in 30 days", relations.FILTERS["share3"], hands["share3"], data.contacts))
    cases.append(("sum", gates_constructs._SUM3, hands["sum40"], data.contacts))
    gaps = []
    for title, where, hand, records in cases:
        flt = af.parse(where)
        clocked = af.compile(flt, clock=lambda: now)
        gaps.append(
            _pair(
                f"memory: compile(clock=) {title}",
                _count(clocked, records),
                _count(hand, records),
                rounds,
            )
        )
        selected = lambda f=flt, rs=records: sum(1 for _ in f.select(rs, now=now))  # noqa: E731
        gaps.append(_pair(f"memory: select(now=) {title}", selected, _count(hand, records), rounds))
    return gaps


def polars_gaps(size: int, rounds: int) -> list[Gap]:
    import polars as pl

    from audiencefilter.backends.frames.polars import frame_for

    data = relations.generate(max(size // 5, 100), size * 2)
    frame = frame_for(data.contacts, af.CONTACT).select("actions")
    hand = pl.col("actions").list.eval(pl.element().struct.field("increase")).list.sum() >= 40
    ours = af.parse(gates_constructs._SUM3).to_polars(dict(frame.schema))
    run = lambda e: lambda: frame.filter(e).height  # noqa: E731
    gap = _pair(
        "polars: sum(increase) >= 40", run(ours), run(hand), rounds, clock=time.process_time
    )
    return [gap]


def sqlite_gaps(size: int, rounds: int) -> list[Gap]:
    rows = gates_constructs._with_tags(generate(size).rows)
    db = sqlite3.connect(":memory:")
    af.register_sqlite_functions(db)
    db.execute('CREATE TABLE contacts (id INTEGER, "email" TEXT, "tags" TEXT)')
    db.executemany(
        "INSERT INTO contacts VALUES (?, ?, ?)",
        [(r["id"], r["email"], None if r["tags"] is None else json.dumps(r["tags"])) for r in rows],
    )
    schema = gates_constructs.SCHEMA
    wanted = gates_constructs.WANTED
    has_some = af.parse({"tags": {"hasSome": wanted}}, schema).to_sql("sqlite")
    hand_some = (
        'EXISTS (SELECT 1 FROM json_each("tags") WHERE value IN '
        f"({', '.join(repr(w) for w in wanted)}))"
    )
    contains = af.parse({"email": {"contains": "gmail"}}).to_sql("sqlite")

    def run(condition: str) -> Callable[[], Any]:
        sql = f"SELECT count(*) FROM contacts WHERE {condition}"
        return lambda: db.execute(sql).fetchall()

    gaps = [
        _pair("SQLite: hasSome of 3 tags", run(has_some), run(hand_some), rounds),
        _pair(
            "SQLite: contains (any case)",
            run(contains),
            run("\"email\" LIKE '%gmail%'"),
            rounds,
        ),
    ]
    db.close()
    return gaps


def measure(size: int, rounds: int) -> list[Gap]:
    return memory_gaps(size, rounds) + polars_gaps(size, rounds) + sqlite_gaps(size, rounds)


def markdown(gaps: list[Gap]) -> str:
    lines = ["| gap | ours | hand-written | ours ÷ hand |", "|---|---:|---:|---:|"]
    for gap in gaps:
        lines.append(
            f"| {gap.what} | {gap.ours * 1e3:.2f} ms | {gap.hand * 1e3:.2f} ms | {gap.ratio:.2f}x |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", choices=("memory", "polars", "sqlite"), default=None)
    args = parser.parse_args(argv)
    # One polars thread, timed in the process's CPU time: on a shared machine the wall clock
    # of polars' thread pool moved by 2x and more between rounds.
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, load average {load}")
    parts = {"memory": memory_gaps, "polars": polars_gaps, "sqlite": sqlite_gaps}
    if args.only:
        print(markdown(parts[args.only](args.size, args.rounds)))
    else:
        print(markdown(measure(args.size, args.rounds)))
    print(f"load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
