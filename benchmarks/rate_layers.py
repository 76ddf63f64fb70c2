"""Where one `PATCH /v4/contacts/{id}` spends its CPU, by layer, beside a hand-written endpoint.

    python -m benchmarks.rate_layers [--contacts N] [--audiences A] [--updates U] [--rounds R]
                                     [--statements]

A throw-away PostgreSQL on 127.0.0.1 (`benchmarks/pgserver.py`), a list of N synthetic contacts
with A smart audiences (`benchmarks/service_membership.py`, as `benchmarks.service_rate` sets
them up), the service's ASGI application in this process. Each round PATCHes U random contacts
(`points` and `country`, which the filters read) through the whole application, then U through
a hand-written Starlette endpoint doing the same work with the same driver (the lock, the
`UPDATE ... RETURNING` with the stored memberships, the list's filters judged by `af.compile`,
the difference and its events in one statement, the answer's JSON), alternating so that a slow
moment of a shared machine hits both. Printed:

- CPU per update in this process: the application's thread (thread time, FastAPI's thread
  hops made calls in place) and, with the real hops, the whole process (process time);
- PostgreSQL's CPU per update, from /proc of the server's processes;
- the function calls an update makes on the application's thread, as cProfile counts them
  (`calls_per_update`): the work itself, which the machine's load does not move;
- the application's CPU by layer (`benchmarks/rate_spans.py`: each layer's own thread time,
  its inner layers' taken out), and by SQL statement;
- with `--statements`, PostgreSQL's side by statement (`pg_stat_statements`, preloaded in the
  throw-away server): each side's statements an update, the server's time executing and
  planning each (the triggers' statements nested in theirs), after U more PATCHes a side.

What is not in process here: the HTTP server (uvicorn's parsing, its event loop's sockets).
A measurement script; the smoke test (tests/test_benchmarks_rate_layers.py) runs it tiny.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import text
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import audiencefilter as af

from .asgi_in_place import Asgi, exchange, scope
from .pgserver import measured_list
from .rate_load import COUNTRIES
from .rate_spans import SQL, Spans, inline_threads, instrumented
from .service_membership import Bench


class Hand:
    """The hand-written endpoint: the list's filters compiled once, one connection of the
    application's pool a request."""

    def __init__(self, engine: Any, list_id: str) -> None:
        self.engine = engine
        self.list_id = list_id
        with engine.connect() as connection:
            rows = connection.execute(
                text("SELECT id, filters FROM audiences WHERE list_id = :l AND mode = 'smart'"),
                {"l": list_id},
            ).all()
        self.audiences = [(str(r[0]), af.compile(af.parse(_json(r[1])))) for r in rows]
        self.inline = True
        self.app = Starlette(routes=[Route("/hand/{id}", endpoint(self), methods=["PATCH"])])


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


_UPDATE = (
    "UPDATE contacts SET points = %s, country = %s WHERE id = %s "
    "RETURNING id, email, country, city, points, referrals, is_verified, data, "
    "ARRAY(SELECT audience_id FROM memberships WHERE contact_id = %s)"
)
_WRITE = (
    "WITH gone AS (DELETE FROM memberships WHERE contact_id = %(c)s "
    "AND audience_id = ANY(%(left)s)), "
    "came AS (INSERT INTO memberships (audience_id, contact_id, entered_at, holdout) "
    "SELECT a, %(c)s, now(), false FROM unnest(%(entered)s::text[]) a), "
    "head AS (UPDATE event_heads SET position = position + %(n)s WHERE list_id = %(l)s "
    "RETURNING position) "
    "INSERT INTO events (id, list_id, position, type, contact_id, audience_id, cause, "
    "occurred_at, payload) SELECT e.id, %(l)s, head.position - %(n)s + e.k, e.t, %(c)s, "
    "e.a, 'contact.updated', now(), '{}' FROM head, unnest(%(ids)s::text[], %(types)s::text[], "
    "%(auds)s::text[]) WITH ORDINALITY AS e(id, t, a, k)"
)


_NAMES = ("id", "email", "country", "city", "points", "referrals", "isVerified", "data")
_READ = (
    "SELECT id, email, country, city, points, referrals, is_verified, data, "
    "ARRAY(SELECT audience_id FROM memberships WHERE contact_id = c.id) "
    "FROM contacts c WHERE id = ANY(%s)"
)


