"""Property: stored membership equals live evaluation after any sequence of writes, and the
event feed replays it exactly.

Random sequences of contact create, update and delete, actions, audience create, update (filter
and mode) and delete, manual member changes, clock advances (each followed by the sweep, which
is what bounds stored relative audiences) and failing writes run through the real application,
on SQLite and on PostgreSQL. After every operation each audience's stored members are compared
with the library's two answers: SQL (`Filter.to_sqlalchemy`) and memory (`Filter.matches` on the
contact's record). At the end the feed is replayed from the start: applying its entered and left
events in order must give the stored membership, each committed change exactly once (an event
that does not change the replayed state is a duplicate), positions without gaps, and a failed
write adds none. On PostgreSQL, concurrent writers on one list must keep all of this.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from audiencefilter.service.app import create_app
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import Audience, AudienceMember, Contact, List, Membership
from audiencefilter.service.db.queries import contact_rows, fetch_rows
from audiencefilter.service.domain import list_lock
from audiencefilter.service.domain.audience_filters import decode_zone, stored_filter

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings
from .hands import Hands

START = datetime(2030, 1, 1, tzinfo=UTC)
FILTERS: list[dict[str, Any]] = [
    {"points": {"gte": 50}},
    {"country": {"in": ["FR", "DE"]}},
    {"OR": [{"points": {"lt": 0}}, {"country": "FR"}]},
    {"createdAt": {"gte": {"ago": "PT36H"}}},
    {"data": {"path": ["plan"], "equals": "pro"}},
    {"AND": [{"city": {"not": None}}, {"points": {"lte": 100}}]},
    {"createdAt": {"within": {"last": 1, "unit": "day"}}},
]
COUNTRIES = [None, "FR", "DE", "US"]
ZONES = ["UTC", "Pacific/Kiritimati", "Asia/Tokyo"]
"""The list's zones a `zone` step sets: the calendar filter's yesterday differs in each."""


def _app(settings_: Any) -> tuple[ApiClient, Hands]:
    hands = Hands(START)
    return ApiClient(create_app(settings_, clock=hands)), hands


@pytest.fixture(scope="module")
def sqlite_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiClient, Hands]]:
    path = tmp_path_factory.mktemp("props") / "props.db"
    api, hands = _app(sqlite_settings(path, membership_sweep_seconds=0))
    yield api, hands
    api.close()


@pytest.fixture(scope="module")
def pg_app(pg_migrated_database: Callable[[], str]) -> Iterator[tuple[ApiClient, Hands]]:
    settings_ = url_settings(pg_migrated_database(), auto_migrate=True, membership_sweep_seconds=0)
    api, hands = _app(settings_)
    yield api, hands
    api.close()


# ---- the invariants ------------------------------------------------------------------------


def check_membership(database: Database, list_id: str, now: datetime) -> None:
    """Stored rows = SQL evaluation = in-memory evaluation, for every audience of the list,
    each filter read in the list's zone."""
    with database.reading() as session:
        zone = session.scalars(select(List.timeZone).where(List.id == list_id)).one()
        audiences = list(session.scalars(select(Audience).where(Audience.listId == list_id)))
        records = fetch_rows(session, contact_rows([Contact.listId == list_id]))
        for record in records:
            record["data"] = json.loads(record["data"])
        for audience in audiences:
            stored = set(
                session.scalars(
                    select(Membership.contactId).where(Membership.audienceId == audience.id)
                )
            )
            if audience.mode == "manual":
                expected = set(
                    session.scalars(
                        select(AudienceMember.contactId).where(
                            AudienceMember.audienceId == audience.id
                        )
                    )
                )
                assert stored == expected, audience.name
                continue
            assert audience.filters is not None
            assert decode_zone(audience.fields) == zone, (audience.filters, audience.fields)
            flt = stored_filter(audience.filters, audience.fields)
            assert flt is not None
            in_sql = set(
                session.scalars(
                    select(Contact.id).where(
                        Contact.listId == list_id, flt.to_sqlalchemy(Contact, now=now)
                    )
                )
            )
            in_memory = {r["id"] for r in records if flt.matches(r, now=now)}
            assert in_sql == in_memory, audience.filters
            assert stored == in_sql, (audience.filters, stored ^ in_sql)


