"""Inputs on which a SQL engine once answered differently from memory, each on the real engine.

Every case runs on the four databases and the three ways of asking them (`to_sqlalchemy`,
`to_sql`, `to_sql_params`), engines left at their defaults, and must give memory's answer
(`Filter.matches`, the reference of docs/semantics.md).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

import audiencefilter as af
from tests.shapes.limits import BEYOND_64, DOUBLES, SQLITE_NUL
from tests.sql_engines import WAYS, Database, database_params, open_database
from tests.wide_engines import refuses

Case = tuple[str, list[dict[str, Any]], dict[str, Any]]

KEYS = ["é", "ключ", "😀", "\x01", "a\nb", "\t", "\x7f", "-", "-1", "*", "a-b", "1", "$", "a b"]
"""Keys some engines' JSON paths cannot address as written."""


def _key_cases() -> list[Case]:
    cases: list[Case] = []
    for n, key in enumerate(KEYS):
        records = [
            {"id": "k1", "data": {key: "v", "other": "w"}},
            {"id": "k2", "data": {key: {key: 5}}},
            {"id": "k3", "data": {"v": key}},
        ]
        cases.append((f"key{n}-equals", records, {"data": {"path": [key], "equals": "v"}}))
        cases.append((f"key{n}-nested", records, {"data": {"path": [key, key], "gte": 5}}))
        cases.append((f"key{n}-null", records, {"data": {"path": [key], "equals": None}}))
    return cases


BIG = 2**70
NUMBERS = [
    {"id": "n1", "data": {"n": 9007199254740993}},
    {"id": "n2", "data": {"n": 9007199254740992}},
    {"id": "n3", "data": {"n": BIG}},
    {"id": "n4", "data": {"n": BIG + 1}},
    {"id": "n5", "data": {"n": -BIG}},
    {"id": "n6", "data": {"n": 1.5}},
    {"id": "n7", "data": {"n": 5e-324}},
    {"id": "n8", "data": {"n": 0}},
]
CASES: list[Case] = [
    *_key_cases(),
    ("above-2^53-equals", NUMBERS, {"data": {"path": ["n"], "equals": 9007199254740993}}),
    ("above-2^53-in", NUMBERS, {"data": {"path": ["n"], "in": [9007199254740993, 1]}}),
    ("above-2^53-gt", NUMBERS, {"data": {"path": ["n"], "gt": 9007199254740992}}),
    ("beyond-64-bits-equals", NUMBERS, {"data": {"path": ["n"], "equals": BIG + 1}}),
    ("beyond-64-bits-gt", NUMBERS, {"data": {"path": ["n"], "gt": BIG}}),
    ("beyond-64-bits-lt", NUMBERS, {"data": {"path": ["n"], "lt": -BIG + 1}}),
    ("tiny-float-equals", NUMBERS, {"data": {"path": ["n"], "equals": 5e-324}}),
    ("tiny-float-gt", NUMBERS, {"data": {"path": ["n"], "gt": 1e-300}}),
    ("huge-int-300-digits", NUMBERS, {"data": {"path": ["n"], "lt": 10**300}}),
    ("mixed-in-json", NUMBERS, {"data": {"path": ["n"], "in": [9007199254740993, 1.5]}}),
]

POINTS = [
    {"id": "p1", "points": 9007199254740993},
    {"id": "p2", "points": 9007199254740992},
    {"id": "p3", "points": 0},
    {"id": "p4", "points": -1},
    {"id": "p5", "points": 2**63 - 1},
]
CASES += [
    ("mixed-in-column", POINTS, {"points": {"in": [9007199254740993, 0.5]}}),
    ("mixed-in-huge", POINTS, {"points": {"in": [2**63 - 1, 0.5, 10**40]}}),
    ("tiny-float-column-gt", POINTS, {"points": {"gt": 5e-324}}),
    ("tiny-float-column-lt", POINTS, {"points": {"lt": 1e-300}}),
    ("huge-int-column", POINTS, {"points": {"lt": 10**300}}),
    ("huge-int-column-in", POINTS, {"points": {"notIn": [-(10**300), 0]}}),
    ("int-400-digits-column", POINTS, {"points": {"gt": -(10**400)}}),
    ("int-400-digits-column-in", POINTS, {"points": {"in": [10**400, 0]}}),
    ("int-400-digits-json", NUMBERS, {"data": {"path": ["n"], "lt": 10**400}}),
    ("int-400-digits-json-in", NUMBERS, {"data": {"path": ["n"], "notIn": [-(10**400), 0]}}),
]

