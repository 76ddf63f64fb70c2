"""Known limits decided by the stored value: what an engine keeps of a value is not the
value, so no SQL can answer as memory does on it. The support page lists them
(tests/shapes/__init__.py, `render`); the tests that show each run it as a strict xfail, so
that a limit an engine lifts is noticed.

Why a separate list: a disagreement the filter's literal or the column's shape decides is
refused when the expression is built (a `FilterError` naming the fix); these are the ones
left, which no literal can see, since the value is changed as it is stored.
"""

from __future__ import annotations

from dataclasses import dataclass

DOUBLES = "JSON numbers are stored as doubles, exact up to 2^53 (docs/semantics.md, Numbers)"
BEYOND_64 = "JSON integers beyond 64 bits are read as doubles (docs/semantics.md, Numbers)"
SQLITE_NUL = "SQLite's JSON functions end a string at NUL (docs/backends-sql-rules.md)"
CLICKHOUSE_BEYOND_64 = (
    "ClickHouse's JSON functions type an integer beyond 64 bits as a String, so a number test "
    "reads it as a value of another type (docs/backends-clickhouse.md)"
)
TINY_FLOATS = (
    "SQLite's JSON parser misreads some numbers near 1e-300 (docs/backends.md); MariaDB's "
    "bound tiny floats are fixed"
)


@dataclass(frozen=True)
class Limit:
    """One limit: the engines, the stored values it concerns, why, and the tests showing it."""

    engines: str
    stored: str
    reason: str
    shown_by: str


LIMITS: list[Limit] = [
    Limit(
        "MySQL/MariaDB, DuckDB",
        "a number in a JSON column that no double holds (2^53 + 1)",
        DOUBLES,
        "tests/test_sql_agreement.py (above-2^53, mixed-in-json)",
    ),
    Limit(
        "SQLite, PostgreSQL, MySQL/MariaDB, DuckDB",
        "an integer beyond 64 bits in a JSON column",
        BEYOND_64,
        "tests/test_sql_agreement.py (beyond-64-bits), tests/test_differential_engines.py",
    ),
    Limit(
        "SQLite",
        "a string holding NUL in a JSON column, or as an item of a list column (JSON text there)",
        SQLITE_NUL,
        "tests/test_sql_agreement.py (nul-json, nul-list), tests/test_differential_engines.py",
    ),
    Limit(
        "ClickHouse",
        "an integer beyond 64 bits in a JSON column",
        CLICKHOUSE_BEYOND_64,
        "tests/test_clickhouse.py (beyond 64 bits in JSON)",
    ),
    Limit(
        "SQLite",
        "a number near 1e-300 in a JSON column",
        TINY_FLOATS,
        "tests/test_differential_engines.py (tiny floats)",
    ),
]
"""The limits the stored value alone decides, as the support page shows them."""


def render() -> list[str]:
    """The support page's section of these limits."""
    out = [
        "## Known limits decided by the stored value",
        "",
        "What the engine keeps of these values is not the value, so a filter reading them is",
        "answered on what was kept, which can differ from memory's answer on the value itself.",
        "Store such values in a typed column, or evaluate the filter in memory. Each is run by",
        "the tests named as an expected failure, so that a limit an engine lifts is noticed.",
        "",
        "| engines | stored value | why | shown by |",
        "|---|---|---|---|",
    ]
    for limit in LIMITS:
        out.append(f"| {limit.engines} | {limit.stored} | {limit.reason} | {limit.shown_by} |")
    return [*out, ""]
