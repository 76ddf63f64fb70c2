"""Heavy requests take turns per account (`api/heavy.py`), and a comparison's algebra runs in a
worker process (`ground/processes.py`): one account's CPU does not hold another's requests.

Nothing here reads a clock. The test holds account A's one turn itself, sends A's heavy
request, waits until the service counts it as waiting (a condition on the event loop, not a
delay), and then sees B's request of the same kind answer while A's has not; a third of A's,
past the queue, is a 429. Each heavy kind is the waiting request in turn, so every heavy route
is shown to go through the turns.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from audiencefilter.service import create_app
from audiencefilter.service.api.heavy import HeavyTurns
from audiencefilter.service.ground.processes import CpuLane

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings
from .hands import Hands

FILTER = {"points": {"gte": 3}}
Send = Callable[[Tenant, str, str], tuple[str, str, dict[str, Any]]]


def _compare(t: Tenant, list_id: str, _audience: str) -> tuple[str, str, dict[str, Any]]:
    body = {"listId": list_id, "a": {"filters": FILTER}, "b": {"filtersText": "points >= 5"}}
    return "POST", "/v4/audiences/compare", {"json": body}


def _estimate(t: Tenant, list_id: str, _audience: str) -> tuple[str, str, dict[str, Any]]:
    return "POST", "/v4/audiences/estimate", {"json": {"listId": list_id, "filters": FILTER}}


def _preview(t: Tenant, list_id: str, _audience: str) -> tuple[str, str, dict[str, Any]]:
    return "POST", "/v4/audiences/preview", {"json": {"listId": list_id, "filters": FILTER}}


def _overlap(t: Tenant, list_id: str, audience: str) -> tuple[str, str, dict[str, Any]]:
    return "GET", f"/v4/lists/{list_id}/overlap", {"params": {"audiences": audience}}


def _export(t: Tenant, _list_id: str, audience: str) -> tuple[str, str, dict[str, Any]]:
    return "GET", f"/v4/audiences/{audience}/export", {}


def _json_import(t: Tenant, list_id: str, _audience: str) -> tuple[str, str, dict[str, Any]]:
    rows = [{"email": f"{t.account_id}-{index}@example.com"} for index in range(3)]
    return "POST", "/v4/contacts/import", {"params": {"listId": list_id}, "json": rows}


def _csv_dry_run(t: Tenant, list_id: str, _audience: str) -> tuple[str, str, dict[str, Any]]:
    body = "email,points\nada@example.com,4\ngrace@example.com,9\n"
    return (
        "POST",
        "/v4/contacts/import",
        {
            "params": {"listId": list_id, "dryRun": "true"},
            "content": body,
            "headers": {"Content-Type": "text/csv"},
        },
    )


HEAVY_KINDS: dict[str, Send] = {
    "compare": _compare,
    "estimate": _estimate,
    "preview": _preview,
    "overlap": _overlap,
    "export": _export,
    "json import": _json_import,
    "csv dry run": _csv_dry_run,
}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[ApiClient]:
    """An app whose accounts run one heavy request at once, one more waiting at most; its
    comparisons decided in the request's thread (the process lane has a test of its own)."""
    settings = sqlite_settings(
        tmp_path / "heavy.db",
        membership_sweep_seconds=0,
        heavy_requests_per_account=1,
        heavy_queue_per_account=1,
        analysis_processes=0,
    )
    client = ApiClient(create_app(settings))
    yield client
    client.close()


def _setup(t: Tenant) -> tuple[str, str]:
    """A list with two contacts and a smart audience: something for every kind to read."""
    list_id = t.new_list()["id"]
    t.new_contact(list_id, f"{t.account_id}-a@example.com", points=4)
    t.new_contact(list_id, f"{t.account_id}-b@example.com", points=1)
    body = {"name": "Points", "listId": list_id, "filters": FILTER}
    audience = t.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    return list_id, audience


def _send(t: Tenant, kind: Send, list_id: str, audience: str) -> Future[httpx.Response]:
    """The request started on the app's loop, not awaited: its answer is the future's."""
    method, url, options = kind(t, list_id, audience)
    headers = {**t.headers, **options.pop("headers", {})}
    call = partial(t.client.http.request, method, url, headers=headers, **options)
    return t.client.portal.start_task_soon(call)


