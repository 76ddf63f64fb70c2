"""A simulated week of time audiences: is every enter/leave event written, once, on time?

    python -m benchmarks.simulated_week [--contacts N] [--audiences A] [--days D] [--quick]
        [--under DIR] [--progress]

One SQLite service database, a list of N contacts (sign-ups over three years, a third of them
in the last fortnight, and about five actions each over the days around the week, stored
ahead with their instants) and A smart audiences that time alone moves: sign-ups in the last
hours or days, anniversaries and calendar windows in several zones (one with a
daylight-saving change in the week), counts and absences of actions in a sliding window
("in the last hour, up to now": an action counts once its instant has come).

The application runs on a clock of its own. No one sleeps: the clock jumps to the next instant
the service says is due (`due.earliest`, plus the gathering delay its scheduler
thread waits, `GATHER_SECONDS`), or to the next instant at which the library says one of the
answers changes, whichever is first; then the scheduler runs once (`Sweeper.run_once`) and the
events it wrote are read from the feed. Nothing is written in between: every event is the
clock's.

Checked at each instant, against the library alone (`Filter.matches` and `next_change` on
records built here, not by the service): the events written equal the answers that changed
since the previous instant. A change without its event is missed until an event brings it
(then late by the time in between); an event changing nothing is a duplicate; an event no
answer asked for is wrong. Every six simulated hours, and at the end, every contact is judged
in every audience (`FilterSet.matching`) and compared with the answers followed so far and
with the feed replayed. Lateness is how long before the instant the event was written at its
answer changed: an event is on time if the answer was still the old one one second before
it, or at the last instant the clock stood at before the change was seen, when that is within
the second (`on_time`: a contact may leave and come back within a second). The wall time
each scheduler run took is reported beside it: on a real clock, an event is written that much
later again.
"""

from __future__ import annotations

import argparse
import heapq
import os
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select

import audiencefilter as af
from audiencefilter.service import Settings
from audiencefilter.service.db.models import Action, Contact, Event, new_id
from audiencefilter.service.domain.membership import due
from audiencefilter.service.domain.use_cases import keys, membership_clock

from .service_audiences import InProcessClient

START = datetime(2031, 3, 26, 9, 17, 3, tzinfo=UTC)  # Europe/Paris moves on 30 March 2031
CHECK_EVERY = timedelta(hours=6)
ON_TIME = timedelta(seconds=1)
SKIPPED = timedelta(seconds=10)
ZONES = ("Europe/Paris", "America/New_York", "Asia/Tokyo", "UTC", "America/Santiago")
PAST = {"lte": {"ago": "PT0S"}}  # an action counts once its instant has come


def audience_filters(count: int) -> list[dict[str, Any]]:
    """`count` time audiences, a dozen kinds in turn, each with its own window or zone."""
    made: list[dict[str, Any]] = []
    for n in range(count):
        zone = ZONES[n % len(ZONES)]
        hours = 1 + n % 5
        days = 1 + n % 7
        kinds: list[dict[str, Any]] = [
            {"createdAt": {"gte": {"ago": f"P{days}D"}}},
            {"createdAt": {"gte": {"ago": f"PT{6 * hours}H"}}},
            {"createdAt": {"anniversary": {"this": "day", "timeZone": zone}}},
            {"createdAt": {"anniversary": {"this": "week", "timeZone": zone}}},
            {"createdAt": {"within": {"this": "week", "timeZone": zone}}},
            {"createdAt": {"gte": {"startOf": "day", "offset": -days, "timeZone": zone}}},
            _count(f"PT{hours}H", 1),
            _count(f"P{days}D", 3),
            {"actions": {"none": {"createdAt": {"gte": {"ago": f"P{days}D"}, **PAST}}}},
            {
                "actions": {
                    "some": {"name": "purchase", "createdAt": {"gte": {"ago": "P1D"}, **PAST}}
                }
            },
            {"OR": [{"createdAt": {"gte": {"ago": f"PT{hours}H"}}}, {"points": {"gte": 900}}]},
            {"NOT": {"createdAt": {"gte": {"ago": f"P{7 + days}D"}}}},
        ]
        made.append(kinds[n % len(kinds)])
    return made


