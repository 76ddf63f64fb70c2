"""`FilterClock.next_crossing` against its definition, worked out plainly.

For a record a database decides, the next look is the first instant after `now` at which a
duration's moving instant meets one of the record's date-times (at that microsecond, and the
next for a strict comparison), or a calendar value steps, if before `until`. The loop keeps
only the least candidate as it goes; this test enumerates every candidate and takes the least.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.language.relative import Ago

NOW = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)
TICK = timedelta(microseconds=1)

FILTERS: list[dict[str, Any]] = [
    {"createdAt": {"gte": {"ago": "P30D"}}},
    {"createdAt": {"gt": {"ago": "PT1H"}}},
    {"AND": [{"createdAt": {"gte": {"ago": "P1M"}}}, {"createdAt": {"lt": {"ago": "P2D"}}}]},
    {"actions": {"some": {"createdAt": {"gte": {"ago": "P7D"}}}}},
    {"AND": [{"createdAt": {"gte": {"ago": "P10D"}}}, {"createdAt": {"within": {"this": "day"}}}]},
    {"createdAt": {"within": {"this": "week"}}},
]

moments = st.integers(min_value=-400 * 86_400, max_value=400 * 86_400).map(
    lambda seconds: NOW + timedelta(seconds=seconds, microseconds=seconds % 7)
)


def _plain(flt: af.Filter, values: list[datetime], now: datetime, until: Any) -> Any:
    """Every candidate listed, the least kept."""
    durations = [r for r in flt.clock.relatives if isinstance(r, Ago)]
    offsets = [now - d.before(now) for d in durations]
    candidates = [] if (step := flt.clock.next_step(now)) is None else [step]
    for value in values:
        for offset in offsets:
            meeting = value + offset
            candidates += [at for at in (meeting, meeting + TICK) if at > now]
    first = min(candidates, default=None)
    return None if first is None or (until is not None and first >= until) else first


@given(
    index=st.integers(min_value=0, max_value=len(FILTERS) - 1),
    values=st.lists(moments, max_size=6),
    now=moments,
    until=st.none() | moments,
)
def test_next_crossing_is_the_least_candidate(
    index: int, values: list[datetime], now: datetime, until: datetime | None
) -> None:
    flt = af.parse(FILTERS[index])
    assert flt.clock.next_crossing(values, now, until=until) == _plain(flt, values, now, until)


def test_a_value_meeting_the_instant_exactly_now_is_looked_at_a_microsecond_later() -> None:
    flt = af.parse({"createdAt": {"gt": {"ago": "P1D"}}})
    assert flt.clock.next_crossing([NOW - timedelta(days=1)], NOW) == NOW + TICK