def wrong_members(hand: Hand, contact_ids: list[str]) -> int:
    """How many of these contacts' stored memberships differ from their filters' judgement
    (`af.compile` of each stored filter on the row as it is now): a cheaper write cannot be a
    wrong one, on either side."""
    raw = hand.engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute(_READ, (contact_ids,))
        rows = cursor.fetchall()
        raw.rollback()
    finally:
        raw.close()
    judged = [
        ({a for a, holds in hand.audiences if holds(dict(zip(_NAMES, row[:8], strict=True)))}, row)
        for row in rows
    ]
    return sum(1 for now, row in judged if now != set(row[8]))


def hand_patch(hand: Hand, contact_id: str, sent: dict[str, Any]) -> dict[str, Any]:
    """The update by hand: lock, write, judge, difference and events, commit; the row."""
    raw = hand.engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (hand.list_id,))
        cursor.execute(_UPDATE, (sent["points"], sent["country"], contact_id, contact_id))
        row = cursor.fetchone()
        record = dict(zip(_NAMES, row[:8], strict=True))
        was = set(row[8])
        now = {audience for audience, holds in hand.audiences if holds(record)}
        left, entered = sorted(was - now), sorted(now - was)
        _write(cursor, hand.list_id, contact_id, left, entered)
        raw.commit()
    finally:
        raw.close()
    return {"data": {"contact": {**record, "audiences": sorted(now)}}}


def _write(cursor: Any, list_id: str, contact_id: str, left: list[str], entered: list[str]) -> None:
    auds: list[str | None] = [None, *left, *entered]
    types = (
        ["contact.updated"] + ["audience.left"] * len(left) + ["audience.entered"] * len(entered)
    )
    ids = [f"evt_{os.urandom(10).hex()}" for _ in auds]
    cursor.execute(
        _WRITE,
        {"c": contact_id, "l": list_id, "left": left, "entered": entered, "n": len(auds),
         "ids": ids, "types": types, "auds": auds},
    )  # fmt: skip


def endpoint(hand: Hand) -> Callable[[Request], Any]:
    async def patch(request: Request) -> Response:
        sent = await request.json()
        contact_id = request.path_params["id"]
        if hand.inline:
            answer = hand_patch(hand, contact_id, sent)
        else:
            answer = await run_in_threadpool(hand_patch, hand, contact_id, sent)
        return Response(json.dumps(answer, default=str), media_type="application/json")

    return patch


def postgres_cpu(engine: Any) -> float:
    """CPU seconds of the server's processes so far (the postmaster's children), from /proc."""
    with engine.connect() as connection:
        backend = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
    postmaster = _stat(str(backend))[1]
    total = 0.0
    for entry in Path("/proc").iterdir():
        fields = _stat(entry.name) if entry.name.isdigit() else []
        if fields and fields[1] == postmaster:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _stat(pid: str) -> list[str]:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return []


@dataclass
class Figures:
    """Seconds summed over the rounds: by side, by clock, and the layers of ours."""

    updates: int = 0
    thread: dict[str, float] = field(default_factory=lambda: {"ours": 0.0, "hand": 0.0})
    process: dict[str, float] = field(default_factory=lambda: {"ours": 0.0, "hand": 0.0})
    database: dict[str, float] = field(default_factory=lambda: {"ours": 0.0, "hand": 0.0})
    spans: Spans = field(default_factory=Spans)
    spanned: int = 0
    calls: dict[str, float] = field(default_factory=lambda: {"ours": 0.0, "hand": 0.0})
    """Python calls an update (`calls_per_update`), by side."""
    wrong: int = -1
    """Contacts written whose stored memberships differ from their filters' (`wrong_members`)."""
    statements: dict[str, list[StatementCost]] = field(default_factory=dict)
    """PostgreSQL's statements an update, by side (`--statements`)."""


STATEMENT_SETTINGS = {
    "shared_preload_libraries": "pg_stat_statements",
    "pg_stat_statements.track": "all",
    "pg_stat_statements.track_planning": "on",
}
_STATEMENT_COSTS = text(
    "SELECT query, calls, total_exec_time, total_plan_time, toplevel FROM pg_stat_statements"
    " WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time + total_plan_time DESC"
)


@dataclass(frozen=True)
class StatementCost:
    """One statement's share of an update on the server: how many times it ran, and the
    milliseconds executing and planning it (a nested statement's are in its caller's too)."""

    query: str
    calls: float
    execute_ms: float
    plan_ms: float
    toplevel: bool


def statement_costs(
    loop: asyncio.AbstractEventLoop, run: Run, work: list[tuple[str, bytes]], engine: Any
) -> list[StatementCost]:
    """PostgreSQL's statements of `work`, an update's share each, counted from a reset."""
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_stat_statements_reset()"))
        connection.commit()
    with inline_threads():
        _patches(loop, run, work)
    with engine.connect() as connection:
        rows = connection.execute(_STATEMENT_COSTS).all()
    n = len(work)
    return [
        StatementCost(" ".join(query.split()), calls / n, executed / n, planned / n, top)
        for query, calls, executed, planned, top in rows
    ]


