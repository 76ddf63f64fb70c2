"""Relation filters against memory on the real engines: SQL text, SQL with parameters and
SQLAlchemy (Core tables) on SQLite, DuckDB, PostgreSQL and MariaDB, and polars on a List of
Struct column, over generated contacts with 0..many actions (nulls in related rows, names
differing in case, relative windows at a fixed clock)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.testing.relation_strategies import (
    NOW,
    contacts_with_actions,
    relation_wheres,
)
from tests.sql_engines import WAYS
from tests.wide_engines import Engines, polars_ids

EXAMPLES = max(10, settings().max_examples // 8)


@pytest.fixture(scope="module")
def engines(request: pytest.FixtureRequest) -> Engines:
    return Engines.open(request)


def _memory(flt: af.Filter, records: list[dict[str, Any]]) -> set[str]:
    return {r["id"] for r in records if flt.matches(r, now=NOW)}


@settings(max_examples=EXAMPLES, deadline=None)
@given(records=contacts_with_actions(), wheres=st.lists(relation_wheres(), min_size=1, max_size=4))
def test_relation_filters_agree_with_memory(
    engines: Engines, records: list[dict[str, Any]], wheres: list[dict[str, Any]]
) -> None:
    records = [*records, {"id": "rx", "actions": []}]  # so every database has the table
    filters = [af.parse(where) for where in wheres]
    expected = [_memory(flt, records) for flt in filters]
    for flt, wanted in zip(filters, expected, strict=True):
        assert {r["id"] for r in records if flt.explain(r, now=NOW).matched} == wanted
        assert polars_ids(flt, records) == wanted, flt.to_json()
    for dialect, database in engines.databases.items():
        table = database.table_for(records)
        for flt, wanted in zip(filters, expected, strict=True):
            for way in WAYS:
                found = database.way(way)(flt, table, NOW)
                assert found == wanted, (
                    f"{way} on {dialect}: {found}, memory {wanted}\n{flt.to_json()}\n"
                    f"{flt.to_sql(dialect, now=NOW)}\n{records}"
                )


@settings(max_examples=EXAMPLES, deadline=None)
@given(where=relation_wheres())
def test_relation_filters_round_trip_through_json_and_text(where: dict[str, Any]) -> None:
    from audiencefilter import parse_text

    flt = af.parse(where)
    assert af.parse(flt.to_json()) == flt
    assert parse_text(flt.to_text()) == flt
    assert af.parse(flt.simplify().to_json()) == flt.simplify()
