"""The LIKE accelerator (`backends/sql/dialects/like.py`) answers exactly as the plain path.

A case-insensitive `contains`, `startsWith` or `endsWith` with an ASCII needle is written with
the engine's own LIKE (SQLite) or ILIKE (DuckDB) where `like_unsafe` allows it; the plain path
folds the column. Both run here on the real engines over adversarial text (the Kelvin sign,
dotted and dotless i, a combining dot, long s, sharp s, NUL, LIKE wildcards, sigma), through
`to_sql`, `to_sql_params` and SQLAlchemy, and must select the same rows.
"""

from __future__ import annotations

import sqlite3
import sys
from typing import Any

import duckdb
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from sqlalchemy import Column, MetaData, String, Table, create_engine, select
from sqlalchemy.pool import StaticPool

import audiencefilter as af
from audiencefilter.backends.sql.dialects import like

ADVERSARIAL = (
    "aAiIkKsSgGlL \u0130\u0131\u212a\u0307\u017f\u00df\u00e9\u00c9\x00%_\\\u03a3\u03c3\u03c2"
)
NEEDLE = "aiksIKSgl%_\\\u00e9\x00"
OPS = ("contains", "startsWith", "endsWith")
SCHEMA = af.Schema.from_mapping({"name": "string"})

values_strategy = st.lists(st.none() | st.text(alphabet=ADVERSARIAL, max_size=8), max_size=12)


def _both(build: Any) -> tuple[Any, Any]:
    """`build()` with the accelerator on, then off; the switch is left as it was."""
    saved = like.ENABLED
    try:
        like.ENABLED = True
        fast = build()
        like.ENABLED = False
        return fast, build()
    finally:
        like.ENABLED = saved


def _filter(op: str, needle: str) -> af.Filter:
    return af.parse({"name": {op: needle, "mode": "insensitive"}}, SCHEMA)


def _sqlite(values: list[str | None]) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    af.register_sqlite_functions(connection)
    connection.execute('CREATE TABLE t (id INTEGER, "name" TEXT)')
    connection.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(values)))
    return connection


def _duckdb(values: list[str | None]) -> Any:
    connection = duckdb.connect()
    connection.execute('CREATE TABLE t (id INTEGER, "name" VARCHAR)')
    if values:
        connection.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(values)))
    return connection


def _ids(connection: Any, sql: str, params: list[Any] | None = None) -> set[int]:
    rows = connection.execute(f"SELECT id FROM t WHERE {sql}", params or []).fetchall()
    return {row[0] for row in rows}


def _agree(dialect: str, connection: Any, op: str, needle: str) -> None:
    flt = _filter(op, needle)
    text, plain_text = _both(lambda: flt.to_sql(dialect))
    assert _ids(connection, text) == _ids(connection, plain_text), text
    (sql, params), (plain_sql, plain_params) = _both(lambda: flt.to_sql_params(dialect))
    assert _ids(connection, sql, params) == _ids(connection, plain_sql, plain_params), sql


@given(values=values_strategy, op=st.sampled_from(OPS), needle=st.text(NEEDLE, max_size=4))
@example(values=["\u212a"], op="contains", needle="k")
@example(values=["x\u0130"], op="contains", needle="xi")
@example(values=["x\u0130y"], op="startsWith", needle="xi")
@example(values=["\u0130x"], op="contains", needle="ix")
@example(values=["x\u0130"], op="endsWith", needle="xi")
@example(values=["ab\x00gmail"], op="contains", needle="gmail")
@example(values=["ab\x00xyz"], op="endsWith", needle="ab")
@example(values=["GMAIL", "gmail", None, ""], op="contains", needle="gmail")
def test_sqlite_like_agrees_with_the_plain_path(
    values: list[str | None], op: str, needle: str
) -> None:
    connection = _sqlite(values)
    try:
        _agree("sqlite", connection, op, needle)
    finally:
        connection.close()


@given(values=values_strategy, op=st.sampled_from(OPS), needle=st.text(NEEDLE, max_size=4))
@example(values=["\u212a"], op="contains", needle="k")
@example(values=["\u0130x"], op="contains", needle="ix")
@example(values=["x\u0130"], op="endsWith", needle="xi")
@example(values=["x\u0130y"], op="startsWith", needle="xi")
@example(values=["ab\x00gmail", "a\u0130gmail"], op="contains", needle="gmail")
def test_duckdb_ilike_agrees_with_the_plain_path(
    values: list[str | None], op: str, needle: str
) -> None:
    connection = _duckdb(values)
    try:
        _agree("duckdb", connection, op, needle)
    finally:
        connection.close()


@given(values=values_strategy, op=st.sampled_from(OPS), needle=st.text(NEEDLE, max_size=4))
@example(values=["\u212a", "k"], op="contains", needle="k")
@example(values=["ab\x00xyz", "AB"], op="endsWith", needle="ab")
def test_sqlalchemy_agrees_with_the_plain_path(
    values: list[str | None], op: str, needle: str
) -> None:
    engine = create_engine("sqlite://", poolclass=StaticPool)
    af.register_sqlite_functions(engine)
    table = Table("t", MetaData(), Column("id", String, primary_key=True), Column("name", String))
    table.metadata.create_all(engine)
    flt = _filter(op, needle)
    with engine.begin() as connection:
        if values:
            connection.execute(
                table.insert(), [{"id": str(i), "name": v} for i, v in enumerate(values)]
            )
        fast, plain = _both(lambda: flt.to_sqlalchemy(table))
        chosen = set(connection.scalars(select(table.c.id).where(fast)))
        assert chosen == set(connection.scalars(select(table.c.id).where(plain)))
    engine.dispose()


def test_lowers_to_ascii_names_every_such_code_point() -> None:
    found = {}
    for point in range(0x80, sys.maxunicode + 1):
        char = chr(point)
        lowered = char.lower()
        if not 0xD800 <= point < 0xE000 and any(c.isascii() for c in lowered):
            found[char] = lowered
    assert found == like.LOWERS_TO_ASCII


@pytest.mark.parametrize(
    ("op", "needle", "folding", "unsafe"),
    [
        ("contains", "gmail", "ascii", ""),
        ("contains", "gmail", "simple", "\u0130"),
        ("contains", "kim", "ascii", "\u212a"),
        ("contains", "kim", "simple", "\u0130"),
        ("contains", "ski", "ascii", "\u0130\u212a"),
        ("contains", "ski", "simple", ""),
        ("endsWith", "ski", "ascii", "\u212a"),
        ("endsWith", "ski", "simple", "\u0130"),
        ("contains", ".com", "simple", ""),
        ("contains", "50%", "ascii", None),
        ("contains", "\u00e9", "ascii", None),
    ],
)
def test_like_unsafe_names_the_characters_to_test_the_exact_way(
    op: str, needle: str, folding: str, unsafe: str | None
) -> None:
    assert like.like_unsafe(af.Op(op), needle, folding) == unsafe


@pytest.mark.parametrize(("dialect", "keyword"), [("sqlite", " LIKE "), ("duckdb", " ILIKE ")])
def test_an_ascii_needle_is_matched_by_the_engines_like(dialect: str, keyword: str) -> None:
    flt = _filter("contains", "gmail")
    fast, plain = _both(lambda: flt.to_sql(dialect))
    assert keyword in fast and keyword not in plain
