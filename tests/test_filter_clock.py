"""`Filter.clock`: a filter's answers against time live on one `FilterClock`.

`Filter` keeps of the clock's members only the forwards the user docs taught on it before the
move (docs/api.md#the-filters-clock), and each clock member answers what the filter's own
member answered: the expected values below were taken from the filter before the move, on a
duration, a calendar period in a zone, both at once, and an absolute filter.
"""

from __future__ import annotations

import inspect
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import audiencefilter as af

#: The members the user docs (README, guide, semantics, calendar) taught on `Filter`: kept there
#: as silent forwards to the clock, so users' code keeps working.
FORWARDS = {
    "is_relative",
    "resolve",
    "next_change",
    "next_step",
    "next_crossing",
    "moves_with_clock",
}
#: Every clock member `Filter` had before the move; `instants_at` (and its memo) had no caller
#: and went with it.
FORMER = {
    "relatives",
    "is_relative",
    "instants",
    "resolvers",
    "resolve",
    "predicate_at",
    "next_change",
    "_clockwork",
    "next_step",
    "next_crossing",
    "crossing_horizon",
    "moves_with_clock",
    "instants_at",
    "_last_instants",
}

NOW = datetime(2025, 3, 31, 9, 30, tzinfo=UTC)
LATER = NOW + timedelta(days=5)
RECORD = {"createdAt": "2025-03-28T08:00:00Z", "unsubscribed": False, "points": 4}
HELD = [datetime(2025, 3, 28, 8, tzinfo=UTC)]  # the record's date-times, for `next_crossing`


def _at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


WEEK = "Ago(months=0, micros=604800000000)"
CASES: dict[str, dict[str, Any]] = {
    "createdAt >= 7 days ago and unsubscribed = false": {
        "relatives": [WEEK],
        "is_relative": True,
        "instants": (_at(2025, 3, 24, 9, 30),),
        "resolve": "createdAt >= 2025-03-24T09:30:00Z and unsubscribed = false",
        "predicate_at": [True, False],
        "next_change": _at(2025, 4, 4, 8, 0, 0, 1),
        "next_step": None,
        "next_crossing": _at(2025, 4, 4, 8),
        "crossing_horizon": _at(2025, 3, 24, 9, 30),
        "moves_with_clock": True,
    },
    'createdAt within this month in "Europe/Paris"': {
        "relatives": [
            "StartOf(unit='month', offset=0, zone='Europe/Paris')",
            "StartOf(unit='month', offset=1, zone='Europe/Paris')",
        ],
        "is_relative": True,
        "instants": (_at(2025, 2, 28, 23), _at(2025, 3, 31, 22)),
        "resolve": "createdAt >= 2025-02-28T23:00:00Z and createdAt < 2025-03-31T22:00:00Z",
        "predicate_at": [True, False],
        "next_change": _at(2025, 3, 31, 22),
        "next_step": _at(2025, 3, 31, 22),
        "next_crossing": _at(2025, 3, 31, 22),
        "crossing_horizon": None,
        "moves_with_clock": False,
    },
    'createdAt >= 7 days ago or createdAt within last week in "America/Santiago"': {
        "relatives": [
            WEEK,
            "StartOf(unit='week', offset=-1, zone='America/Santiago')",
            "StartOf(unit='week', offset=0, zone='America/Santiago')",
        ],
        "is_relative": True,
        "instants": (_at(2025, 3, 24, 9, 30), _at(2025, 3, 24, 3), _at(2025, 3, 31, 3)),
        "resolve": "createdAt >= 2025-03-24T09:30:00Z"
        " or createdAt >= 2025-03-24T03:00:00Z and createdAt < 2025-03-31T03:00:00Z",
        "predicate_at": [True, True],
        "next_change": _at(2025, 4, 7, 4),
        "next_step": _at(2025, 4, 7, 4),
        "next_crossing": _at(2025, 4, 4, 8),
        "crossing_horizon": _at(2025, 3, 24, 9, 30),
        "moves_with_clock": True,
    },
    "points >= 3": {
        "relatives": [],
        "is_relative": False,
        "instants": (),
        "resolve": "points >= 3",
        "predicate_at": [True, True],
        "next_change": None,
        "next_step": None,
        "next_crossing": None,
        "crossing_horizon": None,
        "moves_with_clock": False,
    },
}


def _answers(clock: Any) -> dict[str, Any]:
    """Each clock member's answer at `NOW` (on `RECORD` where it takes a record)."""
    return {
        "relatives": [repr(value) for value in clock.relatives],
        "is_relative": clock.is_relative,
        "instants": clock.instants(NOW),
        "resolve": clock.resolve(NOW).to_text(),
        "predicate_at": [clock.predicate_at(lambda t=t: t)(RECORD) for t in (NOW, LATER)],
        "next_change": clock.next_change(RECORD, NOW),
        "next_step": clock.next_step(NOW),
        "next_crossing": clock.next_crossing(HELD, NOW),
        "crossing_horizon": clock.crossing_horizon(NOW),
        "moves_with_clock": clock.moves_with_clock,
    }


@pytest.mark.parametrize("text", sorted(CASES))
def test_each_clock_member_answers_as_the_filter_did(text: str) -> None:
    clock = af.parse_text(text).clock
    assert isinstance(clock, af.FilterClock)
    assert _answers(clock) == CASES[text]
    assert tuple(resolver(NOW) for resolver in clock.resolvers) == CASES[text]["instants"]


@pytest.mark.parametrize("text", sorted(CASES))
def test_the_forwards_answer_what_the_clock_answers(text: str) -> None:
    flt = af.parse_text(text)
    clock = flt.clock
    assert flt.is_relative is clock.is_relative
    assert flt.moves_with_clock is clock.moves_with_clock
    assert flt.resolve(NOW) == clock.resolve(NOW)
    assert flt.next_change(RECORD, NOW, until=LATER) == clock.next_change(RECORD, NOW, until=LATER)
    assert flt.next_step(NOW) == clock.next_step(NOW)
    assert flt.next_crossing(HELD, NOW, until=LATER) == clock.next_crossing(HELD, NOW, until=LATER)


def test_the_clock_is_built_once_per_filter() -> None:
    flt = af.parse_text("createdAt >= 7 days ago")
    assert flt.clock is flt.clock
    assert flt.clock.resolve(NOW).clock is not flt.clock


def test_filter_has_no_clock_member_but_the_forwards() -> None:
    kept = {name for name in dir(af.Filter) if name in FORMER}
    assert kept == FORWARDS
    public = {name for name in vars(af.FilterClock) if not name.startswith("_")}
    assert public | {"_clockwork"} <= FORMER
    for name in FORWARDS:
        member = inspect.getattr_static(af.Filter, name)
        function = member.fget if isinstance(member, property) else member
        assert "the clock is its home" in (function.__doc__ or ""), name
        after_docstring = inspect.getsource(function).split('"""')[-1]
        statements = [line.strip() for line in after_docstring.splitlines() if line.strip()]
        assert len(statements) == 1, name  # one line: the forward
        assert statements[0].startswith(f"return self.clock.{name}"), name