def _until_waiting(api: ApiClient, account_id: str, sent: Future[httpx.Response]) -> None:
    """Return once the account's request `sent` waits for a turn; fail if it was answered
    without waiting (a heavy route that takes no turn)."""
    turns: HeavyTurns = api.app.state.heavy

    async def wait() -> None:
        while turns.waiting(account_id) < 1:
            if sent.done():
                answer = sent.result()
                pytest.fail(f"answered {answer.status_code} without waiting for a turn")
            await asyncio.sleep(0.001)

    api.run(wait)


@pytest.mark.parametrize("kind", list(HEAVY_KINDS))
def test_one_accounts_heavy_requests_queue_while_anothers_proceed(
    api: ApiClient, kind: str
) -> None:
    a, b = make_tenant(api), make_tenant(api)
    (list_a, audience_a), (list_b, audience_b) = _setup(a), _setup(b)
    turns: HeavyTurns = api.app.state.heavy
    held = api.portal.wrap_async_context_manager(turns.turn(a.account_id))
    held.__enter__()  # A's one turn, taken by the test
    try:
        waiting = _send(a, HEAVY_KINDS[kind], list_a, audience_a)
        _until_waiting(api, a.account_id, waiting)
        # Another account's request of the same kind goes through while A's waits.
        answered = _send(b, HEAVY_KINDS[kind], list_b, audience_b).result()
        assert answered.status_code == 200, answered.text
        assert not waiting.done() and turns.waiting(a.account_id) == 1
        # A's light requests do not take turns.
        assert a.call("GET", "/v4/lists").status_code == 200
        # Past the queue (one waiting), A's next heavy request of any kind is refused.
        refused = _send(a, _compare, list_a, audience_a).result()
        assert refused.status_code == 429, refused.text
        assert refused.headers["Retry-After"] == "1"
        assert "heavy requests" in refused.json()["message"]
    finally:
        held.__exit__(None, None, None)
    assert waiting.result().status_code == 200, waiting.result().text
    assert turns.waiting(a.account_id) == 0


NOW = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)
CASES = [
    ("points >= 0", "points >= 3"),
    ('plan = "pro"', 'plan in ["pro", "team"]'),
    ("points >= 5", "points < 2"),
    ('country = "FR" and createdAt within last 7 days', 'country in ["FR", "DE"]'),
]


def _compared(path: Path, processes: int) -> tuple[list[dict[str, Any]], bool]:
    """What compare answers for `CASES` on a list with a custom field (its ids left out), and
    whether the app started its worker processes."""
    settings = sqlite_settings(path, analysis_processes=processes, membership_sweep_seconds=0)
    api = ApiClient(create_app(settings, clock=Hands(NOW)))
    try:
        t = make_tenant(api)
        list_id = t.new_list()["id"]
        t.ok("POST", f"/v4/lists/{list_id}/fields", 201, json={"key": "plan", "type": "string"})
        t.new_contact(list_id, "ada@example.com", points=4, country="FR")
        found = []
        for left, right in CASES:
            body = {"listId": list_id, "a": {"filtersText": left}, "b": {"filtersText": right}}
            answer = t.ok("POST", "/v4/audiences/compare", json=body)
            found.append({key: value for key, value in answer.items() if key != "listId"})
        return found, api.app.state.heavy.lane.started
    finally:
        api.close()


def test_a_comparison_is_decided_in_a_worker_process(tmp_path: Path) -> None:
    """With a process lane, the algebra runs in another process and answers what it answers in
    the request's thread, custom fields and clock rules included (their filters pickle)."""
    lane = CpuLane(1)
    try:
        assert lane.run(os.getpid) != os.getpid()
    finally:
        lane.close()
    inline, inline_started = _compared(tmp_path / "inline.db", 0)
    in_process, started = _compared(tmp_path / "lane.db", 1)
    assert (inline_started, started) == (False, True)
    assert in_process == inline, json.dumps([in_process, inline])
