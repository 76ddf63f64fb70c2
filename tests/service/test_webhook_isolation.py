"""One account's webhook receivers cannot hold the service or another account's deliveries.

Against real receivers on 127.0.0.1 (`webhook_receivers.py`): an attempt ends at its deadline
however its receiver drips the answer (the status line, the headers or the body; kept alive,
`connection: close` or HTTP/1.0; plain or TLS), and accounts take turns for the sending
threads, so a healthy account's delivery goes out at the next free thread whatever another
account's backlog to a silent receiver. The tests assert what happened and in which order,
never how long it took; waits only guard against a hang.

Each failed before its fix: a dripping answer that closed the connection held an attempt for as
long as it dripped (the deadline's timer shut down a socket the connection no longer held), and
a healthy account's delivery waited behind a silent account's whole backlog of 40 when the free
thread went to the oldest due delivery (one account of one or two threads, or four of eight).
"""

from __future__ import annotations

import random
import ssl
import subprocess
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from audiencefilter.service import create_app
from audiencefilter.service.domain.webhooks import dispatch
from audiencefilter.service.domain.webhooks.sender import post
from audiencefilter.service.domain.webhooks.targets import Target
from audiencefilter.service.domain.webhooks.turns import Turns
from audiencefilter.service.domain.webhooks.worker import WebhookWorker

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings
from .test_webhooks import ALL_TYPES, LOCAL, new_hook, worker_of
from .webhook_receivers import (
    DRIP_ENDINGS,
    DRIP_PHASES,
    HANG_GUARD,
    Arrivals,
    Drip,
    Healthy,
    Silent,
    until,
)

DEADLINE = 0.5


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A self-signed certificate for localhost and 127.0.0.1 (key and certificate in one file)."""
    folder = tmp_path_factory.mktemp("tls")
    pem = folder / "localhost.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", str(pem), "-out", str(folder / "cert.pem"),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    pem.write_text(pem.read_text() + (folder / "cert.pem").read_text())
    return pem


def _tls(drip: Drip, certificate: Path) -> ssl.SSLContext:
    """Serves `drip` over TLS; the client's context, trusting only that certificate."""
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(certificate)
    drip.server.socket = server.wrap_socket(drip.server.socket, server_side=True)
    return ssl.create_default_context(cafile=str(certificate))


# Every phase and ending in plain HTTP; over TLS, every phase with the ending that hands the
# socket from the connection to the answer (the one the timer lost track of).
DRIPS = [(phase, ending, "http") for phase in DRIP_PHASES for ending in DRIP_ENDINGS] + [
    (phase, "HTTP/1.1 connection: close", "https") for phase in DRIP_PHASES
]


@pytest.mark.parametrize(("phase", "ending", "scheme"), DRIPS)
def test_an_attempt_ends_at_its_deadline_however_slowly_the_receiver_drips(
    phase: str, ending: str, scheme: str, certificate: Path
) -> None:
    """A byte every 0.1 s passes every per-read limit: only the attempt's deadline ends it,
    and the receiver sees the connection closed long before its answer of 600 bytes is out."""
    tls = scheme == "https"
    drip = Drip(phase, ending)
    try:
        context = _tls(drip, certificate) if tls else None
        target = Target(scheme, "localhost", drip.port, "/hooks", "127.0.0.1")
        outcome = post(target, {}, b"{}", DEADLINE, context)
        assert drip.done.wait(HANG_GUARD), "the receiver is still dripping"
    finally:
        drip.close()
    assert not outcome.success and outcome.status_code is None
    assert outcome.error == f"timed out after {DEADLINE:g} s"
    assert drip.ended == "closed"


def test_a_healthy_tls_receiver_still_answers(certificate: Path) -> None:
    """The deadline's watch survives the TLS wrapping without cutting a prompt answer."""
    arrivals = Arrivals()
    healthy = Healthy(arrivals)
    try:
        server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server.load_cert_chain(certificate)
        healthy.server.socket = server.wrap_socket(healthy.server.socket, server_side=True)
        client = ssl.create_default_context(cafile=str(certificate))
        target = Target("https", "localhost", healthy.port, "/hooks", "127.0.0.1")
        outcome = post(target, {"webhook-id": "msg_tls"}, b"{}", HANG_GUARD, client)
    finally:
        healthy.close()
    assert outcome.success and outcome.error is None
    assert arrivals.of("healthy") == ["msg_tls"]


# Accounts take turns -------------------------------------------------------------------------


