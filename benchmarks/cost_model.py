"""The cost model (`Filter.cost`) against measured time per record, on memory and SQLite.

    python -m benchmarks.cost_model [--contacts N] [--rows R] [--runs K]

A fixed set of 30 filters (comparisons, patterns, `in` lists of every size, JSON paths, field
references, relative dates, groups, relations and aggregates) over N synthetic contacts
(benchmarks/data.py, with a `data` document) holding about R actions each. For each filter:
its estimates (`cost(rows=R)` for `"memory"` and `"sql"`), and the measured time per record
of the compiled predicate and of SQLite (`SELECT count(*) ... WHERE` from `to_sql`, in
process), each in this thread's CPU time (which other processes on a shared machine do not
inflate), the median of K runs. One constant per engine scales units to microseconds, fitted
so that the worst ratio either way is as small as it can be (the geometric middle of the
smallest and largest measured/estimated ratio); each filter's ratio measured/scaled estimate
is printed, and the worst per engine (the promise: within 2x). Last, the time of `cost()`
itself (uncached), over the 30 filters and for a filter at the service's budget of 500
conditions.

A measurement script, not a test: nothing asserts a timing (tests/test_benchmarks_cost.py runs
it tiny, for its shape only).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import audiencefilter as af
from audiencefilter.backends.sql.dialects import utc_text
from audiencefilter.language.cost import cost

from .data import FIELDS, generate
from .engines import ROW_TYPES
from .timing import median, per_call

NOW = datetime(2026, 1, 1, tzinfo=UTC)
INDEXED = ("actions.createdAt",)  # the index `_database` creates after the contact's key
NAMES = ("share", "login", "purchase", "visit", "review")
PLANS = ("free", "pro", "team", None)
WORDS = [f"w{i}" for i in range(400)]

FILTERS: dict[str, dict[str, Any]] = {
    "points >": {"points": {"gt": 100}},
    "country =": {"country": "FR"},
    "verified": {"isVerified": True},
    "city null": {"city": None},
    "company blank": {"company": {"blank": True}},
    "in 3": {"country": {"in": ["FR", "DE", "ES"]}},
    "in 30": {"points": {"in": list(range(0, 300, 10))}},
    "in 400": {"city": {"in": WORDS}},
    "notIn 50": {"points": {"notIn": list(range(50))}},
    "contains": {"email": {"contains": "gmail"}},
    "contains, case": {"email": {"contains": "GMAIL", "mode": "insensitive"}},
    "startsWith long": {"email": {"startsWith": "a" * 60}},
    "endsWith, case": {"email": {"endsWith": ".COM", "mode": "insensitive"}},
    "ref": {"referrals": {"gt": {"_ref": "points"}}},
    "ago": {"createdAt": {"gte": {"ago": "P90D"}}},
    "json path": {"data": {"path": ["plan"], "equals": "pro"}},
    "json array": {"data": {"path": ["tags"], "array_contains": ["vip"]}},
    "AND 3": {"points": {"gte": 10}, "country": {"in": ["FR", "DE"]}, "unsubscribed": False},
    "OR 5": {"OR": [{"country": c} for c in ("FR", "DE", "ES", "IT", "GB")]},
    "AND of ORs": {
        "AND": [
            {"OR": [{"points": {"gt": 500}}, {"referrals": {"gte": 3}}]},
            {"OR": [{"city": None}, {"email": {"contains": "yahoo"}}]},
            {"NOT": {"company": {"in": ["Acme", "Globex"]}}},
        ]
    },
    "OR 40": {"OR": [{"points": {"equals": i}} for i in range(40)]},
    "NOT deep": {"NOT": {"NOT": {"NOT": {"points": {"lt": 50}}}}},
    "some": {"actions": {"some": {"name": "purchase"}}},
    "none recent": {"actions": {"none": {"createdAt": {"gte": {"ago": "P30D"}}}}},
    "every": {"actions": {"every": {"increase": {"gte": 2}}}},
    "count": {"actions": {"count": {"gte": 3}}},
    "count where": {"actions": {"count": {"gte": 2}, "where": {"name": "share"}}},
    "sum": {"actions": {"sum": {"increase": {"gte": 40}}}},
    "max date": {"actions": {"max": {"createdAt": {"gte": {"ago": "P60D"}}}}},
    "mixed": {
        "points": {"gte": 10},
        "email": {"contains": "mail"},
        "actions": {"some": {"name": {"in": ["share", "review"]}}},
    },
}


def _records(contacts: int, rows: float, seed: int = 11) -> list[dict[str, Any]]:
    """The contacts of `benchmarks/data.py`, each with a `data` document and about `rows`
    actions (from none to twice as many)."""
    rng = random.Random(seed)
    records = generate(contacts).rows
    for record in records:
        plan = rng.choice(PLANS)
        record["data"] = {"plan": plan, "tags": rng.sample(["vip", "new", "b2b", "eu"], 2)}
        count = rng.randint(0, int(2 * rows))
        record["actions"] = [
            {
                "id": f"a{record['id']}_{n}",
                "name": rng.choice(NAMES),
                "increase": rng.randint(1, 9),
                "createdAt": NOW - timedelta(days=rng.uniform(0, 200)),
            }
            for n in range(count)
        ]
    return records


def _database(records: list[dict[str, Any]]) -> sqlite3.Connection:
    """An in-memory SQLite database of `contacts` (the fields and `data` as JSON text) and
    `actions` (indexed by contact, as docs/backends-sql-rules.md recommends)."""
    connection = sqlite3.connect(":memory:")
    af.register_sqlite_functions(connection)
    columns = ", ".join(f'"{name}" {ROW_TYPES[name]}' for name in FIELDS)
    connection.execute(f'CREATE TABLE contacts (id INTEGER PRIMARY KEY, {columns}, "data" TEXT)')
    connection.execute(
        "CREATE TABLE actions (id TEXT PRIMARY KEY, sub_id INTEGER, name TEXT, "
        "increase INTEGER, created_at TEXT)"
    )
    connection.execute("CREATE INDEX actions_sub ON actions (sub_id, created_at)")
    marks = ", ".join("?" for _ in range(len(FIELDS) + 2))
    for record in records:
        values = [utc_text(v) if isinstance(v, datetime) else v for v in _row(record)]
        connection.execute(f"INSERT INTO contacts VALUES ({marks})", values)
        connection.executemany(
            "INSERT INTO actions VALUES (?, ?, ?, ?, ?)",
            [
                (a["id"], record["id"], a["name"], a["increase"], utc_text(a["createdAt"]))
                for a in record["actions"]
            ],
        )
    connection.execute("ANALYZE")
    connection.commit()
    return connection


def _row(record: dict[str, Any]) -> list[Any]:
    return [record["id"], *(record[name] for name in FIELDS), json.dumps(record["data"])]


@dataclass
class Measure:
    name: str
    memory_units: float
    sql_units: float
    memory: float  # microseconds per record
    sqlite: float


def _memory(flt: af.Filter, records: list[dict[str, Any]], runs: int) -> float:
    predicate = flt.clock.predicate_at(lambda: NOW)

    def judge() -> int:
        return sum(1 for record in records if predicate(record))

    times = []
    for _ in range(runs):
        start = time.thread_time()
        judge()
        times.append(time.thread_time() - start)
    return median(times) / len(records) * 1e6


def _sqlite(flt: af.Filter, connection: sqlite3.Connection, size: int, runs: int) -> float:
    query = f"SELECT count(*) FROM contacts WHERE {flt.to_sql('sqlite', now=NOW)}"
    times = []
    for _ in range(runs):  # SQLite runs on this thread: its CPU time, which load does not inflate
        start = time.thread_time()
        connection.execute(query).fetchone()
        times.append(time.thread_time() - start)
    return median(times) / size * 1e6


def measure(contacts: int, rows: float, runs: int) -> list[Measure]:
    records = _records(contacts, rows)
    connection = _database(records)
    found = []
    for name, where in FILTERS.items():
        flt = af.parse(where)
        memory = _memory(flt, records, runs)
        sqlite = _sqlite(flt, connection, len(records), runs)
        estimates = (flt.cost(rows).units, flt.cost(rows, engine="sql", indexed=INDEXED).units)
        found.append(Measure(name, *estimates, memory, sqlite))
    connection.close()
    return found


Engine = Callable[[Measure], tuple[float, float]]
"""An engine's (measured microseconds, estimated units) of one filter."""


