"""The suite's freeze of the collector (`tests/conftest.py`, `pytest_runtest_setup`) keeps its
one rule: nothing is frozen while a test runs, so a test that drops a cycle and collects sees
it freed, even after a full collection in between; a test that starts after a full
collection finds what was alive then frozen."""

from __future__ import annotations

import gc
import os
import weakref

import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("AUDIENCEFILTER_TEST_GC_FREEZE") == "0", reason="the freeze is switched off"
)


class _Node:
    """A cycle: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


KEPT: list[_Node] = []


def test_a_cycle_dropped_during_a_test_is_freed_after_a_full_collection() -> None:
    node = _Node()
    gone = weakref.ref(node)
    gc.collect()  # a full collection while the cycle is alive: the next test freezes
    del node
    gc.collect()
    assert gone() is None
    KEPT.append(_Node())


def test_what_was_alive_after_a_full_collection_is_frozen_at_the_next_test() -> None:
    if not KEPT:
        pytest.skip("runs after the test above, which leaves the cycle and a full collection")
    assert gc.get_freeze_count() > 0
    node = KEPT.pop()
    gone = weakref.ref(node)
    del node
    gc.collect()
    assert gone() is not None, "frozen at this test's start, the cycle stays"
