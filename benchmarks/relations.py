"""Relation filters against hand-written equivalents, side by side in one run.

    .venv/bin/python -m benchmarks.relations            # 100,000 contacts, 1,000,000 actions
    .venv/bin/python -m benchmarks.relations --contacts 2000 --actions 20000 --no-postgres

Two segments, at a fixed clock:
- "share3": at least 3 shares in the last 30 days,
  `count(actions where name = "share" and createdAt >= 30 days ago) >= 3`
- "idle60": no action for 60 days, `actions none (createdAt >= 60 days ago)`

Engines: PostgreSQL, SQLite and DuckDB (`Filter.to_sql` against hand-written SQL, both over
`contacts` and `actions` with the indexes docs/backends-sql-rules.md recommends; the
hand-written count is the idiomatic
`id IN (SELECT sub_id ... GROUP BY sub_id HAVING COUNT(*) >= 3)` on
PostgreSQL and DuckDB, a correlated subquery on SQLite, whose planner prefers it), polars
(`to_polars` on a List of Struct column against a hand-written list expression) and the
compiled predicate
against a hand-written lambda. Every pair must select the same contacts; the report gives the
median time of each and the ratio hand-written / ours (1.0: as fast; the target is >= 0.8).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import audiencefilter as af

from .timing import median, once

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
NAMES = ("share", "login", "purchase", "visit", "share", "login")
FILTERS = {
    "share3": {
        "actions": {
            "where": {"name": "share", "createdAt": {"gte": {"ago": "P30D"}}},
            "count": {"gte": 3},
        }
    },
    "idle60": {"actions": {"none": {"createdAt": {"gte": {"ago": "P60D"}}}}},
}
CUT = {"share3": NOW - timedelta(days=30), "idle60": NOW - timedelta(days=60)}
INDEXES = (
    "CREATE INDEX actions_contact_name_time ON actions (sub_id, name, created_at)",
    "CREATE INDEX actions_contact_time ON actions (sub_id, created_at)",
)
"""The indexes docs/backends-sql-rules.md recommends for relation conditions on `actions`."""


@dataclass
class Data:
    contacts: list[dict[str, Any]]
    actions: list[tuple[str, str, str, int, datetime]]  # id, sub_id, name, increase, createdAt


def generate(contacts: int, actions: int, seed: int = 7) -> Data:
    """Contacts `c0`..; actions spread over them unevenly (some contacts have none) over the
    last 120 days, mostly older than 60 days for a quarter of the contacts."""
    rng = random.Random(seed)
    ids = [f"c{i}" for i in range(contacts)]
    records: dict[str, dict[str, Any]] = {i: {"id": i, "actions": []} for i in ids}
    rows = []
    for n in range(actions):
        owner = ids[min(int(rng.paretovariate(1.2)) - 1, contacts - 1) * 7919 % contacts]
        if rng.random() < 0.3:
            owner = rng.choice(ids)
        quiet = int(owner[1:]) % 4 == 0
        age = rng.uniform(61, 120) if quiet else rng.uniform(0, 120)
        created = NOW - timedelta(days=age)
        row = (f"act_{n}", owner, rng.choice(NAMES), rng.randint(1, 20), created)
        rows.append(row)
        records[owner]["actions"].append(
            {"id": row[0], "name": row[2], "increase": row[3], "createdAt": created}
        )
    return Data(list(records.values()), rows)


def _hand_sql(name: str, literal: Callable[[datetime], str], grouped: bool = False) -> str:
    """What one would write by hand: a correlated subquery, or with `grouped` the idiomatic
    `IN (... GROUP BY ... HAVING ...)` of a count."""
    cut = literal(CUT[name])
    if name == "share3" and grouped:
        return (
            "SELECT c.id FROM contacts c WHERE c.id IN (SELECT sub_id FROM actions "
            f"WHERE name = 'share' AND created_at >= {cut} GROUP BY sub_id HAVING COUNT(*) >= 3)"
        )
    if name == "share3":
        return (
            "SELECT c.id FROM contacts c WHERE (SELECT COUNT(*) FROM actions a "
            f"WHERE a.sub_id = c.id AND a.name = 'share' AND a.created_at >= {cut}) >= 3"
        )
    return (
        "SELECT c.id FROM contacts c WHERE NOT EXISTS (SELECT 1 FROM actions a "
        f"WHERE a.sub_id = c.id AND a.created_at >= {cut})"
    )


def _ours_sql(name: str, dialect: str) -> str:
    condition = af.parse(FILTERS[name]).to_sql(dialect, now=NOW)
    return f'SELECT "id" FROM "contacts" WHERE {condition}'


@dataclass
class Row:
    engine: str
    segment: str
    ours: float
    hand: float
    selected: int

    @property
    def ratio(self) -> float:
        return self.hand / self.ours if self.ours else float("nan")


def _pair(
    engine: str, segment: str, ours: Callable[[], Any], hand: Callable[[], Any], repeats: int
) -> Row:
    ours_times, hand_times = [], []
    ours_ids: Any = None
    hand_ids: Any = None
    for _ in range(repeats):  # interleaved, so a slow moment hits both
        t, ours_ids = once(ours)
        ours_times.append(t)
        t, hand_ids = once(hand)
        hand_times.append(t)
    if set(ours_ids) != set(hand_ids):
        raise AssertionError(f"{engine} {segment}: ours and hand-written select different rows")
    return Row(engine, segment, median(ours_times), median(hand_times), len(set(ours_ids)))


def _sqlite_literal(moment: datetime) -> str:
    return "'" + moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f") + "'"


def _iso_literal(moment: datetime) -> str:
    return f"TIMESTAMPTZ '{moment.isoformat()}'"


def sqlite_rows(data: Data, repeats: int) -> list[Row]:
    with tempfile.TemporaryDirectory() as folder:
        db = sqlite3.connect(Path(folder) / "bench.db")
        db.execute("CREATE TABLE contacts (id TEXT PRIMARY KEY)")
        db.execute(
            "CREATE TABLE actions (id TEXT PRIMARY KEY, sub_id TEXT, name TEXT, "
            "increase INTEGER, created_at TEXT)"
        )
        db.executemany("INSERT INTO contacts VALUES (?)", [(c["id"],) for c in data.contacts])
        db.executemany(
            "INSERT INTO actions VALUES (?, ?, ?, ?, ?)",
            [(a, s, n, i, _sqlite_literal(t)[1:-1]) for a, s, n, i, t in data.actions],
        )
        for statement in INDEXES:
            db.execute(statement)
        db.execute("ANALYZE")
        db.commit()

        def run(sql: str) -> Callable[[], list[str]]:
            return lambda: [r[0] for r in db.execute(sql)]

        rows = [
            _pair(
                "SQLite",
                name,
                run(_ours_sql(name, "sqlite")),
                run(_hand_sql(name, _sqlite_literal)),
                repeats,
            )
            for name in FILTERS
        ]
        db.close()
    return rows


def duckdb_rows(data: Data, repeats: int) -> list[Row]:
    import duckdb
    import polars as pl

    db = duckdb.connect()
    contacts = pl.DataFrame({"id": [c["id"] for c in data.contacts]})  # noqa: F841
    columns = list(zip(*data.actions, strict=True)) if data.actions else [[]] * 5
    actions = pl.DataFrame(  # noqa: F841
        {
            "id": list(columns[0]),
            "sub_id": list(columns[1]),
            "name": list(columns[2]),
            "increase": list(columns[3]),
            "created_at": pl.Series(list(columns[4]), dtype=pl.Datetime("us", "UTC")),
        }
    )
    db.execute("CREATE TABLE contacts AS SELECT * FROM contacts")
    db.execute("CREATE TABLE actions AS SELECT * FROM actions")
    for statement in INDEXES:
        db.execute(statement)

    def run(sql: str) -> Callable[[], list[str]]:
        return lambda: [r[0] for r in db.execute(sql).fetchall()]

    rows = [
        _pair(
            "DuckDB",
            name,
            run(_ours_sql(name, "duckdb")),
            run(_hand_sql(name, _iso_literal, grouped=True)),
            repeats,
        )
        for name in FILTERS
    ]
    db.close()
    return rows


def postgres_rows(data: Data, repeats: int, url: str) -> list[Row]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute("DROP TABLE IF EXISTS actions; DROP TABLE IF EXISTS contacts")
        db.execute("CREATE TABLE contacts (id TEXT PRIMARY KEY)")
        db.execute(
            "CREATE TABLE actions (id TEXT PRIMARY KEY, sub_id TEXT, name TEXT, "
            "increase BIGINT, created_at TIMESTAMPTZ)"
        )
        with db.cursor() as cursor:
            with cursor.copy("COPY contacts (id) FROM STDIN") as copy:
                for contact in data.contacts:
                    copy.write_row((contact["id"],))
            with cursor.copy("COPY actions FROM STDIN") as copy:
                for row in data.actions:
                    copy.write_row(row)
        for statement in INDEXES:
            db.execute(statement)
        db.execute("ANALYZE")

        def run(sql: str) -> Callable[[], list[str]]:
            return lambda: [r[0] for r in db.execute(sql).fetchall()]

        return [
            _pair(
                "PostgreSQL",
                name,
                run(_ours_sql(name, "postgresql")),
                run(_hand_sql(name, _iso_literal, grouped=True)),
                repeats,
            )
            for name in FILTERS
        ]


def polars_rows(data: Data, repeats: int) -> list[Row]:
    import polars as pl

    from audiencefilter.backends.frames.polars import frame_for

    ids = pl.Series("id", [c["id"] for c in data.contacts])
    frame = frame_for(data.contacts, af.CONTACT).select("actions").with_columns(ids)
    element = pl.element().struct.field
    hand = {
        "share3": pl.col("actions")
        .list.eval((element("name") == "share") & (element("createdAt") >= CUT["share3"]))
        .list.sum()
        >= 3,
        "idle60": ~pl.col("actions")
        .list.eval(element("createdAt") >= CUT["idle60"])
        .list.any()
        .fill_null(False),
    }
    rows = []
    for name in FILTERS:
        ours = af.parse(FILTERS[name]).to_polars(dict(frame.schema), now=NOW)
        rows.append(
            _pair(
                "polars",
                name,
                lambda ours=ours: frame.filter(ours)["id"].to_list(),
                lambda expr=hand[name]: frame.filter(expr)["id"].to_list(),
                repeats,
            )
        )
    return rows


def memory_rows(data: Data, repeats: int) -> list[Row]:
    share_cut, idle_cut = CUT["share3"], CUT["idle60"]

    def share3(record: dict[str, Any]) -> bool:
        count = 0
        for action in record.get("actions") or ():
            if action["name"] == "share" and action["createdAt"] >= share_cut:
                count += 1
        return count >= 3

    def idle60(record: dict[str, Any]) -> bool:
        return not any(a["createdAt"] >= idle_cut for a in record.get("actions") or ())

    hand = {"share3": share3, "idle60": idle60}
    rows = []
    for name in FILTERS:
        predicate = af.compile(af.parse(FILTERS[name]), clock=lambda: NOW)
        wanted = hand[name]
        rows.append(
            _pair(
                "compiled memory",
                name,
                lambda p=predicate: [r["id"] for r in data.contacts if p(r)],
                lambda p=wanted: [r["id"] for r in data.contacts if p(r)],
                repeats,
            )
        )
    return rows


@contextmanager
def _postgres(enabled: bool) -> Iterator[str | None]:
    if not enabled:
        yield None
        return
    from .pgserver import postgres

    with postgres() as (url, _note):
        yield url


def run(contacts: int, actions: int, repeats: int, use_postgres: bool) -> list[Row]:
    data = generate(contacts, actions)
    rows = memory_rows(data, repeats) + polars_rows(data, repeats)
    rows += sqlite_rows(data, repeats) + duckdb_rows(data, repeats)
    with _postgres(use_postgres) as url:
        if url is not None:
            rows += postgres_rows(data, repeats, url)
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| engine | segment | selected | ours (ms) | hand-written (ms) | hand / ours |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.engine} | {row.segment} | {row.selected} | {row.ours * 1e3:.1f} | "
            f"{row.hand * 1e3:.1f} | {row.ratio:.2f}x |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--contacts", type=int, default=100_000)
    parser.add_argument("--actions", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args(argv)
    rows = run(args.contacts, args.actions, args.repeats, not args.no_postgres)
    print(table(rows))


if __name__ == "__main__":
    main()