def on_memory(m: Measure) -> tuple[float, float]:
    return m.memory, m.memory_units


def on_sqlite(m: Measure) -> tuple[float, float]:
    return m.sqlite, m.sql_units


def fitted(measures: list[Measure], engine: Engine) -> float:
    """Microseconds per unit: the constant making the worst ratio either way smallest."""
    ratios = [took / units for took, units in map(engine, measures)]
    return math.sqrt(min(ratios) * max(ratios))


def ratio(m: Measure, engine: Engine, scale: float) -> float:
    took, units = engine(m)
    return took / (units * scale)


def worst(measures: list[Measure], engine: Engine, scale: float) -> float:
    """The largest factor between a measured time and its scaled estimate, either way."""
    return max(max(r, 1 / r) for r in (ratio(m, engine, scale) for m in measures))


def cost_times() -> tuple[float, float, float, float]:
    """Microseconds of one `cost()` (uncached): the median and the largest over `FILTERS`, and
    for a filter of 500 conditions (the service's budget for one filter); last, parsing that
    filter from its JSON text, which every check follows."""
    filters = [af.parse(where) for where in FILTERS.values()]
    each = [per_call(lambda f=f: cost(f.root, f.schema), samples=3) * 1e6 for f in filters]
    groups = [{"AND": [{"points": {"gte": i}}, {"city": {"contains": "an"}}]} for i in range(160)]
    big = af.parse({"OR": [{"OR": groups[i : i + 40]} for i in range(0, 160, 40)]})
    assert big.cost().conditions <= 500
    at_budget = per_call(lambda: cost(big.root, big.schema), samples=3) * 1e6
    text = big.to_json()
    parsing = per_call(lambda: af.parse(text), samples=3) * 1e6
    return median(each), max(each), at_budget, parsing


