"""A PATCH with one of the service's switches on and off, in one process, in turns.

    python -m benchmarks.patch_switch [--switch MODULE:NAME] [--contacts N] [--audiences A]
                                      [--updates U] [--rounds R]

A throw-away PostgreSQL on 127.0.0.1 (`benchmarks/pgserver.py`), a list of N synthetic contacts
with A smart audiences (`benchmarks/service_membership.py`, as `benchmarks.rate_layers` sets it
up), the service's ASGI application in this process. Each round PATCHes U random contacts
(`points` and `country`, as `benchmarks.rate_layers` draws them) with the switch on and U with
it off, the order alternating by round, twice: with FastAPI's thread hops made calls in place
(this thread's CPU and the wall time then hold the whole PATCH) and with the hops as served
(wall time, the event loop's thread CPU, the process's CPU). Printed: the median a PATCH of
each over the rounds, each way, and the difference. Runs of one tree move a PATCH's thread
CPU by more than a change of a tenth of a millisecond; taking both ways in one process, in
turns, shows such a change where two runs cannot.

The switch is a module's boolean (default `store.CARRY_IN_EVENTS`: the memberships of a PATCH
carried in its events' statement), restored after the run. A measurement script; the smoke
test (tests/test_benchmarks_patch_switch.py) runs it tiny.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import text

from .pgserver import measured_list
from .rate_layers import Run, _bodies, _patches
from .rate_spans import inline_threads
from .service_membership import Bench

DEFAULT_SWITCH = "audiencefilter.service.domain.membership.store:CARRY_IN_EVENTS"
KINDS = (
    "thread, in place",
    "wall, in place",
    "wall, with the hops",
    "event loop's thread, with the hops",
    "process, with the hops",
)


@dataclass
class Figures:
    """Milliseconds a PATCH, one figure a round, by (kind, switch on)."""

    rounds: dict[tuple[str, bool], list[float]] = field(default_factory=dict)
    updates: int = 0

    def add(self, kind: str, on: bool, ms: float) -> None:
        self.rounds.setdefault((kind, on), []).append(ms)

    def median(self, kind: str, on: bool) -> float:
        return statistics.median(self.rounds[(kind, on)])


def _switch(path: str) -> tuple[object, str]:
    module, _, name = path.partition(":")
    owner = importlib.import_module(module)
    if not isinstance(getattr(owner, name, None), bool):
        raise SystemExit(f"{path} is not a module's boolean")
    return owner, name


def _round(
    loop: asyncio.AbstractEventLoop, run: Run, ids: list[str], updates: int, on: bool,
    rng: random.Random, figures: Figures,
) -> None:  # fmt: skip
    work = _bodies(rng.sample(ids, updates), rng)
    with inline_threads():
        wall, thread = time.perf_counter(), time.thread_time()
        _patches(loop, run, work)
        thread, wall = time.thread_time() - thread, time.perf_counter() - wall
    figures.add(KINDS[0], on, thread * 1e3 / updates)
    figures.add(KINDS[1], on, wall * 1e3 / updates)
    work = _bodies(rng.sample(ids, updates), rng)
    wall, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
    _patches(loop, run, work)
    figures.add(KINDS[2], on, (time.perf_counter() - wall) * 1e3 / updates)
    figures.add(KINDS[3], on, (time.thread_time() - thread) * 1e3 / updates)
    figures.add(KINDS[4], on, (time.process_time() - process) * 1e3 / updates)


def measure(url: str, args: argparse.Namespace) -> Figures:
    owner, name = _switch(args.switch)
    shipped = getattr(owner, name)
    bench = Bench(url, args.contacts, args.audiences)
    loop = asyncio.new_event_loop()
    figures = Figures()
    try:
        with bench.database.engine.connect() as connection:
            ids = list(connection.execute(
                text("SELECT id FROM contacts WHERE list_id = :l ORDER BY random() LIMIT :n"),
                {"l": bench.with_audiences, "n": args.updates * 2},
            ).scalars())  # fmt: skip
        run = Run(bench.client.app, "/v4/contacts/", bench.headers["apiKey"])
        rng = random.Random(3)
        for warm in (True, False):  # one round each way first, not counted
            setattr(owner, name, warm)
            _round(loop, run, ids, args.updates, warm, rng, Figures())
        for index in range(args.rounds):
            for on in (True, False) if index % 2 else (False, True):
                setattr(owner, name, on)
                _round(loop, run, ids, args.updates, on, rng, figures)
        figures.updates = args.updates * args.rounds
        return figures
    finally:
        setattr(owner, name, shipped)
        loop.close()
        bench.close()


def render(figures: Figures, switch: str, load: tuple[float, ...]) -> str:
    lines = [
        f"{switch}: {figures.updates:,} PATCHes each way; load average "
        f"{load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} after",
        "| a PATCH, ms (median of the rounds) | on | off | off - on |",
        "|---|---:|---:|---:|",
    ]
    for kind in KINDS:
        on, off = figures.median(kind, True), figures.median(kind, False)
        lines.append(f"| {kind} | {on:.3f} | {off:.3f} | {off - on:+.3f} |")
    return "\n".join(lines)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--switch", default=DEFAULT_SWITCH, help="MODULE:NAME of a boolean")
    parser.add_argument("--contacts", type=int, default=20_000)
    parser.add_argument("--audiences", type=int, default=100)
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=8)
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> Figures | None:
    """One whole run on a throw-away PostgreSQL, its table printed; None without one."""
    return measured_list(args, measure, lambda f, _: render(f, args.switch, os.getloadavg()))


def main(argv: Sequence[str] | None = None) -> int:
    run(parse(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