def _count(window: str, least: int) -> dict[str, Any]:
    where = {"createdAt": {"gte": {"ago": window}, **PAST}}
    return {"actions": {"where": where, "count": {"gte": least}}}


@dataclass
class People:
    """The contacts as records the library reads, with their actions."""

    records: list[dict[str, Any]]

    @classmethod
    def draw(cls, count: int, days: int, seed: int = 7) -> People:
        rng = random.Random(seed)
        records = []
        for _ in range(count):
            recent = rng.random() < 1 / 3
            back = rng.uniform(0, 14 * 86400) if recent else rng.uniform(0, 3 * 365 * 86400)
            actions = [
                {
                    "name": rng.choice(["open", "click", "purchase"]),
                    "createdAt": START + timedelta(seconds=rng.uniform(-2, days) * 86400),
                }
                for _ in range(rng.randint(0, 10))
            ]
            records.append(
                {
                    "createdAt": START - timedelta(seconds=back),
                    "points": rng.randint(0, 1000),
                    "actions": actions,
                }
            )
        return cls(records)


class Hands:
    """The application's clock: it stands where the simulation puts it."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@dataclass
class Tally:
    """What the check found."""

    events: int = 0
    on_time: int = 0
    late: list[float] = field(default_factory=list)  # seconds, for those late by > 1 s
    late_cases: list[str] = field(default_factory=list)  # what each late event was about
    lateness: list[float] = field(default_factory=list)  # seconds, every event
    missed: int = 0
    duplicated: int = 0
    wrong: int = 0
    disagreements: int = 0  # full evaluations against the answers followed
    instants: int = 0
    checks: int = 0
    runs: list[float] = field(default_factory=list)  # wall seconds per scheduler run
    cpu: list[float] = field(default_factory=list)  # thread CPU seconds per scheduler run
    oracle_cpu: float = 0.0  # thread CPU seconds of the checks at the instants
    check_cpu: float = 0.0  # thread CPU seconds of the full evaluations
    stood: list[float] = field(default_factory=list)  # each run's instant, seconds from START
    written_by: list[int] = field(default_factory=list)  # per event: the run that wrote it
    wall: float = 0.0
    setup: float = 0.0

    def on_a_real_clock(self) -> list[float]:
        """Each event's lateness had the week run in real time on this machine: a run starts
        at its instant or when the previous run ends, whichever is later, and its events are
        written when it ends."""
        delays, free = [], float("-inf")
        for instant, wall in zip(self.stood, self.runs, strict=True):
            free = max(instant, free) + wall
            delays.append(free - instant)
        return [
            late + delays[run] for late, run in zip(self.lateness, self.written_by, strict=True)
        ]

    @property
    def clean(self) -> bool:
        faults = self.missed + self.duplicated + self.wrong + self.disagreements
        return faults == 0 and not self.late


class Service:
    """The application on SQLite, its list, contacts, actions and audiences."""

    def __init__(self, folder: Path, people: People, wheres: list[dict[str, Any]]) -> None:
        settings = Settings(
            database_url=f"sqlite:///{folder / 'week.db'}",
            auto_migrate=True,
            rate_limit_free="10000000/minute",
            rate_limit_pro="10000000/minute",
            max_audiences_per_list=max(100, len(wheres)),
            membership_sweep_seconds=0,
        )
        self.hands = Hands(START)
        self.client = InProcessClient(settings, clock=self.hands)
        self.database = self.client.app.state.db
        key = keys.issue(self.database, new_id("bench"), "pro", "private").plaintext
        self.headers = {"apiKey": key}
        self.list_id = self._call("POST", "/lists", {"name": "week"})["list"]["id"]
        self.contact_ids = self._insert(people)
        self.audience_ids = [
            self._call(
                "POST",
                "/audiences?wait=true",
                {"name": f"a{n}", "listId": self.list_id, "filters": where},
            )["audience"]["id"]
            for n, where in enumerate(wheres)
        ]
        self.position = 0
        self.next_due: datetime | None = None

    def _call(self, method: str, path: str, body: dict[str, Any]) -> Any:
        response = self.client.request(method, f"/v4{path}", headers=self.headers, json=body)
        assert response.status_code < 300, response.text
        return response.json()["data"]

    def _insert(self, people: People) -> list[str]:
        ids = [new_id("con") for _ in people.records]
        contacts = [
            {
                "id": cid,
                "listId": self.list_id,
                "email": f"c{i}@example.com",
                "emailKey": f"c{i}@example.com",
                "points": record["points"],
                "data": {},
                "createdAt": record["createdAt"],
            }
            for i, (cid, record) in enumerate(zip(ids, people.records, strict=True))
        ]
        actions = [
            {
                "id": new_id("act"),
                "subId": cid,
                "name": action["name"],
                "increase": 0,
                "createdAt": action["createdAt"],
                "updatedAt": action["createdAt"],
            }
            for cid, record in zip(ids, people.records, strict=True)
            for action in record["actions"]
        ]
        with self.database.transaction() as session:
            session.execute(insert(Contact), contacts)
            if actions:
                session.execute(insert(Action), actions)
        return ids

    def earliest(self) -> datetime | None:
        """The earliest instant the service holds, as read with the last run's events (no
        write happens in between)."""
        return self.next_due

    def run(self) -> tuple[float, float]:
        """One scheduler run: its wall time and its thread's CPU time, in seconds."""
        started, cpu = time.perf_counter(), time.thread_time()
        self.client.app.state.sweeper.run_once()
        return time.perf_counter() - started, time.thread_time() - cpu

    def new_events(self) -> list[tuple[str, str, str, datetime]]:
        """The feed's events since the last call: (contact, audience, type, written at); the
        earliest instant due is read in the same transaction."""
        with self.database.reading() as session:
            self.next_due = due.earliest(session)
            rows = session.execute(
                select(
                    Event.position, Event.contactId, Event.audienceId, Event.type, Event.occurredAt
                )
                .where(Event.listId == self.list_id, Event.position > self.position)
                .where(Event.type.in_(["audience.entered", "audience.left"]))
                .order_by(Event.position)
            ).all()
        if rows:
            self.position = rows[-1][0]
        return [
            (c, a, t, at.replace(tzinfo=UTC) if at.tzinfo is None else at)
            for _, c, a, t, at in rows
        ]


