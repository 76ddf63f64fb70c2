"""Generated contacts (and their actions), and the same rows in SQLite and DuckDB, for the
properties that compare a format's own SQL with our reading of it evaluated in memory."""

from __future__ import annotations

import sqlite3
from typing import Any

from hypothesis import strategies as st

TEXT_FIELDS = ("email", "country", "city")
NUMBER_FIELDS = ("points", "referrals")
BOOLEAN_FIELDS = ("isVerified",)
WORDS = ("", "a", "A", "ab", "aB", "b", "ba", "abc", "Abc", "a b", "a,b", "x_y", "50%", "o'k")
"""Text values: case pairs, a space, a comma, the LIKE wildcards, a quote (ASCII only: SQLite's
LIKE folds ASCII alone, which docs/interop.md states)."""
ACTION_NAMES = ("open", "share", "Share")

_COLUMNS = (
    "id INTEGER PRIMARY KEY, email TEXT, country TEXT, city TEXT, points INTEGER, "
    'referrals INTEGER, "isVerified" BOOLEAN'
)
_ACTIONS = "id INTEGER, sub_id INTEGER, name TEXT, increase INTEGER"


@st.composite
def contacts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A few contacts with ids 1, 2, ..., each field a value or null, and some actions."""
    count = draw(st.integers(1, 6))
    rows = []
    for index in range(1, count + 1):
        row: dict[str, Any] = {"id": index}
        for name in TEXT_FIELDS:
            row[name] = draw(st.none() | st.sampled_from(WORDS))
        for name in NUMBER_FIELDS:
            row[name] = draw(st.none() | st.integers(-3, 3))
        row["isVerified"] = draw(st.none() | st.booleans())
        row["actions"] = draw(st.lists(_actions(), max_size=3))
        rows.append(row)
    return rows


def _actions() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "name": st.none() | st.sampled_from(ACTION_NAMES),
            "increase": st.none() | st.integers(-2, 2),
        }
    )


def sqlite_with(rows: list[dict[str, Any]], case_sensitive_like: bool) -> sqlite3.Connection:
    """An in-memory SQLite database holding `rows` as `contacts` and `actions`."""
    db = sqlite3.connect(":memory:")
    if case_sensitive_like:
        db.execute("PRAGMA case_sensitive_like = ON")
    db.execute(f"CREATE TABLE contacts ({_COLUMNS})")
    db.execute(f"CREATE TABLE actions ({_ACTIONS})")
    db.executemany("INSERT INTO contacts VALUES (?, ?, ?, ?, ?, ?, ?)", _contact_rows(rows))
    db.executemany("INSERT INTO actions VALUES (?, ?, ?, ?)", _action_rows(rows))
    return db


def duckdb_with(rows: list[dict[str, Any]]) -> Any:
    """An in-memory DuckDB database holding `rows` as `contacts` and `actions`."""
    import duckdb

    db = duckdb.connect(":memory:")
    db.execute(f"CREATE TABLE contacts ({_COLUMNS.replace('INTEGER', 'BIGINT')})")
    db.execute(f"CREATE TABLE actions ({_ACTIONS.replace('INTEGER', 'BIGINT')})")
    contact_rows, action_rows = _contact_rows(rows), _action_rows(rows)
    if contact_rows:
        db.executemany("INSERT INTO contacts VALUES (?, ?, ?, ?, ?, ?, ?)", contact_rows)
    if action_rows:
        db.executemany("INSERT INTO actions VALUES (?, ?, ?, ?)", action_rows)
    return db


def selected(db: Any, condition: str) -> set[int]:
    """The ids of the contacts `condition` holds for, as the engine answers."""
    found = db.execute(f"SELECT id FROM contacts WHERE {condition}").fetchall()
    return {row[0] for row in found}


def _contact_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    names = ("id", *TEXT_FIELDS, *NUMBER_FIELDS, *BOOLEAN_FIELDS)
    return [tuple(row[name] for name in names) for row in rows]


def _action_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    found = []
    for row in rows:
        for index, action in enumerate(row["actions"]):
            found.append((index, row["id"], action["name"], action["increase"]))
    return found
