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

`--only compare` measures the compare of the large audience and the rare filter alone, three
ways taking turns run after run: ours, the previous count (every contact of the list scanned,
its membership tested twice: `comparisons.SCAN_BOTH`), and the hand-written SQL of its counts
(the audience's kept size and one count of the filter's matches joined with its members; no
relation proven, so a floor), each answer checked against ours.

This is a measurement script, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import text

from audiencefilter.service.domain.use_cases import comparisons

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


HAND_COMPARE = (
    "SELECT (SELECT o.contacts FROM audience_overlaps o"
    " WHERE o.audience_a = :audience AND o.audience_b = :audience),"
    " count(*), count(m.contact_id) FROM contacts c LEFT JOIN memberships m"
    " ON m.audience_id = :audience AND m.contact_id = c.id"
    " WHERE c.list_id = :list AND c.points >= 95 AND c.country = 'FR'"
)


def measure_compare(bench: Bench, runs: int) -> list[tuple[str, float, str]]:
    """The compare of the large audience and the rare filter: ours, the previous scan and the
    hand-written counts, in turns (a new order each round), medians in ms."""
    sent = {"a": {"audienceId": bench.large}, "b": {"filters": RARE}}

    def ours() -> Any:
        response = bench.call("POST", "/audiences/compare", json=sent)
        assert response.status_code == 200, response.text
        return response.json()["data"]["counts"]

    def previous() -> Any:
        comparisons.SCAN_BOTH = True
        try:
            return ours()
        finally:
            comparisons.SCAN_BOTH = False

    def hand() -> Any:
        with bench.database.engine.connect() as connection:
            values = {"audience": bench.large, "list": bench.list_id}
            size_a, size_b, both = connection.execute(text(HAND_COMPARE), values).one()
        return {"both": both, "aOnly": size_a - both, "bOnly": size_b - both}

    ways = {"compare, ours": ours, "compare, previous scan": previous, "compare, hand SQL": hand}
    answers = {name: way() for name, way in ways.items()}  # a warm-up each
    assert len({str(answer) for answer in answers.values()}) == 1, answers
    gc.collect()
    times: dict[str, list[float]] = {name: [] for name in ways}
    names = list(ways)
    for run in range(runs):
        for name in names[run % 3 :] + names[: run % 3]:
            start = time.perf_counter()
            ways[name]()
            times[name].append((time.perf_counter() - start) * 1000)
    return [(name, statistics.median(times[name]), str(answers[name])) for name in names]


def _describe(found: dict[str, Any]) -> str:
    if "matrix" in found:
        return f"sizes {found['sizes'][:3]}..."
    if "relation" in found:
        return f"{found['relation']}, counts {found['counts']}"
    shown = f"{found['estimate']} [{found['low']}, {found['high']}]"
    return shown + (f", exact {found['exact']}" if found["exact"] is not None else "")


def _runner(extra: int, only: str | None = None) -> Callable[[str, str, int, int], None]:
    def run(name: str, url: str, contacts: int, runs: int) -> None:
        print(f"\n{name}: loading {contacts:,} contacts and {extra + 3} audiences...", flush=True)
        bench = Bench(url, contacts)
        try:
            if only == "compare":
                for label, ms, described in measure_compare(bench, runs):
                    print(f"  {label:<36} {ms:9.1f} ms   ({described})")
                print(f"  load average {os.getloadavg()}")
                return
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
    parser.add_argument("--only", choices=["compare"], help="measure the compare alone")
    args = parser.parse_args(argv)
    if args.contacts < MEMBERS:
        parser.error(f"--contacts must be at least {MEMBERS}")
    print(f"median wall-clock ms over {args.runs} runs")
    on_each_database(
        _runner(args.audiences, args.only), args.contacts, args.runs, postgres=args.postgres
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
