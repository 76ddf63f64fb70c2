"""An import keeps PostgreSQL's picture of its growing list true (`db/list_statistics.py`).

With autovacuum off for the contacts table (so the test sees only what the import does) and
statistics taken while the list held a few contacts, an import of many turns must leave the
planner estimating the list at about its size, and looking emails up through the unique
index on (list_id, email_key) rather than by walking the list; with a refresh per doubling,
not per turn. A list below `REFRESHED_FROM` is left alone, and SQLite gets no statement.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import make_url

from audiencefilter.service.db import dialects, list_statistics
from audiencefilter.service.domain.use_cases import membership_turns

from .conftest import ApiClient, make_tenant, url_settings

ROWS = 3_000


def _conninfo(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _plan(connection: psycopg.Connection[Any], statement: str, *params: Any) -> dict[str, Any]:
    found = connection.execute(f"EXPLAIN (FORMAT JSON) {statement}", params).fetchone()
    assert found is not None
    plan: dict[str, Any] = found[0][0]["Plan"]
    return plan


def _indexes(plan: dict[str, Any]) -> set[str]:
    names = {plan["Index Name"]} if "Index Name" in plan else set()
    for child in plan.get("Plans", []):
        names |= _indexes(child)
    return names


def _rows(indexes: range) -> list[dict[str, Any]]:
    return [{"email": f"s{i}@stats.test", "points": i % 97} for i in indexes]


@pytest.mark.postgres
def test_an_import_leaves_the_planner_knowing_its_list(
    pg_migrated_database: Callable[[], str],
    app_factory: Callable[..., ApiClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = pg_migrated_database()
    api = app_factory(url_settings(url, auto_migrate=True, membership_sweep_seconds=0))
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    path = f"/v4/contacts/import?listId={list_id}&events=false"
    tenant.ok("POST", path, json=_rows(range(5)))
    with psycopg.connect(_conninfo(url), autocommit=True) as connection:
        connection.execute("ALTER TABLE contacts SET (autovacuum_enabled = false)")
        connection.execute("ANALYZE contacts")  # the picture of a list of 5
        refreshes: list[str] = []
        real = list_statistics.refresh_if_grown

        def counted(session: Any, list_id: str) -> bool:
            refreshed = real(session, list_id)
            refreshes.extend([list_id] if refreshed else [])
            return refreshed

        monkeypatch.setattr(list_statistics, "refresh_if_grown", counted)
        monkeypatch.setattr(list_statistics, "REFRESHED_FROM", 200)
        monkeypatch.setattr(membership_turns, "PAIRS_PER_TURN", 100)  # turns of about 80 rows
        for start in range(5, ROWS, 1_000):  # an import holds at most 1,000 rows
            answer = tenant.ok("POST", path, json=_rows(range(start, min(start + 1_000, ROWS))))
            assert answer["created"] == min(1_000, ROWS - start)
        estimate = _plan(connection, "SELECT id FROM contacts WHERE list_id = %s", list_id)
        assert estimate["Plan Rows"] >= ROWS / 2, "the planner still believes the list small"
        keys = [f"s{i}@stats.test" for i in (7, 1_500, 2_900)]
        lookup = _plan(
            connection,
            "SELECT * FROM contacts WHERE list_id = %s AND email_key = ANY(%s)",
            list_id,
            keys,
        )
        assert _indexes(lookup) == {"uq_contacts_list_id_email_key"}
    # 200, 400, ... up to 3,000: one refresh a doubling, not one a turn.
    assert 1 <= len(refreshes) <= math.ceil(math.log2(ROWS / 200)) + 1
    assert set(refreshes) == {list_id}


def test_sqlite_and_a_small_list_get_no_refresh() -> None:
    assert dialects.list_statistics("sqlite") is None
    assert dialects.list_statistics("postgresql") is not None
    assert list_statistics.REFRESHED_FROM >= 1_000  # a list walked in a few ms is left alone
