"""Webhooks against real HTTP receivers on 127.0.0.1: CRUD and tenancy, URL refusals, signed
deliveries (checked by a verification written from the Standard Webhooks specification alone),
retries, order per contact, auto-disabling, redelivery and secret rotation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service import create_app
from audiencefilter.service.db.engine import Database
from audiencefilter.service.domain.webhooks import dispatch, schedule, signing
from audiencefilter.service.domain.webhooks.worker import WebhookWorker
from audiencefilter.service.ground import clock
from drills.receiver import Received, Receiver
from tests.waiting import HANG_GUARD, wait_until

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings
from .hands import Hands
from .live import cli_env

LOCAL = ["127.0.0.1/32"]
ALL_TYPES = [
    "audience.entered",
    "audience.left",
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "audience.created",
    "audience.updated",
    "audience.deleted",
]


def verify(secret: str, received: Received, tolerance: float = 300.0) -> bool:
    """The Standard Webhooks check: the key is the base64 after `whsec_`; the signed content is
    `{webhook-id}.{webhook-timestamp}.{body}`; any `v1,` signature of the header may match."""
    key = base64.b64decode(secret.split("_", 1)[1])
    msg_id = received.headers["webhook-id"]
    timestamp = received.headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > tolerance:
        return False
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + received.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for candidate in received.headers["webhook-signature"].split(" "):
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return True
    return False


@pytest.fixture
def receivers() -> Iterator[Callable[..., Receiver]]:
    made: list[Receiver] = []

    def make(respond: Any = None) -> Receiver:
        receiver = Receiver(respond)
        made.append(receiver)
        return receiver

    yield make
    for receiver in made:
        receiver.close()


@pytest.fixture
def local(tmp_path: Path) -> Iterator[ApiClient]:
    """An app that may call 127.0.0.1, whose worker the tests run by hand (no thread)."""
    settings = sqlite_settings(
        tmp_path / "hooks.db",
        webhook_allowed_networks=LOCAL,
        webhook_worker=False,
        webhook_retry_base_seconds=0.02,
        webhook_retry_cap_seconds=0.1,
        webhook_timeout_seconds=2,
        membership_sweep_seconds=0,
    )
    api = ApiClient(create_app(settings))
    yield api
    api.close()


def worker_of(api: ApiClient) -> WebhookWorker:
    return api.app.state.webhook_worker  # type: ignore[no-any-return]


def run_until(api: ApiClient, condition: Callable[[], bool]) -> None:
    """Run the worker's rounds until `condition` holds (`tests/waiting.py`: no deadline)."""
    worker = worker_of(api)
    wait_until(condition, "the deliveries", step=worker.run_once)


def received(
    receiver: Receiver,
    condition: Callable[[list[Received]], bool],
    alive: Callable[[], bool] | None = None,
) -> bool:
    """Wait until what `receiver` got meets `condition` (`tests/waiting.py`: no deadline),
    or the sending process (`alive`) ends."""
    return wait_until(
        lambda: condition(receiver.snapshot()), "the receiver's requests", alive=alive
    )


def new_hook(tenant: Tenant, list_id: str, url: str, **fields: Any) -> dict[str, Any]:
    body = {"listId": list_id, "url": url, "eventTypes": ALL_TYPES, **fields}
    return tenant.ok("POST", "/v4/webhooks", 201, json=body)["webhook"]  # type: ignore[no-any-return]


def deliveries(tenant: Tenant, hook_id: str, **params: Any) -> list[dict[str, Any]]:
    return tenant.ok("GET", f"/v4/webhooks/{hook_id}/deliveries", params=params)["deliveries"]  # type: ignore[no-any-return]


