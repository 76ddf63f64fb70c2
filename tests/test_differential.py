"""Differential test: random filters over random contacts select the same ids on every SQL engine
as in memory.

The strategies draw from shared pools (mixed case, non-ASCII, `%`/`_`/`\\`, quotes, integers
around 2^53 and 2^63, instants with offsets and microseconds) so that random filters often hit
random records. Filter values may hold NUL and control characters everywhere; stored records may
too, except on PostgreSQL, whose text cannot hold NUL.

Each database is one parametrized test: per example its scratch table is emptied and refilled
once, then asked three ways (`to_sqlalchemy`, `to_sql`, `to_sql_params`). Relative date-times
are taken at the strategies' `NOW` everywhere. In the `ci` profile
each database runs a sixteenth of the profile's examples (12 of 200, so 48 examples and 144
engine checks in all, the default run being short); `HYPOTHESIS_PROFILE=thorough` runs an
eighth, 625 per database.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.testing.strategies import NOW, filters, record_lists
from tests.default_sizes import DEFAULT_RUN
from tests.sql_engines import WAYS, Database, database_params, open_database
from tests.wide_engines import refuses

EXAMPLES = max(10, settings.default.max_examples // (16 if DEFAULT_RUN else 8))
# One random filter in three is drawn over `createdAt` alone, so that relative date-times
# (`{"ago": ...}`, half of its single-value conditions) are well represented.
DATED = af.Schema.of("contact", createdAt="datetime")


@pytest.fixture(scope="module", params=database_params())
def database(request: pytest.FixtureRequest) -> Database:
    return open_database(request.param, request)


def _case(database: Database) -> st.SearchStrategy[tuple[af.Filter, list[dict[str, Any]]]]:
    hostile_records = database.dialect != "postgresql"
    flt = st.one_of(filters(hostile=True), filters(hostile=True), filters(DATED))
    return st.tuples(flt, record_lists(min_size=3, hostile=hostile_records))


def _describe(flt: af.Filter, database: Database) -> str:
    sql = flt.to_sql(database.dialect, now=NOW)
    return f"filter {flt.to_json()}\n{database.dialect} SQL: {sql}"


def test_sql_engines_select_what_memory_selects(database: Database) -> None:
    table = database.scratch()

    @settings(max_examples=EXAMPLES)
    @given(_case(database))
    def check(case: tuple[af.Filter, list[dict[str, Any]]]) -> None:
        flt, records = case
        if refuses(database.dialect, flt, NOW):  # documented: the engine says so instead
            with pytest.raises(af.FilterError):
                flt.to_sql(database.dialect, now=NOW)
            return
        database.fill(table, records, replace=True)
        expected = {r["id"] for r in records if flt.matches(r, now=NOW)}
        for way in WAYS:
            found = database.way(way)(flt, table, NOW)
            assert found == expected, (
                f"{way} on {database.dialect} disagrees with memory\n{_describe(flt, database)}\n"
                f"records {json.dumps(records, default=str, ensure_ascii=False)}"
            )

    check()
