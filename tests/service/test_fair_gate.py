"""SQLite's write gate hands itself over by account (`db/fair_gate.py`): another account's
single write waits for the turn under way, not for every writer one account keeps queued. In
the floods drill, three imports of one account, each queueing its next turn, put three turns
before another account's write (1.28 s at load 11-17, where the bound is 1 s)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.db.fair_gate import FairGate

from .conftest import ApiClient, make_tenant, sqlite_settings
from .webhook_receivers import until


def _queue(gate: FairGate, key: str | None, order: list[str], name: str) -> threading.Thread:
    """A writer of `key` that queues at the gate (held by someone else), records its turn and
    leaves; started and waited for until it is queued, so the queue's order is the test's."""
    before = gate.waiting

    def write() -> None:
        assert gate.enter(30.0, key)
        order.append(name)
        gate.leave()

    thread = threading.Thread(target=write, name=name)
    thread.start()
    until(lambda: gate.waiting == before + 1, f"{name} to queue")
    return thread


def _run(holder: str | None, queued: list[tuple[str | None, str]]) -> list[str]:
    gate = FairGate()
    assert gate.enter(1.0, holder)
    order: list[str] = []
    threads = [_queue(gate, key, order, name) for key, name in queued]
    gate.leave()
    for thread in threads:
        thread.join(30)
    assert gate.waiting == 0
    return order


def test_another_accounts_write_goes_before_the_holders_queued_turns() -> None:
    queued = [("A", "a2"), ("A", "a3"), ("A", "a4"), ("B", "b1")]
    assert _run("A", queued) == ["b1", "a2", "a3", "a4"]


def test_accounts_take_turns_then_arrival_order_within_one() -> None:
    queued = [("A", "a2"), ("A", "a3"), ("B", "b1"), ("B", "b2"), ("C", "c1"), (None, "s1")]
    # A just held the gate: B first; then the share whose first writer has waited longest, but
    # never the share that just wrote while another waits.
    assert _run("A", queued) == ["b1", "a2", "c1", "s1", "b2", "a3"]


def test_one_account_alone_keeps_arrival_order() -> None:
    queued = [("A", "a2"), ("A", "a3"), ("A", "a4")]
    assert _run("A", queued) == ["a2", "a3", "a4"]


def test_a_writer_that_gives_up_leaves_the_others_queued() -> None:
    gate = FairGate()
    assert gate.enter(1.0, "A")
    assert gate.enter(0.05, "B") is False  # gave up after its timeout
    assert gate.waiting == 0
    order: list[str] = []
    thread = _queue(gate, "A", order, "a2")
    gate.leave()
    thread.join(30)
    assert order == ["a2"] and gate.waiting == 0
    assert gate.enter(1.0, "B")  # free again
    gate.leave()


def test_a_requests_writes_queue_as_its_account(
    tmp_path: Path, app_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api: ApiClient = app_factory(sqlite_settings(tmp_path / "share.db"))
    tenant, other = make_tenant(api), make_tenant(api)
    lists = {tenant.account_id: tenant.new_list()["id"], other.account_id: other.new_list()["id"]}
    gate = api.app.state.db.gate
    assert gate is not None
    keys: list[str | None] = []
    real_enter = gate.enter

    def enter(timeout: float, key: str | None = None) -> bool:
        keys.append(key)
        return bool(real_enter(timeout, key))

    monkeypatch.setattr(gate, "enter", enter)
    tenant.new_contact(lists[tenant.account_id], "a@share.test")
    other.new_contact(lists[other.account_id], "b@share.test")
    assert keys and set(keys) <= {tenant.account_id, other.account_id}
    assert keys[0] == tenant.account_id and keys[-1] == other.account_id