def test_crud_shows_the_secret_once_and_scopes_to_the_tenant(
    local: ApiClient, receivers: Callable[..., Receiver]
) -> None:
    tenant, other = make_tenant(local), make_tenant(local)
    lst = tenant.new_list()
    url = receivers().url
    created = new_hook(tenant, lst["id"], url, eventTypes=["audience.entered"])
    assert created["secret"].startswith("whsec_")
    assert len(base64.b64decode(created["secret"][6:])) >= 24
    assert created["status"] == "enabled" and created["failureCount"] == 0
    read = tenant.ok("GET", f"/v4/webhooks/{created['id']}")["webhook"]
    assert "secret" not in read and read["eventTypes"] == ["audience.entered"]
    listed = tenant.ok("GET", "/v4/webhooks", params={"listId": lst["id"]})["webhooks"]
    assert [hook["id"] for hook in listed] == [created["id"]]
    assert all("secret" not in hook for hook in listed)
    patched = tenant.ok(
        "PATCH", f"/v4/webhooks/{created['id']}", json={"eventTypes": ["audience.left"]}
    )["webhook"]
    assert patched["eventTypes"] == ["audience.left"]
    # Another tenant sees nothing and can change nothing.
    for method, path in [
        ("GET", f"/v4/webhooks/{created['id']}"),
        ("PATCH", f"/v4/webhooks/{created['id']}"),
        ("DELETE", f"/v4/webhooks/{created['id']}"),
        ("GET", f"/v4/webhooks/{created['id']}/deliveries"),
        ("POST", f"/v4/webhooks/{created['id']}/secret"),
    ]:
        kwargs = {"json": {"description": "x"}} if method == "PATCH" else {}
        assert other.call(method, path, **kwargs).status_code == 404
    assert other.call("GET", "/v4/webhooks", params={"listId": lst["id"]}).status_code == 404
    refused = other.call("POST", "/v4/webhooks", json={"listId": lst["id"], "url": url})
    assert refused.status_code == 404
    assert (
        tenant.call("GET", "/v4/webhooks/whk_x", headers=tenant.public_headers).status_code == 403
    )
    tenant.ok("DELETE", f"/v4/webhooks/{created['id']}")
    assert tenant.call("GET", f"/v4/webhooks/{created['id']}").status_code == 404


def test_creation_is_idempotent_with_a_key(
    local: ApiClient, receivers: Callable[..., Receiver]
) -> None:
    tenant = make_tenant(local)
    lst = tenant.new_list()
    body = {"listId": lst["id"], "url": receivers().url}
    headers = {"Idempotency-Key": "hook-1"}
    first = tenant.call("POST", "/v4/webhooks", json=body, headers=headers)
    again = tenant.call("POST", "/v4/webhooks", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert first.json() == again.json()
    listed = tenant.ok("GET", "/v4/webhooks", params={"listId": lst["id"]})["webhooks"]
    assert len(listed) == 1


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/hook",
        "file:///etc/passwd",
        "hooks.example.com/x",
        "http://user:pass@example.com/",
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://172.16.0.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/hook",
        "http://[fe80::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://0.0.0.0/hook",
        "http://100.64.0.1/hook",
        "http://224.0.0.1/hook",
        "http://no-such-host.invalid/hook",
    ],
)
def test_urls_that_are_not_public_http_are_refused(tenant: Tenant, url: str) -> None:
    lst = tenant.new_list()
    response = tenant.call("POST", "/v4/webhooks", json={"listId": lst["id"], "url": url})
    assert response.status_code == 400, response.text
    assert response.json()["errors"][0]["pointer"] == "/body/url"


def test_an_allowed_network_opens_only_itself(local: ApiClient) -> None:
    tenant = make_tenant(local)
    lst = tenant.new_list()
    ok = tenant.call(
        "POST", "/v4/webhooks", json={"listId": lst["id"], "url": "http://127.0.0.1:9/"}
    )
    assert ok.status_code == 201
    for url in ("http://127.0.0.2/", "http://10.0.0.1/", "http://169.254.169.254/"):
        response = tenant.call("POST", "/v4/webhooks", json={"listId": lst["id"], "url": url})
        assert response.status_code == 400, url
    hook_id = ok.json()["data"]["webhook"]["id"]
    response = tenant.call("PATCH", f"/v4/webhooks/{hook_id}", json={"url": "http://10.0.0.1/"})
    assert response.status_code == 400


