"""The service's rate on PostgreSQL, in absolute figures (issue 39's targets).

    python -m benchmarks.service_rate [--contacts N] [--seconds S] [--clients C]
        [--workers W] [--pool P] [--small M] [--touched 10,5000] [--repeats R] [--audiences A]
        [--batch-seconds S] [--batch-clients B] [--batch-rows R] [--profile]

A throw-away PostgreSQL on 127.0.0.1 (`benchmarks/pgserver.py`), the service started as a real
`serve` process with W uvicorn workers (Redis shares their rate-limit counters), and a list of
N synthetic contacts with 100 smart audiences of varied filters (those of
`benchmarks/service_membership.py`). Then:

1. **Sustained writes** (`benchmarks/rate_load.py`): C client threads PATCH random contacts of a
   pool of P (`points` and `country`, which the filters read) for S seconds while one reader
   polls `GET /v4/events`. Printed: updates a second, the answers' latency p50/p99, and each
   membership event's lag from its write's acknowledgement to the reader receiving it
   (p50/p99/max), with the events missing from the feed (target: 1,000 updates a second,
   lag p99 ≤ 1 s).
2. **Sustained batched writes** (`benchmarks/rate_batch.py`): B clients send upsert imports
   of R contacts of the pool each (`POST /v4/contacts/import?mode=upsert`, `points` and
   `country`) for S seconds while the reader polls the feed: updates a second, CPU per update,
   the requests' latency, each membership event's lag from its request's answer, and the
   events missing or unexplained, each row's expected events decided by `Filter.matches`.
   `--seconds 0` leaves out the single writes, `--batch-seconds 0` these.
3. **A build** (`benchmarks/rate_changes.py`): `POST /v4/audiences?wait=true` of a smart
   audience over the whole list, its stored members checked against `Filter.matches` over
   every contact (target: ≤ 60 s at 1,000,000 contacts).
4. **A change by contacts touched**: an upsert import of 10 and of 5,000 existing contacts,
   on this list and on a second list of M contacts (N ÷ 10) with the same audiences: the cost
   should follow the contacts touched, not the list.

Prints the workload, the machine (CPUs, Python) and the load average before and after. A
measurement script: the smoke test (tests/service/test_rate_benchmark.py) runs it tiny and
checks its correctness checks, never its timings.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from .rate_batch import Batched, sustain_batches
from .rate_changes import Build, build, changes
from .rate_load import Sustained, percentile, sustain
from .rate_profile import profile_updates
from .rate_setup import AUDIENCES, Stack, add_audiences, logged_errors, new_list, stack

RATE_TARGET = 1000.0
LAG_TARGET = 1.0
BUILD_TARGET = 60.0
BUILD_TARGET_CONTACTS = 1_000_000


@dataclass
class ListFigures:
    """What one list measured: its size, its audiences' set-up, its build and its changes."""

    contacts: int
    audiences: int
    audiences_seconds: float
    build: Build
    changes: dict[int, float]


@dataclass
class Result:
    workers: int
    note: str
    sustained: Sustained | None = None
    batched: Batched | None = None
    lists: list[ListFigures] = field(default_factory=list)
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    profile: str = ""
    errors_logged: list[str] = field(default_factory=list)
    """The service's log lines at level ERROR (`rate_setup.logged_errors`)."""


def _list_figures(
    st: Stack, list_id: str, contacts: int, seconds: float, args: argparse.Namespace
) -> ListFigures:
    built = build(st, list_id)
    touched = [min(count, contacts) for count in args.touched]
    return ListFigures(
        contacts, args.audiences, seconds, built, changes(st, list_id, touched, args.repeats)
    )


def measure(st: Stack, args: argparse.Namespace, result: Result) -> None:
    """The three parts on the large list, then the build and changes on the small one."""
    started = time.perf_counter()
    big = new_list(st, args.contacts)
    _say(f"seeded {args.contacts:,} contacts in {time.perf_counter() - started:.1f} s")
    seconds = add_audiences(st, big, args.audiences)
    _say(f"{args.audiences} audiences built in {seconds:.1f} s; {args.clients} clients writing")
    pool = min(args.pool, args.contacts)
    if args.seconds > 0:
        result.sustained = sustain(st, big, args.seconds, args.clients, pool)
    if args.batch_seconds > 0:
        _say(f"{args.batch_clients} clients importing {args.batch_rows} rows a request")
        rows, clients = args.batch_rows, args.batch_clients
        result.batched = sustain_batches(st, big, args.batch_seconds, clients, rows, pool)
    if args.profile:
        result.profile = profile_updates(st, big, args.audiences)
    result.lists.append(_list_figures(st, big, args.contacts, seconds, args))
    small = new_list(st, args.small)
    seconds = add_audiences(st, small, args.audiences)
    result.lists.append(_list_figures(st, small, args.small, seconds, args))