def replay(tenant: Tenant, database: Database, list_id: str) -> None:
    """The feed, applied from the start, rebuilds the stored membership; no duplicates, no gaps."""
    events: list[dict[str, Any]] = []
    cursor = None
    while True:
        params = {"listId": list_id, "limit": 1000}
        if cursor is not None:
            params["after"] = cursor
        page = tenant.ok("GET", "/v4/events", params=params)
        events.extend(page["events"])
        cursor = page["next"]
        if not page["hasMore"]:
            break
    assert len({e["id"] for e in events}) == len(events)
    state: set[tuple[str, str]] = set()
    for event in events:
        pair = (event["audienceId"], event["contactId"])
        if event["type"] == "audience.entered":
            assert pair not in state, f"entered twice: {event}"
            state.add(pair)
        elif event["type"] == "audience.left":
            assert pair in state, f"left without entering: {event}"
            state.remove(pair)
    with database.reading() as session:
        rows = session.execute(
            select(Membership.audienceId, Membership.contactId)
            .join(Audience, Audience.id == Membership.audienceId)
            .where(Audience.listId == list_id)
        )
        stored = {(audience_id, contact_id) for audience_id, contact_id in rows}
        head = list_lock.head(session, list_id)
    assert state == stored
    assert head == len(events)


# ---- the operations ------------------------------------------------------------------------


