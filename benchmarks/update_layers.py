"""`python -m benchmarks.update_layers`: the update of `benchmarks.million`, ours by layer.

    python -m benchmarks.million ... --only reads      the update's ratio to the hand-written
    python -m benchmarks.update_layers [--rows N] [--db sqlite|postgresql] [--updates U]
    python -m benchmarks.update_layers --cpu ...    ours (driver path on, off) and hand, no spans
    python -m benchmarks.update_layers --db postgresql --statements ...   the server's side

`benchmarks.million` times one contact update (a PATCH moving a contact across the audience)
against the hand-written SQL doing the same writes. This takes the same two lists (loaded by
the hand-written import), the same audience and the same PATCHes, and shows where ours spends
its CPU: each layer's own thread time (`benchmarks/rate_spans.py`: FastAPI's and the hot
route's thread hop made a call in place, so the request runs in this thread) and each SQL
statement's, an update's share, beside the hand-written update's CPU. What neither shows is
the hop's own wall time, which `benchmarks.million` includes, nor the database server's time:
`--statements` (PostgreSQL) shows that, each side's statements an update with the server's time
executing and planning each (`pg_stat_statements`, as `benchmarks.rate_layers --statements`).
"""

from __future__ import annotations

import argparse
import gc
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import create_engine, text

from . import million
from .pgserver import postgres
from .rate_layers import _STATEMENT_COSTS, STATEMENT_SETTINGS, StatementCost
from .rate_spans import Spans, inline_threads, instrumented


@dataclass
class Layers:
    """An update's CPU, ours and hand-written, and ours by layer and by statement."""

    database: str
    rows: int
    updates: int
    ours_ms: float
    hand_ms: float
    spans: Spans


def _update_pair(service: million.Service, contacts: list[dict[str, Any]]) -> Any:
    """`million.update_pair` on the service's two lists, both loaded with `contacts` by the
    hand-written import, each with its audience."""
    million.import_hand(service, contacts, service.ours)
    million.import_hand(service, contacts)
    million.analyze(service)
    _, ours_id, _ = million.audience_ours(service)
    _, hand_id, _ = million.audience_hand(service)
    return million.update_pair(service, ours_id, hand_id)


def measure(url: str, name: str, rows: int, updates: int) -> Layers:
    contacts = million.import_rows(rows)
    gc.collect()
    gc.freeze()
    service = million.Service(url)
    try:
        ours, hand = _update_pair(service, contacts)
        for _ in range(min(updates, 40)):  # warm: every statement prepared, every cache filled
            ours(), hand()
        spans = Spans()
        with inline_threads(), instrumented(spans, service.database.engine):
            started = time.thread_time()
            for _ in range(updates):
                ours()
            ours_seconds = time.thread_time() - started
        started = time.thread_time()
        for _ in range(updates):
            hand()
        hand_seconds = time.thread_time() - started
    finally:
        service.close()
        gc.unfreeze()
    return Layers(name, rows, updates, ours_seconds / updates * 1e3,
                  hand_seconds / updates * 1e3, spans)  # fmt: skip


@dataclass
class Cpu:
    """An update's CPU in ms (medians of interleaved rounds, no spans): ours with the write's
    fixed statements on the driver's cursor (`driver_statements`), ours without, and the
    hand-written update, each on lists of its own in one database (`ours_off` NaN when not
    measured)."""

    database: str
    rows: int
    ours: float
    ours_off: float
    hand: float


