"""Stored membership: what 100 smart audiences cost a contacts page and a contact update.

    python -m benchmarks.service_membership [--contacts N] [--audiences N] [--runs N]
        [--shared] [--postgres]

One service database, two lists of N synthetic contacts each (benchmarks/data.py, bulk
inserted): one list with `--audiences` smart audiences (100 by default, every kind of filter:
numbers, strings, `in` lists, custom data, OR/AND groups), the other with none. Through the
whole HTTP application in process, side by side, the median wall-clock milliseconds of:

- `GET /contacts?listId=..&limit=100`: each contact carries its audiences, read from the stored
  memberships (target: at most 1.5 times the page without audiences);
- `PATCH /contacts/{id}`: the write re-evaluates every smart audience of the list for the
  contact, stores the difference and appends its events in the same transaction (target: at
  most 2 times the update without). Twice: moving the contact's points and country back and
  forth, across about half of the audiences each time (about 50 rows and events a write), and
  changing a field no filter reads (the evaluation alone).

The ratios are printed with their targets. A measurement script, not a test: nothing asserts a
timing (tests/service/test_membership_benchmark.py runs it tiny, for its shape only).
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from itertools import cycle
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from audiencefilter.service import Settings
from audiencefilter.service.db.models import Contact, new_id
from audiencefilter.service.domain.use_cases import keys

from .data import generate
from .service_audiences import InProcessClient, _postgres

PAGE_TARGET = 1.5
UPDATE_TARGET = 2.0
COUNTRIES = ["US", "FR", "DE", "GB", "JP", "BR", "IN", "ES"]


def audience_filters(count: int) -> list[dict[str, Any]]:
    """`count` different smart filters of the kinds users write."""
    shapes: list[Callable[[int], dict[str, Any]]] = [
        lambda i: {"points": {"gte": i * 7 % 100}},
        lambda i: {"country": {"in": [COUNTRIES[i % 8], COUNTRIES[(i + 3) % 8]]}},
        lambda i: {"OR": [{"points": {"lt": i % 50}}, {"city": {"contains": "a"}}]},
        lambda i: {"AND": [{"isVerified": True}, {"referrals": {"gte": i % 5}}]},
        lambda i: {"data": {"path": ["source"], "equals": "bench" if i % 2 else "other"}},
        lambda i: {"email": {"endsWith": f"{i % 10}.example.com"}},
    ]
    return [shapes[i % len(shapes)](i) for i in range(count)]


def shared_filters(count: int) -> list[dict[str, Any]]:
    """`count` ten-condition filters from a pool of about fifty conditions: point tiers are
    multiples of ten, so `points` 41 and 42 are on the same side of every bound."""

    def conditions(i: int) -> list[dict[str, Any]]:
        place = {"OR": [{"city": {"startsWith": "San"}}, {"company": {"in": ["Acme", "Hooli"]}}]}
        return [
            {"country": {"in": [COUNTRIES[i % 8], COUNTRIES[(i + 3) % 8]]}},
            {"points": {"gte": i % 10 * 10}},
            {"points": {"lt": 500 + i % 7 * 100}},
            {"isVerified": bool(i % 3)},
            {"referrals": {"gte": i % 4}},
            {"unsubscribed": False},
            {"email": {"contains": "example" if i % 2 else "a"}},
            {"data": {"path": ["source"], "equals": "bench"}},
            place if i % 4 == 0 else {"lastName": {"not": ""}},
            {"createdAt": {"gte": "2023-06-01T00:00:00Z"}},
        ]

    return [{"AND": conditions(i)} for i in range(count)]


def _contacts(list_id: str, count: int) -> Iterator[dict[str, Any]]:
    """Synthetic contacts as rows of `contacts`."""
    columns = generate(count).columns
    for index in range(count):
        email = f"c{index}.{columns['email'][index]}"
        yield {
            "id": new_id("con"),
            "listId": list_id,
            "email": email,
            "emailKey": email.lower(),
            "firstName": columns["firstName"][index],
            "lastName": columns["lastName"][index],
            "company": columns["company"][index],
            "country": columns["country"][index],
            "city": columns["city"][index],
            "points": columns["points"][index] or 0,
            "referrals": columns["referrals"][index],
            "isVerified": bool(columns["isVerified"][index]),
            "unsubscribed": columns["unsubscribed"][index],
            "data": {"source": "bench"},
            "referralCode": new_id("r"),
            "createdAt": columns["createdAt"][index],
        }


class Bench:
    def __init__(
        self,
        database_url: str,
        contacts: int,
        audiences: int,
        *,
        shared: bool = False,
        residual: bool = True,
    ) -> None:
        settings = Settings(
            database_url=database_url,
            auto_migrate=True,
            rate_limit_free="10000000/minute",
            rate_limit_pro="10000000/minute",
            max_audiences_per_list=max(100, audiences),
            membership_sweep_seconds=0,
            membership_residual=residual,
        )
        self.client = InProcessClient(settings)
        self.database = self.client.app.state.db
        try:
            self.headers = {"apiKey": self._key()}
            self.with_audiences = self._list(contacts)
            self.without = self._list(contacts)
            wheres = shared_filters(audiences) if shared else audience_filters(audiences)
            for index, where in enumerate(wheres):
                body = {"name": f"a{index}", "listId": self.with_audiences, "filters": where}
                response = self.call("POST", "/audiences?limit=1&wait=true", json=body)
                assert response.status_code == 201, response.text
            self._analyze()  # the memberships just built, as autovacuum would within a minute
        except BaseException:
            self.client.close()
            raise

    def _key(self) -> str:
        return keys.issue(self.database, new_id("bench"), "pro", "private").plaintext

    def _list(self, count: int) -> str:
        response = self.call("POST", "/lists", json={"name": "bench"})
        assert response.status_code == 201, response.text
        list_id: str = response.json()["data"]["list"]["id"]
        rows = list(_contacts(list_id, count))
        with self.database.transaction() as session:
            for start in range(0, len(rows), 5000):
                session.execute(insert(Contact), rows[start : start + 5000])
        self._analyze()
        return list_id

    def _analyze(self) -> None:
        """Statistics of what was just loaded. Without them PostgreSQL read a few contacts'
        stored memberships by a scan of all of them (no statistics yet for the table the
        audiences filled: 28 ms where the index takes 1 ms)."""
        with self.database.engine.connect() as connection:
            connection.exec_driver_sql("ANALYZE")
            connection.commit()

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.client.request(method, f"/v4{path}", headers=self.headers, **kwargs)

    def page(self, list_id: str) -> Callable[[], Any]:
        def run() -> Any:
            response = self.call("GET", f"/contacts?listId={list_id}&limit=100")
            assert response.status_code == 200, response.text
            return response

        return run

    def update(self, list_id: str, bodies: list[dict[str, Any]]) -> Callable[[], Any]:
        first = self.page(list_id)().json()["data"]["contacts"]
        targets = cycle([(c["id"], body) for c in first[:10] for body in bodies])

        def run() -> Any:
            contact_id, body = next(targets)
            response = self.call("PATCH", f"/contacts/{contact_id}", json=body)
            assert response.status_code == 200, response.text
            return response

        return run

    def close(self) -> None:
        self.client.close()


# An update that moves the contact across about half of the audiences each time, and one that
# changes a field no filter reads (the evaluation without any difference to store).
MOVING = [{"points": 95, "country": "FR"}, {"points": 3, "country": "JP"}]
STILL = [{"firstName": "Ada"}, {"firstName": "Grace"}]
READ = [{"points": 41}, {"points": 42}]  # read by every `--shared` filter, moving none
TARGETS = {"contacts page of 100": PAGE_TARGET, "update, moving": UPDATE_TARGET}
TARGETS["update, no change"] = UPDATE_TARGET
TARGETS["update, read, none moved"] = UPDATE_TARGET


def measure(
    bench: Bench, runs: int, *, shared: bool = False
) -> list[tuple[str, float, float, float]]:
    """(what, ms with audiences, ms without, ratio) for the page and the updates."""
    plans: list[tuple[str, Callable[[str], Callable[[], Any]]]] = [
        ("contacts page of 100", bench.page),
        ("update, moving", lambda list_id: bench.update(list_id, MOVING)),
        ("update, no change", lambda list_id: bench.update(list_id, STILL)),
    ]
    if shared:
        plans.append(("update, read, none moved", lambda list_id: bench.update(list_id, READ)))
    results = []
    for label, make in plans:
        with_ms, without_ms = _side_by_side(make(bench.with_audiences), make(bench.without), runs)
        results.append((label, with_ms, without_ms, with_ms / without_ms))
    return results


def _side_by_side(
    one: Callable[[], Any],
    other: Callable[[], Any],
    runs: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float]:
    """Median ms of each, measured in alternation (in a new order each round), so that a
    machine shared with other work slows both alike rather than whichever ran during a spike.
    `clock=time.process_time` counts the process's CPU instead of the wall clock: what other
    work on the machine cannot inflate."""
    gc.collect()
    one(), other()  # warm-up: compiled statements, parsed filters
    times: tuple[list[float], list[float]] = ([], [])
    for run in range(runs):
        order = (0, 1) if run % 2 == 0 else (1, 0)
        for index in order:
            start = clock()
            (one, other)[index]()
            times[index].append((clock() - start) * 1000)
    return statistics.median(times[0]), statistics.median(times[1])


def _run(
    name: str, url: str, contacts: int, audiences: int, runs: int, shared: bool = False
) -> None:
    kind = "ten-condition shared" if shared else "smart"
    print(f"\n{name}: {contacts:,} contacts per list, {audiences} {kind} audiences", flush=True)
    started = time.perf_counter()
    bench = Bench(url, contacts, audiences, shared=shared)
    print(f"  ready in {time.perf_counter() - started:.1f} s")
    try:
        print(f"  {'':<24} {'with':>9} {'without':>9}  ratio (target)")
        for label, with_ms, without_ms, ratio in measure(bench, runs, shared=shared):
            print(
                f"  {label:<24} {with_ms:7.2f}ms {without_ms:7.2f}ms  "
                f"ratio {ratio:.2f}x (≤{TARGETS[label]}x)"
            )
    finally:
        bench.close()


def run_engines(
    run: Callable[[str, str, int, int, int], None],
    argv: Sequence[str] | None,
    description: str | None,
    audiences: int,
) -> int:
    """The command line of the service benchmarks: `run(name, url, contacts, audiences, runs)`
    on a fresh SQLite file, then on a throw-away PostgreSQL with `--postgres`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--contacts", type=int, default=10_000)
    parser.add_argument("--audiences", type=int, default=audiences)
    parser.add_argument("--runs", type=int, default=41, help="timed runs per request (median)")
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args(argv)
    print(f"median wall-clock ms over {args.runs} runs")
    with tempfile.TemporaryDirectory(prefix="af-bench-") as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        run("SQLite", url, args.contacts, args.audiences, args.runs)
    if args.postgres:
        with _postgres() as (pg, note):
            if pg is None:
                print(f"\nPostgreSQL: {note}")
            else:
                run(f"PostgreSQL ({note})", pg, args.contacts, args.audiences, args.runs)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    run = functools.partial(_run, shared="--shared" in given)
    rest = [arg for arg in given if arg != "--shared"]
    return run_engines(run, rest, __doc__.splitlines()[0] if __doc__ else None, audiences=100)


if __name__ == "__main__":
    raise SystemExit(main())
