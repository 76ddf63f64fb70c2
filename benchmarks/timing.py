"""Timing helpers: medians of repeated runs, and per-call costs measured like `timeit`.

Medians rather than minimums: the report states what a caller should expect. Runs are
interleaved engine by engine so a slower moment hits every engine alike, and ratios are only
taken within one run. What runs on this thread alone (the row engines, and the per-call
costs) is timed in the thread's CPU time, which other processes on a shared machine do not
inflate by taking the CPU away, and nor do polars' and DuckDB's worker threads, which keep
spinning for a while after a query (process CPU time counted them: a Python run right after a
polars query looked 10-20% slower). The column and SQL engines (polars and DuckDB use threads,
PostgreSQL is another process, SQLite is timed like the rest of its family) are timed by the
wall clock, which on a busy machine can only make them look slower.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def once(call: Callable[[], Any], *, cpu: bool = False) -> tuple[float, Any]:
    """Seconds one call takes (wall clock, or this thread's CPU time), and what it returned."""
    clock = time.thread_time if cpu else time.perf_counter
    start = clock()
    result = call()
    return clock() - start, result


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def per_call(call: Callable[[], Any], *, samples: int = 7, sample_seconds: float = 0.02) -> float:
    """Median CPU seconds per call over `samples` samples of calls lasting `sample_seconds`."""
    number = 1
    while True:
        elapsed = _repeat(call, number)
        if elapsed >= sample_seconds or number >= 1 << 20:
            break
        number *= 2 if elapsed * 4 >= sample_seconds else 8
    times = [elapsed / number]
    times += [_repeat(call, number) / number for _ in range(samples - 1)]
    return median(times)


def _repeat(call: Callable[[], Any], number: int) -> float:
    start = time.thread_time()
    for _ in range(number):
        call()
    return time.thread_time() - start
