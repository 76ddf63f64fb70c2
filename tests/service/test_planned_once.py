"""A PATCH's statements found by unique keys are planned once on PostgreSQL; a list's are not.

`db/prepared_cache.py` prepares on the server only the statements planned once: marked so
where they are built (the key's read by its digest, the door's read and the update by the
contact's id, the advisory lock), or run so by their caller with a few rows (a PATCH's events
and memberships). After five custom plans the server keeps one generic plan for each
(`plan_cache_mode = auto`), so a PATCH stops planning them at every run. Every other statement
runs unnamed and is planned for its values, so a statement over a list (a page, a count) never
gets a plan made for another list's size. These tests read what the pool's connections hold
(`pg_prepared_statements`, each session's own) after PATCHes and pages through the app.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import pytest

from .conftest import ApiClient, make_tenant, url_settings

pytestmark = pytest.mark.postgres

PATCHES = 30


@pytest.fixture(params=[True, False], ids=["driver path", "SQLAlchemy's execution"])
def api(
    request: pytest.FixtureRequest,
    pg_migrated_database: Callable[[], str],
    app_factory: Callable[..., ApiClient],
) -> ApiClient:
    """The app with its fixed statements on the driver's cursor, and without: the mark
    reaches the preparing by the run's context, or by the execution's options."""
    settings = url_settings(
        pg_migrated_database(),
        auto_migrate=True,
        membership_sweep_seconds=0,
        driver_statements=request.param,
    )
    return app_factory(settings)


def _held(api: ApiClient) -> list[tuple[str, int, int]]:
    """Every idle pooled connection's prepared statements: text, generic plans, custom plans."""
    engine = api.app.state.db.engine
    found: list[tuple[str, int, int]] = []
    with ExitStack() as stack:
        for _ in range(engine.pool.checkedin()):
            connection = stack.enter_context(engine.connect())
            rows = connection.exec_driver_sql(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            )
            found += [(str(text), int(generic), int(custom)) for text, generic, custom in rows]
    return found


def _patched_and_paged(api: ApiClient) -> None:
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    body = {"name": "rich", "listId": list_id, "filtersText": "points >= 50"}
    tenant.ok("POST", "/v4/audiences", 201, json=body)
    contact = tenant.new_contact(list_id, "planned@once.test", points=1)
    for n in range(PATCHES):
        points = 100 if n % 2 else 1  # in and out of the audience: events and memberships
        tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"points": points})
        tenant.ok("GET", f"/v4/contacts?listId={list_id}&limit=10")


def _one(held: list[tuple[str, int, int]], *marks: str) -> list[tuple[str, int, int]]:
    return [row for row in held if all(mark in row[0] for mark in marks)]


def test_a_patch_plans_its_statements_found_by_unique_keys_once(api: ApiClient) -> None:
    _patched_and_paged(api)
    held = _held(api)
    kinds: dict[str, tuple[str, ...]] = {
        "the key's read": ("FROM api_keys", "api_keys.digest = $"),
        "the door's read": ("pg_advisory_xact_lock", "contacts.id = $"),
        "the update": ("UPDATE contacts SET", "RETURNING"),
    }
    for kind, marks in kinds.items():
        rows = _one(held, *marks)
        assert rows, (kind, [text[:80] for text, _, _ in held])
        assert any(generic > 0 for _, generic, _ in rows), (kind, rows)
        assert all(custom <= 5 for _, _, custom in rows), (kind, rows)


def test_a_statement_over_a_list_is_never_prepared(api: ApiClient) -> None:
    """Every statement prepared that reads contacts finds them by a contact's id: the page's
    statements (by the list, its order and its limit) ran unnamed, each planned for its list."""
    _patched_and_paged(api)
    held = _held(api)
    assert held
    over_contacts = [text for text, _, _ in held if "contacts" in text]
    assert over_contacts
    strays = [text for text in over_contacts if not _by_contact_id(text)]
    assert not strays, strays


def _by_contact_id(text: Any) -> bool:
    return "contacts.id = $" in text or "contact_id = $" in text or "FROM api_keys" in text