def test_a_free_thread_goes_to_the_account_with_fewest_in_flight_then_round_robin() -> None:
    turns = Turns(concurrency=8, share=2)
    for account in ("a", "a", "c", "c", "d", "d", "e"):
        turns.begin(account)
    queues = {"a": ["a1", "a2"], "c": ["c1"], "e": ["e1"], "b": ["b1", "b2", "b3"]}
    assert [item for _, item in turns.choose(queues, slots=1)] == ["b1"]
    assert [item for _, item in turns.choose(queues, slots=3)] == ["b1", "e1", "b2"]
    # Equal counts: the account whose last turn is oldest goes first, an unserved one before all.
    even = Turns(concurrency=1, share=1)
    even.begin("a")
    even.end("a")
    assert even.choose({"a": ["a1"], "b": ["b1"]}, slots=1) == [("b", "b1")]
    even.begin("b")
    even.end("b")
    assert even.choose({"b": ["b2"], "a": ["a1"]}, slots=1) == [("a", "a1")]


@pytest.mark.parametrize(("concurrency", "share"), [(1, 1), (2, 2), (3, 2), (8, 2), (8, 8)])
def test_no_account_passes_its_limit_and_free_threads_fill_evenly(
    concurrency: int, share: int
) -> None:
    """Random turns (attempts starting and ending, accounts with backlogs coming and going):
    no account ever holds more than `held_at_most` threads, none is given one past `share`
    while another has deliveries due, and the free threads fill the least busy accounts first
    (one that got a thread ends with at most one more in flight than one left waiting)."""
    rng = random.Random(concurrency * 100 + share)
    turns = Turns(concurrency, share)
    running: list[str] = []
    for _ in range(2000):
        if running and (turns.free() == 0 or rng.random() < 0.4):
            turns.end(running.pop(rng.randrange(len(running))))
            continue
        waiting = rng.sample("abcdef", rng.randint(1, 4))
        queues = {a: [f"{a}{n}" for n in range(rng.randint(1, 9))] for a in waiting}
        limit = turns.limit(len(queues) > 1)
        chosen = turns.choose(queues, turns.free())
        for account, _ in chosen:
            turns.begin(account)
            running.append(account)
        after, got = turns.in_flight(), {account for account, _ in chosen}
        assert sum(after.values()) <= concurrency
        assert max(after.values(), default=0) <= turns.held_at_most
        assert all(after[account] <= limit for account in got)
        left = [a for a in queues if after.get(a, 0) < limit and
                sum(1 for c, _ in chosen if c == a) < len(queues[a])]  # fmt: skip
        assert all(after[a] - 1 <= after.get(b, 0) for a in got for b in left), (after, chosen)


# With the worker, against real receivers ------------------------------------------------------


@pytest.fixture
def receivers() -> Iterator[tuple[Arrivals, Silent, Healthy]]:
    arrivals = Arrivals()
    silent, healthy = Silent(arrivals), Healthy(arrivals)
    yield arrivals, silent, healthy
    silent.close()
    healthy.close()


def _app(tmp_path: Path, **settings: float) -> ApiClient:
    return ApiClient(
        create_app(
            sqlite_settings(
                tmp_path / "turns.db",
                webhook_allowed_networks=LOCAL,
                webhook_worker=False,
                membership_sweep_seconds=0,
                **settings,
            )
        )
    )


