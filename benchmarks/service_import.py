"""Bulk import into a list with 100 smart audiences, against a list with none.

    python -m benchmarks.service_import [--contacts N] [--audiences N] [--runs N] [--postgres]

The two lists of `benchmarks/service_membership.py` (N synthetic contacts each, one with
`--audiences` smart audiences of every kind of filter). Each run imports 1,000 new contacts
(`POST /v4/contacts/import`, JSON, events on) into each list, in alternation, through the whole
application in process; the median wall-clock time of each and their ratio (target: at most
2x). The list with audiences also writes a membership row and an `audience.entered` event for
every audience each new contact enters. A measurement script, not a test: nothing asserts a
timing (tests/test_benchmarks_import.py runs it tiny, for its shape only).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from .million import import_rows
from .service_membership import Bench, run_engines

TARGET = 2.0
ROWS = 1000


def _import(bench: Bench, list_id: str, rows: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    response = bench.call("POST", f"/contacts/import?listId={list_id}", json=rows)
    seconds = time.perf_counter() - started
    assert response.status_code == 200, response.text[:300]
    assert response.json()["data"]["created"] == len(rows)
    return seconds


def measure(bench: Bench, runs: int) -> tuple[float, float, int]:
    """(median ms with audiences, median ms without, events of the last import with them)."""
    rows = import_rows(ROWS * 2 * (runs + 1))
    batches = iter([rows[start : start + ROWS] for start in range(0, len(rows), ROWS)])
    lists = (bench.with_audiences, bench.without)
    for list_id in lists:
        _import(bench, list_id, next(batches))  # warm-up
    times: tuple[list[float], list[float]] = ([], [])
    for run in range(runs):
        for index in (0, 1) if run % 2 == 0 else (1, 0):
            times[index].append(_import(bench, lists[index], next(batches)) * 1000)
    path = f"/events?listId={bench.with_audiences}&limit=1"
    head = bench.call("GET", path).json()["data"]
    return statistics.median(times[0]), statistics.median(times[1]), len(head["events"])


def _run(name: str, url: str, contacts: int, audiences: int, runs: int) -> None:
    print(f"\n{name}: {contacts:,} contacts per list, {audiences} smart audiences", flush=True)
    bench = Bench(url, contacts, audiences)
    try:
        with_ms, without_ms, _ = measure(bench, runs)
        ratio = with_ms / without_ms
        print(
            f"  import of {ROWS:,} contacts   {with_ms:8.1f}ms {without_ms:8.1f}ms  "
            f"ratio {ratio:.2f}x (≤{TARGET}x)"
        )
    finally:
        bench.close()


def main(argv: Sequence[str] | None = None) -> int:
    description = __doc__.splitlines()[0] if __doc__ else None
    return run_engines(_run, argv, description, audiences=100)


if __name__ == "__main__":
    raise SystemExit(main())
