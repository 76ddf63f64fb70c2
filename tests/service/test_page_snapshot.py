"""A page of contacts is read from one snapshot of the database.

A page takes several statements (the rows, their waitlist positions, their audiences). On
PostgreSQL under READ COMMITTED each statement saw the writes committed since the one before:
a contact whose points changed between the rows and the positions had no position, and the
page answered 500 (`KeyError` in `contact_pages.render`), found by concurrent writers. Reads
now run in one snapshot (REPEATABLE READ on PostgreSQL; SQLite's read transaction is one).
The write lands between the statements here on purpose, so the test needs no timing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from audiencefilter.service.domain import ranking

from .conftest import ApiClient, make_tenant, sqlite_settings, url_settings


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'pages.db'}"
    else:
        yield request.getfixturevalue("pg_database")()


def _settings(url: str, tmp_path: Path) -> Any:
    if url.startswith("sqlite"):
        return sqlite_settings(tmp_path / "pages.db", auto_migrate=True)
    return url_settings(url, auto_migrate=True)


def test_a_write_between_a_pages_statements_is_not_seen_by_half_of_it(
    app_factory: Callable[..., ApiClient],
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = app_factory(_settings(database_url, tmp_path))
    tenant = make_tenant(api)
    lst = tenant.ok("POST", "/v4/lists", 201, json={"name": "waitlist"})["list"]
    ids = [
        tenant.ok(
            "POST",
            "/v4/contacts",
            201,
            json={"email": f"c{n}@example.com", "listId": lst["id"], "points": 10 * n},
        )["contact"]["id"]
        for n in range(1, 5)
    ]
    before = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"]})["contacts"]
    other = create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    original = ranking.positions
    moved: list[str] = []

    def positions_after_a_write(*args: Any, **kwargs: Any) -> dict[str, int]:
        if not moved:  # another connection commits between the page's statements
            with other.begin() as connection:
                connection.execute(
                    text("UPDATE contacts SET points = 100000 WHERE id = :id"), {"id": ids[0]}
                )
            moved.append(ids[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(ranking, "positions", positions_after_a_write)
    page = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"]})["contacts"]
    other.dispose()
    assert moved, "the write was made between the page's statements"
    # The page is the one of the snapshot it began with: the same contacts, same positions.
    assert [(c["id"], c["points"], c.get("position")) for c in page] == [
        (c["id"], c["points"], c.get("position")) for c in before
    ]