class Oracle:
    """Every contact's answer in every audience, followed with the library alone."""

    def __init__(self, filters: list[af.Filter], people: People, now: datetime) -> None:
        self.filters = filters
        self.records = people.records
        self.answers: dict[tuple[int, int], bool] = {}
        self.due: list[tuple[datetime, int, int]] = []
        for i, record in enumerate(self.records):
            for j, flt in enumerate(filters):
                self.answers[i, j] = flt.matches(record, now=now)
                self._plan(i, j, now)

    def _plan(self, i: int, j: int, now: datetime) -> None:
        after = self.filters[j].clock.next_change(self.records[i], now)
        if after is not None:
            heapq.heappush(self.due, (after, i, j))

    def next_instant(self) -> datetime | None:
        return self.due[0][0] if self.due else None

    def advance(self, now: datetime) -> dict[tuple[int, int], bool]:
        """The answers that changed by `now`, now followed."""
        changed: dict[tuple[int, int], bool] = {}
        while self.due and self.due[0][0] <= now:
            _, i, j = heapq.heappop(self.due)
            if (i, j) in changed:
                continue  # already judged at `now` (planned twice)
            answer = self.filters[j].matches(self.records[i], now=now)
            if answer != self.answers[i, j]:
                self.answers[i, j] = answer
                changed[i, j] = answer
            self._plan(i, j, now)
        return changed

    def whole(self, now: datetime) -> set[tuple[int, int]]:
        """Every contact judged in every audience at `now`: the members."""
        together = af.FilterSet(self.filters)
        return {
            (i, j)
            for i, record in enumerate(self.records)
            for j in together.matching(record, now=now)
        }


