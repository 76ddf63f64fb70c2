"""The two scale benchmarks run end to end at a tiny size and check their own answers: the
FilterSet workload against each filter's `matches`, and the simulated week of time audiences
against the library's answers at every instant. No timing is asserted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import audiencefilter as af
from benchmarks import filterset_scale, simulated_week
from benchmarks.filterset_workload import Workload, parse_all


def test_the_filterset_workload_answers_as_each_filter_alone() -> None:
    workload = Workload(seed=5)
    filters = parse_all(workload.filters(300))
    contact = workload.contact()
    together = af.FilterSet(filters)
    tracked = together.track(contact)
    distinct, counted, nodes, nodes_counted = together.sharing()
    assert distinct < counted and nodes < nodes_counted  # the pieces are shared
    for state in [contact, *workload.changes(contact, 60)]:
        alone = [i for i, flt in enumerate(filters) if flt.matches(state)]
        tracked.update(state)
        assert tracked.matching == alone
        assert together.matching(state) == alone


def test_the_filterset_benchmark_checks_its_answers() -> None:
    found = filterset_scale.measure(filters=200, changes=40, sample=10, naive_filters=50)
    assert len(found.changes_ms) == 40 and len(found.whole_ms) == 10
    assert "| `Tracked.update` |" in filterset_scale.report(found)


def test_a_simulated_day_has_every_event_once_and_on_time() -> None:
    tally = simulated_week.simulate(contacts=40, audiences=12, days=1)
    assert tally.events > 50 and tally.checks >= 5
    assert (tally.missed, tally.duplicated, tally.wrong, tally.disagreements) == (0, 0, 0, 0)
    assert not tally.late and tally.on_time == tally.events


def test_the_check_notices_an_instant_left_out() -> None:
    """The clock moved past instants without the scheduler running there: the events come
    late, and the check says so."""
    tally = simulated_week.simulate(contacts=40, audiences=12, days=1, skip=3)
    assert tally.late and max(tally.late) > 1
    assert tally.on_time < tally.events


def test_a_return_within_the_second_is_on_time_and_a_late_one_is_not() -> None:
    """The case the week at 1,000 contacts counted 1 s late: one action leaves a three-hour
    window at 12:26:24.754, another enters it at 12:26:25.012; the scheduler wrote the exit at
    24.854 and the entry at 25.112, 0.1 s after each. One second before the entry the contact
    was in (the first action), so the instant alone said late; the clock's last instant before
    the entry was seen (24.854, when it was out) says it changed within the second."""
    at = datetime(2031, 3, 31, 12, 26, 24, 754332, tzinfo=UTC)
    back = {"actions": [{"createdAt": at - timedelta(hours=3)}, {"createdAt": at + ENTERS}]}
    flt = af.parse({"actions": {"where": WINDOW, "count": {"gte": 1}}})
    written = at + ENTERS + timedelta(seconds=0.1)
    assert flt.matches(back, now=written - simulated_week.ON_TIME)  # in, one second before
    assert not flt.matches(back, now=at + timedelta(seconds=0.1))  # out, when last seen
    assert simulated_week.on_time(flt, back, True, at + timedelta(seconds=0.1), written)
    # Seen out only long before, and in one second before the write: late.
    assert not simulated_week.on_time(flt, back, True, at - timedelta(seconds=10), written)
    enters = {"actions": [{"createdAt": at + ENTERS}]}
    late = at + ENTERS + timedelta(seconds=1.2)
    assert not simulated_week.on_time(flt, enters, True, at - timedelta(seconds=5), late)
    assert simulated_week.on_time(flt, enters, True, at - timedelta(seconds=5), written)


ENTERS = timedelta(seconds=0.257587)
WINDOW = {"createdAt": {"gte": {"ago": "PT3H"}, "lte": {"ago": "PT0S"}}}


def test_the_audiences_move_with_the_clock_only() -> None:
    for where in simulated_week.audience_filters(24):
        flt = af.parse(where)
        assert flt.clock.relatives, where
    assert simulated_week.CHECK_EVERY < timedelta(days=1)
