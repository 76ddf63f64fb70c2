"""Explanations of calendar values inside relations take the contact schema's zone, as the
back-ends do (`relations.rows_schema`): explain's outcome is `matches`' in every zone."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import audiencefilter as af

_ROWS = af.Schema.from_mapping(
    {"at": "datetime", "day": "date", "data": "json", "jday": ("date", ("data", "jday"))},
    name="visit",
)
SCHEMA = af.CONTACT.with_relations(af.Relation("visits", _ROWS))
ZONES = ("Pacific/Kiritimati", "Pacific/Pago_Pago", "America/Los_Angeles", "UTC")
# Local midnight of 10 March 2025 in each zone, a second before it and after it.
_MIDNIGHTS = (
    datetime(2025, 3, 9, 10, tzinfo=UTC),  # Kiritimati (UTC+14)
    datetime(2025, 3, 10, 11, tzinfo=UTC),  # Pago Pago (UTC-11)
    datetime(2025, 3, 10, 7, tzinfo=UTC),  # Los Angeles (UTC-7 since 9 March)
    datetime(2025, 3, 10, tzinfo=UTC),
)
TESTS = (
    {"anniversary": {"this": "day"}},
    {"anniversary": {"this": "week"}},
    {"anniversary": {"next": 1, "unit": "day"}},
    {"gte": {"startOf": "day"}},
    {"within": {"this": "day"}},
    {"within": {"last": 7, "unit": "day"}},
)
NESTS: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {
    "some": lambda field, test: {"visits": {"some": {field: test}}},
    "every": lambda field, test: {"visits": {"every": {field: test}}},
    "NOT none": lambda field, test: {"NOT": {"visits": {"none": {field: test}}}},
    "count where": lambda field, test: {"visits": {"where": {field: test}, "count": {"gte": 1}}},
    "min": lambda field, test: {"visits": {"min": {field: test}}},
    "max": lambda field, test: {"visits": {"max": {field: test}}},
}


def _nows(zone: str) -> list[datetime]:
    """A second before and at the zone's own midnight, and at another zone's."""
    own = _MIDNIGHTS[ZONES.index(zone)]
    return [own - timedelta(seconds=1), own, _MIDNIGHTS[ZONES.index(zone) - 1]]


def _instants() -> list[datetime]:
    """Each zone's midnight and the second before it, this year and a year before."""
    return [m - timedelta(days=d, seconds=s) for m in _MIDNIGHTS for d in (0, 365) for s in (0, 1)]


def _records(field: str) -> list[dict[str, Any]]:
    """One visit each (the test decides `some` and `every` alike), two, and none."""
    rows = []
    for instant in _instants():
        if field == "at":
            rows.append({"at": instant.isoformat()})
        elif field == "day":
            rows.append({"day": instant.date().isoformat()})
        else:
            rows.append({"data": {"jday": instant.date().isoformat()}})
    records: list[dict[str, Any]] = [{"visits": [row]} for row in rows]
    return [*records, {"visits": rows[:2]}, {"visits": []}]


_PLACES = [(nest, field) for nest in NESTS for field in ("at", "day")] + [("some", "jday")]


@pytest.mark.parametrize(("nest", "field"), _PLACES)
@pytest.mark.parametrize("zone", ZONES)
def test_explain_inside_relations_takes_the_schema_zone(zone: str, nest: str, field: str) -> None:
    """`anniversary within this day` on the actions of a contact schema in Pacific/Kiritimati
    was explained in UTC: TRUE where every engine said FALSE. Each calendar construct, on a
    date-time, a date and a date inside JSON, in each nesting, at instants around midnight."""
    schema = SCHEMA.in_zone(zone)
    records = _records(field)
    for test in TESTS:
        flt = af.parse(NESTS[nest](field, test), schema)
        for now in _nows(zone):
            for record in records:
                expected = flt.matches(record, now=now)
                assert flt.explain(record, now=now).matched == expected, (test, now, record)
