"""The scheduler thread on the system clock: time-moved events arrive with no call at all.

A contact enters "signed up in the last 2 seconds" when it is created and must leave on its
own: the thread wakes at the instant written by the contact's creation. The event is never
before that instant; how soon after it comes is measured, not asserted here
(`benchmarks/scheduler_lag.py`,
docs/performance-history-membership.md). Another account's background build, held
midway through a step, does not hold that exit, which is dated at its instant (SQLite and
PostgreSQL).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from audiencefilter.service.app import create_app
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import AudienceDue
from audiencefilter.service.domain.membership import build
from audiencefilter.service.settings import Settings
from tests.waiting import wait_until

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings

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


HOLD_GUARD = 120.0
"""Seconds after which a held build step lets go by itself: a guard against a hang, never a
deadline (the exit it waits beside comes two seconds after the contact's creation)."""


class HeldStep:
    """The build's chunk evaluation, held after the first one until the test releases it: a
    build step stuck midway, as a costly filter's is for seconds."""

    def __init__(self, evaluate: Callable[..., Any]) -> None:
        self.evaluate = evaluate
        self.reached = threading.Event()
        self.release = threading.Event()
        self.holding = False

    def __call__(self, *args: Any) -> Any:
        found = self.evaluate(*args)
        if not self.reached.is_set():
            self.holding = True
            self.reached.set()
            self.release.wait(HOLD_GUARD)
            self.holding = False
        return found


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def threaded_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """The system clock's threads on, builds in the background past 3 contacts."""
    options: dict[str, Any] = {
        "audience_build_background_above": 3,
        "audience_build_chunk": 2,
        "webhook_worker": False,
    }
    if request.param == "sqlite":
        return sqlite_settings(tmp_path / "held.db", **options)
    pg_migrated_database: Callable[[], str] = request.getfixturevalue("pg_migrated_database")
    return url_settings(pg_migrated_database(), auto_migrate=True, **options)


def test_a_held_build_step_holds_no_clock_change(
    threaded_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldStep(build._evaluate)
    monkeypatch.setattr(build, "_evaluate", held)
    api = ApiClient(create_app(threaded_settings))
    try:
        tenant = make_tenant(api)
        list_id = tenant.new_list()["id"]
        window = {"createdAt": {"gte": {"ago": "PT2S"}}}
        body = {"name": "just now", "listId": list_id, "filters": window}
        audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
        _wait_for_its_look(api.app.state.db, audience)
        _hold_a_build(make_tenant(api), held)
        contact = tenant.new_contact(list_id, "ada@example.com")
        left = _wait_for_left(tenant, list_id)
        assert held.holding, "the exit waited for the build step"
        assert (left["contactId"], left["cause"]) == (contact["id"], "clock")
        turned = datetime.fromisoformat(contact["createdAt"]) + WINDOW
        occurred = datetime.fromisoformat(left["occurredAt"])
        assert turned <= occurred < turned + timedelta(milliseconds=10)  # dated at its instant
    finally:
        held.release.set()
        api.close()


def _wait_for_its_look(database: Database, audience_id: str) -> None:
    """Until the scheduler worked out the new audience's instants (its own look, due now)."""

    def looked() -> bool:
        with database.reading() as session:
            due = select(AudienceDue).where(AudienceDue.audienceId == audience_id)
            return session.scalar(due) is None

    wait_until(looked, "the new audience's look", pause=0.05)


def _hold_a_build(other: Tenant, held: HeldStep) -> None:
    """Another account's audience builds in the background; its first step is held."""
    list_id = other.new_list()["id"]
    for n in range(6):
        other.new_contact(list_id, f"b{n}@example.com", points=n)
    body = {"name": "all", "listId": list_id, "filters": {"points": {"gte": 0}}}
    assert other.ok("POST", "/v4/audiences", 201, json=body)["audience"]["status"] == "building"
    wait_until(held.reached.is_set, "the build's first step")
