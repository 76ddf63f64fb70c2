"""How many SQL statements a single contact update costs, on SQLite and PostgreSQL.

A contact written alone (`PATCH /v4/contacts/{id}`) in a list of 100 smart audiences moves it
into some and out of others. Every statement of its write transaction is a round trip through
SQLAlchemy and the driver, and half of an update's CPU was that trip: the door and the write
path (`list_lock.py`, `write_effects.py`, `membership/`) keep the count small. The count is of
the statements the transaction runs (its `BEGIN` aside), a `COPY` counted as one; the answer is
checked too, so a cheaper write cannot be a wrong one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Connection

from audiencefilter.service import create_app
from audiencefilter.service.db import bulk
from audiencefilter.service.db.engine import WRITE_OPTION, Database

from .conftest import ApiClient, Tenant, make_tenant, settings_on

AUDIENCES = 100
# Statements of one update's write transaction, the answer's reads included (17 on SQLite and
# 18 on PostgreSQL before the door took the lock alone, the events went in one statement and
# the audiences' stamp was read once; 12 and 14 before the write read back with its `RETURNING`
# what the judgement and the answer need, and PostgreSQL moved the memberships in one). The
# upsert of the audiences' pair counts when membership moves (`audience_overlaps`, which the
# overlap reads instead of counting memberships) made it 7 on both, until SQLite's events
# numbered themselves, a trigger raising the list's counter (migration 0018), and PostgreSQL's
# upsert rode in the memberships' `WITH` (docs/service-internals-writes.md), and 5 on PostgreSQL
# since its door takes the list's lock in the read that finds the list (`dialects.lock_column`),
# and 3 since the memberships' write rides in the events' statement (`events.carry`).
MOST = {"sqlite": 6, "postgres": 3}


@pytest.fixture(params=["sqlite", "postgres"])
def api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApiClient]:
    settings = settings_on(request, tmp_path / "single.db", membership_sweep_seconds=0)
    client = ApiClient(create_app(settings))
    client.app.state.kind = request.param
    yield client
    client.close()


def _filters(index: int) -> dict[str, Any]:
    """Half the audiences take a contact with many points, half one with few (in the US)."""
    if index % 2:
        return {"points": {"gte": 10 + index % 7}}
    return {"country": {"in": ["US", "FR"]}, "points": {"lt": 50 + index}}


class Counted:
    """The statements of every write transaction of `database` while it is open."""

    def __init__(self, database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
        self.statements: list[str] = []
        self.engine = database.engine
        copy_rows = bulk._copy_rows

        def copying(*args: Any, **kwargs: Any) -> Any:
            self.statements.append("COPY")
            return copy_rows(*args, **kwargs)

        monkeypatch.setattr(bulk, "_copy_rows", copying)
        event.listen(self.engine, "after_cursor_execute", self._executed)

    def _executed(self, conn: Connection, _cursor: Any, statement: str, *_: Any) -> None:
        if conn.get_execution_options().get(WRITE_OPTION, False):
            if not statement.lstrip().upper().startswith("BEGIN"):
                self.statements.append(statement.split("\n")[0][:80])

    def close(self) -> None:
        event.remove(self.engine, "after_cursor_execute", self._executed)


def _list_of_audiences(tenant: Tenant) -> tuple[str, dict[str, Any], dict[int, str]]:
    list_id = tenant.new_list()["id"]
    for index, points in enumerate((500, 60, 5, 7)):  # ranked ahead, tied, behind: positions
        tenant.new_contact(list_id, f"other{index}@example.com", points=points, country="FR")
    contact = tenant.new_contact(list_id, "one@example.com", points=5, country="US")
    ids = {}
    for index in range(AUDIENCES):
        body = {"name": f"a{index}", "listId": list_id, "filters": _filters(index)}
        ids[index] = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    return list_id, contact, ids


def _expected(points: int, ids: dict[int, str]) -> set[str]:
    """The audiences a US contact with `points` is in, by the filters' own meaning."""
    return {
        audience_id
        for index, audience_id in ids.items()
        if (points >= 10 + index % 7 if index % 2 else points < 50 + index)
    }


def _update(
    tenant: Tenant, counted: Counted, contact_id: str, points: int
) -> tuple[list[str], dict[str, Any]]:
    counted.statements.clear()
    answer = tenant.ok("PATCH", f"/v4/contacts/{contact_id}", json={"points": points})
    return list(counted.statements), answer["contact"]


def test_a_single_update_costs_a_few_statements(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant(api)
    list_id, contact, ids = _list_of_audiences(tenant)
    counted = Counted(api.app.state.db, monkeypatch)
    try:
        moves = [_update(tenant, counted, contact["id"], p) for p in (500, 5, 500, 60)]
    finally:
        counted.close()
    for (statements, answer), points in zip(moves, (500, 5, 500, 60), strict=True):
        assert answer["points"] == points
        assert answer["position"] == {500: 2, 5: 5, 60: 3}[points]  # ties: earlier first
        assert {a["id"] for a in answer["audiences"]} == _expected(points, ids)
        assert len(statements) <= MOST[api.app.state.kind], (len(statements), statements)
    read = tenant.ok("GET", f"/v4/contacts/{contact['id']}")["contact"]
    assert (read["position"], read["points"]) == (3, 60)  # the page's ranking agrees
    feed = tenant.ok("GET", f"/v4/events?listId={list_id}&limit=1000")["events"]
    mine = [e for e in feed if e["contactId"] == contact["id"] and e["audienceId"] is not None]
    members: set[str] = set()
    for change in mine:  # the feed replays to the membership the last answer said
        if change["type"] == "audience.entered":
            assert change["audienceId"] not in members
            members.add(change["audienceId"])
        else:
            assert change["audienceId"] in members
            members.discard(change["audienceId"])
    assert members == _expected(60, ids)
    updated = [e for e in feed if e["type"] == "contact.updated"]
    assert [e["data"] for e in updated] == [{"fields": ["points"]}] * 4
