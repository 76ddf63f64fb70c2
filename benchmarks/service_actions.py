"""Behaviour audiences: what 50 smart audiences over actions cost creating an action.

    python -m benchmarks.service_actions [--contacts N] [--audiences N] [--runs N] [--postgres]

One service database, two lists of N synthetic contacts each with three actions each (names
`share`, `like`, `visit`, spread over 90 days): one list with `--audiences` smart audiences (50 by
default), most of them over the contact's actions (`some` in a window, `count` with a `where`,
`sum`, `none` for 60 days, `max` of `createdAt`) and some over its fields, the other with none.
Through the whole HTTP application in process, side by side, the median wall-clock milliseconds
of `POST /actions` on one of ten contacts of each list: the write re-evaluates every smart
audience of the list for the contact (its actions loaded once), stores the difference and
appends its events in the same transaction. Targets: at most 1.5 times the same without audiences
in process CPU (what other work on a shared machine cannot inflate), 2 times in wall clock.

A measurement script, not a test: nothing asserts a timing (tests/service/
test_membership_benchmark.py runs it tiny, for its shape only).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from itertools import cycle
from typing import Any

from sqlalchemy import insert, select

from audiencefilter.service.db.models import Action, Contact, new_id

from .service_membership import Bench, _side_by_side, run_engines

TARGETS = {"wall clock": 2.0, "process CPU": 1.5}
NAMES = ["share", "like", "visit"]


def behaviour_filters(count: int) -> list[dict[str, Any]]:
    """`count` different smart filters, four in five over actions."""
    shapes: list[Callable[[int], dict[str, Any]]] = [
        lambda i: {
            "actions": {"some": {"name": NAMES[i % 3], "createdAt": {"gte": {"ago": "P30D"}}}}
        },
        lambda i: {"actions": {"count": {"gte": 1 + i % 4}, "where": {"name": NAMES[i % 3]}}},
        lambda i: {"actions": {"sum": {"increase": {"gte": i % 20}}}},
        lambda i: {"actions": {"none": {"createdAt": {"gte": {"ago": f"P{30 + i}D"}}}}},
        lambda i: {"points": {"gte": i * 7 % 100}},
    ]
    return [shapes[i % len(shapes)](i) for i in range(count)]


class ActionsBench(Bench):
    def __init__(self, database_url: str, contacts: int, audiences: int) -> None:
        super().__init__(database_url, contacts, 0)
        try:
            for list_id in (self.with_audiences, self.without):
                self._seed_actions(list_id)
            for index, where in enumerate(behaviour_filters(audiences)):
                body = {"name": f"b{index}", "listId": self.with_audiences, "filters": where}
                response = self.call("POST", "/audiences?limit=1&wait=true", json=body)
                assert response.status_code == 201, response.text
        except BaseException:
            self.client.close()
            raise

    def _seed_actions(self, list_id: str) -> None:
        now = datetime.now(UTC)
        with self.database.transaction() as session:
            ids = list(session.scalars(select(Contact.id).where(Contact.listId == list_id)))
            rows = [
                {
                    "id": new_id("act"),
                    "subId": contact_id,
                    "name": NAMES[(index + k) % 3],
                    "increase": (index + k) % 10,
                    "createdAt": now - timedelta(days=(index * 7 + k * 31) % 90),
                    "updatedAt": now,
                }
                for index, contact_id in enumerate(ids)
                for k in range(3)
            ]
            for start in range(0, len(rows), 5000):
                session.execute(insert(Action), rows[start : start + 5000])

    def act(self, list_id: str) -> Callable[[], Any]:
        first = self.page(list_id)().json()["data"]["contacts"]
        targets = cycle([(c["id"], name) for c in first[:10] for name in NAMES])

        def run() -> Any:
            contact_id, name = next(targets)
            body = {"name": name, "increase": 1, "subId": contact_id}
            response = self.call("POST", "/actions", json=body)
            assert response.status_code == 201, response.text
            return response

        return run


def measure(bench: ActionsBench, runs: int) -> dict[str, tuple[float, float]]:
    """(ms with audiences, ms without) of `POST /v4/actions`, by the wall clock and in the
    process's CPU time, measured in alternation."""
    found = {}
    for label, clock in (("wall clock", time.perf_counter), ("process CPU", time.process_time)):
        found[label] = _side_by_side(
            bench.act(bench.with_audiences), bench.act(bench.without), runs, clock
        )
    return found


def _run(name: str, url: str, contacts: int, audiences: int, runs: int) -> None:
    print(f"\n{name}: {contacts:,} contacts per list, {audiences} smart audiences", flush=True)
    started = time.perf_counter()
    bench = ActionsBench(url, contacts, audiences)
    print(f"  ready in {time.perf_counter() - started:.1f} s")
    try:
        print(f"  {'':<26} {'with':>9} {'without':>9}  ratio (target)")
        for label, (with_ms, without_ms) in measure(bench, runs).items():
            print(
                f"  {'create an action, ' + label:<26} {with_ms:7.2f}ms {without_ms:7.2f}ms  "
                f"ratio {with_ms / without_ms:.2f}x (≤{TARGETS[label]}x)"
            )
    finally:
        bench.close()


def main(argv: Sequence[str] | None = None) -> int:
    return run_engines(_run, argv, __doc__.splitlines()[0] if __doc__ else None, audiences=50)


if __name__ == "__main__":
    raise SystemExit(main())
