"""`FilterSet.track().update()` sees a date-time move between the two instances of a repeated
wall-clock hour (same wall time, other `fold`), which Python calls equal within one zone. The
neighbours: every zone of the space that repeats an hour, each comparison operator, both ways,
and a date-time beside others in a list."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import audiencefilter as af

REPEATED = [
    ("Europe/Paris", datetime(2025, 10, 26, 2, 30)),
    ("America/New_York", datetime(2025, 11, 2, 1, 30)),
    ("America/Santiago", datetime(2025, 4, 5, 23, 30)),
    ("Australia/Lord_Howe", datetime(2025, 4, 6, 1, 45)),
]
"""A wall time inside a repeated hour of each zone (Lord Howe's is half an hour)."""

OPS = ["equals", "not", "lt", "lte", "gt", "gte"]


def _pair(zone: str, wall: datetime) -> tuple[datetime, datetime]:
    first = wall.replace(tzinfo=ZoneInfo(zone), fold=0)
    second = wall.replace(tzinfo=ZoneInfo(zone), fold=1)
    assert first == second and first.utcoffset() != second.utcoffset()
    return first, second


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(("zone", "wall"), REPEATED, ids=[z for z, _ in REPEATED])
def test_a_move_to_the_other_instance_of_a_repeated_hour_is_seen(
    zone: str, wall: datetime, op: str
) -> None:
    first, second = _pair(zone, wall)
    pivot = second.astimezone(ZoneInfo("UTC"))
    where: dict[str, Any] = {"createdAt": {op: pivot.isoformat()}}
    flt = af.parse(where)
    for before, after in ((first, second), (second, first)):
        tracked = af.FilterSet([flt]).track({"email": "a@example.com", "createdAt": before})
        entered, left = tracked.update({"email": "a@example.com", "createdAt": after})
        was = flt.matches({"createdAt": before})
        now = flt.matches({"createdAt": after})
        assert (entered, left) == ([0] if now > was else [], [0] if was > now else [])
        assert tracked.matching == ([0] if now else [])
