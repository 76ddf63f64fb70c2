"""Residual judgement on writes: the share of judgements needing no query, and the time per write.

    python -m benchmarks.service_residual [--contacts N] [--audiences N] [--runs N] [--postgres]

Two service databases alike (benchmarks/service_membership.py's contacts, three actions each as
in benchmarks/service_actions.py), each with a list of `--audiences` smart audiences (20 by
default) of the kinds a marketing team writes: a contact part beside an actions part ("French
contacts who shared this month", "VIPs or three purchases", "verified and idle for 60 days",
"from ads and visited"), some over actions alone and some over fields alone. One database has
the setting `membership_residual` on, the other off. Through the whole HTTP application in
process, side by side, the median milliseconds of two writes on ten contacts: `POST /actions`
and `PATCH /contacts/{id}` moving `country` and `points`.

Printed: of the judgements the writes made on the database with residuals, those judged in
memory (fields alone), those over actions that the contact's own fields decided (no query), and
those that went to SQL; the share needing no query; and the time per write with and without.
A measurement script, not a test: nothing asserts a timing (tests/service/
test_membership_benchmark.py runs it tiny, for its shape only).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import cycle
from typing import Any

from audiencefilter.service.domain.membership import residuals

from .service_actions import ActionsBench
from .service_membership import Bench, _side_by_side, run_engines

COUNTRIES = ["FR", "DE", "US", "GB", "ES"]


def mixed_filters(count: int) -> list[dict[str, Any]]:
    """`count` smart filters: three in five join a contact part and an actions part, one is
    over actions alone, one over fields alone."""
    shapes: list[Callable[[int], dict[str, Any]]] = [
        lambda i: {
            "country": COUNTRIES[i % 5],
            "actions": {"some": {"name": "share", "createdAt": {"gte": {"ago": "P30D"}}}},
        },
        lambda i: {
            "OR": [
                {"points": {"gte": 500 + i}},
                {"actions": {"count": {"gte": 3}, "where": {"name": "like"}}},
            ]
        },
        lambda i: {"actions": {"sum": {"increase": {"gte": 5 + i % 10}}}},
        lambda i: {
            "isVerified": True,
            "country": {"in": COUNTRIES[: 1 + i % 4]},
            "actions": {"none": {"createdAt": {"gte": {"ago": "P60D"}}}},
        },
        lambda i: {"points": {"gte": i * 7 % 100}, "city": {"not": None}},
    ]
    return [shapes[i % len(shapes)](i) for i in range(count)]


class ResidualBench(ActionsBench):
    """A list of `mixed_filters` audiences, on a database with residuals on or off."""

    def __init__(self, database_url: str, contacts: int, audiences: int, residual: bool) -> None:
        Bench.__init__(self, database_url, contacts, 0, residual=residual)
        try:
            self._seed_actions(self.with_audiences)
            for index, where in enumerate(mixed_filters(audiences)):
                body = {"name": f"m{index}", "listId": self.with_audiences, "filters": where}
                response = self.call("POST", "/audiences?limit=1&wait=true", json=body)
                assert response.status_code == 201, response.text
        except BaseException:
            self.client.close()
            raise

    def patch(self) -> Callable[[], Any]:
        first = self.page(self.with_audiences)().json()["data"]["contacts"]
        targets = cycle([(c["id"], k, COUNTRIES[k % 5]) for k, c in enumerate(first[:10])] * 2)

        def run() -> Any:
            contact_id, k, country = next(targets)
            body = {"country": country, "points": (k * 137) % 1200}
            response = self.call("PATCH", f"/contacts/{contact_id}", json=body)
            assert response.status_code == 200, response.text
            return response

        return run


def _shares(tally: Counter[str]) -> str:
    total = sum(tally.values()) or 1
    no_query = tally["memory"] + tally["decided"]
    over_actions = tally["decided"] + tally["queried"] or 1
    return (
        f"  judgements: {total:,} ({tally['memory']:,} in memory, {tally['decided']:,} over "
        f"actions decided by the contact's fields, {tally['queried']:,} asked of SQL)\n"
        f"  needing no query: {no_query / total:.0%} of all; "
        f"{tally['decided'] / over_actions:.0%} of those over actions"
    )


def measure(on: ResidualBench, off: ResidualBench, runs: int) -> dict[str, tuple[float, float]]:
    """(ms with residuals, ms without) of each write ("create an action" or "update a contact")
    on each clock ("wall" or "CPU"), measured in alternation."""
    found = {}
    for label, write in (("create an action", "act"), ("update a contact", "patch")):
        for clock_name, clock in (("wall", time.perf_counter), ("CPU", time.process_time)):
            one = on.act(on.with_audiences) if write == "act" else on.patch()
            other = off.act(off.with_audiences) if write == "act" else off.patch()
            found[f"{label}, {clock_name}"] = _side_by_side(one, other, runs, clock)
    return found


def _run(name: str, url: str, contacts: int, audiences: int, runs: int) -> None:
    print(f"\n{name}: {contacts:,} contacts, {audiences} smart audiences", flush=True)
    started = time.perf_counter()
    on = ResidualBench(url, contacts, audiences, residual=True)
    off = ResidualBench(url, contacts, audiences, residual=False)  # its own lists, same database
    print(f"  ready in {time.perf_counter() - started:.1f} s")
    try:
        print(f"  {'':<26} {'residual':>9} {'whole':>9}")
        for label, (with_ms, without_ms) in measure(on, off, runs).items():
            print(
                f"  {label:<26} {with_ms:7.2f}ms {without_ms:7.2f}ms  "
                f"ratio {with_ms / without_ms:.2f}x"
            )
        print(_shares(_tally_of(on, runs)))
    finally:
        on.close()
        off.close()


def _tally_of(on: ResidualBench, runs: int) -> Counter[str]:
    """The judgements of `runs` writes of each kind on the database with residuals alone."""
    before = residuals.TALLY.copy()
    act, patch = on.act(on.with_audiences), on.patch()
    for _ in range(runs):
        act()
        patch()
    return residuals.TALLY - before


def main(argv: Sequence[str] | None = None) -> int:
    return run_engines(_run, argv, __doc__.splitlines()[0] if __doc__ else None, audiences=20)


if __name__ == "__main__":
    raise SystemExit(main())
