"""The two scale benchmarks run end to end at a tiny size and check their own answers: the
FilterSet workload against each filter's `matches`, and the simulated week of time audiences
against the library's answers at every instant. No timing is asserted."""

from __future__ import annotations

from datetime import timedelta

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


def test_the_audiences_move_with_the_clock_only() -> None:
    for where in simulated_week.audience_filters(24):
        flt = af.parse(where)
        assert flt.relatives, where
    assert simulated_week.CHECK_EVERY < timedelta(days=1)
