"""Where an upsert import's turns spend their statements' time, by statement.

    python -m benchmarks.turn_statements [--contacts N] [--audiences A] [--runs K] [--postgres]

The list with audiences of `benchmarks/service_membership.py` (N synthetic contacts, A smart
audiences), through the whole application in process; after one warm-up, K upsert imports
(`POST /v4/contacts/import?mode=upsert`) of 1,000 random existing contacts, or all of them if
fewer, with new `points` and `country` (which the filters read). Each statement is timed on the
connection, wall time (the server's work and the round trip), and grouped by its first words;
printed a thousand rows, with this process's CPU a row and, on PostgreSQL, the CPU of every
process named `postgres` on the machine (another server's work would count too: run it on a
quiet machine). The turns run one after another under the list's lock when served, so the
import's wall time a row here is about what a row holds the lock (docs/performance-history-rate.md,
*PostgreSQL's part of a turn*). A measurement script, not a test: the smoke test
(tests/test_benchmarks_turns.py) runs it tiny for its shape only.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import event, select

from audiencefilter.service.db.models import Contact

from .rate_load import COUNTRIES
from .service_membership import Bench, run_engines

ROWS = 1000
SHOWN = 12


class Statements:
    """Each statement's wall time on the engine's connections, by its first 70 characters."""

    def __init__(self, engine: Any) -> None:
        self.seconds: Counter[str] = Counter()
        self.count: Counter[str] = Counter()
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, conn: Any, *_: Any) -> None:
        conn.info["statement_started"] = time.perf_counter()

    def _after(self, conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        key = " ".join(statement.split())[:70]
        self.seconds[key] += time.perf_counter() - conn.info["statement_started"]
        self.count[key] += 1

    def clear(self) -> None:
        self.seconds.clear()
        self.count.clear()


def postgres_cpu() -> float:
    """Seconds of CPU of every process named `postgres` (user and system), from /proc."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() != "postgres":
                    continue
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _upsert(bench: Bench, emails: list[str], rng: random.Random) -> int:
    chosen = rng.sample(emails, min(ROWS, len(emails)))
    rows = [
        {"email": email, "points": rng.randrange(200), "country": rng.choice(COUNTRIES)}
        for email in chosen
    ]
    url = f"/contacts/import?listId={bench.with_audiences}&mode=upsert"
    response = bench.call("POST", url, json=rows)
    assert response.status_code == 200, response.text[:300]
    return len(rows)


def _run(name: str, url: str, contacts: int, audiences: int, runs: int) -> None:
    print(f"\n{name}: {contacts:,} contacts, {audiences} smart audiences", flush=True)
    bench = Bench(url, contacts, audiences)
    try:
        with bench.database.reading() as session:
            emails = list(
                session.scalars(select(Contact.email).where(Contact.listId == bench.with_audiences))
            )
        rng = random.Random(7)
        statements = Statements(bench.database.engine)
        _upsert(bench, emails, rng)  # warm-up
        statements.clear()
        on_postgres = bench.database.engine.dialect.name == "postgresql"
        cpu, server, wall = time.process_time(), postgres_cpu(), time.perf_counter()
        rows = sum(_upsert(bench, emails, rng) for _ in range(runs))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        server = postgres_cpu() - server
        _report(statements, rows, cpu, server if on_postgres else None, wall)
    finally:
        bench.close()


def _report(
    statements: Statements, rows: int, cpu: float, server: float | None, wall: float
) -> None:
    def per_row(seconds: float) -> str:
        return f"{seconds / rows * 1000:.3f} ms"

    spent = sum(statements.seconds.values())
    print(
        f"  {rows:,} rows updated; a row: wall {per_row(wall)}, this process's CPU {per_row(cpu)}"
    )
    if server is not None:
        print(f"  PostgreSQL's CPU a row {per_row(server)}")
    count = sum(statements.count.values())
    print(f"  every statement: {per_row(spent)} a row, {count * 1000 / rows:.0f} a thousand rows")
    print("  ms a thousand rows, statements a thousand rows, statement:")
    for key, seconds in statements.seconds.most_common(SHOWN):
        runs = statements.count[key] * 1000 / rows
        print(f"  {seconds * 1_000_000 / rows:9.1f} {runs:7.1f}  {key}")


def main(argv: Sequence[str] | None = None) -> int:
    description = __doc__.splitlines()[0] if __doc__ else None
    return run_engines(_run, argv, description, audiences=100)


if __name__ == "__main__":
    raise SystemExit(main())
