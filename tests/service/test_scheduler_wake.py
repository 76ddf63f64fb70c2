"""A write wakes this process's membership scheduler only for an instant before its next look.

Each write of a contact in a time audience writes the contact's next instants; waking the
scheduler for every one of them cost as much CPU as the write (issue 39). The scheduler says
when it looks next (`plan_look`), and only an earlier instant wakes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from audiencefilter.service.domain.membership import due

LOOK = datetime(2026, 1, 1, 12, tzinfo=UTC)


class _Scheduler:
    """Stands for a scheduler thread: only its identity matters."""


@pytest.fixture
def scheduler() -> Iterator[_Scheduler]:
    one = _Scheduler()
    yield one
    due.forget_look(one)
    due.WAKE.clear()


def _woken_by(instant: datetime) -> bool:
    due.WAKE.clear()
    due.wake_for(instant)
    return due.WAKE.is_set()


def test_an_instant_after_the_next_look_does_not_wake(scheduler: _Scheduler) -> None:
    due.plan_look(scheduler, LOOK)
    assert not _woken_by(LOOK + timedelta(microseconds=1))
    assert not _woken_by(LOOK)


def test_an_instant_before_the_next_look_wakes(scheduler: _Scheduler) -> None:
    due.plan_look(scheduler, LOOK)
    assert _woken_by(LOOK - timedelta(microseconds=1))


def test_a_scheduler_still_looking_is_woken_by_any_instant(scheduler: _Scheduler) -> None:
    due.plan_look(scheduler, None)
    assert _woken_by(LOOK + timedelta(days=365))


def test_without_a_scheduler_thread_every_instant_wakes() -> None:
    assert _woken_by(LOOK + timedelta(days=365))
    due.WAKE.clear()


def test_the_latest_look_of_several_schedulers_decides(scheduler: _Scheduler) -> None:
    other = _Scheduler()
    due.plan_look(scheduler, LOOK)
    due.plan_look(other, LOOK + timedelta(seconds=5))
    try:
        assert _woken_by(LOOK + timedelta(seconds=1))  # before the other's look
        assert not _woken_by(LOOK + timedelta(seconds=5))
    finally:
        due.forget_look(other)
