"""The speed gates of each construct family: ours against what one would write by hand.

`python -m benchmarks.gates` runs these after the filter gates (or `python -m
benchmarks.gates_constructs` alone). Each row times one construct of the library against a
hand-written equivalent over the same data, interleaved, in one process:

- lists: `tags hasSome [...]` (memory: a lambda with `frozenset.isdisjoint`; polars:
  `list.eval(is_in).list.any()`);
- relations and aggregates: "at least 3 shares in 30 days" (a count with a where clause) and
  `sum(increase) >= 40`, in memory against a loop, and in DuckDB (and PostgreSQL with
  `AUDIENCEFILTER_BENCH_PG_URL`, or `--postgres` for a throw-away server) against the
  idiomatic `id IN (SELECT ... GROUP BY ... HAVING ...)`;
- behaviour windows: "no action in 60 days" (`none` of a window) in memory, polars (a List of
  Struct column against `list.eval(...).list.any()`), DuckDB and PostgreSQL (against `NOT
  EXISTS`); aggregates in polars too;
- anniversaries: "created this week, any year" in Paris, in memory against `astimezone` and a
  set of month-days, and in polars against `convert_time_zone` and `is_in`;
- contains: a case-insensitive `contains` on SQLite and DuckDB against `LIKE`/`ILIKE`;
- long IN: a 400-value `in` through `to_sql_params` (one parameter) against 400 placeholders,
  on SQLite and DuckDB.

The figure is hand time / our time (1.0: as fast; above: faster). Memory is timed in this
thread's CPU time, polars and SQL by the wall clock (medians of interleaved rounds). These are
benchmarks, not tests: the bound column says what we aim for.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import audiencefilter as af

from . import relations
from .data import generate
from .timing import median, once

NOW = relations.NOW
PARIS = ZoneInfo("Europe/Paris")
TAGS = ("vip", "newsletter", "beta", "churn-risk", "partner", "press", "student", "staff")
WANTED = ["beta", "press", "staff"]
ANNIVERSARY = {"createdAt": {"anniversary": {"this": "week", "timeZone": "Europe/Paris"}}}
SCHEMA = af.CONTACT.with_fields(tags="string[]")


@dataclass(frozen=True)
class Gate:
    """One construct: our time, the hand-written time, and the bound the ratio aims at."""

    family: str
    what: str
    ours: float
    hand: float
    bound: float

    @property
    def ratio(self) -> float:
        return self.hand / self.ours


def _pair(
    ours: Callable[[], Any], hand: Callable[[], Any], rounds: int, *, cpu: bool
) -> tuple[float, float]:
    """Medians of `rounds` interleaved timings; the two must give the same answer."""
    mine, theirs = [], []
    for _ in range(rounds):
        elapsed, got = once(ours, cpu=cpu)
        mine.append(elapsed)
        elapsed, expected = once(hand, cpu=cpu)
        theirs.append(elapsed)
        if got != expected:
            raise AssertionError(f"ours and hand-written differ: {got!r} != {expected!r}")
    return median(mine), median(theirs)


def _count(predicate: Callable[[Any], bool], rows: Sequence[Any]) -> Callable[[], int]:
    return lambda: sum(1 for row in rows if predicate(row))


def _with_tags(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each contact with 0 to 3 tags (1 in 10 a null list), chosen by its id."""
    tagged = []
    for row in rows:
        n = row["id"]
        tags = None if n % 10 == 0 else [TAGS[(n * k) % len(TAGS)] for k in range(n % 4)]
        tagged.append({**row, "tags": tags})
    return tagged


