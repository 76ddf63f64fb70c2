"""Anniversaries at the edges of the range (docs/semantics-calendar.md, "Anniversaries"): the local
date of `0001-01-01T00:00Z` in America/Los_Angeles is 31 December of year 0, and that of
`9999-12-31T12:00Z` in a zone ahead of UTC 1 January of year 10000, in the proleptic
Gregorian calendar every database stores such instants in. Memory and SQLite read them as
1 January and 31 December (the first and last representable dates) where polars, DuckDB and
PostgreSQL did not, and a `now` whose local date was out of range raised `OverflowError`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import audiencefilter as af
from tests.wide_engines import Engines, agree

EDGES = af.CONTACT.with_fields(birthday="date")
ZONES = ("Pacific/Kiritimati", "America/Los_Angeles")
PERIODS = (
    {"this": "day"},
    {"next": 1, "unit": "day"},
    {"last": 1, "unit": "day"},
    {"this": "week"},
)
NOWS = (
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(1, 1, 1, 12, tzinfo=UTC),
    datetime(9999, 12, 31, 12, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
    datetime(2025, 12, 31, 12, tzinfo=UTC),
    datetime(2025, 1, 1, 12, tzinfo=UTC),
)
_INSTANTS = ("0001-01-01T00:00:00Z", "0001-01-01T12:00:00Z", "9999-12-30T12:00:00Z")
_INSTANTS += ("9999-12-31T12:00:00Z", "9999-12-31T23:59:59.999999Z", "2001-12-31T12:00:00Z")
_DAYS = ("0001-01-01", "9999-12-31", "2000-02-29", "2001-01-01", "2001-12-31", None)
RECORDS = [
    {"id": f"r{index}", "createdAt": instant, "birthday": day}
    for index, (instant, day) in enumerate(zip(_INSTANTS, _DAYS, strict=True))
]


def _wheres() -> list[dict[str, Any]]:
    return [
        {field: {"anniversary": {**period, "timeZone": zone}}}
        for field in ("createdAt", "birthday")
        for period in PERIODS
        for zone in ZONES
    ]


@pytest.mark.parametrize(
    ("instant", "zone", "month_day"),
    [
        ("0001-01-01T00:00:00Z", "America/Los_Angeles", "12-31"),
        ("0001-01-01T00:00:00Z", "Pacific/Kiritimati", "12-31"),  # -10:29 before 1901
        ("9999-12-31T12:00:00Z", "Pacific/Kiritimati", "01-01"),  # +14 since 1995
        ("9999-12-31T12:00:00Z", "America/Los_Angeles", "12-31"),
    ],
)
def test_a_local_date_beyond_the_range_is_the_proleptic_one(
    instant: str, zone: str, month_day: str
) -> None:
    """The month-day is the true local date's, whatever year it is in (the year is ignored)."""
    month, day = (int(part) for part in month_day.split("-"))
    now = datetime(2025, month, day, 12, tzinfo=ZoneInfo(zone))  # noon of that day there
    for flt in (
        af.parse({"createdAt": {"anniversary": {"this": "day", "timeZone": zone}}}),
        af.parse_text(f'createdAt anniversary within today in "{zone}"'),
    ):
        assert flt.matches({"createdAt": instant}, now=now)
        assert flt.explain({"createdAt": instant}, now=now).matched


@pytest.mark.parametrize("now", NOWS, ids=lambda now: now.isoformat()[:19])
def test_memory_answers_at_every_now_near_the_edges_as_one_compiled_predicate_does(
    now: datetime,
) -> None:
    """A `now` whose local date is in year 0 or 10000 is a day like any other: the period is
    its days (no `OverflowError`), a compiled predicate that saw other instants first gives
    the answer a fresh one gives, and explain agrees."""
    for where in _wheres():
        flt = af.parse(where, EDGES)
        shared = [datetime(9999, 12, 31, 5, tzinfo=UTC), datetime(1, 1, 1, 12, tzinfo=UTC), now]
        clock = _Clock()
        predicate = af.compile(flt, clock=clock)
        for record in RECORDS:
            fresh = af.parse(where, EDGES).matches(record, now=now)
            assert flt.explain(record, now=now).matched == fresh, (where, record)
            answers = [clock.set(moment) and predicate(record) for moment in shared]
            assert answers[-1] == fresh, (where, record)


class _Clock:
    """A clock set by hand, so one predicate sees instants in a chosen order."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 1, tzinfo=UTC)

    def set(self, now: datetime) -> bool:
        self.now = now
        return True

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def engines(request: pytest.FixtureRequest) -> Engines:
    return Engines.open(request)


@pytest.mark.parametrize("now", NOWS, ids=lambda now: now.isoformat()[:19])
def test_every_engine_selects_the_anniversaries_memory_selects_at_the_edges(
    engines: Engines, now: datetime
) -> None:
    engines.require("sqlite", "duckdb", "postgresql")
    dialects = ("sqlite", "duckdb", "postgresql")
    agree(engines, _wheres(), RECORDS, dialects=dialects, schema=EDGES, now=now)