def cpu(
    url: str, name: str, rows: int, updates: int, rounds: int = 5, with_off: bool = True
) -> Cpu:
    """`Cpu` over `updates` updates a round; the sides take turns, `rounds` times. Without
    `with_off`, ours with the driver path off is left out, and with it the second service's
    two lists (at a million contacts, two million rows and minutes fewer to load)."""
    contacts = million.import_rows(rows)
    gc.collect()
    gc.freeze()
    services = [million.Service(url)]
    if with_off:
        services.append(million.Service(url, driver_statements=False))
    try:
        pairs = [_update_pair(service, contacts) for service in services]
        sides = {"on": pairs[0][0], "hand": pairs[0][1]}
        if with_off:
            sides["off"] = pairs[1][0]
        spent: dict[str, list[float]] = {label: [] for label in sides}
        with inline_threads():
            for call in sides.values():
                for _ in range(min(updates, 40)):  # warm: statements prepared, caches filled
                    call()
            for _ in range(rounds):
                for label, call in sides.items():
                    started = time.thread_time()
                    for _ in range(updates):
                        call()
                    spent[label].append((time.thread_time() - started) / updates * 1e3)
    finally:
        for service in services:
            service.close()
        gc.unfreeze()
    middle = {label: sorted(ms)[len(ms) // 2] for label, ms in spent.items()}
    return Cpu(name, rows, middle["on"], middle.get("off", float("nan")), middle["hand"])


def statements(url: str, rows: int, updates: int) -> dict[str, list[StatementCost]]:
    """Each side's statements on the server an update, over `updates` updates a side after a
    warm-up, counted from a reset of `pg_stat_statements`."""
    contacts = million.import_rows(rows)
    service = million.Service(url)
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as connection:
            connection.execute(text("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"))
            connection.commit()
        ours, hand = _update_pair(service, contacts)
        for _ in range(min(updates, 40)):
            ours(), hand()
        return {side: _server_costs(engine, call, updates)
                for side, call in (("ours", ours), ("hand-written", hand))}  # fmt: skip
    finally:
        service.close()
        engine.dispose()


def statements_on_a_server(rows: int, updates: int) -> dict[str, list[StatementCost]] | None:
    """`statements` on a throw-away server with `pg_stat_statements` (or the one named by the
    environment); None without a server."""
    with postgres(STATEMENT_SETTINGS) as (server, _):
        return None if server is None else statements(server, rows, updates)


def update_statement_ms(costs: list[StatementCost]) -> float:
    """The server's time executing a side's `UPDATE contacts` an update (its triggers' nested
    statements within it)."""
    return sum(c.execute_ms for c in costs if c.toplevel and c.query.startswith("UPDATE contacts"))


def _server_costs(engine: Any, call: Any, updates: int) -> list[StatementCost]:
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_stat_statements_reset()"))
        connection.commit()
    with inline_threads():
        for _ in range(updates):
            call()
    with engine.connect() as connection:
        found = connection.execute(_STATEMENT_COSTS).all()
    return [
        StatementCost(
            " ".join(query.split()), calls / updates, spent / updates, planned / updates, top
        )  # fmt: skip
        for query, calls, spent, planned, top in found
    ]


def render_statements(rows: int, found: dict[str, list[StatementCost]]) -> str:
    lines = [f"PostgreSQL, {rows:,} contacts: the server's statements an update"]
    for side, costs in found.items():
        outer = [cost for cost in costs if cost.toplevel]
        lines += [
            "",
            f"{side}: {sum(c.calls for c in outer):.1f} statements, "
            f"{sum(c.execute_ms for c in outer):.3f} ms executing, "
            f"{sum(c.plan_ms for c in outer):.3f} ms planning",
            "| statement | an update | execute, ms | plan, ms |",
            "|---|---:|---:|---:|",
        ]
        lines += [
            f"| `{c.query[:80]}`{'' if c.toplevel else ' (nested)'} | {c.calls:.2f} | "
            f"{c.execute_ms:.3f} | {c.plan_ms:.3f} |"
            for c in costs[:10]
        ]
    return "\n".join(lines)


def render_cpu(found: Cpu) -> str:
    lines = [
        f"{found.database}, {found.rows:,} contacts: CPU an update (median of interleaved "
        "rounds, no spans)",
        "",
        "| side | ms an update | ÷ hand |",
        "|---|---:|---:|",
        f"| ours | {found.ours:.3f} | {found.ours / found.hand:.2f}x |",
    ]
    if not math.isnan(found.ours_off):
        off = (
            f"| ours, driver path off | {found.ours_off:.3f} | {found.ours_off / found.hand:.2f}x |"
        )
        lines.append(off)
    return "\n".join([*lines, f"| hand-written | {found.hand:.3f} | 1.00x |"])


def render(layers: Layers) -> str:
    each = layers.updates
    lines = [
        f"{layers.database}, {layers.rows:,} contacts, {each} updates a side: CPU an update, "
        f"ours {layers.ours_ms:.2f} ms (spans on), hand-written {layers.hand_ms:.2f} ms",
        "",
        "| ours by layer | ms an update |",
        "|---|---:|",
    ]
    own = layers.spans.own.most_common()
    lines += [f"| {layer} | {seconds / each * 1e3:.3f} |" for layer, seconds in own]
    lines += ["", "| ours by statement | an update runs it | ms an update |", "|---|---:|---:|"]
    statements = layers.spans.statements.most_common()
    lines += [
        f"| {statement} | {layers.spans.counts[statement] / each:.2f} | "
        f"{seconds / each * 1e3:.3f} |"
        for statement, seconds in statements
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--updates", type=int, default=400)
    parser.add_argument("--cpu", action="store_true", help="ours (driver path on, off), hand")
    parser.add_argument(
        "--without-off", action="store_true", help="with --cpu: ours (driver path on) and hand"
    )
    parser.add_argument(
        "--statements", action="store_true",
        help="PostgreSQL's time by statement, both sides (pg_stat_statements)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.statements:
        found = statements_on_a_server(args.rows, args.updates)
        print(render_statements(args.rows, found) if found else "postgresql: no server")
        return 0
    with million.database(args.db) as (url, name):
        if url is None:
            print(f"{args.db}: {name}")
            return 0
        if args.cpu:
            measured = cpu(url, name, args.rows, args.updates, with_off=not args.without_off)
            print(render_cpu(measured))
        else:
            print(render(measure(url, name, args.rows, args.updates)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
