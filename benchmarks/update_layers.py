"""`python -m benchmarks.update_layers`: the update of `benchmarks.million`, ours by layer.

    python -m benchmarks.million ... --only reads      the update's ratio to the hand-written
    python -m benchmarks.update_layers [--rows N] [--db sqlite|postgresql] [--updates U]

`benchmarks.million` times one contact update (a PATCH moving a contact across the audience)
against the hand-written SQL doing the same writes. This takes the same two lists (loaded by
the hand-written import), the same audience and the same PATCHes, and shows where ours spends
its CPU: each layer's own thread time (`benchmarks/rate_spans.py`: FastAPI's and the hot
route's thread hop made a call in place, so the request runs in this thread) and each SQL
statement's, an update's share, beside the hand-written update's CPU. What neither shows is
the hop's own wall time, which `benchmarks.million` includes.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Sequence
from dataclasses import dataclass

from . import million
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


def measure(url: str, name: str, rows: int, updates: int) -> Layers:
    contacts = million.import_rows(rows)
    gc.collect()
    gc.freeze()
    service = million.Service(url)
    try:
        million.import_hand(service, contacts, service.ours)
        million.import_hand(service, contacts)
        million.analyze(service)
        _, ours_id, _ = million.audience_ours(service)
        _, hand_id, _ = million.audience_hand(service)
        ours, hand = million.update_pair(service, ours_id, hand_id)
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
    args = parser.parse_args(argv)
    with million.database(args.db) as (url, name):
        if url is None:
            print(f"{args.db}: {name}")
            return 0
        print(render(measure(url, name, args.rows, args.updates)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
