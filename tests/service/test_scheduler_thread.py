"""The scheduler thread on the system clock: time-moved events arrive with no call at all.

A contact enters "signed up in the last 2 seconds" when it is created and must leave on its
own: the thread wakes at the instant written by the contact's creation. The event is never
before that instant; how soon after it comes is measured, not asserted here
(`benchmarks/scheduler_lag.py`, docs/performance.md).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from audiencefilter.service.app import create_app
from tests.waiting import wait_until

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings

WINDOW = timedelta(seconds=2)


def test_a_contact_leaves_on_its_own_never_before_its_instant(tmp_path: Path) -> None:
    api = ApiClient(create_app(sqlite_settings(tmp_path / "thread.db")))
    try:
        tenant = make_tenant(api)
        list_id = tenant.new_list()["id"]
        window = {"createdAt": {"gte": {"ago": "PT2S"}}}
        body = {"name": "just now", "listId": list_id, "filters": window}
        audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
        contact = tenant.new_contact(list_id, "ada@example.com")
        left = _wait_for_left(tenant, list_id)
        assert left["contactId"] == contact["id"] and left["audienceId"] == audience
        assert left["cause"] == "clock"
        turned = datetime.fromisoformat(contact["createdAt"]) + WINDOW
        assert datetime.fromisoformat(left["occurredAt"]) >= turned
        assert tenant.ok("GET", f"/v4/audiences/{audience}")["audience"]["subs"] == []
    finally:
        api.close()


def _wait_for_left(tenant: Tenant, list_id: str) -> dict[str, Any]:
    """The audience.left event, once the scheduler thread wrote it (`tests/waiting.py`)."""

    def left() -> dict[str, Any] | None:
        page = tenant.ok("GET", "/v4/events", params={"listId": list_id})
        found = [e for e in page["events"] if e["type"] == "audience.left"]
        return found[0] if found else None

    return wait_until(left, "the audience.left event", pause=0.2)