def test_deliveries_are_signed_and_carry_the_event(
    local: ApiClient, receivers: Callable[..., Receiver]
) -> None:
    tenant = make_tenant(local)
    lst = tenant.new_list()
    receiver = receivers()
    hook = new_hook(
        tenant, lst["id"], receiver.url, eventTypes=["audience.entered", "contact.created"]
    )
    tenant.ok(
        "POST",
        "/v4/audiences",
        201,
        json={"name": "Top", "listId": lst["id"], "mode": "smart", "filtersText": "points >= 10"},
    )
    contact = tenant.new_contact(lst["id"], "ann@example.com", points=20)
    run_until(local, lambda: len(receiver.succeeded()) >= 2)
    got = receiver.succeeded()
    assert [item.payload()["type"] for item in got] == ["contact.created", "audience.entered"]
    for item in got:
        assert verify(hook["secret"], item)
        assert item.headers["content-type"] == "application/json"
        payload = item.payload()
        assert payload["data"]["contactId"] == contact["id"]
        assert payload["data"]["listId"] == lst["id"]
        assert payload["timestamp"] == payload["data"]["occurredAt"]
    # A tampered body, another secret or an old timestamp do not verify.
    first = got[0]
    assert not verify(hook["secret"], Received(first.headers, first.body + b" ", 200, 0))
    other_secret = "whsec_" + base64.b64encode(b"x" * 24).decode()
    assert not verify(other_secret, first)
    stale = {**first.headers, "webhook-timestamp": str(int(time.time()) - 3600)}
    assert not verify(hook["secret"], Received(stale, first.body, 200, 0))
    log = deliveries(tenant, hook["id"])
    assert {entry["id"] for entry in log} == {item.id for item in got}
    assert all(entry["status"] == "delivered" for entry in log)
    assert all(entry["attemptLog"][0]["statusCode"] == 200 for entry in log)
    # Events before the endpoint existed are not sent; types it does not want are not either.
    tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"firstName": "Ann"})
    run_until(local, lambda: worker_of(local).run_once() == 0)
    assert len(receiver.snapshot()) == 2


def test_failures_are_retried_until_the_receiver_answers(
    local: ApiClient, receivers: Callable[..., Receiver]
) -> None:
    tenant = make_tenant(local)
    lst = tenant.new_list()
    answers: dict[str, int] = {}

    def flaky(headers: dict[str, str], _body: bytes) -> int:
        seen = answers[headers["webhook-id"]] = answers.get(headers["webhook-id"], 0) + 1
        return 500 if seen <= 2 else 204

    receiver = receivers(flaky)
    hook = new_hook(tenant, lst["id"], receiver.url, eventTypes=["contact.created"])
    for index in range(3):
        tenant.new_contact(lst["id"], f"p{index}@example.com")
    run_until(local, lambda: len(receiver.succeeded()) >= 3)
    got = receiver.snapshot()
    assert len(got) == 9  # two failures and one success each
    assert len({item.id for item in got}) == 3  # the same webhook-id on every retry
    secret = hook["secret"]
    assert all(verify(secret, item) for item in got)
    for entry in deliveries(tenant, hook["id"]):
        assert entry["status"] == "delivered"
        assert [a["statusCode"] for a in entry["attemptLog"]] == [500, 500, 204]
        assert entry["attemptLog"][0]["error"] == "HTTP 500"
    assert tenant.ok("GET", f"/v4/webhooks/{hook['id']}")["webhook"]["failureCount"] == 0


def test_a_closed_port_is_a_failure_with_an_error(local: ApiClient) -> None:
    tenant = make_tenant(local)
    lst = tenant.new_list()
    hook = new_hook(tenant, lst["id"], "http://127.0.0.1:9/hook", eventTypes=["contact.created"])
    tenant.new_contact(lst["id"], "closed@example.com")
    run_until(local, lambda: any(d["attemptLog"] for d in deliveries(tenant, hook["id"])))
    attempt = deliveries(tenant, hook["id"])[0]["attemptLog"][0]
    assert attempt["statusCode"] is None and "ConnectionRefused" in attempt["error"]


