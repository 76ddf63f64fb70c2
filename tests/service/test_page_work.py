"""A contacts page costs its own rows, not its list's size, on SQLite and PostgreSQL.

`GET /v4/contacts?limit=100` answers 100 contacts with their positions, their audiences and
`pagination.total`. The total is the list's kept size (`list_sizes`) and the positions are
ranked for the page alone (`domain/ranking.py`), so the database's work for a page must be the
same in a list of 1,000 contacts and in one of 10,000. The work is measured, never timed: on
SQLite the virtual machine's instructions the page's statements run (a progress handler counts
them), on PostgreSQL the rows every node of their plans produces (`EXPLAIN ANALYZE`). A page
that counted its list or ranked the whole list grows tenfold; a page of its own rows does not.

Each page is checked in both directions of the waitlist: the top first (the default order, by
points and sign-up time) and the bottom first (`sort=position`, descending: the last contacts
of the waitlist), whose positions were counted from the top of the list, every contact ahead.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Connection

from audiencefilter.service import create_app
from audiencefilter.service.db import bulk
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import Contact

from .conftest import ApiClient, Tenant, make_tenant, settings_on

SMALL, LARGE = 1_000, 10_000
# The larger list's page may do this much more work than the smaller's (the B-trees are a
# level deeper); a page reading its list grows by LARGE / SMALL.
GROWTH = 1.5
# Which work of each page must not grow: the whole page's, its positions' alone, or all but
# its positions'. A page from the bottom (`sort=position`, descending: points ascending, sign-up
# time descending) sorts the group of contacts tied on the lowest points by time (no index
# holds that order), which grows with the group: its positions must not. A page by points
# ascending holds the first of the lowest points' ties, and its positions count the ties behind
# it as the histogram's count of its points less the few ahead (`db/queries.ranked_beyond`), so
# none of its work may grow; counted on the index, those behind grew with the group (on
# PostgreSQL 834 to 1,628 rows from 1,000 to 10,000 contacts).
PAGES = {
    "top first": ("", "page"),
    "second page": ("&page=2", "page"),
    "lowest points first": ("&sort=points&order=asc", "page"),
    "bottom first": ("&sort=position&order=desc", "positions"),
}


@pytest.fixture(params=["sqlite", "postgres"])
def api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApiClient]:
    settings = settings_on(request, tmp_path / "page.db", membership_sweep_seconds=0)
    client = ApiClient(create_app(settings))
    client.app.state.kind = request.param
    yield client
    client.close()


def long_tail(rng: random.Random) -> int:
    """Points as real lists hold them: many tied at the bottom, a long tail above."""
    return 0 if rng.random() < 0.05 else int(rng.lognormvariate(4.0, 1.5))


def fill(
    database: Database,
    list_id: str,
    count: int,
    points: Callable[[random.Random], int] = long_tail,
) -> list[str]:
    """`count` contacts written as one bulk insert, their points drawn by `points`; their ids."""
    rng = random.Random(count)
    maker = bulk.RowMaker(Contact)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [
        maker.row(
            {
                "listId": list_id,
                "email": f"c{index}@example.com",
                "emailKey": f"c{index}@example.com",
                "points": points(rng),
                "country": rng.choice(["US", "FR", "DE", "JP"]),
                "createdAt": start + timedelta(seconds=rng.randrange(10_000_000)),
                "data": {},
            }
        )
        for index in range(count)
    ]
    with database.transaction() as session:
        bulk.insert_rows(session, maker.table, rows)
    with database.engine.connect() as connection:
        analyze = "ANALYZE" if connection.dialect.name == "sqlite" else "ANALYZE contacts"
        connection.exec_driver_sql(analyze)
        connection.commit()
    return [row["id"] for row in rows]


class Work:
    """The database's work for the statements run while it listens: VM instructions (SQLite)
    or rows produced by the plans' nodes (PostgreSQL), each statement run again to measure."""

    def __init__(self, database: Database) -> None:
        self.engine = database.engine
        self.statements: list[tuple[str, Any]] = []
        event.listen(self.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Connection, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            self.statements.append((statement, params))

    def close(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._seen)

    def each(self) -> list[tuple[int, str]]:
        """The work of each statement seen, and the statement."""
        raw = self.engine.raw_connection()
        try:
            return [(self._of(raw, sql, params), sql) for sql, params in self.statements]
        finally:
            raw.close()

    def _of(self, raw: Any, statement: str, params: Any) -> int:
        cursor = raw.cursor()
        if self.engine.dialect.name == "sqlite":
            steps = [0]

            def count() -> int:
                steps[0] += 1
                return 0

            raw.driver_connection.set_progress_handler(count, 10)
            cursor.execute(statement, params)
            cursor.fetchall()
            raw.driver_connection.set_progress_handler(None, 10)
            return steps[0]
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, params)
        [[plan]] = cursor.fetchall()
        plan = json.loads(plan) if isinstance(plan, str) else plan
        return _rows(plan[0]["Plan"])