class Week:
    """The simulation: the clock moved from instant to instant, the feed checked at each."""

    def __init__(self, service: Service, oracle: Oracle, people: People) -> None:
        self.service = service
        self.oracle = oracle
        self.people = people
        self.contact = {cid: i for i, cid in enumerate(service.contact_ids)}
        self.audience = {aid: j for j, aid in enumerate(service.audience_ids)}
        self.fed: set[tuple[int, int]] = set()  # the feed replayed: members
        self.pending: dict[tuple[int, int], tuple[bool, datetime]] = {}  # missed so far
        self.tally = Tally()
        self.previous = START
        self.progress = False  # a line per full evaluation, for long runs
        self.began = time.perf_counter()

    def start(self) -> None:
        self._run()
        for cid, aid, kind, _ in self.service.new_events():
            pair = (self.contact[cid], self.audience[aid])
            self.fed.add(pair) if kind == "audience.entered" else self.fed.discard(pair)
        self.check(START)

    def run(self, end: datetime, skip: int = 0) -> Tally:
        """Moves the clock to `end`; `skip`: leave out every skip-th instant (the scheduler
        run only 10 s after it), to show that the check notices."""
        started = time.perf_counter()
        check_at = START + CHECK_EVERY
        visits = 0
        while True:
            now = self.service.hands.at
            found = [t for t in (self.service.earliest(), self.oracle.next_instant()) if t]
            if not found:
                break
            at = max(
                min(found) + timedelta(seconds=membership_clock.GATHER_SECONDS),
                now + timedelta(milliseconds=1),
            )
            if at > end:
                break
            if check_at <= at:
                self.visit(check_at)
                self.check(check_at)
                check_at += CHECK_EVERY
                continue
            visits += 1
            if skip and visits % skip == 0:
                self.service.hands.at = at + SKIPPED  # the scheduler runs 10 s late
                continue
            self.visit(at)
        self.visit(end)
        self.check(end)
        self.tally.missed += len(self.pending)
        self.tally.wall = time.perf_counter() - started
        return self.tally

    def visit(self, at: datetime) -> None:
        """The clock at `at`, the scheduler run once, its events checked."""
        self.service.hands.at = at
        self.tally.instants += 1
        self._run()
        cpu = time.thread_time()
        changed = self.oracle.advance(at)
        for pair, answer in changed.items():
            if pair in self.pending:  # changed back before any event came
                del self.pending[pair]
            else:
                self.pending[pair] = (answer, self.previous)
        for cid, aid, kind, written in self.service.new_events():
            self._event(
                (self.contact[cid], self.audience[aid]), kind == "audience.entered", written
            )
        self.previous = at
        self.tally.oracle_cpu += time.thread_time() - cpu

    def _run(self) -> None:
        """The scheduler run once where the clock stands, its instant and times noted."""
        self.tally.stood.append((self.service.hands.at - START).total_seconds())
        wall, cpu = self.service.run()
        self.tally.runs.append(wall)
        self.tally.cpu.append(cpu)

    def _event(self, pair: tuple[int, int], entered: bool, written: datetime) -> None:
        tally = self.tally
        tally.events += 1
        if (pair in self.fed) is entered:
            tally.duplicated += 1
            return
        self.fed.add(pair) if entered else self.fed.discard(pair)
        wanted = self.pending.pop(pair, None)
        if wanted is None or wanted[0] is not entered:
            tally.wrong += 1
            return
        i, j = pair
        flt, record = self.oracle.filters[j], self.people.records[i]
        tally.written_by.append(len(tally.runs) - 1)
        if on_time(flt, record, entered, wanted[1], written):
            tally.on_time += 1
            low = max(wanted[1], written - ON_TIME)
            tally.lateness.append(
                (written - _flip(flt, record, low, written, entered)).total_seconds()
            )
            return
        flip = _flip(flt, record, wanted[1], written - ON_TIME, entered)
        tally.late.append((written - flip).total_seconds())
        tally.lateness.append(tally.late[-1])
        stood = [START + timedelta(seconds=s) for s in tally.stood[-4:]]
        tally.late_cases.append(
            f"{'entered' if entered else 'left'} `{flt.to_text()}` (contact {i}, created "
            f"{record.get('createdAt')}): changed at {flip.isoformat()}, written at "
            f"{written.isoformat()}; the clock's last instants "
            f"{', '.join(at.time().isoformat() for at in stood)}"
        )

    def check(self, at: datetime) -> None:
        """Every contact judged whole at `at` against the answers followed and the feed."""
        self.tally.checks += 1
        cpu = time.thread_time()
        members = self.oracle.whole(at)
        followed = {pair for pair, answer in self.oracle.answers.items() if answer}
        self.tally.disagreements += len(members ^ followed)
        expected_feed = members ^ {pair for pair in self.pending}
        if self.fed != expected_feed:
            self.tally.disagreements += len(self.fed ^ expected_feed)
        self.tally.check_cpu += time.thread_time() - cpu
        if self.progress:
            elapsed = (at - START).total_seconds() / 3600
            print(
                f"{elapsed:5.0f} h simulated: {self.tally.instants:,} instants, "
                f"{self.tally.events:,} events, {time.perf_counter() - self.began:.0f} s",
                flush=True,
            )