FOLDING = [
    {"id": "f1", "data": {"s": "\u1e9e"}},
    {"id": "f2", "data": {"s": "STRASSE"}},
    {"id": "f3", "data": {"s": "\u0130stanbul"}},
]
CASES += [
    (
        "fold-json-sharp-s",
        FOLDING,
        {"data": {"path": ["s"], "equals": "\u00df", "mode": "insensitive"}},
    ),
    (
        "fold-json-dotted-i",
        FOLDING,
        {"data": {"path": ["s"], "startsWith": "i\u0307s", "mode": "insensitive"}},
    ),
]

NUL = [
    {"id": "z1", "data": {"s": "a\x00b"}},
    {"id": "z2", "data": {"s": "a"}},
    {"id": "z3", "data": {"s": "\x00"}},
]
NUL_CASES: list[Case] = [
    ("nul-json-equals-prefix", NUL, {"data": {"path": ["s"], "equals": "a"}}),
    ("nul-json-equals", NUL, {"data": {"path": ["s"], "equals": "a\x00b"}}),
    ("nul-json-contains", NUL, {"data": {"path": ["s"], "contains": "\x00"}}),
    ("nul-json-ends", NUL, {"data": {"path": ["s"], "endsWith": "b"}}),
    ("nul-json-in", NUL, {"data": {"path": ["s"], "in": ["a", "b"]}}),
    ("nul-json-gt", NUL, {"data": {"path": ["s"], "not": "a"}}),
]
"""PostgreSQL's jsonb cannot hold NUL in a string: these records cannot be stored there."""


LIMITS: dict[tuple[str, str], str] = {
    **{(case, db): DOUBLES for case in ("above-2^53-gt",) for db in ("mysql", "duckdb")},
    **{
        (case, db): BEYOND_64
        for case in ("beyond-64-bits-gt",)
        for db in ("sqlite", "postgresql", "mysql", "duckdb")
    },
    **{
        (case, "sqlite"): SQLITE_NUL  # the stored text alone decides: the literal has no NUL
        for case in ("nul-json-equals-prefix", "nul-json-ends", "nul-json-in", "nul-json-gt")
    },
}
"""Documented limits: (case name prefix, database) -> the reason; each case still runs, as a
strict xfail, so that a limit an engine lifts is noticed."""


def _limit(case: str, database: str) -> str | None:
    for (prefix, name), reason in LIMITS.items():
        if name == database and case.startswith(prefix):
            return reason
    return None


def _params() -> list[Any]:
    params = []
    for case, records, where in CASES + NUL_CASES:
        for database in database_params():
            name = database.values[0]
            if name == "postgresql" and (case, records, where) in NUL_CASES:
                continue
            for way in WAYS:
                marks = list(database.marks)
                reason = _limit(case, name)
                if reason is not None:
                    marks.append(pytest.mark.xfail(strict=True, reason=reason))
                params.append(
                    pytest.param(name, way, records, where, marks=marks, id=f"{case}-{way}-{name}")
                )
    return params


@pytest.mark.parametrize(("name", "way", "records", "where"), _params())
def test_sql_agrees_with_memory(
    name: str,
    way: str,
    records: list[dict[str, Any]],
    where: dict[str, Any],
    request: pytest.FixtureRequest,
) -> None:
    """Memory's answer, or, where the literal decides that the engine cannot give it
    (`wide_engines.refuses`: a literal holding NUL at a data path on SQLite, an equality with
    an integer the engine keeps as a double that no double holds), a refusal when the filter
    is built; before, SQLite answered on the text up to the NUL, and the engines "nobody" for
    `equals 2^53 + 1` on a stored 2^53 + 1."""
    database: Database = open_database(name, request)
    flt = af.parse(where)
    expected = {r["id"] for r in records if flt.matches(r)}
    if refuses(name, flt):
        with pytest.raises(af.FilterError, match="NUL|keeps a JSON integer beyond"):
            database.way(way)(flt, database.table_for(records))
        return
    assert database.way(way)(flt, database.table_for(records)) == expected


@pytest.mark.parametrize("name", database_params())
def test_statement_cache_tells_true_from_one(name: str, request: pytest.FixtureRequest) -> None:
    """`true` and `1` are equal and hash equal in Python: the compiled statement cached for one
    must not be reused for the other on an Engine with its default cache."""
    database: Database = open_database(name, request)
    records = [{"id": "b", "data": {"k": True}}, {"id": "i", "data": {"k": 1}}]
    table = database.table_for(records)
    cases: list[tuple[dict[str, Any], set[str]]] = [
        ({"equals": True}, {"b"}),
        ({"equals": 1}, {"i"}),
        ({"in": [1]}, {"i"}),
        ({"not": True}, {"i"}),
        ({"not": 1}, {"b"}),
        ({"equals": True}, {"b"}),
    ]
    for condition, expected in cases:
        flt = af.parse({"data": {"path": ["k"], **condition}})
        statement = select(table.c.id).where(flt.to_sqlalchemy(table))
        with database.engine.connect() as connection:
            assert set(connection.scalars(statement)) == expected, condition