def memory_gates(size: int, rounds: int) -> list[Gate]:
    """Lists and anniversaries over generated contacts; aggregates and windows over contacts
    with actions (benchmarks.relations)."""
    rows = _with_tags(generate(size).rows)
    wanted = frozenset(WANTED)
    has_some = af.compile(af.parse({"tags": {"hasSome": WANTED}}, SCHEMA))
    hand_tags = lambda r: (t := r.get("tags")) is not None and not wanted.isdisjoint(t)  # noqa: E731
    gates = [_memory("lists", "hasSome of 3 tags", has_some, hand_tags, rows, rounds)]
    gates.append(_anniversary_memory(rows, rounds))
    data = relations.generate(max(size // 5, 100), size * 2)
    for name, hand in _relation_hands().items():
        flt = af.parse(relations.FILTERS.get(name) or _SUM3)
        predicate = af.compile(flt, clock=lambda: NOW)
        family = "windows" if name == "idle60" else "aggregates"
        gates.append(_memory(family, _TITLES[name], predicate, hand, data.contacts, rounds))
    return gates


_SUM3 = {"actions": {"sum": {"increase": {"gte": 40}}}}
_TITLES = {
    "share3": "count: 3 shares in 30 days",
    "sum40": "sum(increase) >= 40",
    "idle60": "none in 60 days",
}


def _relation_hands() -> dict[str, Callable[[dict[str, Any]], bool]]:
    share_cut, idle_cut = relations.CUT["share3"], relations.CUT["idle60"]

    def share3(record: dict[str, Any]) -> bool:
        count = 0
        for action in record.get("actions") or ():
            if action["name"] == "share" and action["createdAt"] >= share_cut:
                count += 1
        return count >= 3

    def sum40(record: dict[str, Any]) -> bool:
        return sum(a["increase"] for a in record.get("actions") or ()) >= 40

    def idle60(record: dict[str, Any]) -> bool:
        return not any(a["createdAt"] >= idle_cut for a in record.get("actions") or ())

    return {"share3": share3, "sum40": sum40, "idle60": idle60}


def _memory(
    family: str,
    what: str,
    ours: Callable[[Any], bool],
    hand: Callable[[Any], bool],
    rows: Sequence[Any],
    rounds: int,
) -> Gate:
    mine, theirs = _pair(_count(ours, rows), _count(hand, rows), rounds, cpu=True)
    return Gate(family, f"memory: {what}", mine, theirs, 0.8)


def _week_month_days() -> frozenset[tuple[int, int]]:
    """The (month, day) of each day of this week (Monday first) in Paris, at `NOW`."""
    today = NOW.astimezone(PARIS).date()
    monday = today - timedelta(days=today.weekday())
    return frozenset(((monday + timedelta(d)).month, (monday + timedelta(d)).day) for d in range(7))


def _anniversary_memory(rows: list[dict[str, Any]], rounds: int) -> Gate:
    days = _week_month_days()

    def hand(r: dict[str, Any]) -> bool:
        c = r.get("createdAt")
        if c is None:
            return False
        local = c.astimezone(PARIS)
        return (local.month, local.day) in days

    # On a clock, as a service holds it: each call reads the clock (about 0.3 µs here).
    ours = af.compile(af.parse(ANNIVERSARY), clock=lambda: NOW)
    return _memory("anniversaries", "this week in Paris", ours, hand, rows, rounds)


def polars_gates(size: int, rounds: int) -> list[Gate]:
    import polars as pl

    from audiencefilter.backends.frames.polars import frame_for

    rows = _with_tags(generate(size).rows)
    frame = frame_for(rows, SCHEMA)
    wanted = pl.Series(WANTED).implode()
    hand_tags = pl.col("tags").list.eval(pl.element().is_in(wanted)).list.any()
    ours_tags = af.parse({"tags": {"hasSome": WANTED}}, SCHEMA).to_polars(dict(frame.schema))
    local = pl.col("createdAt").dt.convert_time_zone("Europe/Paris")
    days = [month * 100 + day for month, day in _week_month_days()]
    hand_days = (local.dt.month().cast(pl.Int32) * 100 + local.dt.day()).is_in(days)
    ours_days = af.parse(ANNIVERSARY).to_polars(dict(frame.schema), now=NOW)
    gates = []
    for family, what, ours, hand in (
        ("lists", "hasSome of 3 tags", ours_tags, hand_tags),
        ("anniversaries", "this week in Paris", ours_days, hand_days),
    ):
        run = lambda e: lambda: frame.filter(e).height  # noqa: E731
        mine, theirs = _pair(run(ours), run(hand), rounds, cpu=False)
        gates.append(Gate(family, f"polars: {what}", mine, theirs, 0.8))
    data = relations.generate(max(size // 5, 100), size * 2)
    return gates + [_relation_gate(row) for row in relations.polars_rows(data, rounds)]


def sql_gates(size: int, rounds: int, postgres: bool = False) -> list[Gate]:
    """Contains and long IN on SQLite and DuckDB over generated contacts; the grouped count
    and the window on DuckDB (and PostgreSQL, `_grouped_gates`)."""
    rows = generate(size).rows
    gates = _sqlite_gates(rows, rounds) + _duckdb_gates(rows, rounds)
    return gates + _grouped_gates(size, rounds, postgres)


_CONTAINS = af.parse({"email": {"contains": "gmail"}})
_IN = af.parse({"email": {"in": [f"user{i}@example.com" for i in range(399)] + ["x"]}})


def _sqlite_gates(rows: list[dict[str, Any]], rounds: int) -> list[Gate]:
    db = sqlite3.connect(":memory:")
    af.register_sqlite_functions(db)
    db.execute('CREATE TABLE contacts (id INTEGER, "email" TEXT)')
    db.executemany("INSERT INTO contacts VALUES (?, ?)", [(r["id"], r["email"]) for r in rows])
    emails = [r["email"] for r in rows[:: max(len(rows) // 399, 1)]][:399] + ["x"]
    long_in = af.parse({"email": {"in": emails}})
    gates = _sql_pair(db, "contains", "SQLite: contains (any case)", _CONTAINS.to_sql("sqlite"),
                      [], "\"email\" LIKE '%gmail%'", [], rounds, 0.9)  # fmt: skip
    sql, params = long_in.to_sql_params("sqlite")
    hand = f'"email" IN ({", ".join("?" * len(emails))})'
    gates += _sql_pair(
        db, "long IN", "SQLite: in 400 values", sql, params, hand, emails, rounds, 0.9
    )
    db.close()
    return gates


def _duckdb_gates(rows: list[dict[str, Any]], rounds: int) -> list[Gate]:
    import duckdb

    db = duckdb.connect()
    db.execute('CREATE TABLE contacts (id INTEGER, "email" VARCHAR)')
    db.executemany("INSERT INTO contacts VALUES (?, ?)", [(r["id"], r["email"]) for r in rows])
    emails = [r["email"] for r in rows[:: max(len(rows) // 399, 1)]][:399] + ["x"]
    long_in = af.parse({"email": {"in": emails}})
    gates = _sql_pair(db, "contains", "DuckDB: contains (any case)", _CONTAINS.to_sql("duckdb"),
                      [], "\"email\" ILIKE '%gmail%'", [], rounds, 0.9)  # fmt: skip
    sql, params = long_in.to_sql_params("duckdb")
    hand = f'"email" IN ({", ".join("?" * len(emails))})'
    gates += _sql_pair(
        db, "long IN", "DuckDB: in 400 values", sql, params, hand, emails, rounds, 0.9
    )
    db.close()
    return gates


def _sql_pair(
    db: Any,
    family: str,
    what: str,
    ours: str,
    ours_params: list[Any],
    hand: str,
    hand_params: list[Any],
    rounds: int,
    bound: float,
) -> list[Gate]:
    def run(condition: str, params: list[Any]) -> Callable[[], Any]:
        sql = f"SELECT count(*) FROM contacts WHERE {condition}"
        return lambda: db.execute(sql, params).fetchall()

    mine, theirs = _pair(run(ours, ours_params), run(hand, hand_params), rounds, cpu=False)
    return [Gate(family, what, mine, theirs, bound)]


def _grouped_gates(size: int, rounds: int, postgres: bool = False) -> list[Gate]:
    """Relations in SQL: DuckDB, and PostgreSQL at `AUDIENCEFILTER_BENCH_PG_URL` or, with
    `postgres`, on a throw-away server."""
    data = relations.generate(max(size // 5, 100), size * 2)
    rows = relations.duckdb_rows(data, rounds)
    if postgres or os.environ.get("AUDIENCEFILTER_BENCH_PG_URL"):
        from .pgserver import postgres as pg_server  # the test suite's server helpers

        with pg_server() as (url, note):
            if url is None:
                print(f"PostgreSQL left out: {note}")
            else:
                rows += relations.postgres_rows(data, rounds, url)
    return [_relation_gate(row) for row in rows]


def _relation_gate(row: relations.Row) -> Gate:
    family = "windows" if row.segment == "idle60" else "aggregates"
    return Gate(family, f"{row.engine}: {_TITLES[row.segment]}", row.ours, row.hand, 0.8)


def measure(size: int, rounds: int = 5, postgres: bool = False) -> list[Gate]:
    return (
        memory_gates(size, rounds) + polars_gates(size, rounds) + sql_gates(size, rounds, postgres)
    )


def markdown(gates: list[Gate]) -> str:
    lines = [
        "| family | construct | ours | hand-written | hand / ours | aim |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for gate in gates:
        lines.append(
            f"| {gate.family} | {gate.what} | {gate.ours * 1e3:.2f} ms | {gate.hand * 1e3:.2f} ms"
            f" | {gate.ratio:.2f}x | >= {gate.bound}x |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--postgres", action="store_true", help="PostgreSQL on a throw-away server if no URL"
    )
    args = parser.parse_args(argv)
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.1f}")
    print(markdown(measure(args.size, args.rounds, args.postgres)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