@dataclass
class Run:
    """What one side needs to PATCH: its application, the path of a contact, the key."""

    app: Asgi
    prefix: str
    key: str


def _bodies(ids: list[str], rng: random.Random) -> list[tuple[str, bytes]]:
    return [
        (i, json.dumps({"points": rng.randrange(200), "country": rng.choice(COUNTRIES)}).encode())
        for i in ids
    ]


def _patches(loop: asyncio.AbstractEventLoop, run: Run, work: list[tuple[str, bytes]]) -> None:
    """The PATCHes of `work` one after the other, in one task: AnyIO ties its worker threads
    to the task the loop runs (its root task) and stops them when that task ends, so a task a
    PATCH would start a thread for each of them, which no server does (uvicorn's loop runs one
    task throughout)."""
    headers = [(b"content-type", b"application/json"), (b"apikey", run.key.encode())]

    async def each() -> None:
        for contact_id, body in work:
            request = scope("PATCH", f"{run.prefix}{contact_id}", b"", headers)
            status = (await exchange(run.app, request, body)).status_code
            assert status == 200, status

    loop.run_until_complete(each())


def _timed(
    loop: asyncio.AbstractEventLoop, run: Run, work: list[tuple[str, bytes]], engine: Any
) -> tuple[float, float, float]:
    """Thread, process and PostgreSQL CPU seconds of `work`."""
    database, process, thread = postgres_cpu(engine), time.process_time(), time.thread_time()
    _patches(loop, run, work)
    thread, process = time.thread_time() - thread, time.process_time() - process
    return thread, process, postgres_cpu(engine) - database


def calls_per_update(
    loop: asyncio.AbstractEventLoop, run: Run, work: list[tuple[str, bytes]]
) -> int:
    """The function calls an update makes on this thread (Python functions and the C functions
    they call, as cProfile counts them), with FastAPI's thread hops made calls in place: a
    figure of the work itself, which neither the machine's load nor its speed moves, so a cut
    of a few per cent shows where the CPU time of a busy machine cannot. The mean, to the
    call."""
    profiler = cProfile.Profile()
    with inline_threads():
        profiler.enable()
        try:
            _patches(loop, run, work)
        finally:
            profiler.disable()
    stats: dict[Any, tuple[Any, ...]] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    return round(sum(int(counted[1]) for counted in stats.values()) / len(work))


