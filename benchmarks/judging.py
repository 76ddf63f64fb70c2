"""A thousand stored filters judged on one contact row: each compiled predicate in turn,
against one `FilterSet`.

    python -m benchmarks.judging [--filters N] [--rows N]

The filters are those of `benchmarks.service_membership --shared` (ten conditions each, drawn
from a pool of about fifty); the rows are that benchmark's contacts (`benchmarks/data.py`:
names, company, country, city, points, referrals, consent flags, `data`, `createdAt`). Each
row is judged both ways in alternation, timed in this thread's CPU time; the medians and the
10th and 90th percentiles over the rows are printed. A predicate stops at the first FALSE
condition of its AND, so the time depends on the row: the spread is part of the figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence

import audiencefilter as af

from .service_membership import _contacts, shared_filters


def measure(filters: int, rows: int) -> tuple[list[float], list[float]]:
    """Milliseconds of CPU per row: the `filters` predicates in turn, and one `FilterSet`."""
    parsed = [af.parse(where) for where in shared_filters(filters)]
    together = af.FilterSet(parsed)
    predicates = [flt.predicate for flt in parsed]
    contacts = list(_contacts("list", rows))
    for row in contacts[:5]:  # warm-up
        [predicate(row) for predicate in predicates]
        list(together.matching(row))
    each: list[float] = []
    joined: list[float] = []
    for row in contacts:
        start = time.thread_time()
        [predicate(row) for predicate in predicates]
        each.append((time.thread_time() - start) * 1000)
        start = time.thread_time()
        list(together.matching(row))
        joined.append((time.thread_time() - start) * 1000)
    return each, joined


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--filters", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args(argv)
    each, joined = measure(args.filters, args.rows)
    print(f"{args.filters} filters, {args.rows} rows, load average {os.getloadavg()[0]:.1f}")
    for label, times in (("each predicate", each), ("one FilterSet", joined)):
        deciles = statistics.quantiles(times, n=10)
        print(
            f"  {label:<15} median {statistics.median(times):.3f} ms"
            f" (10th-90th percentile {deciles[0]:.3f}-{deciles[-1]:.3f} ms)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