def test_events_of_one_contact_arrive_in_order(
    local: ApiClient, receivers: Callable[..., Receiver]
) -> None:
    tenant = make_tenant(local)
    lst = tenant.new_list()
    calls = {"n": 0}
    lock = threading.Lock()

    def every_third_fails(_headers: dict[str, str], _body: bytes) -> int:
        with lock:
            calls["n"] += 1
            return 503 if calls["n"] % 3 == 0 else 200

    receiver = receivers(every_third_fails)
    new_hook(tenant, lst["id"], receiver.url, eventTypes=["contact.created", "contact.updated"])
    contacts = [tenant.new_contact(lst["id"], f"o{index}@example.com") for index in range(4)]
    for round_ in range(5):
        for contact in contacts:
            tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"points": round_ + 1})
    expected = len(contacts) * 6
    run_until(local, lambda: len({i.id for i in receiver.succeeded()}) >= expected)
    positions: dict[str, list[int]] = {}
    for item in receiver.snapshot():
        data = item.payload()["data"]
        positions.setdefault(data["contactId"], []).append(_position(data["cursor"]))
    for contact in contacts:
        seen = positions[contact["id"]]
        # Attempts of one contact never go back: a retry repeats the last, never an earlier one.
        assert seen == sorted(seen), seen
        assert len(set(seen)) == 6


def _position(cursor: str) -> int:
    raw = cursor.removeprefix("ev1.")
    return int(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode().rsplit(":", 1)[1])


def test_a_long_run_of_failures_disables_the_endpoint_visibly(
    tmp_path: Path, app_factory: Callable[..., ApiClient], receivers: Callable[..., Receiver]
) -> None:
    api = app_factory(
        sqlite_settings(
            tmp_path / "disable.db",
            webhook_allowed_networks=LOCAL,
            webhook_worker=False,
            webhook_retry_base_seconds=0.01,
            webhook_retry_cap_seconds=0.02,
            webhook_disable_after_seconds=0,
            webhook_disable_min_failures=4,
        )
    )
    tenant = make_tenant(api)
    lst = tenant.new_list()
    healthy = {"ok": False}
    receiver = receivers(lambda _h, _b: 200 if healthy["ok"] else 500)
    hook = new_hook(tenant, lst["id"], receiver.url, eventTypes=["contact.created"])
    tenant.new_contact(lst["id"], "d1@example.com")
    tenant.new_contact(lst["id"], "d2@example.com")

    def disabled() -> bool:
        return tenant.ok("GET", f"/v4/webhooks/{hook['id']}")["webhook"]["status"] == "disabled"

    run_until(api, disabled)
    state = tenant.ok("GET", f"/v4/webhooks/{hook['id']}")["webhook"]
    assert state["failureCount"] == 4 and "HTTP 500" in state["disabledReason"]
    assert state["disabledAt"] is not None
    sent = len(receiver.snapshot())
    assert worker_of(api).drain() == 0 and len(receiver.snapshot()) == sent  # nothing more
    pending = deliveries(tenant, hook["id"], status="pending")
    assert len(pending) == 2
    redeliver = f"/v4/webhooks/{hook['id']}/deliveries/{pending[0]['id']}/redeliver"
    assert tenant.call("POST", redeliver).status_code == 409
    healthy["ok"] = True
    enabled = tenant.ok("PATCH", f"/v4/webhooks/{hook['id']}", json={"enabled": True})["webhook"]
    assert enabled["status"] == "enabled" and enabled["disabledReason"] is None
    tenant.new_contact(lst["id"], "d3@example.com")
    run_until(api, lambda: len({i.id for i in receiver.succeeded()}) == 3)


def test_redelivery_sends_the_same_message_again(
    local: ApiClient, receivers: Callable[..., Receiver]
) -> None:
    tenant = make_tenant(local)
    lst = tenant.new_list()
    receiver = receivers()
    hook = new_hook(tenant, lst["id"], receiver.url, eventTypes=["contact.created"])
    tenant.new_contact(lst["id"], "r@example.com")
    run_until(local, lambda: len(receiver.succeeded()) == 1)
    delivery = deliveries(tenant, hook["id"])[0]
    path = f"/v4/webhooks/{hook['id']}/deliveries/{delivery['id']}/redeliver"
    again = tenant.ok("POST", path, 202)["delivery"]
    assert again["status"] == "pending" and again["attempts"] == 0
    run_until(local, lambda: len(receiver.succeeded()) == 2)
    first, second = receiver.succeeded()
    assert first.id == second.id == delivery["id"] and first.body == second.body
    assert verify(hook["secret"], second)
    log = deliveries(tenant, hook["id"])[0]
    assert log["status"] == "delivered" and len(log["attemptLog"]) == 2
    assert (
        tenant.call("POST", f"/v4/webhooks/{hook['id']}/deliveries/msg_nope/redeliver").status_code
        == 404
    )


