"""An export on PostgreSQL reads its members through one server-side cursor: one statement
and one snapshot, where SQLite reads batch after batch in short transactions of their own
(`dialects.streams_exports`). Both give every member once, in id order."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from audiencefilter.service.db.engine import Database
from audiencefilter.service.domain.use_cases import exports

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings

MEMBERS = 7


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    options: dict[str, Any] = {"membership_sweep_seconds": 0, "webhook_worker": False}
    if request.param == "sqlite":
        return app_factory(sqlite_settings(tmp_path / "export.db", **options))
    pg_migrated_database: Callable[[], str] = request.getfixturevalue("pg_migrated_database")
    return app_factory(url_settings(pg_migrated_database(), auto_migrate=True, **options))


@contextmanager
def _member_reads(database: Database) -> Iterator[list[str]]:
    """The statements that read contacts, as they run."""
    executed: list[str] = []

    def count(*args: Any) -> None:
        if "FROM contacts" in args[2]:
            executed.append(args[2])

    event.listen(database.engine, "before_cursor_execute", count)
    try:
        yield executed
    finally:
        event.remove(database.engine, "before_cursor_execute", count)


def _audience(tenant: Tenant) -> tuple[str, list[str]]:
    lst = tenant.new_list()["id"]
    ids = [tenant.new_contact(lst, f"m{i}@example.com", points=i)["id"] for i in range(MEMBERS)]
    body = {"name": "All", "listId": lst, "mode": "smart", "filters": {"points": {"gte": 0}}}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    return audience, sorted(ids)


def test_an_export_streams_on_postgres_and_pages_on_sqlite(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(exports, "BATCH", 2)
    tenant = make_tenant(api)
    database: Database = api.app.state.db
    audience, ids = _audience(tenant)
    streamed = database.engine.dialect.name == "postgresql"

    export = exports.members(database, tenant.account_id, audience)
    with _member_reads(database) as before:
        first = next(export.batches)
    # a member further on leaves while the client is still reading
    tenant.ok("DELETE", f"/v4/contacts/{ids[-1]}")
    with _member_reads(database) as after:
        rest = [row for batch in export.batches for row in batch]
    read = [row["id"] for row in [*first, *rest]]
    executed = [*before, *after]

    assert [len(first)] == [2]
    if streamed:  # one statement, one snapshot: the export is the audience as it began
        assert len(executed) == 1
        assert read == ids
    else:  # a statement per batch, each reading the list as it is then
        assert len(executed) == 4
        assert read == ids[:-1]
