"""`in` and `notIn` lists holding integers at the 64-bit edges beside numbers an engine writes
another way (a double past every integer it holds exactly, a fraction), on every SQL database
and every way of asking, against memory.

DuckDB writes an integer past HUGEINT (`-1e300`, read as the integer it holds) as a double,
and compares a list of integers and doubles as doubles: in one list with -2^63 - 1, that
made -2^63 a member. The shared writer (`number_groups`) keeps the 64-bit integers, each wider
integer and the other numbers apart, so each is compared as its own literal is.
"""

from __future__ import annotations

from typing import Any

import pytest

import audiencefilter as af
from tests.sql_engines import WAYS, database_params, open_database

ITEM = af.Schema.of("item", id="string", points="number")
SCHEMA = af.CONTACT.with_relations(af.Relation("items", ITEM))

HELD = [
    -(2**63),
    -(2**63) + 1,
    -(2**63) + 1024,
    2**63 - 1,
    2**63 - 1024,
    2**53,
    2**53 + 1,
    0,
]
"""The 64-bit column's values: at the edges, next to them, and where doubles get coarse."""

RECORDS: list[dict[str, Any]] = [
    {"id": f"c{i}", "points": v, "items": [{"id": f"i{i}", "points": v}]}
    for i, v in enumerate(HELD)
]

EDGES: list[int] = [-(2**63) - 1, -(2**63), 2**63 - 1, 2**63, 2**53 + 1]
PARTNERS: list[int | float] = [-1e300, 1e300, 0.5, 2**64, -(2**64), 5, 1e23]


def _wheres() -> list[dict[str, Any]]:
    wheres: list[dict[str, Any]] = []
    for op in ("in", "notIn"):
        for edge in EDGES:
            for partner in PARTNERS:
                test = {op: [edge, partner]}
                wheres += [
                    {"points": test},
                    {"NOT": {"points": test}},
                    {"items": {"some": {"points": test}}},
                    {"items": {"sum": {"points": test}}},
                    {"items": {"max": {"points": test}}},
                ]
    return wheres


WHERES = _wheres()


@pytest.mark.parametrize("name", database_params())
def test_int64_edges_in_lists_agree_with_memory(name: str, request: pytest.FixtureRequest) -> None:
    """Every way on every database selects memory's ids, or refuses the filter (SQLite
    holds a sum within 64 bits only and says so)."""
    database = open_database(name, request)
    table = database.table_for(RECORDS, SCHEMA)
    wrong = []
    for where in WHERES:
        flt = af.parse(where, SCHEMA)
        expected = {r["id"] for r in RECORDS if flt.matches(r)}
        for way in WAYS:
            try:
                found: set[str] = database.way(way)(flt, table, None)
            except af.FilterError:
                continue
            if found != expected:
                wrong.append(f"{way} {flt.to_json()}: {sorted(found)}, memory {sorted(expected)}")
    assert not wrong, f"{len(wrong)} disagree on {name}:\n" + "\n".join(wrong[:40])
