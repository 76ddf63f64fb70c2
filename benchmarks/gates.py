"""`python -m benchmarks.gates`: the speed promises of the library, as ratios in one run.

Three promises hold whatever the machine, because each is a ratio to something a user would
write or call instead, measured in the same process a moment apart:

- the compiled predicate (`af.compile`) runs at least 0.95x as fast as the hand-written lambda
  of each filter F1-F5 over the same generated contacts;
- `parse` of F5's JSON text costs at most 4x `json.loads` of the same text (the library decodes
  the JSON and validates it, so the decode alone is the floor);
- `to_sql("postgresql")` of F5's parsed filter costs at most 15x `json.loads` of its text;
- `Filter.matches(record, now=t)` in a loop costs at most 1.1x the compiled predicate on a
  clock, on an anniversary in a zone (the call users write in a loop; it keeps its resolvers
  and the instants of the last `now`).

Then, unless `--filters-only`, the gates of each construct family (`benchmarks.gates_constructs`:
lists, aggregates, behaviour windows, anniversaries, contains, long IN; in memory, polars and
SQL), ours against hand-written code, with the machine's load average.

The tables are printed as markdown; `make bench` runs this after the engine comparison. Timings
are CPU time of this thread (see `benchmarks.timing`), so other processes inflate them less;
the ratios, not the absolute figures, are what to compare across machines.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import audiencefilter as af

from .data import generate
from .filters import MAIN
from .timing import median, per_call

GATES = {"compile": 0.95, "parse": 4.0, "to_sql": 15.0, "matches": 1.1}
ANNIVERSARY = {"createdAt": {"anniversary": {"this": "week", "timeZone": "Europe/Paris"}}}


@dataclass(frozen=True)
class Row:
    """One comparison: ours and theirs in seconds, the ratio, and the bound it must meet."""

    what: str
    ours: float
    theirs: float
    ratio: float
    bound: str
    holds: bool


def measure(size: int, *, sample_seconds: float = 0.05, rounds: int = 3) -> list[Row]:
    """Every gate on `size` generated contacts; `sample_seconds` and `rounds` trade time for
    steadier medians."""

    def throughput(predicate: Callable[[Any], bool]) -> float:
        def run() -> int:
            return sum(1 for row in rows if predicate(row))

        return per_call(run, samples=5, sample_seconds=sample_seconds)

    rows = generate(size).rows
    out: list[Row] = []
    for bench in MAIN[:5]:
        if bench.lambda_ is None:
            continue
        flt = af.parse(bench.json)
        predicate = af.compile(flt)
        # Interleave the two, three times each, so a slow moment hits both.
        ours = median([throughput(predicate) for _ in range(rounds)])
        theirs = median([throughput(bench.lambda_) for _ in range(rounds)])
        speed = theirs / ours  # > 1 when the compiled predicate is faster
        bound = GATES["compile"]
        out.append(
            Row(
                f"compile {bench.name} vs lambda",
                ours,
                theirs,
                speed,
                f">= {bound}x",
                speed >= bound,
            )
        )
    f5 = next(b for b in MAIN if b.name == "F5")
    text = f5.json
    loads = per_call(lambda: json.loads(text), samples=9, sample_seconds=sample_seconds)
    parse = per_call(lambda: af.parse(text), samples=9, sample_seconds=sample_seconds)
    ratio = parse / loads
    out.append(Row("parse F5 vs json.loads", parse, loads, ratio, "<= 4x", ratio <= GATES["parse"]))
    flt = af.parse(text)
    to_sql = per_call(lambda: flt.to_sql("postgresql"), samples=9, sample_seconds=sample_seconds)
    ratio = to_sql / loads
    out.append(
        Row("to_sql F5 vs json.loads", to_sql, loads, ratio, "<= 15x", ratio <= GATES["to_sql"])
    )
    out.append(_matches_gate(rows, throughput, rounds))
    return out


def _matches_gate(
    rows: list[Any], throughput: Callable[[Callable[[Any], bool]], float], rounds: int
) -> Row:
    """`matches(row, now=t)` against `af.compile(flt, clock=lambda: t)` over the same rows."""
    flt = af.parse(ANNIVERSARY)
    now = datetime(2026, 11, 20, 12, tzinfo=UTC)
    predicate = af.compile(flt, clock=lambda: now)
    matches = [throughput(lambda row: flt.matches(row, now=now)) for _ in range(rounds)]
    compiled = [throughput(predicate) for _ in range(rounds)]
    ratio = median(matches) / median(compiled)
    bound = GATES["matches"]
    return Row(
        "matches(now=) vs compiled, anniversary",
        median(matches),
        median(compiled),
        ratio,
        f"<= {bound}x",
        ratio <= bound,
    )


def markdown(rows: list[Row]) -> str:
    lines = [
        "| gate | ours | theirs | ratio | bound | holds |",
        "|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.what} | {_seconds(row.ours)} | {_seconds(row.theirs)} | "
            f"{row.ratio:.2f}x | {row.bound} | {'yes' if row.holds else 'NO'} |"
        )
    return "\n".join(lines)


def _seconds(value: float) -> str:
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.2f} µs"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=100_000, help="contacts for compile gates")
    parser.add_argument("--filters-only", action="store_true", help="leave out the constructs")
    args = parser.parse_args(argv)
    print(markdown(measure(args.size)))
    if not args.filters_only:
        from . import gates_constructs

        print()
        gates_constructs.main(["--size", str(args.size)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
