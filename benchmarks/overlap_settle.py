"""The settling of a list's noted contacts: their moved pairs alone against all their pairs
then and now, on the service's database.

    python -m benchmarks.overlap_settle [--contacts N] [--runs N] [--db sqlite|postgresql|both]

A single contact's write notes the contact and the audiences it was in (`overlap_noted`); the
list's pairs move when it settles (`domain/membership/overlaps.py`). Each case writes
`--contacts` notes (64: the settling's period, `overlaps.SETTLE_EVERY`) and their memberships
directly into a migrated database: every contact stays in `stayed` audiences and half enter
`moved` more, half leave as many. The statement counting what the notes move each pair by is
timed both ways (`SETTLE_MOVED_ONLY` on and off), the median of `--runs` each, alternating,
after checking both give the same sums. The hand-written alternative, counting pairs from
`memberships` at read, is `benchmarks.overlap_kept`'s.

A measurement, not a test: nothing asserts a timing (tests/test_benchmarks_overlap.py runs it
tiny, for its shape only).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete

from audiencefilter.service.db import dialects
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import Membership, OverlapNoted
from audiencefilter.service.domain.membership import overlaps

from . import million

CASES = ((33, 1), (33, 3), (60, 1), (10, 1), (33, 33))
"""(audiences stayed in, audiences moved across): a waitlist's contact crossing one threshold
among 33, three, a contact in 60, in 10, and one whose every audience changes."""


@dataclass(frozen=True)
class Result:
    database: str
    contacts: int
    rows: list[tuple[int, int, float, float]]
    load: tuple[float, ...]


def _seed(database: Database, contacts: int, stayed: int, moved: int) -> tuple[str, list[str]]:
    """The notes and memberships of one case; the list's id and its contacts' ids."""
    list_id = f"lst_settle{stayed}x{moved}"
    audiences = [f"aud_settle{n:04}_{'x' * 16}" for n in range(stayed + moved)]
    ids = [f"ctc_settle{stayed}x{moved}_{n}" for n in range(contacts)]
    with database.transaction() as session:
        dialect = dialects.dialect_of(session)
        for at, contact_id in enumerate(ids):
            then, now = (audiences[:stayed], audiences)[:: 1 if at % 2 else -1]
            packed = dialects.packed_ids(dialect, then)
            session.add(OverlapNoted(listId=list_id, contactId=contact_id, audiences=packed))
            session.add_all(Membership(audienceId=a, contactId=contact_id) for a in now)
    return list_id, ids


def _timed(database: Database, list_id: str, runs: int) -> tuple[float, float]:
    """The medians, ms, of counting the notes' pairs moved-only and whole, alternating."""
    times: dict[bool, list[float]] = {True: [], False: []}
    sums: dict[bool, list[Any]] = {}
    with database.reading() as session:
        dialect = dialects.dialect_of(session)
        for _ in range(runs):
            for moved_only in (True, False):
                statement = overlaps._noted_pairs(dialect, moved_only)
                started = time.perf_counter()
                rows = session.execute(statement, {"kept_list": list_id}).all()
                times[moved_only].append((time.perf_counter() - started) * 1000)
                sums[moved_only] = sorted(tuple(row) for row in rows if row[2])
    assert sums[True] == sums[False], "the settling's two ways disagree"
    return statistics.median(times[True]), statistics.median(times[False])


def run(name: str, url: str, contacts: int, runs: int) -> Result:
    """Every case of `CASES` on the database at `url`: (stayed, moved, moved ms, all ms)."""
    service = million.Service(url)
    try:
        rows = [_case(service.database, contacts, runs, *case) for case in CASES]
    finally:
        service.close()
    return Result(name, contacts, rows, os.getloadavg())


def _case(
    database: Database, contacts: int, runs: int, stayed: int, moved: int
) -> tuple[int, int, float, float]:
    list_id, ids = _seed(database, contacts, stayed, moved)
    try:
        return (stayed, moved, *_timed(database, list_id, runs))
    finally:
        with database.transaction() as session:
            session.execute(delete(Membership).where(Membership.contactId.in_(ids)))
            session.execute(delete(OverlapNoted).where(OverlapNoted.listId == list_id))


def render(result: Result) -> str:
    header = f"{result.database}, the settling of {result.contacts} noted contacts"
    table = [
        "| audiences stayed in | moved across | moved pairs | all pairs | moved ÷ all |",
        "|---:|---:|---:|---:|---:|",
        *(
            f"| {stayed} | {moved} | {ms:.2f} ms | {all_ms:.2f} ms | {ms / all_ms:.2f} |"
            for stayed, moved, ms, all_ms in result.rows
        ),
    ]
    load = ", ".join(f"{x:.2f}" for x in result.load)
    return "\n".join([f"{header} (load {load})", "", *table])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--contacts", type=int, default=overlaps.SETTLE_EVERY)
    parser.add_argument("--runs", type=int, default=31, help="timed runs of each way (median)")
    parser.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    args = parser.parse_args(argv)
    for kind in ("sqlite", "postgresql") if args.db == "both" else (args.db,):
        with million.database(kind) as (url, name):
            found = name if url is None else render(run(name, url, args.contacts, args.runs))
            print(found, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
