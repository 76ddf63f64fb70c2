"""`Filter.matches(record, now=...)` keeps the resolvers of its relative values and the
instants of the last `now`: the answers must be those of a fresh resolution at every `now`,
from any thread."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import audiencefilter as af

WEEK = af.parse({"createdAt": {"anniversary": {"this": "week", "timeZone": "Europe/Paris"}}})
RECORD = {"createdAt": "1990-11-16T10:00:00Z"}  # a Friday, 16 November


def _fresh(now: datetime) -> bool:
    """The answer of a new `Filter`, which holds no resolver and no instants yet."""
    return af.Filter(WEEK.root).matches(RECORD, now=now)


def test_each_now_is_answered_for_itself() -> None:
    start = datetime(2026, 11, 1, tzinfo=UTC)
    nows = [start + timedelta(days=day, hours=hour) for day in range(30) for hour in (0, 13)]
    assert [WEEK.matches(RECORD, now=now) for now in nows] == [_fresh(now) for now in nows]
    assert any(_fresh(now) for now in nows) and not all(_fresh(now) for now in nows)


def test_threads_with_their_own_now_do_not_share_an_answer() -> None:
    inside = datetime(2026, 11, 18, tzinfo=UTC)  # the week of 16 November
    outside = datetime(2026, 11, 25, tzinfo=UTC)

    def ask(index: int) -> bool:
        now = inside if index % 2 else outside
        return all(WEEK.matches(RECORD, now=now) is bool(index % 2) for _ in range(200))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(ask, range(64)))
