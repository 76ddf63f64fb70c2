"""The overlap of a million-contact list's audiences: the counts kept on write against the grouped
query over `memberships`, and what keeping them adds to a contact update.

    python -m benchmarks.overlap_kept [--contacts N] [--runs N] [--postgres] [--no-sqlite]

One service database (SQLite, and a throw-away PostgreSQL with `--postgres`), through the
service's own code in process:

- **the overlap**: a list of `--contacts` contacts (written as `benchmarks.million` writes its
  hand list) and 50 audiences of varied sizes (`SHARES`: from 65 % of the list to 0.1 %), their
  membership rows written directly, then `audience_overlaps` filled by migration 0017's own
  statement. The use case `overlaps.overlap` is timed for 3, 10 and 50 audiences, reading the
  kept pairs and with `kept=False` (the grouped mask query), the median of `--runs`.
- **a contact update** on a list of 2,000 contacts with 100 smart audiences of points
  thresholds (made through the API): a PATCH moving one contact across all 100 audiences and
  one moving it across one, with the pairs kept and with their counting left out (the code as
  before), the statements sent and the median milliseconds.

A measurement, not a test: nothing asserts a timing (tests/test_benchmarks_overlap.py runs it
tiny, for its shape only).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

from sqlalchemy import event

from audiencefilter.service import db
from audiencefilter.service.db.models import AudienceOverlap, new_id
from audiencefilter.service.domain.membership import overlaps as kept_pairs
from audiencefilter.service.domain.use_cases import overlaps

from . import million

SHARES = (0.65, 0.02, 0.02, *(0.15,) * 7, *(0.005, 0.002, 0.01, 0.001) * 10)
"""The 50 audiences' shares of the list: the first ten are `benchmarks.overlap_query`'s (1.74
memberships a contact, the figures measured before), forty small ones besides."""
UPDATE_AUDIENCES = 100
UPDATE_CONTACTS = 2000


@dataclass
class Result:
    database: str
    contacts: int
    fill_seconds: float = 0.0
    overlap: list[tuple[int, float, float | None]] = field(default_factory=list)
    update: list[tuple[str, int, float, int, float]] = field(default_factory=list)
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)


def _median_ms(call: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _fill_statement() -> Any:
    """Migration 0017's fill (its file name is no Python name)."""
    path = Path(db.__file__).parent / "migrations" / "versions" / "0017_audience_overlaps.py"
    spec = importlib.util.spec_from_file_location("migration_0017", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fill(AudienceOverlap.__table__)


def populate(service: million.Service, contacts: int, seed: int = 7) -> list[str]:
    """`contacts` contacts in the hand list, 50 manual audiences of `SHARES` and their rows."""
    rows = [
        {"email": f"k{i}@example.com", "points": i % 1000, "data": {},
         "createdAt": "2026-01-01T00:00:00+00:00"}
        for i in range(contacts)
    ]  # fmt: skip
    million.import_hand(service, rows)
    ids = [r[0] for r in service.sql("SELECT id FROM contacts WHERE list_id = :l", l=service.hand)]
    chooser = random.Random(seed)
    audiences = [new_id("aud") for _ in range(50)]
    now = datetime.now(UTC)
    for number, audience_id in enumerate(audiences):
        service.sql(
            "INSERT INTO audiences (id, list_id, name, mode, created_at, updated_at) "
            "VALUES (:id, :list, :name, 'manual', :now, :now)",
            id=audience_id, list=service.hand, name=f"A{number}", now=now,
        )  # fmt: skip
    members = (
        (a, c, now)
        for number, a in enumerate(audiences)
        for c in chooser.sample(ids, max(1, int(SHARES[number] * len(ids))))
    )
    _write_memberships(service, members)
    million.analyze(service)
    return audiences


def _write_memberships(service: million.Service, rows: Iterator[tuple[str, str, datetime]]) -> None:
    raw = service.engine.raw_connection()
    try:
        cursor = raw.cursor()
        names = "audience_id, contact_id, entered_at, holdout"
        if service.engine.dialect.name == "postgresql":
            with cursor.copy(f"COPY memberships ({names}) FROM STDIN") as copy:  # type: ignore[attr-defined]
                for a, c, at in rows:
                    copy.write_row((a, c, at, False))
        else:
            at_text = "%Y-%m-%d %H:%M:%S.%f"
            cursor.execute("BEGIN")
            cursor.executemany(
                f"INSERT INTO memberships ({names}) VALUES (?, ?, ?, 0)",
                ((a, c, at.strftime(at_text)) for a, c, at in rows),
            )
            cursor.execute("COMMIT")
        raw.commit()
    finally:
        raw.close()


def measure_overlap(
    service: million.Service, audiences: list[str], runs: int, result: Result
) -> None:
    started = time.perf_counter()
    with service.engine.begin() as connection:
        connection.execute(_fill_statement())
    result.fill_seconds = time.perf_counter() - started
    million.analyze(service)
    for count in (3, 10, 50):
        asked = ",".join(audiences[:count])

        def read(kept: bool, asked: str = asked) -> Any:
            return overlaps.overlap(service.database, service.account_id, service.hand, asked, kept)

        assert read(True).matrix == read(False).matrix  # the kept pairs are the counted ones
        kept_ms = _median_ms(lambda: read(True), runs)
        grouped_ms = _median_ms(lambda: read(False), max(1, runs // 5))
        result.overlap.append((count, kept_ms, grouped_ms))


@contextmanager
def _counted(service: million.Service) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(*args: Any) -> None:
        seen.append(str(args[2]))

    event.listen(service.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(service.engine, "before_cursor_execute", record)


@contextmanager
def _not_kept() -> Iterator[None]:
    """The write path as it was before the pairs were kept: their counting left out."""
    with (
        mock.patch.object(kept_pairs, "shift_of", lambda *args: Counter()),
        mock.patch.object(kept_pairs, "audience_moved", lambda *args: None),
        mock.patch.object(kept_pairs, "settle", lambda *args: None),
    ):
        yield


def measure_update(service: million.Service, runs: int, result: Result) -> None:
    rows = [{"email": f"u{i}@example.com", "points": i % 1000} for i in range(UPDATE_CONTACTS)]
    for start in range(0, len(rows), million.BATCH):
        batch = rows[start : start + million.BATCH]
        service.call("POST", f"/contacts/import?listId={service.ours}&events=false", json=batch)
    for number in range(UPDATE_AUDIENCES):
        body = {"name": f"P{number}", "listId": service.ours,
                "filters": {"points": {"gte": number * 10}}}  # fmt: skip
        service.call("POST", "/audiences", json=body)
    path = f"/contacts?listId={service.ours}&limit=1"
    contact = service.call("GET", path).json()["data"]["contacts"][0]["id"]
    for what, low, high in (("across 100 audiences", -1, 5000), ("across 1 audience", 505, 515)):
        for kept in (False, True):
            patch = _patcher(service, contact, iter([low, high] * (runs + 1)))

            with _not_kept() if not kept else _nothing():
                patch()  # warm
                with _counted(service) as seen:
                    patch()
                statements = len(seen)
                ms = _median_ms(patch, runs)
            label = f"{what}, {'kept' if kept else 'not kept'}"
            # The pairs' upsert, or the note of a single write (`overlap_noted`) in its place.
            upserts = sum("audience_overlaps" in s or "overlap_noted" in s for s in seen)
            result.update.append((label, statements, ms, upserts, 0.0))


def _patcher(service: million.Service, contact: str, steps: Iterator[int]) -> Callable[[], Any]:
    """A PATCH of the contact's points, the next of `steps` each call."""

    def patch() -> Any:
        return service.call("PATCH", f"/contacts/{contact}", json={"points": next(steps)})

    return patch


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def run(name: str, url: str, contacts: int, runs: int) -> Result:
    result = Result(name, contacts)
    service = million.Service(url)
    try:
        audiences = populate(service, contacts)
        measure_overlap(service, audiences, runs, result)
        measure_update(service, runs, result)
    finally:
        service.close()
    result.load = os.getloadavg()
    return result


def render(result: Result) -> str:
    load = ", ".join(f"{x:.2f}" for x in result.load)
    lines = [
        f"{result.database}, {result.contacts:,} contacts, 50 audiences (load {load})",
        f"fill of audience_overlaps (migration 0017): {result.fill_seconds:.2f} s",
        "",
        "| audiences | kept pairs | grouped query |",
        "|---|---|---|",
    ]
    for count, kept_ms, grouped_ms in result.overlap:
        grouped = f"{grouped_ms:.1f} ms" if grouped_ms is not None else "-"
        lines.append(f"| {count} | {kept_ms:.1f} ms | {grouped} |")
    lines += [
        "",
        "| contact update (100 audiences) | statements | median | pair writes |",
        "|---|---|---|---|",
    ]
    for label, statements, ms, upserts, _ in result.update:
        lines.append(f"| {label} | {statements} | {ms:.1f} ms | {upserts} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--contacts", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=11, help="timed runs of each read (median)")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL too")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL alone")
    args = parser.parse_args(argv)
    kinds = ("postgresql",) if args.no_sqlite else ("sqlite",)
    for kind in ("sqlite", "postgresql") if args.postgres and not args.no_sqlite else kinds:
        with million.database(kind) as (url, name):
            if url is None:
                print(f"{kind}: {name}")
                continue
            print(render(run(name, url, args.contacts, args.runs)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