def _say(line: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {line}", flush=True)


def run(args: argparse.Namespace) -> Result | None:
    """One whole run; None when no PostgreSQL could be had."""
    load_before = os.getloadavg()
    with stack(args.workers) as st:
        if st is None:
            return None
        result = Result(args.workers, st.note, load_before=load_before)
        measure(st, args, result)
        result.errors_logged = logged_errors(st.log)
    result.load_after = os.getloadavg()
    return result


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def render_sustained(s: Sustained) -> list[str]:
    rate = s.writes / s.seconds if s.seconds else 0.0
    lags, lat = s.lags, s.latencies
    p99_lag = percentile(lags.lags, 0.99)
    return [
        f"sustained writes: {s.clients} clients, {s.seconds:.1f} s, pool of {s.pool:,} contacts",
        f"  updates acknowledged   {s.writes:,} ({s.errors} errors): {rate:,.1f}/s "
        f"(target {RATE_TARGET:,.0f}/s: {_verdict(rate >= RATE_TARGET)})",
        f"  answer latency         p50 {_ms(percentile(lat, 0.5))}, "
        f"p99 {_ms(percentile(lat, 0.99))}",
        f"  membership events      {lags.expected:,} expected, {lags.missing} missing, "
        f"{lags.unexpected} unexpected, {lags.early} seen before the answer (lag 0)",
        f"  event lag after ack    p50 {_ms(percentile(lags.lags, 0.5))}, p99 {_ms(p99_lag)}, "
        f"max {_ms(max(lags.lags, default=float('nan')))} (target p99 ≤ {LAG_TARGET:.0f} s: "
        f"{_verdict(p99_lag <= LAG_TARGET)}); {s.pages:,} feed pages read",
        _render_cpu(s.cpu, s.writes),
    ]


def render_batched(b: Batched) -> list[str]:
    rate = b.updates / b.seconds if b.seconds else 0.0
    lags, lat = b.lags, b.latencies
    p99_lag = percentile(lags.lags, 0.99)
    return [
        f"batched writes: {b.clients} clients, {b.rows} rows a request, {b.seconds:.1f} s, "
        f"pool of {b.pool:,} contacts",
        f"  rows updated           {b.updates:,} in {b.requests:,} requests ({b.unchanged} "
        f"unchanged, {b.errors} errors): {rate:,.1f}/s (target {RATE_TARGET:,.0f}/s: "
        f"{_verdict(rate >= RATE_TARGET)})",
        f"  request latency        p50 {_ms(percentile(lat, 0.5))}, "
        f"p99 {_ms(percentile(lat, 0.99))}",
        f"  membership events      {lags.expected:,} expected, {lags.missing} missing, "
        f"{lags.unexpected} unexpected, {lags.early} seen before the answer (lag 0)",
        f"  event lag after answer p50 {_ms(percentile(lags.lags, 0.5))}, p99 {_ms(p99_lag)}, "
        f"max {_ms(max(lags.lags, default=float('nan')))} (target p99 ≤ {LAG_TARGET:.0f} s: "
        f"{_verdict(p99_lag <= LAG_TARGET)}); {b.pages:,} feed pages read",
        _render_cpu(b.cpu, b.updates),
    ]


def _render_cpu(cpu: tuple[float, float, float], updates: int) -> str:
    """CPU per acknowledged update, and the rate the machine's cores would bound it to."""
    service, database, clients = (seconds / max(1, updates) for seconds in cpu)
    bound = (os.cpu_count() or 1) / (service + database) if service + database else float("nan")
    return (
        f"  CPU per update         service {service * 1000:,.2f} ms, PostgreSQL "
        f"{database * 1000:,.2f} ms, "
        f"clients and reader {clients * 1000:,.2f} ms: {os.cpu_count()} cores serve at most "
        f"{bound:,.0f} updates/s"
    )


def render_list(figures: ListFigures) -> list[str]:
    b = figures.build
    parts = [
        f"list of {figures.contacts:,} contacts ({figures.audiences} audiences built in "
        f"{figures.audiences_seconds:.2f} s)",
        f"  build over the list    {b.seconds:.2f} s, {b.members:,} members, "
        f"{'equal to' if b.exact else 'DIFFERENT from'} Filter.matches",
    ]
    for count, seconds in figures.changes.items():
        per = seconds / count * 1000
        parts.append(f"  change of {count:>5,} contacts {_ms(seconds)} ({per:.2f} ms a contact)")
    return parts


def render(result: Result, args: argparse.Namespace) -> str:
    load = ", ".join(f"{v:.2f}" for v in result.load_before)
    after = ", ".join(f"{v:.2f}" for v in result.load_after)
    lines = [
        f"PostgreSQL: {result.note}; service: `serve --workers {result.workers}`",
        f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {load} before, {after} after",
        f"workload: lists of {args.contacts:,} and {args.small:,} contacts, "
        f"{args.audiences} smart audiences each",
    ]
    if result.sustained is not None:
        lines += render_sustained(result.sustained)
    if result.batched is not None:
        lines += render_batched(result.batched)
    for figures in result.lists:
        lines += render_list(figures)
    if result.errors_logged:
        lines.append(f"the service logged {len(result.errors_logged)} errors, the first:")
        lines += [f"  {line}" for line in result.errors_logged[:5]]
    return "\n".join(lines)


def _sizes(value: str) -> list[int]:
    return [int(part) for part in value.split(",") if part]


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--contacts", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--audiences", type=int, default=AUDIENCES, help="smart audiences a list")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument("--pool", type=int, default=20_000, help="contacts the clients write")
    parser.add_argument("--batch-seconds", type=float, default=30.0, help="batched writes")
    parser.add_argument("--batch-clients", type=int, default=2, help="clients importing")
    parser.add_argument("--batch-rows", type=int, default=500, help="rows a request (≤ 1000)")
    parser.add_argument("--small", type=int, default=0, help="second list (default N ÷ 10)")
    parser.add_argument("--touched", type=_sizes, default=[10, 5000])
    parser.add_argument("--profile", action="store_true", help="profile 50 updates' use case")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each change (median)")
    args = parser.parse_args(argv)
    args.small = args.small or max(1, args.contacts // 10)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    result = run(args)
    if result is not None:
        print(render(result, args))
        print(result.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