def one_round(
    loop: asyncio.AbstractEventLoop, sides: dict[str, Run], hand: Hand, ids: list[str],
    figures: Figures, rng: random.Random,
) -> None:  # fmt: skip
    """Each side in place (thread time), then with its thread hops (process time), then ours
    under its spans."""
    engine = hand.engine
    for inline in (True, False):
        hand.inline = inline
        for name, run in sides.items():
            work = _bodies(rng.sample(ids, len(ids) // 3), rng)
            if inline:
                with inline_threads():
                    thread, _, database = _timed(loop, run, work, engine)
                figures.thread[name] += thread
                figures.database[name] += database
            else:
                figures.process[name] += _timed(loop, run, work, engine)[1]
    work = _bodies(rng.sample(ids, len(ids) // 3), rng)
    with inline_threads(), instrumented(figures.spans, engine):
        _patches(loop, sides["ours"], work)
    figures.spanned += len(work)
    figures.updates += len(ids) // 3


def measure(url: str, args: argparse.Namespace) -> Figures:
    bench = Bench(url, args.contacts, args.audiences)
    loop = asyncio.new_event_loop()
    try:
        engine = bench.database.engine
        if args.statements:
            with engine.connect() as connection:
                connection.execute(text("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"))
                connection.commit()
        hand = Hand(engine, bench.with_audiences)
        with engine.connect() as connection:
            ids = list(connection.execute(
                text("SELECT id FROM contacts WHERE list_id = :l ORDER BY random() LIMIT :n"),
                {"l": bench.with_audiences, "n": args.updates * 3},
            ).scalars())  # fmt: skip
        key = bench.headers["apiKey"]
        ours = Run(bench.client.app, "/v4/contacts/", key)
        sides = {"ours": ours, "hand": Run(hand.app, "/hand/", key)}
        rng, figures = random.Random(11), Figures()
        one_round(loop, sides, hand, ids, Figures(), rng)  # warm-up
        for _ in range(args.rounds):
            one_round(loop, sides, hand, ids, figures, rng)
        counted = _bodies(ids[: max(1, len(ids) // 3)], random.Random(5))
        for seed, (name, run) in enumerate(sides.items()):
            figures.calls[name] = calls_per_update(loop, run, counted)
            if args.statements:  # new values, so that each write changes its contact
                work = _bodies([i for i, _ in counted], random.Random(7 + seed))
                figures.statements[name] = statement_costs(loop, run, work, engine)
        figures.wrong = wrong_members(hand, ids)
        return figures
    finally:
        loop.close()
        bench.close()


def _ms(seconds: float, count: int) -> str:
    return f"{seconds / max(1, count) * 1000:.2f}"


def render(figures: Figures, load: tuple[tuple[float, ...], tuple[float, ...]]) -> str:
    n = figures.updates
    ours, hand = figures.thread["ours"], figures.thread["hand"]
    lines = [
        f"load average {', '.join(f'{v:.2f}' for v in load[0])} before, "
        f"{', '.join(f'{v:.2f}' for v in load[1])} after; {n} updates a side; "
        f"{figures.wrong} contacts with memberships other than their filters'",
        "| CPU per update, ms | ours | hand | ours ÷ hand |",
        "|---|---:|---:|---:|",
        f"| this thread (calls in place) | {_ms(ours, n)} | {_ms(hand, n)} | {ours / hand:.2f}x |",
        f"| this process (thread hops) | {_ms(figures.process['ours'], n)} | "
        f"{_ms(figures.process['hand'], n)} | "
        f"{figures.process['ours'] / figures.process['hand']:.2f}x |",
        f"| PostgreSQL | {_ms(figures.database['ours'], n)} | "
        f"{_ms(figures.database['hand'], n)} | "
        f"{figures.database['ours'] / max(1e-9, figures.database['hand']):.2f}x |",
        f"| Python calls an update, this thread (cProfile) | {figures.calls['ours']:,.0f} | "
        f"{figures.calls['hand']:,.0f} | "
        f"{figures.calls['ours'] / max(1.0, figures.calls['hand']):.2f}x |",
        "",
    ]
    return "\n".join(lines + layer_table(figures) + statement_table(figures))


def statement_table(figures: Figures, top: int = 8) -> list[str]:
    """Each side's costliest statements on the server, and its top-level statements' sum."""
    lines: list[str] = []
    for side, costs in figures.statements.items():
        outer = [cost for cost in costs if cost.toplevel]
        executed = sum(cost.execute_ms for cost in outer)
        planned = sum(cost.plan_ms for cost in outer)
        count = sum(cost.calls for cost in outer)
        lines += [
            "",
            f"PostgreSQL, {side}: {count:.1f} statements an update, {executed:.2f} ms executing "
            f"and {planned:.2f} ms planning them (pg_stat_statements):",
            "| statement | an update | execute, ms | plan, ms |",
            "|---|---:|---:|---:|",
        ]
        for cost in costs[:top]:
            nested = "" if cost.toplevel else " (nested)"
            lines.append(f"| `{cost.query[:70]}`{nested} | {cost.calls:.2f} | "
                         f"{cost.execute_ms:.3f} | {cost.plan_ms:.3f} |")  # fmt: skip
    return lines


def layer_table(figures: Figures) -> list[str]:
    spans, n = figures.spans, figures.spanned
    total = sum(spans.own.values())
    lines = [f"ours by layer ({n} updates under spans, {_ms(total, n)} ms an update):",
             "| layer | ms an update | share |", "|---|---:|---:|"]  # fmt: skip
    for layer, seconds in spans.own.most_common():
        lines.append(f"| {layer} | {_ms(seconds, n)} | {seconds / total:.0%} |")
    lines += ["", f"{SQL}, by statement:", "| statement | a PATCH | ms an update |",
              "|---|---:|---:|"]  # fmt: skip
    for statement, seconds in spans.statements.most_common():
        count = spans.counts[statement] / max(1, n)
        lines.append(f"| `{statement}` | {count:.1f} | {_ms(seconds, n)} |")
    return lines


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--contacts", type=int, default=20_000)
    parser.add_argument("--audiences", type=int, default=100)
    parser.add_argument("--updates", type=int, default=60, help="PATCHes a side a round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--statements", action="store_true", help="PostgreSQL's statements (pg_stat_statements)"
    )
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> Figures | None:
    """One whole run on a throw-away PostgreSQL, its table printed; None without one."""
    settings = STATEMENT_SETTINGS if args.statements else None
    return measured_list(args, measure, lambda f, before: render(f, (before, os.getloadavg())),
                         settings)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    run(parse(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
