"""The audience analyses over a 100,000-contact list, on SQLite (and PostgreSQL when asked).

    python -m benchmarks.service_analysis [--contacts N] [--audiences N] [--runs N] [--postgres]

The list and its three audiences are `service_audiences`' (a smart one of about two thirds of
the list, a smart and a manual one of 20,000), plus `--audiences` smart ones of points ranges
and countries, built within their requests. Then, through the whole application in process,
the median wall-clock milliseconds of:

- `GET /lists/{id}/overlap` of the three, and of every audience of the list;
- `POST /audiences/estimate` of the large audience's filter, and of a rare one, from the sample
  (5,000 contacts), then with `exact: true`;
- `POST /audiences/compare` of two saved audiences, and of one and a filter.

This is a measurement script, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from .service_audiences import LARGE, MEMBERS, Bench, _median_ms, on_each_database

RARE = {"AND": [{"points": {"gte": 95}}, {"country": "FR"}]}


def _extra_filters(count: int) -> list[dict[str, Any]]:
    countries = ["US", "FR", "DE", "GB", "ES"]
    filters: list[dict[str, Any]] = []
    for index in range(count):
        if index % 2:
            filters.append({"country": countries[index // 2 % len(countries)]})
        else:
            filters.append({"points": {"gte": (index * 7) % 100, "lt": (index * 7) % 100 + 30}})
    return filters


def measure(bench: Bench, audiences: list[str], runs: int) -> list[tuple[str, float, str]]:
    """(what, median ms, what it answered) for each measured request."""

    def call(method: str, path: str, **kwargs: Any) -> Callable[[], Any]:
        def run() -> Any:
            response = bench.call(method, path, **kwargs)
            assert response.status_code == 200, response.text
            return response.json()["data"]

        return run

    three = [bench.large, bench.smart_20k, bench.manual_20k]
    overlap = f"/lists/{bench.list_id}/overlap?audiences="
    plans = [
        ("overlap of 3 audiences", call("GET", overlap + ",".join(three))),
        (f"overlap of {len(audiences)} audiences", call("GET", overlap + ",".join(audiences))),
    ]
    for name, where in (("large", LARGE), ("rare", RARE)):
        for exact in (False, True):
            body = {"listId": bench.list_id, "filters": where, "exact": exact}
            label = f"estimate, {name} filter" + (", exact" if exact else "")
            plans.append((label, call("POST", "/audiences/estimate", json=body)))
    compared = {"a": {"audienceId": bench.large}, "b": {"audienceId": bench.smart_20k}}
    plans.append(("compare two saved audiences", call("POST", "/audiences/compare", json=compared)))
    sent = {"a": {"audienceId": bench.large}, "b": {"filters": RARE}}
    plans.append(
        ("compare an audience and a filter", call("POST", "/audiences/compare", json=sent))
    )
    results = []
    for label, run in plans:
        ms, found = _median_ms(run, runs)
        results.append((label, ms, _describe(found)))
    return results


def _describe(found: dict[str, Any]) -> str:
    if "matrix" in found:
        return f"sizes {found['sizes'][:3]}..."
    if "relation" in found:
        return f"{found['relation']}, counts {found['counts']}"
    shown = f"{found['estimate']} [{found['low']}, {found['high']}]"
    return shown + (f", exact {found['exact']}" if found["exact"] is not None else "")


def _runner(extra: int) -> Callable[[str, str, int, int], None]:
    def run(name: str, url: str, contacts: int, runs: int) -> None:
        print(f"\n{name}: loading {contacts:,} contacts and {extra + 3} audiences...", flush=True)
        bench = Bench(url, contacts)
        try:
            made = [bench.large, bench.smart_20k, bench.manual_20k]
            made += [
                bench._audience(f"extra {i}", {"filters": f})
                for i, f in enumerate(_extra_filters(extra))
            ]
            for label, ms, described in measure(bench, made, runs):
                print(f"  {label:<36} {ms:9.1f} ms   ({described})")
        finally:
            bench.close()

    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--contacts", type=int, default=100_000)
    parser.add_argument("--audiences", type=int, default=7, help="smart audiences added")
    parser.add_argument("--runs", type=int, default=9, help="timed runs per request (median)")
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args(argv)
    if args.contacts < MEMBERS:
        parser.error(f"--contacts must be at least {MEMBERS}")
    print(f"median wall-clock ms over {args.runs} runs")
    on_each_database(_runner(args.audiences), args.contacts, args.runs, postgres=args.postgres)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
