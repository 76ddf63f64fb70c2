"""Inside a relation, a calendar value without a zone of its own is in the contact schema's zone,
as at top level (docs/semantics-relations.md). Before the fix an anniversary there was taken in
UTC."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

import audiencefilter as af

ZONE = "Pacific/Kiritimati"  # UTC+14: the local day differs from UTC's for most of it
NOW = datetime.fromisoformat("2026-11-23T11:00:00+00:00")  # 24 November 01:00 local
SCHEMA = af.CONTACT.in_zone(ZONE)
RECORDS: list[dict[str, Any]] = [
    # The local date of each action is its UTC date plus one day after 10:00 UTC.
    {"id": "a", "actions": [{"id": "1", "name": "x", "createdAt": "2020-11-23T11:00:00Z"}]},
    {"id": "b", "actions": [{"id": "2", "name": "x", "createdAt": "2020-11-23T09:00:00Z"}]},
    {"id": "c", "actions": [{"id": "3", "name": "x", "createdAt": "2020-11-24T09:00:00Z"}]},
]


@pytest.mark.parametrize(
    "unzoned, zoned",
    [
        (
            {"actions": {"some": {"createdAt": {"anniversary": {"this": "day"}}}}},
            {
                "actions": {
                    "some": {"createdAt": {"anniversary": {"this": "day", "timeZone": ZONE}}}
                }
            },
        ),
        (
            {"actions": {"max": {"createdAt": {"anniversary": {"this": "day"}}}}},
            {"actions": {"max": {"createdAt": {"anniversary": {"this": "day", "timeZone": ZONE}}}}},
        ),
        (
            {"actions": {"some": {"createdAt": {"gte": {"startOf": "day"}}}}},
            {"actions": {"some": {"createdAt": {"gte": {"startOf": "day", "timeZone": ZONE}}}}},
        ),
    ],
)
def test_a_relation_takes_the_contact_schemas_zone(
    unzoned: dict[str, Any], zoned: dict[str, Any]
) -> None:
    implicit, explicit = af.parse(unzoned, SCHEMA), af.parse(zoned, SCHEMA)
    expected = [r["id"] for r in explicit.select(RECORDS, now=NOW)]
    assert [r["id"] for r in implicit.select(RECORDS, now=NOW)] == expected
    assert implicit.to_sql("sqlite", now=NOW) == explicit.to_sql("sqlite", now=NOW)


def test_mysql_refuses_a_zoned_anniversary_inside_a_relation_as_at_top_level() -> None:
    """Before, the relation's anniversary was taken in UTC, which MySQL answers."""
    inside = af.parse(
        {"actions": {"some": {"createdAt": {"anniversary": {"this": "week"}}}}}, SCHEMA
    )
    outside = af.parse({"createdAt": {"anniversary": {"this": "week"}}}, SCHEMA)
    for flt in (inside, outside):
        with pytest.raises(af.FilterError, match="MySQL and MariaDB"):
            flt.to_sql("mysql", now=NOW)