def _rows(node: dict[str, Any]) -> int:
    produced = int(node.get("Actual Rows", 0) * node.get("Actual Loops", 1))
    return produced + sum(_rows(child) for child in node.get("Plans", []))


def worked(
    database: Database, call: Callable[[], Any], meter: type[Work] | None = None
) -> tuple[Any, list[tuple[int, str]]]:
    """`call`'s answer, and the work of each statement it ran (`meter`: `Work` by default)."""
    work = (meter or Work)(database)
    try:
        answer = call()
    finally:
        work.close()
    return answer, work.each()


def _with_audience(tenant: Tenant, database: Database, size: int) -> tuple[str, Any]:
    """A list of `size` contacts (`fill`), and the answer creating its audience of those with
    100 points or more."""
    list_id = tenant.new_list(name=f"list of {size}")["id"]
    fill(database, list_id, size)
    body = {"name": "many points", "listId": list_id, "filters": {"points": {"gte": 100}}}
    return list_id, tenant.ok("POST", "/v4/audiences?wait=true", 201, json=body)


def _page_work(
    api: ApiClient, tenant: Tenant, list_id: str, query: str
) -> tuple[dict[str, int], Any]:
    """The page's whole work and its positions' (the ranking statement), and the answer."""
    database: Database = api.app.state.db
    page = f"/v4/contacts?listId={list_id}&limit=100{query}"
    answer, each = worked(database, partial(tenant.ok, "GET", page, 200))
    ranks = sum(amount for amount, sql in each if "span" in sql)
    whole = sum(amount for amount, _ in each)
    return {"page": whole, "positions": ranks}, answer


def _expected_positions(
    database: Database, list_id: str, ids: list[str], start: int
) -> dict[str, int]:
    """Each contact's position by a window over the whole list (the definition itself)."""
    with database.engine.connect() as connection:
        ranked = connection.execute(
            text(
                "SELECT id, row_number() OVER (ORDER BY points DESC, created_at ASC, id ASC) "
                "FROM contacts WHERE list_id = :list"
            ),
            {"list": list_id},
        )
        return {id_: start + rank - 1 for id_, rank in ranked if id_ in ids}


def test_a_page_costs_the_same_in_a_list_ten_times_larger(api: ApiClient) -> None:
    tenant = make_tenant(api, plan="pro")
    database: Database = api.app.state.db
    lists, grown = {}, {}
    for size in (SMALL, LARGE):
        list_id = tenant.new_list(name=f"list of {size}")["id"]
        fill(database, list_id, size)
        tenant.ok(
            "POST",
            "/v4/audiences?wait=true",
            201,
            json={"name": "many points", "listId": list_id, "filters": {"points": {"gte": 100}}},
        )
        lists[size] = list_id
    for name, (query, measured) in PAGES.items():
        works = {}
        for size, list_id in lists.items():
            work, answer = _page_work(api, tenant, list_id, query)
            works[size] = work[measured]
            assert answer["pagination"]["total"] == size
            contacts = answer["contacts"]
            assert len(contacts) == 100
            ids = [contact["id"] for contact in contacts]
            expected = _expected_positions(database, list_id, ids, 1)
            assert {c["id"]: c["position"] for c in contacts} == expected, name
            for contact in contacts:
                member = contact["points"] >= 100
                assert [a["name"] for a in contact["audiences"]] == ["many points"] * member
        if works[LARGE] > GROWTH * works[SMALL]:
            grown[name] = works
    assert not grown


# The statements a page of a whole list runs after its key's (`api/deps.py`), by what each
# reads: the list with its kept size and audiences' stamp, the rows, their positions and their
# stored memberships; the hand-written page (`benchmarks/million.py`) runs the second and last.
WHOLE_LIST_PAGE = ("list", "rows", "positions", "memberships")


