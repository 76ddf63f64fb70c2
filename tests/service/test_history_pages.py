"""Membership history's two contracts, on SQLite and PostgreSQL, through the real application:

- **One instant per entry.** A member's `enteredAt` (the instant its membership row records) is
  its `audience.entered` event's date, and `?at=<that enteredAt>` lists it, whether it entered
  by a contact write, an import, an audience stored inline, a background build or the clock.
  The application's clock moves on at every reading, as a real one does, so an instant read
  twice in one write shows.
- **A page of history is a bounded read.** `?at=T&group=...&limit=1` over a 2,000-member
  audience reads a few rows, not the audience: every statement the page runs is counted by
  what it returns, and its answer is the one of the walk of every member at T.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from audiencefilter.service.app import create_app
from audiencefilter.service.db.engine import Database
from audiencefilter.service.domain.use_cases import membership_builds

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings

START = datetime(2031, 6, 1, 8, tzinfo=UTC)
SPLIT = {
    "seed": "pages-3",
    "holdoutPercent": 10,
    "groups": [{"name": "A", "percent": 45}, {"name": "B", "percent": 45}],
}
MEMBERS = 2000
# Rows a page of one member may read (it read the audience: 1,000 rows a statement).
BOUND = 50


class Ticking:
    """The application's clock: a microsecond later at every reading, moved on by the test."""

    def __init__(self) -> None:
        self.at = START

    def __call__(self) -> datetime:
        self.at += timedelta(microseconds=1)
        return self.at


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Tenant, Ticking]]:
    options: dict[str, Any] = {
        "membership_sweep_seconds": 0,
        "webhook_worker": False,
        "audience_build_background_above": 40,
        "audience_build_chunk": 25,
    }
    if request.param == "sqlite":
        settings = sqlite_settings(tmp_path / "pages.db", **options)
    else:
        pg_migrated_database: Callable[[], str] = request.getfixturevalue("pg_migrated_database")
        settings = url_settings(pg_migrated_database(), auto_migrate=True, **options)
    hands = Ticking()
    api = ApiClient(create_app(settings, clock=hands))
    yield make_tenant(api), hands
    api.close()


def _stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _members(tenant: Tenant, audience_id: str, **params: Any) -> list[dict[str, Any]]:
    """Every member listed, page after page."""
    found: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        query = {"limit": 1000, **params, **({"after": after} if after else {})}
        page = tenant.ok("GET", f"/v4/audiences/{audience_id}/members", params=query)
        found += page["members"]
        if not page["hasMore"]:
            return found
        after = page["next"]


def _entries(tenant: Tenant, list_id: str, audience_id: str) -> dict[str, str]:
    """Each contact's last `audience.entered` of the audience: its date, by contact id."""
    dated: dict[str, str] = {}
    after: str | None = None
    while True:
        query = {"listId": list_id, "limit": 1000, **({"after": after} if after else {})}
        page = tenant.ok("GET", "/v4/events", params=query)
        for item in page["events"]:
            if item["type"] == "audience.entered" and item["audienceId"] == audience_id:
                dated[item["contactId"]] = item["occurredAt"]
        if not page["hasMore"]:
            return dated
        after = page["next"]


def _one_instant_holds(tenant: Tenant, list_id: str, audience_id: str) -> int:
    """Every member's `enteredAt` is its entry's date, and the member is listed at it; the
    number of members checked."""
    members = _members(tenant, audience_id)
    dated = _entries(tenant, list_id, audience_id)
    for member in members:
        entered = member["enteredAt"]
        assert datetime.fromisoformat(dated[member["contactId"]]) == datetime.fromisoformat(
            entered
        ), member
        then = _members(tenant, audience_id, at=_stamp(datetime.fromisoformat(entered)))
        assert member["contactId"] in {m["contactId"] for m in then}, member
    return len(members)


def _audience(tenant: Tenant, list_id: str, flt: dict[str, Any], **params: Any) -> str:
    body = {"name": "Pages", "listId": list_id, "filters": flt, "experiment": SPLIT}
    found = tenant.ok("POST", "/v4/audiences", 201, json=body, params=params)["audience"]
    return str(found["id"])


def test_written_imported_and_built_members_have_one_instant(
    world: tuple[Tenant, Ticking],
) -> None:
    tenant, hands = world
    lst = tenant.new_list()["id"]
    rows = [{"email": f"i{n}@example.com", "points": n} for n in range(12)]
    tenant.ok("POST", "/v4/contacts/import", params={"listId": lst}, json=rows)
    inline = _audience(tenant, lst, {"points": {"gte": 3}})  # stored by the audience's write
    timed = _audience(tenant, lst, {"createdAt": {"gte": {"ago": "PT1H"}}})
    for n in range(4):  # contact writes, one at a time
        tenant.new_contact(lst, f"w{n}@example.com", points=50 + n)
    more = [{"email": f"j{n}@example.com", "points": 20 + n} for n in range(6)]
    tenant.ok("POST", "/v4/contacts/import", params={"listId": lst}, json=more)
    assert _one_instant_holds(tenant, lst, inline) == 9 + 4 + 6
    assert _one_instant_holds(tenant, lst, timed) == 12 + 4 + 6
    hands.at += timedelta(hours=2)  # the clock moves every member out, then two enter
    tenant.client.app.state.sweeper.run_once()
    tenant.new_contact(lst, "late1@example.com")
    tenant.new_contact(lst, "late2@example.com")
    assert _one_instant_holds(tenant, lst, timed) == 2


