"""The receiver example of docs/service-webhooks.md verifies real deliveries and refuses forged
ones.

The `python` block that defines `verify` is taken from the page as it is, run, and served on
127.0.0.1; the service delivers to it, and the delivery log must show its 204s. A request with
a wrong signature, a changed body or an old timestamp must get its 401.
"""

from __future__ import annotations

import http.client
import re
import threading
import time
from collections.abc import Iterator
from http.server import HTTPServer
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service import create_app
from audiencefilter.service.domain.webhooks import signing
from tests.waiting import wait_until

from .conftest import ApiClient, make_tenant, sqlite_settings

PAGE = Path(__file__).parents[2] / "docs" / "service-webhooks.md"
_PYTHON = re.compile(r"```python\n(.*?)```\n", re.DOTALL)


def receiver_example() -> str:
    blocks = [block for block in _PYTHON.findall(PAGE.read_text("utf-8")) if "def verify(" in block]
    assert len(blocks) == 1, "docs/service-webhooks.md should hold one receiver example"
    return str(blocks[0])


@pytest.fixture
def api(tmp_path: Path) -> Iterator[ApiClient]:
    settings = sqlite_settings(
        tmp_path / "docs-hooks.db", webhook_allowed_networks=["127.0.0.1/32"], webhook_worker=False
    )
    client = ApiClient(create_app(settings))
    yield client
    client.close()


def _post(port: int, headers: dict[str, str], body: bytes) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("POST", "/", body=body, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def test_the_documented_receiver_accepts_deliveries_and_refuses_forgeries(api: ApiClient) -> None:
    namespace: dict[str, Any] = {"__name__": "receiver_example"}
    exec(compile(receiver_example(), "docs/service-webhooks.md", "exec"), namespace)
    server = HTTPServer(("127.0.0.1", 0), namespace["Receiver"])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        tenant = make_tenant(api)
        lst = tenant.new_list()
        hook = tenant.ok(
            "POST",
            "/v4/webhooks",
            201,
            json={
                "listId": lst["id"],
                "url": f"http://127.0.0.1:{port}/",
                "eventTypes": ["contact.created"],
            },
        )["webhook"]
        namespace["SECRET"] = hook["secret"]
        for index in range(2):
            tenant.new_contact(lst["id"], f"docs{index}@example.com")
        worker = api.app.state.webhook_worker

        def delivered() -> list[dict[str, Any]] | None:
            worker.run_once()
            log = tenant.ok("GET", f"/v4/webhooks/{hook['id']}/deliveries")["deliveries"]
            done = len(log) == 2 and all(entry["status"] == "delivered" for entry in log)
            return log if done else None

        log = wait_until(delivered, "both deliveries", pause=0.05)
        assert [entry["attemptLog"][-1]["statusCode"] for entry in log] == [204, 204]
        assert len(namespace["Receiver"].seen) == 2

        now = str(int(time.time()))
        body = (
            b'{"type":"contact.created","data":{"type":"contact.created",'
            b'"contactId":"con_1","audienceId":null}}'
        )
        good = namespace["verify"]  # the example's own function signs nothing: forge by hand
        forged = {
            "content-type": "application/json",
            "webhook-id": "msg_forged",
            "webhook-timestamp": now,
            "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        }
        assert _post(port, forged, body) == 401
        assert not good(hook["secret"], forged, body)
        signed = {"content-type": "application/json"}
        signed |= signing.headers([hook["secret"]], "msg_signed", int(now), body)
        assert _post(port, signed, body) == 204
        assert _post(port, signed, body.replace(b"created", b"deleted")) == 401
        old = int(now) - 3600
        stale = {"content-type": "application/json"}
        stale |= signing.headers([hook["secret"]], "msg_stale", old, body)
        assert _post(port, stale, body) == 401
    finally:
        server.shutdown()
        server.server_close()
