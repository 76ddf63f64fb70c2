"""The per-process counters prune in passing: no thread per count, old entries still go."""

from __future__ import annotations

import threading
import time

import pytest
from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from audiencefilter.service.http import memory_counts
from audiencefilter.service.http.memory_counts import InlinePruningMemoryStorage
from audiencefilter.service.http.ratelimit import RateLimiter
from audiencefilter.service.settings import Settings


def test_the_base_still_has_the_hook_the_counters_replace() -> None:
    """A release of `limits` that renames its pruning would bring back a thread per count
    (or stop pruning): this fails first."""
    assert hasattr(MemoryStorage, "_MemoryStorage__schedule_expiry")
    assert hasattr(MemoryStorage, "_MemoryStorage__expire_events")


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """The threads started while the test runs."""
    found: list[threading.Thread] = []
    original = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        found.append(thread)
        original(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    return found


def test_counts_start_no_thread(started: list[threading.Thread]) -> None:
    storage = InlinePruningMemoryStorage()
    limiter = MovingWindowRateLimiter(storage)
    item = parse("1000/minute")
    before = len(started)  # the base's constructor starts one timer
    for _ in range(200):
        assert limiter.hit(item, "account", "a")
    assert started[before:] == []


def test_the_plain_storage_would_start_threads(started: list[threading.Thread]) -> None:
    """The neighbour the test above guards against: `limits`' own storage starts timers as it
    counts (if a release stops doing so, the replacement can go)."""
    storage = MemoryStorage()
    limiter = MovingWindowRateLimiter(storage)
    item = parse("1000/minute")
    for _ in range(20):
        limiter.hit(item, "account", "a")
        storage.timer.join()  # the timer ran: the next count starts another
    assert started


def test_expired_entries_are_pruned_by_a_later_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_counts, "PRUNE_EVERY", 0.0)
    storage = InlinePruningMemoryStorage()
    limiter = MovingWindowRateLimiter(storage)
    item = parse("5/second")
    for _ in range(5):
        assert limiter.hit(item, "account", "a")
    assert not limiter.hit(item, "account", "a")  # the window is full
    time.sleep(1.05)  # the window (1 s) has passed: a lower bound, not a deadline
    assert limiter.hit(item, "account", "b")  # another key's count prunes them all
    assert storage.events[item.key_for("account", "a")] == []
    assert len(storage.events[item.key_for("account", "b")]) == 1
    assert limiter.hit(item, "account", "a")


def test_pruning_waits_for_its_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_counts, "PRUNE_EVERY", 3600.0)
    storage = InlinePruningMemoryStorage()
    pruned: list[bool] = []
    monkeypatch.setattr(storage, "prune", lambda: pruned.append(True))
    limiter = MovingWindowRateLimiter(storage)
    item = parse("100/second")
    for _ in range(50):
        limiter.hit(item, "account", "a")
    assert pruned == [True]  # the first count, then not again within the hour


@pytest.mark.parametrize("uri", ["memory://", "redis://127.0.0.1:1"])
def test_the_service_counts_in_process_on_the_pruning_storage(uri: str) -> None:
    """Both the `memory://` limiter and the fallback of a shared one."""
    limiter = RateLimiter(Settings(database_url="sqlite://", rate_limit_storage=uri))
    assert isinstance(limiter._local_storage, InlinePruningMemoryStorage)