def _what(statement: str) -> str:
    """What a statement of the page reads, by the table it starts from."""
    head = " ".join(statement.split())
    for marker, name in (
        ("FROM api_keys", "key"),
        ("span.rank", "positions"),
        ("FROM memberships", "memberships"),
        ("FROM lists", "list"),
        ("FROM list_sizes", "size"),
        ("FROM contacts", "rows"),
    ):
        if marker in head:
            return name
    return head[:60]


def test_a_whole_lists_page_runs_four_statements_whose_work_does_not_grow(api: ApiClient) -> None:
    """The page the benchmark measures: its list's size and audiences' stamp are read with the
    list (a statement each before), and its work is the same at 1,000 and 10,000 contacts."""
    tenant = make_tenant(api, plan="pro")
    database: Database = api.app.state.db
    works, seen = {}, {}
    for size in (SMALL, LARGE):
        list_id, _ = _with_audience(tenant, database, size)
        _page_work(api, tenant, list_id, "")  # the list's audiences prepared once
        page = f"/v4/contacts?listId={list_id}&limit=100"
        answer, each = worked(database, partial(tenant.ok, "GET", page, 200))
        seen[size] = tuple(_what(sql) for _, sql in each if _what(sql) != "key")
        works[size] = sum(amount for amount, _ in each)
        assert answer["pagination"]["total"] == size
        assert len(answer["contacts"]) == 100
    assert seen == {SMALL: WHOLE_LIST_PAGE, LARGE: WHOLE_LIST_PAGE}
    assert works[LARGE] <= GROWTH * works[SMALL], works


def test_a_large_audiences_page_reads_its_own_rows_not_its_members(api: ApiClient) -> None:
    """`GET /v4/audiences/{id}?limit=2` of an audience holding a third of its list walks the
    list in its order and stops at the page's last member (`ContactPages.walk_bound`): the rows'
    statement does the same work in a list of 1,000 and of 10,000 contacts. Sorting every member
    to show two grew tenfold. Its total is the count of its memberships (the audiences' list's
    `subsCount`), which grows with it and is left out."""
    tenant = make_tenant(api, plan="pro")
    database: Database = api.app.state.db
    works, pages = {}, {}
    for size in (SMALL, LARGE):
        _, created = _with_audience(tenant, database, size)
        path = f"/v4/audiences/{created['audience']['id']}?limit=2"
        whole = tenant.ok("GET", path.replace("limit=2", "limit=100"), 200)["audience"]["subs"]
        answer, each = worked(database, partial(tenant.ok, "GET", path, 200))
        rows = [amount for amount, sql in each if "ORDER BY contacts.points" in sql]
        assert len(rows) == 1
        works[size] = rows[0]
        subs = answer["audience"]["subs"]
        assert [sub["id"] for sub in subs] == [sub["id"] for sub in whole[:2]]
        pages[size] = answer["pagination"]["total"]
        assert size // 10 < pages[size] < size // 2, pages
    assert works[LARGE] <= GROWTH * works[SMALL], works


def test_the_positions_of_a_page_of_one_tie_cost_the_same_in_a_list_ten_times_larger(
    api: ApiClient,
) -> None:
    """A fresh waitlist's contacts all tie on their points. Each page's positions count the
    ties on the side of the page's end nearer its end of the tie (`db/queries.ranked_beyond`):
    in every direction, the first page's positions read as much among 10,000 ties as among
    1,000, where counting from the side the order asked for read the whole tie for some."""
    tenant = make_tenant(api, plan="pro")
    database: Database = api.app.state.db
    lists = {}
    for size in (SMALL, LARGE):
        lists[size] = tenant.new_list(name=f"tie of {size}")["id"]
        fill(database, lists[size], size, points=lambda _rng: 0)
    grown = {}
    for name, (query, _) in PAGES.items():
        works = {}
        for size, list_id in lists.items():
            work, answer = _page_work(api, tenant, list_id, query)
            works[size] = work["positions"]
            ids = [contact["id"] for contact in answer["contacts"]]
            expected = _expected_positions(database, list_id, ids, 1)
            assert {c["id"]: c["position"] for c in answer["contacts"]} == expected, name
        if works[LARGE] > GROWTH * works[SMALL]:
            grown[name] = works
    assert not grown