def test_a_background_build_dates_each_entry_once(world: tuple[Tenant, Ticking]) -> None:
    tenant, _ = world
    lst = tenant.new_list()["id"]
    rows = [{"email": f"b{n}@example.com", "points": n} for n in range(60)]
    tenant.ok("POST", "/v4/contacts/import", params={"listId": lst}, json=rows)
    audience = _audience(tenant, lst, {"points": {"gte": 10}})  # built in the background
    database: Database = tenant.client.app.state.db
    while membership_builds.build_step(database, 25) is not None:
        pass
    assert _one_instant_holds(tenant, lst, audience) == 50
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"filters": {"points": {"gte": 5}}})
    while membership_builds.build_step(database, 25) is not None:
        pass
    assert _one_instant_holds(tenant, lst, audience) == 55


class Reads:
    """The statements run on the database while counting, with their parameters."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.seen: list[tuple[str, Any]] = []
        self.counting = False

    def __enter__(self) -> Reads:
        event.listen(self.database.engine, "before_cursor_execute", self._seen)
        self.counting = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.counting = False
        event.remove(self.database.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if self.counting:
            self.seen.append((statement, parameters))

    def of_events(self) -> list[tuple[str, Any]]:
        return [(s, p) for s, p in self.seen if re.search(r"\bevents\b", s)]

    def rows(self) -> int:
        """The rows the statements reading events return, each run again to count them."""
        total = 0
        with self.database.engine.connect() as connection:
            cursor = connection.connection.cursor()
            for statement, parameters in self.of_events():
                cursor.execute(f"SELECT count(*) FROM ({statement}) AS counted", parameters)
                (found,) = cursor.fetchone() or (0,)
                total += int(found)
        return total


def _big_audience(tenant: Tenant, hands: Ticking) -> tuple[str, datetime]:
    """A 2,000-member split audience, some members gone and back before T and some after."""
    lst = tenant.new_list()["id"]
    rows = [{"email": f"m{n:04}@example.com", "points": 10} for n in range(MEMBERS)]
    for start in range(0, MEMBERS, 1000):  # an import holds at most 1,000 rows
        part = rows[start : start + 1000]
        tenant.ok("POST", "/v4/contacts/import", params={"listId": lst}, json=part)
    audience = _audience(tenant, lst, {"points": {"gte": 10}}, wait="true")
    ids = sorted(m["contactId"] for m in _members(tenant, audience))
    hands.at += timedelta(minutes=1)
    for contact_id in ids[:40:2]:  # leave before T
        tenant.ok("PATCH", f"/v4/contacts/{contact_id}", json={"points": 0})
    hands.at += timedelta(minutes=1)
    moment = hands()
    hands.at += timedelta(minutes=1)
    for contact_id in ids[1:40:2]:  # leave after T
        tenant.ok("PATCH", f"/v4/contacts/{contact_id}", json={"points": 0})
    return audience, moment


def test_a_page_of_history_by_group_reads_a_bounded_number_of_rows(
    world: tuple[Tenant, Ticking],
) -> None:
    tenant, hands = world
    audience, moment = _big_audience(tenant, hands)
    walk = _members(tenant, audience, at=_stamp(moment))  # every member at T, unfiltered
    assert len(walk) == MEMBERS - 20
    database: Database = tenant.client.app.state.db
    wanted: list[dict[str, Any]] = [
        {"group": "A"},
        {"group": "B"},
        {"holdout": "true"},
        {"holdout": "false"},
        {"group": "A", "holdout": "false"},
        {"group": "B", "holdout": "true"},
    ]
    for params in wanted:
        expected = [m for m in walk if _keeps(m, params)]
        for after in (None, walk[0]["contactId"], walk[len(walk) // 2]["contactId"]):
            query = {"at": _stamp(moment), "limit": 1, **params}
            if after is not None:
                query["after"] = after
            with Reads(database) as reads:
                page = tenant.ok("GET", f"/v4/audiences/{audience}/members", params=query)
            rest = [m for m in expected if after is None or m["contactId"] > after]
            assert page["members"] == rest[:1], (params, after)
            assert page["hasMore"] == (len(rest) > 1)
            assert reads.of_events() and reads.rows() <= BOUND, (params, after, reads.rows())


def _keeps(member: dict[str, Any], params: dict[str, Any]) -> bool:
    if "group" in params and member["group"] != params["group"]:
        return False
    return "holdout" not in params or member["holdout"] == (params["holdout"] == "true")
