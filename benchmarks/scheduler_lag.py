"""The membership scheduler: how late time-moved events are, and what the waiting costs.

    python -m benchmarks.scheduler_lag [--contacts N] [--moving M] [--audiences A] [--seconds S]

One SQLite service database with a list of N contacts, M of whose sign-ups are spread so that
they turn `WINDOW` old during the next S seconds (the others stay put), and A smart audiences
"signed up in the last WINDOW" (plus a calendar audience and an anniversary, which move
nobody in that time). Two ways of bringing stored membership up to the clock run on it in
turn, each from the same state, for S seconds of wall-clock time:

- **instants** (the service): the scheduler thread, waking at each contact's instant;
- **sweep every second**: the previous design at its shortest useful interval, a full
  evaluation of every time-dependent audience each second (`sweep.sweep`).

For each, the lag of every `audience.left` event (its time minus the instant the contact
turned WINDOW old: never negative when exact), as median, 95th percentile and maximum, and
the process's CPU seconds over the run. A measurement script, not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import delete, insert, select, update

from audiencefilter.service import Settings
from audiencefilter.service.db.models import Contact, Event, Membership, MembershipDue, new_id
from audiencefilter.service.domain.use_cases import keys, membership_clock

from .service_audiences import InProcessClient

WINDOW = timedelta(seconds=60)
EXTRA = [
    {"createdAt": {"within": {"this": "month", "timeZone": "Europe/Paris"}}},
    {"createdAt": {"anniversary": {"this": "day", "timeZone": "Europe/Paris"}}},
]


class Setup:
    """The list, its contacts and audiences, and a way to put them back as they started."""

    def __init__(self, folder: Path, contacts: int, audiences: int) -> None:
        settings = Settings(
            database_url=f"sqlite:///{folder / 'lag.db'}",
            auto_migrate=True,
            rate_limit_free="10000000/minute",
            rate_limit_pro="10000000/minute",
            max_audiences_per_list=max(100, audiences + len(EXTRA)),
            membership_sweep_seconds=0,
        )
        self.client = InProcessClient(settings)
        self.database = self.client.app.state.db
        self.headers = {"apiKey": self._key()}
        self.list_id = self._call("POST", "/lists", {"name": "lag"})["list"]["id"]
        self.count = contacts
        self._insert_contacts(contacts)
        for index in range(audiences):
            where = {"createdAt": {"gte": {"ago": f"PT{int(WINDOW.total_seconds())}S"}}}
            self._call(
                "POST",
                "/audiences?wait=true",
                {"name": f"r{index}", "listId": self.list_id, "filters": where},
            )
        for index, where in enumerate(EXTRA):
            self._call(
                "POST",
                "/audiences?wait=true",
                {"name": f"c{index}", "listId": self.list_id, "filters": where},
            )

    def _key(self) -> str:
        return keys.issue(self.database, new_id("bench"), "pro", "private").plaintext

    def _call(self, method: str, path: str, body: dict[str, Any]) -> Any:
        response = self.client.request(method, f"/v4{path}", headers=self.headers, json=body)
        assert response.status_code < 300, response.text
        return response.json()["data"]

    def _insert_contacts(self, count: int) -> None:
        rows = [
            {
                "id": new_id("con"),
                "listId": self.list_id,
                "email": f"c{i}@example.com",
                "emailKey": f"c{i}@example.com",
                "points": 0,
                "data": {},
            }
            for i in range(count)
        ]
        with self.database.transaction() as session:
            session.execute(insert(Contact), rows)

    def reset(self, seconds: float, moving: int, lead: float | None = None) -> dict[str, datetime]:
        """`moving` sign-ups turning WINDOW old over the next `seconds`, the others out of
        reach of the run (half long ago, half just now), every audience brought up to them;
        the instant each moving contact turns WINDOW old. `lead`: the seconds before the
        first turn, for storing and planning (by default ample for the list's size)."""
        now = datetime.now(UTC)
        if lead is None:
            lead = 10 + self.count / 500
        with self.database.transaction() as session:
            ids = list(session.scalars(select(Contact.id).where(Contact.listId == self.list_id)))
            turns = {
                cid: now + timedelta(seconds=lead + seconds * (i + 0.5) / moving)
                for i, cid in enumerate(ids[:moving])
            }
            rest = ids[moving:]
            for half, created in (
                (rest[::2], now - 10 * WINDOW),
                (rest[1::2], now + timedelta(hours=1)),
            ):
                session.execute(
                    update(Contact).where(Contact.id.in_(half)).values(createdAt=created)
                )
            for cid, at in turns.items():
                session.execute(
                    update(Contact).where(Contact.id == cid).values(createdAt=at - WINDOW)
                )
            session.execute(delete(Membership))
            session.execute(delete(MembershipDue))
        membership_clock.sweep(self.database)  # every audience brought up to the new sign-ups
        membership_clock.run_due(self.database)  # and planned (the instants way needs it)
        return turns


def _lags(setup: Setup, turns: dict[str, datetime], since: datetime) -> list[float]:
    with setup.database.reading() as session:
        rows = session.execute(
            select(Event.contactId, Event.occurredAt).where(
                Event.type == "audience.left", Event.occurredAt >= since
            )
        ).all()
    found = []
    for contact_id, at in rows:
        aware = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
        found.append((aware - turns[contact_id]).total_seconds())
    return found


def _run(
    setup: Setup,
    seconds: float,
    moving: int,
    loop: Callable[[threading.Event], None],
    lead: float | None = None,
    settle: float = 4.0,
) -> tuple[list[float], float]:
    turns = setup.reset(seconds, moving, lead)
    since = datetime.now(UTC)
    first = min(turns.values())
    if first <= since:
        raise SystemExit("storing and planning outlasted the lead: raise it")
    time.sleep(max(0.0, (first - since).total_seconds() - 1))
    stop = threading.Event()
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    worker = threading.Thread(target=loop, args=(stop,))
    worker.start()
    time.sleep(seconds + settle)
    stop.set()
    worker.join()
    after = resource.getrusage(resource.RUSAGE_SELF)
    used = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
    return _lags(setup, turns, since), used


def _instants(setup: Setup) -> Callable[[threading.Event], None]:
    sweeper = membership_clock.Sweeper(setup.database, lambda: datetime.now(UTC), 1.0)

    def loop(stop: threading.Event) -> None:
        sweeper.start()
        stop.wait()
        sweeper.stop()

    return loop


def _sweeping(setup: Setup) -> Callable[[threading.Event], None]:
    def loop(stop: threading.Event) -> None:
        while not stop.wait(1.0):
            membership_clock.sweep(setup.database)

    return loop


def _describe(name: str, lags: list[float], cpu: float, expected: int) -> str:
    if not lags:
        return f"| {name} | 0 of {expected} | - | - | - | {cpu:.2f} s |"
    ordered = sorted(lags)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"| {name} | {len(lags)} of {expected} | {statistics.median(lags) * 1000:.0f} ms "
        f"| {p95 * 1000:.0f} ms | {max(lags) * 1000:.0f} ms "
        f"(min {min(lags) * 1000:.0f} ms) | {cpu:.2f} s |"
    )