def test_a_rotated_secret_signs_beside_the_previous_one(
    local: ApiClient, receivers: Callable[..., Receiver]
) -> None:
    tenant = make_tenant(local)
    lst = tenant.new_list()
    receiver = receivers()
    hook = new_hook(tenant, lst["id"], receiver.url, eventTypes=["contact.created"])
    rotated = tenant.ok("POST", f"/v4/webhooks/{hook['id']}/secret")["secret"]
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != hook["secret"]
    assert rotated["previousSecretUntil"] is not None
    tenant.new_contact(lst["id"], "s@example.com")
    run_until(local, lambda: len(receiver.succeeded()) == 1)
    item = receiver.succeeded()[0]
    assert len(item.headers["webhook-signature"].split(" ")) == 2
    assert verify(rotated["secret"], item) and verify(hook["secret"], item)


def test_the_worker_thread_delivers_by_itself(
    tmp_path: Path, app_factory: Callable[..., ApiClient], receivers: Callable[..., Receiver]
) -> None:
    api = app_factory(
        sqlite_settings(
            tmp_path / "thread.db", webhook_allowed_networks=LOCAL, webhook_poll_seconds=0.05
        )
    )
    tenant = make_tenant(api)
    lst = tenant.new_list()
    receiver = receivers()
    hook = new_hook(tenant, lst["id"], receiver.url, eventTypes=["contact.created"])
    for index in range(5):
        tenant.new_contact(lst["id"], f"t{index}@example.com")
    assert received(receiver, lambda got: len(got) == 5)
    assert all(verify(hook["secret"], item) for item in receiver.snapshot())


def test_deleting_the_list_deletes_its_webhooks(
    local: ApiClient, receivers: Callable[..., Receiver]
) -> None:
    tenant = make_tenant(local)
    lst = tenant.new_list()
    hook = new_hook(tenant, lst["id"], receivers().url)
    tenant.ok("DELETE", f"/v4/lists/{lst['id']}")
    assert tenant.call("GET", f"/v4/webhooks/{hook['id']}").status_code == 404


def test_a_lost_claim_comes_back_when_its_lease_runs_out(
    tmp_path: Path, receivers: Callable[..., Receiver]
) -> None:
    """On a clock the test moves: a lease is judged by the service's clock, so the claim is
    still held however long the machine takes between two steps, and runs out only when the
    clock passes it."""
    hands = Hands(datetime.now(UTC))
    settings = sqlite_settings(
        tmp_path / "lease.db",
        webhook_allowed_networks=LOCAL,
        webhook_worker=False,
        webhook_lease_seconds=30,
        membership_sweep_seconds=0,
    )
    api = ApiClient(create_app(settings, clock=hands))
    try:
        tenant = make_tenant(api)
        lst = tenant.new_list()
        receiver = receivers()
        new_hook(tenant, lst["id"], receiver.url, eventTypes=["contact.created"])
        tenant.new_contact(lst["id"], "lease@example.com")
        worker = worker_of(api)
        with clock.using(hands):
            dispatch.fan_out(worker.database)
            lost = dispatch.claim(worker.database, worker.policy, 10)  # a worker killed after it
        assert len(lost) == 1
        hands.advance(seconds=29.9)
        assert worker.run_once() == 0  # still leased: nobody else sends it
        hands.advance(seconds=0.1)
        assert worker.run_once() == 1  # the lease ran out exactly then
        assert [item.id for item in receiver.succeeded()] == [lost[0].id]
    finally:
        api.close()