WIDE = [{"id": f"w{n}", "points": n} for n in range(0, 1200, 7)]


@pytest.mark.parametrize("name", database_params())
@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("kind", ["OR", "AND"])
def test_groups_of_thousands_stay_within_parse_depth(
    name: str, way: str, kind: str, request: pytest.FixtureRequest
) -> None:
    """SQLite refuses an expression tree deeper than 1,000 ("Expression tree is too large"),
    and a flat `a OR b OR ...` parses as a tree as deep as it is long."""
    database: Database = open_database(name, request)
    if kind == "OR":
        where: dict[str, Any] = {"OR": [{"points": n} for n in range(1100)]}
    else:
        where = {"AND": [{"points": {"not": n}} for n in range(1100)]}
    flt = af.parse(where)
    expected = {r["id"] for r in WIDE if flt.matches(r)}
    assert database.way(way)(flt, database.table_for(WIDE)) == expected


LISTS = af.Schema.from_mapping({"tags": "string[]"})
NUL_LISTS = [
    {"id": "l1", "tags": ["a\x00b"]},
    {"id": "l2", "tags": ["a"]},
    {"id": "l3", "tags": ["\x00", "o'brien"]},
    {"id": "l4", "tags": ["\x00"]},
    {"id": "l5", "tags": [""]},
    {"id": "l6", "tags": []},
]
LIST_NUL_CASES: list[tuple[str, dict[str, Any]]] = [
    ("equals", {"tags": {"equals": ["\x00"]}}),
    ("not", {"tags": {"not": ["\x00"]}}),
    ("not-insensitive", {"tags": {"not": ["\x00", "O'Brien"], "mode": "insensitive"}}),
    ("equals-insensitive", {"tags": {"equals": ["\x00", "O'BRIEN"], "mode": "insensitive"}}),
    ("has", {"tags": {"has": "a\x00b"}}),
    ("has-some", {"tags": {"hasSome": ["x", "\x00"]}}),
    ("has-every-insensitive", {"tags": {"hasEvery": ["\x00"], "mode": "insensitive"}}),
    ("has-prefix", {"tags": {"has": "a"}}),
    ("has-empty", {"tags": {"has": ""}}),
]
"""A string list field holding NUL: SQLite keeps the list as JSON text and reads its items with
`json_each`, which ends a string at NUL (`"\\u0000"` reads as `""`, `"a\\u0000b"` as `"a"`).
A literal holding NUL is refused when the filter is built; a literal without NUL stays, its
answer decided by the stored items (`has "a"` on `["a\\u0000b"]`, a documented limit).
PostgreSQL's text cannot hold NUL: these records cannot be stored there."""

LIST_LIMITS = {"has-prefix", "has-empty"}


def _list_params() -> list[Any]:
    params = []
    for case, where in LIST_NUL_CASES:
        for database in database_params():
            name = database.values[0]
            if name == "postgresql":
                continue
            for way in WAYS:
                marks = list(database.marks)
                if name == "sqlite" and case in LIST_LIMITS:
                    marks.append(pytest.mark.xfail(strict=True, reason=SQLITE_NUL))
                params.append(
                    pytest.param(name, way, where, marks=marks, id=f"nul-list-{case}-{way}-{name}")
                )
    return params


@pytest.mark.parametrize(("name", "way", "where"), _list_params())
def test_a_list_holding_nul_agrees_with_memory_or_is_refused(
    name: str, way: str, where: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    """Memory's answer, or on SQLite, where a literal holds NUL, a refusal when the filter is
    built. Before, SQLite's `equals ["\\u0000"]` selected nobody and its `not` every list (a
    generated filter over a to-one row's list found it: `owner.is.c_string_list.not`)."""
    database: Database = open_database(name, request)
    flt = af.parse(where, LISTS)
    expected = {r["id"] for r in NUL_LISTS if flt.matches(r)}
    table = database.table_for(NUL_LISTS, LISTS)
    if refuses(name, flt):
        with pytest.raises(af.FilterError, match="NUL") as caught:
            database.way(way)(flt, table)
        assert caught.value.errors[0].path == "tags"
        return
    assert database.way(way)(flt, table) == expected
