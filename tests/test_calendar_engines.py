"""Calendar conditions against the real engines: random zones, random `now`, random instants.

`start of ...` and `within ...` are resolved in Python, so every engine compares with the same
constants; anniversaries make each engine compute the local month and day of every row in a
zone, with its own zone database (PostgreSQL's, DuckDB's ICU, polars' chrono-tz, Java's on
Spark, Python's on SQLite through the registered function). Every engine must select what
memory selects, or refuse (MySQL/MariaDB outside UTC, `wide_engines.refuses`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from audiencefilter.language.calendar import start_of
from audiencefilter.language.zones import zone_names
from audiencefilter.testing.strategies import CALENDAR_ZONES
from tests.wide_engines import Engines, agree

EXAMPLES = max(10, settings().max_examples // 4)
UNITS = ("day", "week", "month", "year")
# Zones whose rules every engine's database has known for years: the property is about the
# engines' arithmetic, not about which tzdata release each ships.
ZONES = sorted(z for z in zone_names() if z.count("/") == 1 and not z.startswith("Etc/"))


@pytest.fixture(scope="module")
def engines(request: pytest.FixtureRequest) -> Engines:
    return Engines.open(request)


@st.composite
def _period(draw: st.DrawFn) -> dict[str, Any]:
    unit = draw(st.sampled_from(UNITS))
    kind = draw(st.sampled_from(("this", "last", "next")))
    if kind == "this":
        return {"this": unit}
    return {kind: draw(st.integers(1, 10)), "unit": unit}


@st.composite
def _case(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], datetime]:
    zone = draw(st.sampled_from(CALENDAR_ZONES) | st.sampled_from(ZONES))
    where: list[dict[str, Any]] = []
    for _ in range(3):
        period = {**draw(_period()), "timeZone": zone}
        start = {"startOf": draw(st.sampled_from(UNITS)), "offset": draw(st.integers(-2, 2))}
        where.append(
            draw(
                st.sampled_from(
                    (
                        {"createdAt": {"anniversary": period}},
                        {"createdAt": {"not": {"anniversary": period}}},
                        {"createdAt": {"within": period}},
                        {"createdAt": {"gte": {**start, "timeZone": zone}}},
                    )
                )
            )
        )
    instants = st.datetimes(
        min_value=datetime(1971, 1, 1), max_value=datetime(2036, 12, 1), timezones=st.just(UTC)
    )
    values = draw(st.lists(instants, min_size=2, max_size=8))
    records = [{"id": f"r{i}", "createdAt": v} for i, v in enumerate(values)]
    records.append({"id": "null", "createdAt": None})
    now = draw(instants)
    records.extend(  # on and around the calendar edges that matter at `now`
        {"id": f"e{i}", "createdAt": start_of(unit, offset, zone, now) + timedelta(microseconds=d)}
        for i, (unit, offset, d) in enumerate(
            draw(
                st.lists(
                    st.tuples(st.sampled_from(UNITS), st.integers(-2, 2), st.sampled_from((-1, 0))),
                    max_size=4,
                )
            )
        )
    )
    return where, records, now


@settings(max_examples=EXAMPLES, deadline=None)
@given(_case())
def test_calendar_conditions_agree_on_every_engine(
    engines: Engines, case: tuple[list[dict[str, Any]], list[dict[str, Any]], datetime]
) -> None:
    where, records, now = case
    note(f"now {now.isoformat()}, where {where}")
    agree(engines, where, records, now=now)