@pytest.mark.postgres
def test_two_workers_on_postgres_deliver_each_event_once(
    app_factory: Callable[..., ApiClient],
    pg_database: Callable[[], str],
    receivers: Callable[..., Receiver],
) -> None:
    url = pg_database()
    settings = url_settings(
        url, auto_migrate=True, webhook_allowed_networks=LOCAL, webhook_worker=False
    )
    api = app_factory(settings)
    tenant = make_tenant(api)
    lists = [tenant.new_list() for _ in range(2)]
    receiver = receivers()
    for lst in lists:
        new_hook(tenant, lst["id"], receiver.url, eventTypes=["contact.created", "contact.updated"])
    contacts = []
    for index in range(60):
        contact = tenant.new_contact(lists[index % 2]["id"], f"pg{index}@example.com")
        contacts.append(contact)
        tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"points": index})
    workers = [WebhookWorker(Database.from_settings(settings), settings) for _ in range(2)]
    stop = threading.Event()
    counts = [0, 0]

    def loop(number: int) -> None:
        while not stop.is_set():
            made = workers[number].run_once()
            counts[number] += made
            if made == 0:
                time.sleep(0.01)

    threads = [threading.Thread(target=loop, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    try:
        assert received(receiver, lambda got: len({g.id for g in got}) == 120)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        for worker in workers:
            worker.stop()
            worker.database.dispose()
    ids = [item.id for item in receiver.snapshot()]
    assert len(ids) == len(set(ids)) == 120  # no duplicate in the normal case
    assert all(counts), counts  # both workers took part
    by_contact: dict[str, list[str]] = {}
    for item in receiver.snapshot():
        data = item.payload()["data"]
        by_contact.setdefault(data["contactId"], []).append(data["type"])
    assert all(types == ["contact.created", "contact.updated"] for types in by_contact.values())


def test_the_signature_matches_the_standard_webhooks_example() -> None:
    # The example of the Standard Webhooks specification and its reference libraries.
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"test": 2432232314}'
    headers = signing.headers([secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
    assert headers["webhook-signature"] == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    assert headers["webhook-timestamp"] == "1614265330"


def test_the_backoff_is_exponential_with_full_jitter_and_the_documented_bound() -> None:
    rng = random.Random(5)
    for failures in range(1, 20):
        ceiling = min(6 * 3600, 5 * 2 ** (failures - 1))
        waits = [schedule.backoff(failures, 5, 6 * 3600, rng).total_seconds() for _ in range(200)]
        assert all(0 <= wait <= ceiling for wait in waits)
        assert max(waits) > ceiling * 0.8 and min(waits) < ceiling * 0.2  # the whole range
    # docs/service-webhooks.md: 15 attempts wait at most 17.4 hours in all (the sum of the 14
    # ceilings).
    rng = random.Random(6)
    longest = sum(
        max(schedule.backoff(n, 5, 6 * 3600, rng).total_seconds() for _ in range(400))
        for n in range(1, 15)
    )
    assert 17.0 < longest / 3600 <= 17.4


def test_the_worker_command_delivers_and_stops_on_sigterm(
    tmp_path: Path, app_factory: Callable[..., ApiClient], receivers: Callable[..., Receiver]
) -> None:
    path = tmp_path / "command.db"
    api = app_factory(sqlite_settings(path, webhook_allowed_networks=LOCAL, webhook_worker=False))
    tenant = make_tenant(api)
    lst = tenant.new_list()
    receiver = receivers()
    hook = new_hook(tenant, lst["id"], receiver.url, eventTypes=["contact.created"])
    for index in range(3):
        tenant.new_contact(lst["id"], f"cmd{index}@example.com")
    env = cli_env(
        AUDIENCEFILTER_DATABASE_URL=f"sqlite:///{path}",
        AUDIENCEFILTER_WEBHOOK_ALLOWED_NETWORKS=json.dumps(LOCAL),
        AUDIENCEFILTER_WEBHOOK_POLL_SECONDS="0.05",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "audiencefilter.service", "worker"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert received(receiver, lambda got: len(got) == 3, alive=lambda: process.poll() is None)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=HANG_GUARD)
    assert process.returncode == 0, stderr.decode()
    assert all(verify(hook["secret"], item) for item in receiver.snapshot())
    assert all(entry["status"] == "delivered" for entry in deliveries(tenant, hook["id"]))


def test_the_retry_rules_are_written_once_in_the_settings() -> None:
    """The policy takes every value from the settings (it has no defaults of its own), and the
    table of docs/service-webhooks.md shows the settings' defaults."""
    import dataclasses
    from pathlib import Path

    from audiencefilter.service.domain.webhooks.dispatch import Policy
    from audiencefilter.service.settings import Settings

    assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(Policy))
    defaults = Settings.model_fields
    table = (Path(__file__).parents[2] / "docs" / "service-webhooks.md").read_text(encoding="utf-8")
    assert f"| `WEBHOOK_MAX_ATTEMPTS` | `{defaults['webhook_max_attempts'].default}` |" in table
