"""The reference service's CSV and JSON Lines export of a large audience, on SQLite and on
PostgreSQL.

    python -m benchmarks.service_export [--contacts N] [--runs N] [--no-postgres]

The list and audiences of `benchmarks/service_audiences.py` (N synthetic contacts, 100,000 by
default; its large smart audience selects about two thirds of them, some 67,000 members).
Then, through the whole HTTP application in process, the median wall-clock seconds of
`GET /audiences/{id}/export?format=csv` and `?format=jsonl`, the body read to its end.
This is a measurement script, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .service_audiences import Bench, _median_ms, _stop_on_sigterm, on_each_database


def measure(bench: Bench, runs: int) -> list[tuple[str, float, str]]:
    """(what, median seconds, what it returned) for each format."""
    results = []
    for fmt in ("csv", "jsonl"):

        def export(fmt: str = fmt) -> bytes:
            response = bench.call("GET", f"/audiences/{bench.large}/export?format={fmt}")
            assert response.status_code == 200, response.text
            return bytes(response.content)

        ms, body = _median_ms(export, runs)
        lines = body.count(b"\n") - (1 if fmt == "csv" else 0)
        results.append((f"export {fmt}", ms / 1000, f"{lines:,} members, {len(body) / 1e6:.1f} MB"))
    return results


def _run(name: str, url: str, contacts: int, runs: int) -> None:
    print(f"\n{name}: loading {contacts:,} contacts...", flush=True)
    bench = Bench(url, contacts)
    try:
        for label, seconds, described in measure(bench, runs):
            print(f"  {label:<14} {seconds:7.2f} s   ({described})", flush=True)
    finally:
        bench.close()


def main(argv: Sequence[str] | None = None) -> int:
    _stop_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--contacts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per format (median)")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args(argv)
    on_each_database(_run, args.contacts, args.runs, postgres=not args.no_postgres)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