class World:
    """One list of the app and what the test knows of it, to aim operations at."""

    def __init__(self, tenant: Tenant, hands: Hands) -> None:
        self.tenant = tenant
        self.hands = hands
        self.list_id = tenant.new_list()["id"]
        self.contacts: list[str] = []
        self.audiences: list[tuple[str, str]] = []  # (id, mode)
        self.actions: list[str] = []
        self.emails = 0

    def pick(self, items: list[Any], n: int) -> Any:
        return items[n % len(items)] if items else None

    def contact_body(self, n: int) -> dict[str, Any]:
        return {
            "points": (n * 37) % 160 - 30,
            "country": COUNTRIES[n % len(COUNTRIES)],
            "city": None if n % 3 else "Paris",
            "data": {"plan": "pro" if n % 2 else "free"},
        }

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.tenant.call(method, path, **kwargs)

    def apply(self, op: str, n: int, k: int = 0) -> None:
        call = self.call_for(op, n, k)
        if call is not None:
            response = call()
            assert response.status_code < 500, response.text
            self.record(op, response)

    def call_for(self, op: str, n: int, k: int = 0) -> Callable[[], httpx.Response] | None:
        """The request of operation `op` with value `n` on the `k`th target (None when it has
        no target yet)."""
        contact = self.pick(self.contacts, k)
        audience = self.pick(self.audiences, k)
        if op == "create":
            self.emails += 1
            body = {"email": f"c{self.emails}-{n}@example.com", "listId": self.list_id}
            return lambda: self.request(
                "POST", "/v4/contacts", json={**body, **self.contact_body(n)}
            )
        if op == "duplicate" and contact is not None:
            return lambda: self.request(
                "PATCH", f"/v4/contacts/{contact}", json={"email": "dup@example.com"}
            )
        if op == "update" and contact is not None:
            return lambda: self.request(
                "PATCH", f"/v4/contacts/{contact}", json=self.contact_body(n + 1)
            )
        if op == "delete" and contact is not None:
            return lambda: self.request("DELETE", f"/v4/contacts/{contact}")
        if op == "action" and contact is not None:
            body = {"name": "a", "increase": 40 if n // 6 % 2 else -40, "subId": contact}
            return lambda: self.request("POST", "/v4/actions", json=body)
        if op == "unaction" and self.actions:
            action = self.pick(self.actions, k)
            return lambda: self.request("DELETE", f"/v4/actions/{action}")
        if op == "audience":
            body = {"name": f"A{n}", "listId": self.list_id, "filters": FILTERS[n % len(FILTERS)]}
            if n % 5 == 0:
                body = {"name": f"M{n}", "listId": self.list_id, "mode": "manual"}
            return lambda: self.request("POST", "/v4/audiences", json=body)
        if op == "refilter" and audience is not None:
            body = {"filters": FILTERS[n % len(FILTERS)]} if n % 4 else {"mode": "manual"}
            if n % 4 == 1:
                body["mode"] = "smart"
            return lambda: self.request("PATCH", f"/v4/audiences/{audience[0]}", json=body)
        if op == "zone":
            body = {"timeZone": ZONES[n % len(ZONES)]}
            return lambda: self.request("PATCH", f"/v4/lists/{self.list_id}", json=body)
        if op == "restore" and audience is not None:
            path = f"/v4/audiences/{audience[0]}/versions/{n % 2 + 1}/restore"
            return lambda: self.request("POST", path)
        if op == "unaudience" and audience is not None:
            return lambda: self.request("DELETE", f"/v4/audiences/{audience[0]}")
        if op == "add" and audience is not None and contact is not None:
            body = {"contactIds": [contact]}
            return lambda: self.request("POST", f"/v4/audiences/{audience[0]}/members", json=body)
        if op == "remove" and audience is not None and contact is not None:
            return lambda: self.request("DELETE", f"/v4/audiences/{audience[0]}/members/{contact}")
        return None

    def record(self, op: str, response: httpx.Response) -> None:
        if response.status_code >= 300:
            return
        body = response.json()["data"]
        if op == "create" and "contact" in body:
            self.contacts.append(body["contact"]["id"])
        elif op == "delete":
            self.contacts.remove(body["contact"]["id"])
        elif op == "action":
            self.actions.append(body["action"]["id"])
        elif op == "unaction":
            self.actions.remove(body["action"]["id"])
        elif op == "audience":
            self.audiences.append((body["audience"]["id"], body["audience"]["mode"]))
        elif op == "unaudience":
            self.audiences = [a for a in self.audiences if a[0] != body["audience"]["id"]]


OPS = [
    "create",
    "create",
    "update",
    "delete",
    "action",
    "unaction",
    "audience",
    "refilter",
    "unaudience",
    "add",
    "remove",
    "duplicate",
    "zone",
    "restore",
    "clock",
]
STEPS = st.lists(
    st.tuples(st.sampled_from(OPS), st.integers(0, 11), st.integers(0, 5)), min_size=10, max_size=30
)


def run_sequence(api: ApiClient, hands: Hands, steps: list[tuple[str, int, int]]) -> None:
    tenant = make_tenant(api)
    world = World(tenant, hands)
    database: Database = api.app.state.db
    world.apply("create", 1)  # one contact to fail a duplicate against
    world.request("PATCH", f"/v4/contacts/{world.contacts[0]}", json={"email": "dup@example.com"})
    for op, n, k in steps:
        if op == "clock":
            hands.at += timedelta(hours=3 * n + k + 1)
            api.app.state.sweeper.run_once()
        else:
            world.apply(op, n, k)
        check_membership(database, world.list_id, hands.at)
    replay(tenant, database, world.list_id)


PROPERTY = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PROPERTY
@given(steps=STEPS)
def test_stored_membership_equals_live_evaluation_on_sqlite(
    sqlite_app: tuple[ApiClient, Hands], steps: list[tuple[str, int, int]]
) -> None:
    run_sequence(*sqlite_app, steps)


@pytest.mark.postgres
@settings(PROPERTY, max_examples=10)
@given(steps=STEPS)
def test_stored_membership_equals_live_evaluation_on_postgres(
    pg_app: tuple[ApiClient, Hands], steps: list[tuple[str, int, int]]
) -> None:
    run_sequence(*pg_app, steps)


@pytest.mark.postgres
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_concurrent_writers_keep_membership_and_the_feed_exact_on_postgres(
    pg_app: tuple[ApiClient, Hands], seed: int
) -> None:
    """Rounds of eight concurrent writes of every kind on one list, then the invariants."""
    api, hands = pg_app
    tenant = make_tenant(api)
    world = World(tenant, hands)
    database: Database = api.app.state.db
    rng = random.Random(seed)
    for n in range(6):
        world.apply("create", n)
    for n in range(3):
        world.apply("audience", n + 1)
    for _ in range(8):
        planned = []
        for _ in range(8):
            op, n, k = rng.choice(OPS[:-1]), rng.randrange(12), rng.randrange(6)
            call = world.call_for(op, n, k)
            if call is not None:
                planned.append((op, call))
        # The ApiClient's portal is blocking: each request is sent from a thread of its own.
        responses = _concurrently([call for _, call in planned])
        for (op, _), response in zip(planned, responses, strict=True):
            assert response.status_code < 500, response.text
            if op in ("delete", "unaction", "unaudience") and response.status_code == 404:
                continue  # a concurrent operation removed it first
            world.record(op, response)
        check_membership(database, world.list_id, hands.at)
    replay(tenant, database, world.list_id)


def _concurrently(calls: list[Callable[[], httpx.Response]]) -> list[httpx.Response]:
    results: list[httpx.Response | None] = [None] * len(calls)

    def work(index: int) -> None:
        results[index] = calls[index]()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [r for r in results if r is not None]