def table(measures: list[Measure], rows: float) -> str:
    memory = fitted(measures, on_memory)
    sqlite = fitted(measures, on_sqlite)
    head = ("filter", "memory units", "us", "ratio", "sql units", "SQLite us", "ratio")
    lines = ["{:<16} {:>12} {:>7} {:>6} {:>10} {:>10} {:>6}".format(*head)]
    for m in measures:
        lines.append(
            f"{m.name:<16} {m.memory_units:>12.1f} {m.memory:>7.3f} "
            f"{ratio(m, on_memory, memory):>6.2f} {m.sql_units:>10.1f} {m.sqlite:>10.3f} "
            f"{ratio(m, on_sqlite, sqlite):>6.2f}"
        )
    lines.append(
        f"fitted: memory {memory * 1000:.1f} ns/unit, SQLite {sqlite * 1000:.1f} ns/unit "
        f"(rows per record {rows:g})"
    )
    lines.append(
        f"worst factor: memory {worst(measures, on_memory, memory):.2f}x, "
        f"SQLite {worst(measures, on_sqlite, sqlite):.2f}x"
    )
    lines.append(held_out(measures))
    return "\n".join(lines)


def held_out(measures: list[Measure]) -> str:
    """The constant fitted on the even filters alone, and the worst factor on the odd ones:
    whether the model predicts filters its constant never saw."""
    fit, check = measures[::2], measures[1::2]
    found = []
    for label, engine in (("memory", on_memory), ("SQLite", on_sqlite)):
        found.append(f"{label} {worst(check, engine, fitted(fit, engine)):.2f}x")
    return "held out (fitted on the even filters, the odd ones judged): " + ", ".join(found)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contacts", type=int, default=5000)
    parser.add_argument("--rows", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    measures = measure(args.contacts, args.rows, args.runs)
    print(table(measures, args.rows))
    typical, largest, at_budget, parsing = cost_times()
    print(
        f"cost() per call: median {typical:.1f} us, largest {largest:.1f} us over "
        f"{len(FILTERS)} filters; {at_budget:.1f} us at 500 conditions "
        f"(parsing that filter: {parsing:.1f} us)"
    )


if __name__ == "__main__":
    main()
