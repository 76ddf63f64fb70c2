"""The overlap's grouped query alone, on a SQLite file of membership rows at a given scale.

    python -m benchmarks.overlap_query [--contacts N] [--seed S]

Builds `memberships` as the service declares it (primary key `(audience_id, contact_id)`,
index `(contact_id, audience_id)`) with audiences of 65 %, 2 %, 2 % and seven of 15 % of the
contacts, then times the statement `domain/use_cases/overlaps.py` sends (a bit mask per contact,
contacts counted per mask) for 3 and for 10 audiences, as the planner chooses and with the
audience index forced. It isolates the query's cost from the application's (docs/algebra.md,
*The service's analyses at 1,000,000 contacts*). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

SHARES = (0.65, 0.02, 0.02, *(0.15,) * 7)


def _build(path: Path, contacts: int, seed: int) -> sqlite3.Connection:
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE memberships (audience_id VARCHAR(32), contact_id VARCHAR(32), "
        "entered_at TEXT, PRIMARY KEY (audience_id, contact_id))"
    )
    connection.execute(
        "CREATE INDEX ix_memberships_contact ON memberships (contact_id, audience_id)"
    )
    chooser = random.Random(seed)
    ids = [f"ct_{chooser.getrandbits(80):020x}" for _ in range(contacts)]
    for number, share in enumerate(SHARES):
        rows = (
            (f"aud_{number}", c, "2026-01-01") for c in chooser.sample(ids, int(share * contacts))
        )
        connection.executemany("INSERT INTO memberships VALUES (?, ?, ?)", rows)
    connection.commit()
    connection.execute("ANALYZE")
    connection.commit()
    return connection


def _statement(audiences: int, forced: str) -> str:
    ids = [f"aud_{i}" for i in range(audiences)]
    bits = " ".join(f"WHEN '{a}' THEN {1 << i}" for i, a in enumerate(ids))
    listed = ", ".join(f"'{a}'" for a in ids)
    return (
        f"SELECT mask, count(*) FROM (SELECT sum(CASE audience_id {bits} END) AS mask "
        f"FROM memberships {forced} WHERE audience_id IN ({listed}) GROUP BY contact_id) "
        "GROUP BY mask"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--contacts", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="af-overlap-") as folder:
        connection = _build(Path(folder) / "overlap.db", args.contacts, args.seed)
        rows = connection.execute("SELECT count(*) FROM memberships").fetchone()[0]
        print(f"{args.contacts:,} contacts, {rows:,} membership rows; wall-clock ms")
        for audiences in (3, 10):
            for label, forced in (
                ("as planned", ""),
                ("by audience", "INDEXED BY sqlite_autoindex_memberships_1"),
            ):
                start = time.perf_counter()
                connection.execute(_statement(audiences, forced)).fetchall()
                print(
                    f"  {audiences} audiences, {label}: {(time.perf_counter() - start) * 1000:.0f}"
                )
        connection.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