WAYS = {"instants (the scheduler)": _instants, "sweep every second": _sweeping}


def measure(
    contacts: int,
    audiences: int,
    seconds: float,
    moving: int | None = None,
    lead: float | None = None,
    settle: float = 4.0,
) -> dict[str, tuple[list[float], float]]:
    """Each way's lags of the `audience.left` events (seconds) and its CPU (seconds), on a
    fresh database of `contacts`, `moving` of them (all when None) turning old; `lead` and
    `settle`, the seconds before the first turn and after the last (a tiny list needs less
    of both: the claims' quick run)."""
    with tempfile.TemporaryDirectory() as folder:
        setup = Setup(Path(folder), contacts, audiences)
        try:
            turning = contacts if moving is None else min(moving, contacts)
            return {
                name: _run(setup, seconds, turning, make(setup), lead, settle)
                for name, make in WAYS.items()
            }
        finally:
            setup.client.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contacts", type=int, default=2000)
    parser.add_argument("--audiences", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--moving", type=int, default=None, help="contacts turning old (all)")
    args = parser.parse_args(argv)
    moving = args.contacts if args.moving is None else min(args.moving, args.contacts)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{args.contacts:,} contacts, {moving:,} of them turning {WINDOW.total_seconds():.0f} s "
        f"old over {args.seconds:.0f} s; {args.audiences} such audiences "
        f"(+{len(EXTRA)} calendar ones); load average {load}"
    )
    print("| way | left events | median lag | 95th percentile | max | CPU |")
    print("|---|---:|---:|---:|---:|---:|")
    found = measure(args.contacts, args.audiences, args.seconds, moving)
    for name, (lags, cpu) in found.items():
        print(_describe(name, lags, cpu, moving * args.audiences), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
