"""Each list's number of contacts is kept by the database (migration 0010), so a page of a whole
list answers its total without counting the list; the kept number must equal a count after
every way contacts come and go, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import httpx
import pytest
from sqlalchemy import event, text

from audiencefilter.service.db.engine import Database

from .conftest import ApiClient, Tenant, gather, make_tenant, url_settings


def _database(tenant: Tenant) -> Database:
    return tenant.client.app.state.db  # type: ignore[no-any-return]


def _kept_and_counted(tenant: Tenant, list_id: str) -> tuple[int, int]:
    with _database(tenant).reading() as session:
        connection = session.connection()
        kept = connection.execute(
            text("SELECT contacts FROM list_sizes WHERE list_id = :id"), {"id": list_id}
        ).scalar_one()
        counted = connection.execute(
            text("SELECT count(*) FROM contacts WHERE list_id = :id"), {"id": list_id}
        ).scalar_one()
    return int(kept), int(counted)


def _total(tenant: Tenant, list_id: str, **params: Any) -> int:
    page = tenant.ok("GET", "/v4/contacts", params={"listId": list_id, "limit": 2, **params})
    return int(page["pagination"]["total"])


@contextmanager
def _statements(tenant: Tenant) -> Iterator[list[str]]:
    """The SQL the app sends meanwhile."""
    seen: list[str] = []
    engine = _database(tenant).engine

    def record(*args: Any) -> None:
        seen.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def _churn(tenant: Tenant, list_id: str, seed: int) -> None:
    """Contacts created one by one and by imports (new rows and upserts of existing ones),
    then some deleted, in an order drawn from `seed`."""
    rng = random.Random(seed)
    made = [tenant.new_contact(list_id, f"one{i}@example.com")["id"] for i in range(6)]
    rows = [{"email": f"row{i}@example.com", "points": i} for i in range(12)]
    rows += [{"email": "ONE0@example.com", "points": 9}]  # an upsert: no new contact
    tenant.ok("POST", "/v4/contacts/import", params={"listId": list_id}, json=rows)
    for contact_id in rng.sample(made, 3):
        tenant.ok("DELETE", f"/v4/contacts/{contact_id}")


def _check_every_way(tenant: Tenant) -> None:
    lst = tenant.new_list()
    other = tenant.new_list()
    assert _kept_and_counted(tenant, lst["id"]) == (0, 0)
    _churn(tenant, lst["id"], seed=1)
    _churn(tenant, other["id"], seed=2)
    kept, counted = _kept_and_counted(tenant, lst["id"])
    assert kept == counted == 15
    assert _total(tenant, lst["id"]) == 15
    assert _total(tenant, lst["id"], page=3) == 15
    assert _total(tenant, lst["id"], email="row1") == 3  # narrowed: counted, not kept
    tenant.ok("DELETE", f"/v4/lists/{lst['id']}")
    assert _kept_and_counted(tenant, other["id"]) == (15, 15)


def test_the_kept_size_follows_every_write_on_sqlite(tenant: Tenant) -> None:
    _check_every_way(tenant)


@pytest.mark.postgres
def test_the_kept_size_follows_every_write_on_postgres(
    app_factory: Callable[..., ApiClient], pg_migrated_database: Callable[[], str]
) -> None:
    api = app_factory(url_settings(pg_migrated_database(), auto_migrate=True))
    _check_every_way(make_tenant(api))


def test_a_page_of_a_whole_list_counts_nothing(tenant: Tenant) -> None:
    lst = tenant.new_list()
    for i in range(5):
        tenant.new_contact(lst["id"], f"c{i}@example.com")
    with _statements(tenant) as seen:
        assert _total(tenant, lst["id"]) == 5
    assert [sql for sql in seen if _counts_contacts(sql)] == []
    with _statements(tenant) as seen:
        assert _total(tenant, lst["id"], email="example") == 5
    assert any(_counts_contacts(sql) for sql in seen)


def _counts_contacts(sql: str) -> bool:
    """A count of contacts as the statement's answer (a rank's inner count is not one)."""
    return " ".join(sql.lower().split()).startswith("select count(*) as count_1 from contacts")


def _concurrent_churn(client: ApiClient, tenant: Tenant) -> None:
    """40 contacts created at once (4 of them twice: one 201, one 409), then 20 of them deleted
    at once while 20 more are created: the kept size is exact whatever the interleaving."""
    lst = tenant.new_list()
    list_id = lst["id"]

    def create(email: str) -> Callable[[], Awaitable[httpx.Response]]:
        body = {"email": email, "listId": list_id}
        return partial(client.http.post, "/v4/contacts", json=body, headers=tenant.headers)

    emails = [f"c{i}@example.com" for i in range(40)]
    made = gather(client, [create(email) for email in emails + emails[:4]])
    assert sorted(response.status_code for response in made).count(201) == 40
    ids = [r.json()["data"]["contact"]["id"] for r in made if r.status_code == 201]
    deletes = [
        partial(client.http.delete, f"/v4/contacts/{contact_id}", headers=tenant.headers)
        for contact_id in ids[:20]
    ]
    more = [create(f"d{i}@example.com") for i in range(20)]
    mixed = gather(client, deletes + more)
    assert all(response.status_code in (200, 201) for response in mixed)
    assert _kept_and_counted(tenant, list_id) == (40, 40)
    assert _total(tenant, list_id) == 40


def test_concurrent_writes_keep_the_size_exact_on_sqlite(client: ApiClient, tenant: Tenant) -> None:
    _concurrent_churn(client, tenant)


@pytest.mark.postgres
def test_concurrent_writes_keep_the_size_exact_on_postgres(
    app_factory: Callable[..., ApiClient], pg_migrated_database: Callable[[], str]
) -> None:
    api = app_factory(url_settings(pg_migrated_database(), auto_migrate=True))
    _concurrent_churn(api, make_tenant(api))
