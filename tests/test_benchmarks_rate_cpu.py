"""`benchmarks.service_rate` reads PostgreSQL's CPU from /proc: a backend that ended between
its two readings must keep its time there (its postmaster's reaped children), else the
difference came out below zero."""

from __future__ import annotations

import os
import sys
import time

import pytest

from benchmarks.rate_setup import _cpu, _stat

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


def _burn_in_child(seconds: float) -> None:
    """Forks a child that spends `seconds` of CPU, then waits for it (reaps it)."""
    pid = os.fork()
    if pid == 0:  # the child
        started = time.process_time()
        while time.process_time() - started < seconds:
            pass
        os._exit(0)
    os.waitpid(pid, 0)


def test_a_reaped_childs_cpu_counts_for_its_parent() -> None:
    me = str(os.getpid())
    before = _stat(me)
    assert before is not None
    _burn_in_child(0.3)
    after = _stat(me)
    assert after is not None
    reaped = _cpu(after, reaped=True) - _cpu(before, reaped=True)
    own = _cpu(after) - _cpu(before)
    assert reaped - own >= 0.2  # the child's time, which its own fields alone do not hold