def _noisy(api: ApiClient, url: str, endpoints: int, deliveries: int) -> None:
    """An account with `endpoints` lists, each with a webhook to `url` and its deliveries."""
    tenant = make_tenant(api)
    for endpoint in range(endpoints):
        list_id = tenant.new_list()["id"]
        new_hook(tenant, list_id, url, eventTypes=["contact.created"])
        for index in range(deliveries // endpoints):
            tenant.new_contact(list_id, f"n{endpoint}.{index}@example.com")


def _healthy(api: ApiClient, url: str) -> Tenant:
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    new_hook(tenant, list_id, url, eventTypes=["contact.created"])
    tenant.new_contact(list_id, "healthy@example.com")
    return tenant


@pytest.mark.parametrize(
    ("concurrency", "share", "accounts", "endpoints"),
    [(1, 1, 1, 1), (2, 2, 1, 1), (8, 2, 4, 1), (8, 2, 1, 4), (4, 1, 2, 2)],
)
def test_a_healthy_accounts_delivery_goes_at_the_next_free_thread(
    tmp_path: Path,
    receivers: tuple[Arrivals, Silent, Healthy],
    concurrency: int,
    share: int,
    accounts: int,
    endpoints: int,
) -> None:
    """Silent accounts with 12 deliveries each (more than they may hold) fill what the turns
    give them; the healthy account's delivery becomes due; then threads are freed one at a time
    (the silent receiver lets go of a request). No silent delivery may start before the healthy
    one."""
    arrivals, silent, healthy = receivers
    api = _app(tmp_path, webhook_concurrency=concurrency, webhook_account_share=share,
               webhook_timeout_seconds=HANG_GUARD * 2, webhook_lease_seconds=3600)  # fmt: skip
    try:
        for _ in range(accounts):
            _noisy(api, silent.url, endpoints, 12)
        worker = worker_of(api)
        held = worker.dispatch_free()
        until(lambda: len(arrivals.of("silent")) == held, "the silent requests")
        _healthy(api, healthy.url)
        started = held
        for _ in range(concurrency + 1):
            now_started = worker.dispatch_free()
            if now_started == 0:
                silent.release_one()
                now_started = _next_start(worker)
            started += now_started
            until(partial(_at_least, arrivals, started), "the requests")
            if arrivals.of("healthy"):
                break
        assert arrivals.of("healthy"), "the healthy account's delivery did not go out"
        log = arrivals.snapshot()
        assert log.index(("healthy", arrivals.of("healthy")[0])) == held, log
    finally:
        silent.close()
        api.close()


def _at_least(arrivals: Arrivals, count: int) -> bool:
    return len(arrivals.snapshot()) >= count


def _next_start(worker: WebhookWorker) -> int:
    """Turns of the worker until one starts an attempt (a thread was freed): how many."""
    started = [0]

    def turn() -> bool:
        started[0] = worker.dispatch_free()
        return started[0] > 0

    until(turn, "a thread to free")
    return started[0]


def test_a_silent_receiver_does_not_delay_another_accounts_delivery(
    tmp_path: Path, receivers: tuple[Arrivals, Silent, Healthy]
) -> None:
    """The service's own loop, a receiver that holds every request, and the smallest worker
    that still keeps a share free: alone, the silent account holds one thread of two
    (`concurrency - share`, at least one), so the healthy delivery goes out on the other, next
    after the one silent request, ahead of the backlog of 20. Order only: no silent attempt
    ends during the test, no deadline is involved."""
    arrivals, silent, healthy = receivers
    api = _app(tmp_path, webhook_concurrency=2, webhook_account_share=2,
               webhook_timeout_seconds=HANG_GUARD * 2, webhook_lease_seconds=3600,
               webhook_poll_seconds=0.05)  # fmt: skip
    try:
        _noisy(api, silent.url, 2, 20)
        worker = worker_of(api)
        worker.start()
        until(lambda: len(arrivals.of("silent")) == 1, "the silent account's turn")
        _healthy(api, healthy.url)
        until(lambda: bool(arrivals.of("healthy")), "the healthy delivery")
        log = arrivals.snapshot()
        assert log.index(("healthy", arrivals.of("healthy")[0])) == 1, log
        assert worker.turns.held_at_most == 2
    finally:
        silent.close()
        api.close()


def test_a_list_has_a_bounded_number_of_endpoints(tmp_path: Path) -> None:
    api = _app(tmp_path, webhook_max_per_list=3)
    try:
        tenant = make_tenant(api)
        list_id = tenant.new_list()["id"]
        for index in range(3):
            new_hook(tenant, list_id, f"http://127.0.0.1:9/{index}")
        response = tenant.call(
            "POST",
            "/v4/webhooks",
            json={"listId": list_id, "url": "http://127.0.0.1:9/4", "eventTypes": ALL_TYPES},
        )
    finally:
        api.close()
    assert response.status_code == 409, response.text
    assert "webhook_max_per_list" in response.json()["message"]


def test_a_backlog_of_one_account_does_not_hide_another_accounts_delivery(
    tmp_path: Path,
) -> None:
    """One free slot, five accounts with older backlogs than the sixth's one delivery: the
    claim ranks accounts by their turn before reading any row, so the sixth is seen and served
    once the others have their turns."""
    api = _app(tmp_path)
    try:
        for index in range(5):
            tenant = make_tenant(api)
            list_id = tenant.new_list()["id"]
            new_hook(tenant, list_id, f"http://127.0.0.1:9/noisy{index}")
            for contact in range(3):
                tenant.new_contact(list_id, f"n{index}.{contact}@example.com")
        late = _healthy(api, "http://127.0.0.1:9/late")
        worker = worker_of(api)
        dispatch.fan_out(worker.database)
        turns = Turns(concurrency=1, share=1)
        served: list[str] = []
        for _ in range(6):
            (item,) = dispatch.claim(worker.database, worker.policy, 1, turns)
            turns.begin(item.account_id)
            turns.end(item.account_id)
            served.append(item.account_id)
    finally:
        api.close()
    assert late.account_id in served and len(set(served)) == 6, served