def on_time(
    flt: af.Filter, record: dict[str, Any], entered: bool, since: datetime, written: datetime
) -> bool:
    """Whether an event written at `written` came within `ON_TIME` of its change: the answer
    was still the old one at `since` (the last instant the clock stood at before the change
    was seen) or one second before the write. The answer one second before may be the new one
    and the event still on time: a contact that left an audience and came back within the
    second (an action leaving a three-hour window 0.26 s before another enters it) had the new
    answer before it left; judged by that instant alone, its return counted 1 s late."""
    return since >= written - ON_TIME or flt.matches(record, now=written - ON_TIME) is not entered


def _flip(
    flt: af.Filter, record: dict[str, Any], low: datetime, high: datetime, new: bool
) -> datetime:
    """The first instant in (low, high] at which `record`'s answer is `new`, by bisection to
    the millisecond (the answer at `low` is the old one)."""
    while high - low > timedelta(milliseconds=1):
        middle = low + (high - low) / 2
        if flt.matches(record, now=middle) is new:
            high = middle
        else:
            low = middle
    return high


def simulate(
    contacts: int,
    audiences: int,
    days: float,
    skip: int = 0,
    *,
    under: str | None = None,
    progress: bool = False,
) -> Tally:
    """The week (or `days`) simulated and checked; the tally. `under`: the folder the
    database is made in (a memory file system leaves the disk's syncs out); `progress`: a
    line at each full evaluation."""
    started = time.perf_counter()
    people = People.draw(contacts, int(days + 1))
    wheres = audience_filters(audiences)
    filters = [af.parse(where) for where in wheres]
    with tempfile.TemporaryDirectory(dir=under) as folder:
        service = Service(Path(folder), people, wheres)
        try:
            oracle = Oracle(filters, people, START)
            week = Week(service, oracle, people)
            week.progress = progress
            week.start()
            week.tally.setup = time.perf_counter() - started
            return week.run(START + timedelta(days=days), skip)
        finally:
            service.client.close()


