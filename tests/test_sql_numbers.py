"""Numbers at the edges, on every SQL engine and every way of asking, against memory.

- Integer literals wider than MariaDB's DECIMAL (65 digits) must not be clamped to 65 nines:
  `gt: 10**100` selects nothing, however large a stored JSON number is.
- A `number[]` item stored from the float 1e23 is that float's exact value
  (99999999999999991611392), not 10**23, as memory compares it.
- A sum past 64-bit integers is exact, SQLite's too (`tests/test_sql_number_edges.py` has
  the cross product).
"""

from __future__ import annotations

from typing import Any

import pytest

import audiencefilter as af
from tests.sql_engines import WAYS, database_params, open_database

WIDE: list[tuple[list[dict[str, Any]], dict[str, Any], af.Schema]] = [
    (
        [{"id": "a", "data": {"n": 1e70}}, {"id": "b", "data": {"n": 5}}],
        {"data": {"path": ["n"], "gt": 10**100}},
        af.CONTACT,
    ),
    (
        [{"id": "a", "data": {"n": -1e70}}, {"id": "b", "data": {"n": 5}}],
        {"data": {"path": ["n"], "lt": -(10**100)}},
        af.CONTACT,
    ),
    (
        [{"id": "a", "data": {"n": 1e70}}, {"id": "b", "data": {"n": 5}}],
        {"data": {"path": ["n"], "lte": 10**400}},
        af.CONTACT,
    ),
    (
        [{"id": "a", "points": 7}, {"id": "b", "points": None}],
        {"points": {"lt": 10**66}},
        af.CONTACT,
    ),
    (
        [{"id": "a", "n": [1e23]}, {"id": "b", "n": [10.0**22]}],
        {"n": {"has": 10**23}},
        af.Schema.of(n="number[]"),
    ),
    (
        [{"id": "a", "n": [1e23]}, {"id": "b", "n": [10.0**22]}],
        {"n": {"has": 1e23}},
        af.Schema.of(n="number[]"),
    ),
    (
        [{"id": "a", "n": [1e23, 2]}, {"id": "b", "n": [10.0**22]}],
        {"n": {"hasSome": [10**22, 10**23]}},
        af.Schema.of(n="number[]"),
    ),
]


@pytest.mark.parametrize(
    ("records", "where", "schema"), WIDE, ids=[str(i) for i in range(len(WIDE))]
)
@pytest.mark.parametrize("name", database_params())
def test_numbers_at_the_edges_agree_with_memory(
    name: str,
    records: list[dict[str, Any]],
    where: dict[str, Any],
    schema: af.Schema,
    request: pytest.FixtureRequest,
) -> None:
    database = open_database(name, request)
    flt = af.parse(where, schema)
    expected = {r["id"] for r in records if flt.matches(r)}
    table = database.table_for(records, schema)
    for way in WAYS:
        try:
            found = database.way(way)(flt, table, None)
        except af.FilterError:
            continue  # refused on this engine (MariaDB's date-time lists, say)
        assert found == expected, (way, flt.to_sql(database.dialect))


BIG = 2**62
OVERFLOWING = [
    {"id": "c1", "actions": [{"id": "x", "increase": BIG}, {"id": "y", "increase": BIG}]},
    {"id": "c2", "actions": [{"id": "z", "increase": 1}]},
]


@pytest.mark.parametrize("name", database_params())
def test_a_sum_past_64_bits_is_exact(name: str, request: pytest.FixtureRequest) -> None:
    database = open_database(name, request)
    flt = af.parse({"actions": {"sum": {"increase": {"gt": 2**63 - 1}}}})
    assert {r["id"] for r in OVERFLOWING if flt.matches(r)} == {"c1"}
    table = database.table_for(OVERFLOWING)
    for way in WAYS:
        assert database.way(way)(flt, table, None) == {"c1"}, way
