"""One account's webhook receiver cannot hold the service: each attempt has a total deadline,
a worker's round gives every account with due deliveries its share, and a list has a bounded
number of endpoints. Each test failed before its fix: a receiver dripping one byte at a time
held an attempt for as long as it dripped, a burst of one account's deliveries filled a whole
round while another account's waited, and a list took any number of endpoints.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service import create_app
from audiencefilter.service.domain.webhooks import dispatch
from audiencefilter.service.domain.webhooks.sender import post
from audiencefilter.service.domain.webhooks.targets import Target
from drills.receiver import Receiver

from .conftest import ApiClient, make_tenant, sqlite_settings
from .test_webhooks import ALL_TYPES, LOCAL, new_hook, worker_of


class DripServer:
    """Reads a request, then answers one byte every `every` seconds, `count` times at most."""

    def __init__(self, every: float = 0.25, count: int = 40) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.every, self.count = every, count
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            connection, _ = self.listener.accept()
        except OSError:
            return
        with connection:
            connection.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"[: self.count]:
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(self.every)

    def close(self) -> None:
        self.listener.close()


def test_an_attempt_ends_at_its_deadline_however_slowly_the_receiver_drips() -> None:
    server = DripServer()
    try:
        target = Target("http", "127.0.0.1", server.port, "/hooks", "127.0.0.1")
        started = time.monotonic()
        outcome = post(target, {}, b"{}", timeout=1.0)
        took = time.monotonic() - started
    finally:
        server.close()
    assert not outcome.success
    assert outcome.error == "timed out after 1 s"
    assert took < 2.0, took


def _rows(*accounts: str) -> tuple[list[Any], dict[str, str]]:
    rows = [type("Row", (), {"webhookId": f"h{a}", "id": i})() for i, a in enumerate(accounts)]
    return rows, {f"h{a}": a for a in set(accounts)}


def test_fair_share_takes_every_account_in_due_order() -> None:
    rows, accounts = _rows("a", "a", "a", "a", "b", "a", "c")
    taken = dispatch.fair_share(rows, accounts, limit=4, share=1)
    assert [accounts[row.webhookId] for row in taken] == ["a", "b", "c"]
    alone, accounts = _rows("a", "a", "a")
    assert len(dispatch.fair_share(alone, accounts, limit=8, share=1)) == 3


@pytest.fixture
def isolated(tmp_path: Path) -> Iterator[ApiClient]:
    settings = sqlite_settings(
        tmp_path / "hooks.db",
        webhook_allowed_networks=LOCAL,
        webhook_worker=False,
        webhook_timeout_seconds=1,
        webhook_concurrency=2,
        webhook_account_share=1,
        webhook_max_per_list=3,
        membership_sweep_seconds=0,
    )
    api = ApiClient(create_app(settings))
    yield api
    api.close()


def test_a_silent_receiver_does_not_delay_another_accounts_delivery(
    isolated: ApiClient,
) -> None:
    silent = Receiver(lambda _headers, _body: time.sleep(3) or 200)  # type: ignore[func-returns-value]
    quick = Receiver()
    try:
        noisy, other = make_tenant(isolated), make_tenant(isolated)
        noisy_list, other_list = noisy.new_list()["id"], other.new_list()["id"]
        new_hook(noisy, noisy_list, silent.url)
        new_hook(other, other_list, quick.url)
        for index in range(20):
            noisy.new_contact(noisy_list, f"n{index}@example.com")
        other.new_contact(other_list, "o@example.com")
        started = time.monotonic()
        worker_of(isolated).run_once()
        assert len(quick.snapshot()) == 1, "the other account waited behind the burst"
        assert time.monotonic() - started < 3.0
    finally:
        silent.close()
        quick.close()


def test_a_list_has_a_bounded_number_of_endpoints(isolated: ApiClient) -> None:
    tenant = make_tenant(isolated)
    list_id = tenant.new_list()["id"]
    for index in range(3):
        new_hook(tenant, list_id, f"http://127.0.0.1:9/{index}")
    response = tenant.call(
        "POST",
        "/v4/webhooks",
        json={"listId": list_id, "url": "http://127.0.0.1:9/4", "eventTypes": ALL_TYPES},
    )
    assert response.status_code == 409, response.text
    assert "webhook_max_per_list" in response.json()["message"]


def test_a_backlog_of_one_account_does_not_hide_another_accounts_delivery(
    isolated: ApiClient,
) -> None:
    """The claim read the oldest due rows only: behind one account's backlog (far more than a
    round looks at) another account's delivery was never seen. Now a few rows of every endpoint
    are read, endpoints interleaved by account, and an account's attempts in flight count
    against its share."""
    from audiencefilter.service.domain.webhooks import dispatch

    noisy, other = make_tenant(isolated), make_tenant(isolated)
    noisy_list, other_list = noisy.new_list()["id"], other.new_list()["id"]
    new_hook(noisy, noisy_list, "http://127.0.0.1:9/noisy")
    new_hook(other, other_list, "http://127.0.0.1:9/other")
    for index in range(40):  # far more than limit * look-ahead
        noisy.new_contact(noisy_list, f"n{index}@example.com")
    other.new_contact(other_list, "o@example.com")
    worker = worker_of(isolated)
    dispatch.fan_out(worker.database)
    claimed = dispatch.claim(worker.database, worker.policy, limit=2, share=1)
    accounts = {item.account_id for item in claimed}
    assert len(claimed) == 2 and len(accounts) == 2, claimed
    busy = {next(iter(accounts - {claimed[-1].account_id})): 1}
    more = dispatch.claim(worker.database, worker.policy, limit=2, share=1, busy=busy, cap=1)
    assert {item.account_id for item in more} <= set(accounts) - set(busy)


def test_an_account_alone_leaves_a_share_of_the_threads_free() -> None:
    rows, accounts = _rows("a", "a", "a", "a", "a", "a")
    taken = dispatch.fair_share(rows, accounts, limit=8, share=2, busy={}, cap=6)
    assert len(taken) == 6
    assert dispatch.fair_share(rows, accounts, limit=8, share=2, busy={"a": 6}, cap=6) == []