def report(tally: Tally, contacts: int, audiences: int, days: float) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    share = 100 * tally.on_time / tally.events if tally.events else 100.0
    runs = sorted(tally.runs)
    real = tally.on_a_real_clock()
    within = 100 * sum(late <= 1 for late in real) / len(real) if real else 100.0
    p999 = runs[min(len(runs) - 1, int(0.999 * len(runs)))]
    return "\n".join(
        [
            f"{contacts:,} contacts x {audiences} time audiences, {days:g} simulated days on "
            f"SQLite; {os.cpu_count()} CPUs, load average {load}",
            "",
            "| figure | value |",
            "|---|---:|",
            f"| instants the clock stood at (scheduler runs) | {tally.instants:,} |",
            f"| full evaluations compared | {tally.checks} |",
            f"| enter/leave events | {tally.events:,} |",
            f"| within 1 s of their instant | {tally.on_time:,} ({share:.3f} %) |",
            f"| late by more than 1 s | {len(tally.late)}"
            + (f" (max {max(tally.late):.1f} s)" if tally.late else "")
            + " |",
            f"| missed / duplicated / wrong | {tally.missed} / {tally.duplicated} "
            f"/ {tally.wrong} |",
            f"| full evaluations disagreeing (pairs) | {tally.disagreements} |",
            f"| lateness, simulated: median / 99.9th pct / max | {_spread(tally.lateness)} |",
            f"| lateness on a real clock (each run's wall time added, runs queued): "
            f"median / 99.9th pct / max | {_spread(real)} |",
            f"| on a real clock, within 1 s | {within:.2f} % |",
            f"| scheduler run, wall time: median / 99.9th pct / max | "
            f"{statistics.median(runs) * 1000:.0f} ms / {p999 * 1000:.0f} ms / "
            f"{runs[-1] * 1000:.0f} ms |",
            f"| scheduler run, thread CPU: median / 99.9th pct / total | {_cpu(tally.cpu)} |",
            f"| checks at the instants (library answers, events compared), CPU: total / per "
            f"instant | {tally.oracle_cpu:.1f} s / "
            f"{1000 * tally.oracle_cpu / max(1, tally.instants):.2f} ms |",
            f"| full evaluations, CPU total | {tally.check_cpu:.1f} s |",
            f"| setup (contacts, audiences built, library answers) | {tally.setup:.0f} s |",
            f"| the simulated days, wall time | {tally.wall:.0f} s |",
            *(["", "Late events:"] if tally.late_cases else []),
            *(f"- {case}" for case in tally.late_cases[:20]),
        ]
    )


def _cpu(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p999 = ordered[min(len(ordered) - 1, int(0.999 * len(ordered)))]
    return (
        f"{statistics.median(ordered) * 1000:.1f} ms / {p999 * 1000:.1f} ms / {sum(ordered):.0f} s"
    )


def _spread(seconds: list[float]) -> str:
    if not seconds:
        return "-"
    ordered = sorted(seconds)
    p999 = ordered[min(len(ordered) - 1, int(0.999 * len(ordered)))]
    return f"{statistics.median(ordered):.3f} s / {p999:.3f} s / {ordered[-1]:.3f} s"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contacts", type=int, default=10_000)
    parser.add_argument("--audiences", type=int, default=100)
    parser.add_argument("--days", type=float, default=7.0)
    parser.add_argument("--quick", action="store_true", help="200 contacts, 10 audiences, 2 days")
    parser.add_argument("--under", help="the folder to make the database in (default: temp)")
    parser.add_argument("--progress", action="store_true", help="a line every 6 simulated hours")
    args = parser.parse_args(argv)
    if args.quick:
        args.contacts, args.audiences, args.days = 200, 10, 2.0
    tally = simulate(
        args.contacts, args.audiences, args.days, under=args.under, progress=args.progress
    )
    print(report(tally, args.contacts, args.audiences, args.days), flush=True)
    return 0 if tally.clean else 1


if __name__ == "__main__":
    raise SystemExit(main())
