"""A PATCH's door takes its list's lock in the statement that finds the list (PostgreSQL).

`list_lock.contacts_to_write` of one contact reads the contact's id and list with the list's
advisory lock as a column of the same `SELECT` (`dialects.lock_column`), where it was a
statement of its own after the read. The key is the server's hash of the list's id
(`dialects.lock_key`), the same whether a writer takes the lock by its statement (`_hold`,
`share`, an import turn, an audience's write) or by the door's read. These tests check:

- a PATCH waits while another transaction holds its list's lock by the lock statement (seen in
  `pg_locks`, not timed), writes nothing meanwhile, and answers once that transaction ends;
- a PATCH of a contact of another list, or of a list held shared, is not held back by a lock
  of another list or kind (the counts lock) of the same list;
- a PATCH runs one statement taking a list's lock, the door's read, and no other;
- a PATCH of a contact that is not the caller's is a 404 and takes no lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Connection

from audiencefilter.service.db import dialects
from audiencefilter.service.domain import list_lock

from .conftest import ApiClient, Tenant, make_tenant, url_settings
from .test_shared_turns import _waiting, in_thread

pytestmark = pytest.mark.postgres


@pytest.fixture
def api(
    pg_migrated_database: Callable[[], str], app_factory: Callable[..., ApiClient]
) -> ApiClient:
    settings = url_settings(pg_migrated_database(), auto_migrate=True, membership_sweep_seconds=0)
    return app_factory(settings)


def _list_with_contact(tenant: Tenant) -> tuple[str, str]:
    list_id = tenant.new_list()["id"]
    contact = tenant.new_contact(list_id, "door@lock.test", points=1)
    body = {"name": "rich", "listId": list_id, "filtersText": "points >= 50"}
    tenant.ok("POST", "/v4/audiences", 201, json=body)
    return list_id, contact["id"]


@contextmanager
def _held(api: ApiClient, list_id: str, kind: int, shared: bool = False) -> Iterator[Connection]:
    """The list's lock of `kind` held by another transaction, by the service's own statement,
    until the block ends (the transaction is then rolled back)."""
    statement = dialects.advisory_lock("postgresql", shared=shared)
    assert statement is not None
    with api.app.state.db.engine.connect() as connection, connection.begin() as transaction:
        connection.execute(statement, {dialects.LOCK_NAME: list_id, dialects.LOCK_KIND: kind})
        try:
            yield connection
        finally:
            if transaction.is_active:
                transaction.rollback()


def _points(connection: Connection, contact_id: str) -> int:
    row = connection.execute(text("SELECT points FROM contacts WHERE id = :id"), {"id": contact_id})
    return int(row.scalar_one())


def test_a_patch_waits_for_its_lists_lock_held_by_the_lock_statement(api: ApiClient) -> None:
    """Fails if the door's read takes no lock, or a lock of another key than `_hold`'s: the
    PATCH then answers while the list's lock is held elsewhere."""
    tenant = make_tenant(api)
    list_id, contact_id = _list_with_contact(tenant)
    patch = lambda: tenant.call("PATCH", f"/v4/contacts/{contact_id}", json={"points": 70})  # noqa: E731
    with _held(api, list_id, list_lock.LIST_LOCK) as holder:
        with in_thread(patch) as answer:
            _waiting(api, "advisory")
            assert not answer  # still waiting for the lock
            assert _points(holder, contact_id) == 1
            holder.rollback()  # the lock released: the PATCH goes on
    assert answer[0].status_code == 200, answer[0].text
    contact = tenant.ok("GET", f"/v4/contacts/{contact_id}")["contact"]
    assert contact["points"] == 70
    assert [a["name"] for a in contact["audiences"]] == ["rich"]


@pytest.mark.parametrize("other", ["another list", "the counts lock"])
def test_a_patch_is_not_held_by_another_lock(api: ApiClient, other: str) -> None:
    tenant = make_tenant(api)
    list_id, contact_id = _list_with_contact(tenant)
    other_list = tenant.new_list()["id"]
    held = (
        (other_list, list_lock.LIST_LOCK)
        if other == "another list"
        else (
            list_id,
            list_lock.COUNTS_LOCK,
        )
    )
    with _held(api, *held):
        answer = tenant.call("PATCH", f"/v4/contacts/{contact_id}", json={"points": 60})
    assert answer.status_code == 200, answer.text


def _lock_statements(api: ApiClient) -> list[str]:
    """The statements of the app's engine that take an advisory lock, from now on."""
    seen: list[str] = []

    def before(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "pg_advisory_xact_lock" in statement:
            seen.append(statement)

    event.listen(api.app.state.db.engine, "before_cursor_execute", before)
    return seen


def test_a_patch_takes_its_lock_in_the_doors_read_alone(api: ApiClient) -> None:
    tenant = make_tenant(api)
    _, contact_id = _list_with_contact(tenant)
    seen = _lock_statements(api)
    tenant.ok("PATCH", f"/v4/contacts/{contact_id}", json={"points": 80})
    assert len(seen) == 1, seen
    assert seen[0].lstrip().startswith("SELECT contacts.id"), seen[0]
    assert "hashtextextended(lists.id" in seen[0]


def test_a_patch_of_a_contact_not_the_callers_takes_no_lock(api: ApiClient) -> None:
    owner, stranger = make_tenant(api), make_tenant(api)
    list_id, contact_id = _list_with_contact(owner)
    patch = lambda: stranger.call("PATCH", f"/v4/contacts/{contact_id}", json={"points": 5})  # noqa: E731
    with _held(api, list_id, list_lock.LIST_LOCK):
        seen = _lock_statements(api)
        with in_thread(patch) as answer:
            pass  # a lock taken would wait for the held one: the thread's join then fails
    assert answer[0].status_code == 404, answer[0].text
    assert len(seen) == 1  # the door's read, which found no row and so locked nothing
