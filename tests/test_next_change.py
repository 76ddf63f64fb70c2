"""`FilterClock.next_change`: the first instant at which time alone changes a record's answer.

The oracle is independent of the search: every instant a record holds, every duration and
every zone's calendar sits on a 15-minute grid (Kolkata's half hour, Chatham's 45 minutes and
Lord Howe's half-hour shift included), so each answer can change only at a grid point or the
microsecond after one. The test walks that grid from `now` and checks that the answer stays
put strictly before the instant found, and differs there; or, when none is found, that it
never changes before the horizon. Clocks are drawn around daylight-saving transitions.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import audiencefilter as af

GRID = timedelta(minutes=15)
TICK = timedelta(microseconds=1)
HORIZON = timedelta(days=12)
DURATIONS = ("PT1H", "PT90M", "P1D", "P1W", "P1M1D", "P1M", "P2DT6H")
ZONES = (
    "UTC",
    "Europe/Paris",
    "America/Santiago",
    "Asia/Beirut",
    "Asia/Kolkata",
    "Pacific/Chatham",
    "Australia/Lord_Howe",
    "America/New_York",
)
# Daylight-saving transitions of these zones fall in these stretches of 2025.
SEASONS = (datetime(2025, 3, 25, tzinfo=UTC), datetime(2025, 10, 1, tzinfo=UTC))


def _grid_instant(base: datetime, quarters: int) -> datetime:
    return base + GRID * quarters


@st.composite
def clocks(draw: st.DrawFn) -> datetime:
    season = draw(st.sampled_from(SEASONS))
    return _grid_instant(season, draw(st.integers(0, 40 * 96)))


def _near(now: datetime) -> st.SearchStrategy[datetime]:
    return st.integers(-16 * 96, 2 * 96).map(lambda q: _grid_instant(now, q))


def _moment() -> st.SearchStrategy[Any]:
    zone = st.sampled_from(ZONES)
    unit = st.sampled_from(("day", "week", "month", "year"))
    ago = st.sampled_from(DURATIONS).map(lambda d: {"ago": d})
    start = st.builds(
        lambda u, o, z: {"startOf": u, "offset": o, "timeZone": z}, unit, st.integers(-2, 2), zone
    )
    return st.one_of(ago, ago, start)


def _period() -> st.SearchStrategy[dict[str, Any]]:
    unit = st.sampled_from(("day", "week", "month"))
    zone = st.sampled_from(ZONES)
    this = st.builds(lambda u, z: {"this": u, "timeZone": z}, unit, zone)
    last = st.builds(
        lambda n, u, z: {"last": n, "unit": u, "timeZone": z}, st.integers(1, 9), unit, zone
    )
    upcoming = st.builds(
        lambda n, u, z: {"next": n, "unit": u, "timeZone": z}, st.integers(1, 9), unit, zone
    )
    return st.one_of(this, last, upcoming)


def _dated() -> st.SearchStrategy[dict[str, Any]]:
    compared = st.builds(
        lambda op, v: {op: v}, st.sampled_from(("gte", "gt", "lt", "lte")), _moment()
    )
    return st.one_of(
        compared,
        compared,
        _period().map(lambda p: {"within": p}),
        _period().map(lambda p: {"anniversary": p}),
    )


def _behaviour() -> st.SearchStrategy[dict[str, Any]]:
    window = _dated().map(lambda test: {"createdAt": test})
    counted = st.builds(
        lambda where, least: {"actions": {"where": where, "count": {"gte": least}}},
        window,
        st.integers(1, 3),
    )
    quantified = st.builds(
        lambda q, where: {"actions": {q: where}}, st.sampled_from(("some", "none", "every")), window
    )
    latest = _dated().map(lambda test: {"actions": {"max": {"createdAt": test}}})
    return st.one_of(counted, quantified, latest)


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    own = _dated().map(lambda test: {"createdAt": test})
    return st.one_of(own, own, _behaviour(), st.just({"points": {"gte": 1}}))


def wheres() -> st.SearchStrategy[dict[str, Any]]:
    return st.recursive(
        _leaf(),
        lambda children: st.one_of(
            st.lists(children, min_size=2, max_size=3).map(lambda items: {"AND": items}),
            st.lists(children, min_size=2, max_size=3).map(lambda items: {"OR": items}),
            children.map(lambda item: {"NOT": item}),
        ),
        max_leaves=4,
    )


@st.composite
def records(draw: st.DrawFn, now: datetime) -> dict[str, Any]:
    actions = draw(st.lists(_near(now), max_size=4))
    return {
        "createdAt": draw(st.one_of(st.none(), _near(now))),
        "points": draw(st.sampled_from((None, 0, 2))),
        "actions": [{"name": "share", "createdAt": at.isoformat()} for at in actions],
    }


def _first_change_by_walking(
    flt: af.Filter, record: dict[str, Any], now: datetime, end: datetime
) -> datetime | None:
    start = flt.matches(record, now=now)
    point = now - (now - SEASONS[0]) % GRID  # grid points from the one at or before now
    while point < end:
        for instant in (point, point + TICK):
            if now < instant < end and flt.matches(record, now=instant) != start:
                return instant
        point += GRID
    return None


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_instant_found_is_the_first_change(data: st.DataObject) -> None:
    _check(data, wheres())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_instant_found_for_one_condition_is_the_first_change(data: st.DataObject) -> None:
    _check(data, _leaf())


def _check(data: st.DataObject, where: st.SearchStrategy[dict[str, Any]]) -> None:
    now = data.draw(clocks())
    flt = af.parse(data.draw(where))
    record = data.draw(records(now))
    horizon = now + HORIZON
    found = flt.clock.next_change(record, now, until=horizon)
    walked = _first_change_by_walking(flt, record, now, horizon)
    assert found == walked, (flt.to_text(), record, now)


def test_a_sign_up_leaves_the_last_day_the_microsecond_after_it_turns_one_day_old() -> None:
    flt = af.parse({"createdAt": {"gte": {"ago": "P1D"}}})
    signed_up = datetime(2026, 3, 1, 10, tzinfo=UTC)
    found = flt.clock.next_change({"createdAt": signed_up}, datetime(2026, 3, 1, 12, tzinfo=UTC))
    assert found == signed_up + timedelta(days=1, microseconds=1)


def test_a_birthday_today_changes_at_local_midnights() -> None:
    flt = af.parse({"createdAt": {"anniversary": {"this": "day", "timeZone": "Europe/Paris"}}})
    record = {"createdAt": datetime(1990, 3, 30, 12, tzinfo=UTC)}
    # Paris moves to summer time on 30 March 2025: that day starts at 23:00 UTC on the 29th
    # and ends at 22:00 UTC on the 30th.
    now = datetime(2025, 3, 20, tzinfo=UTC)
    entering = flt.clock.next_change(record, now, until=now + timedelta(days=30))
    assert entering == datetime(2025, 3, 29, 23, tzinfo=UTC)
    assert flt.clock.next_change(record, entering) == datetime(2025, 3, 30, 22, tzinfo=UTC)


def test_a_count_in_a_window_reads_past_the_rows_it_stopped_at() -> None:
    flt = af.parse(
        {"actions": {"where": {"createdAt": {"gte": {"ago": "P1D"}}}, "count": {"gte": 1}}}
    )
    now = datetime(2026, 1, 10, tzinfo=UTC)
    rows = [now - timedelta(hours=20), now - timedelta(hours=2)]
    record = {"actions": [{"name": "share", "createdAt": at.isoformat()} for at in rows]}
    assert flt.clock.next_change(record, now) == rows[1] + timedelta(days=1, microseconds=1)


def test_an_absolute_filter_never_changes_with_time() -> None:
    flt = af.parse({"points": {"gte": 1}})
    assert flt.clock.next_change({"points": 2}) is None
    assert flt.clock.next_step() is None
    assert not flt.clock.moves_with_clock


def test_next_step_is_the_first_calendar_boundary() -> None:
    flt = af.parse({"createdAt": {"within": {"this": "month", "timeZone": "Asia/Kolkata"}}})
    now = datetime(2025, 5, 31, 18, 29, tzinfo=UTC)
    assert flt.clock.next_step(now) == datetime(2025, 5, 31, 18, 30, tzinfo=UTC)
    assert not flt.clock.moves_with_clock


@pytest.mark.parametrize("limit_reached", [True])
def test_a_long_search_hands_back_an_instant_before_any_change(limit_reached: bool) -> None:
    flt = af.parse({"createdAt": {"anniversary": {"this": "day"}}})
    now = datetime(2025, 1, 1, tzinfo=UTC)
    record = {"createdAt": datetime(2000, 12, 25, tzinfo=UTC)}
    reached = flt.clock.next_change(record, now)
    assert reached is not None and reached < datetime(2025, 12, 25, tzinfo=UTC)
    assert flt.matches(record, now=reached) is False
