"""Property: time moves stored membership exactly when it should, with no periodic sweep.

Random contacts, actions and time-dependent audiences (durations, calendar boundaries in
zones with daylight saving, anniversaries, behaviour windows) run through the real
application on a clock of its own; the clock then jumps by random amounts, across
daylight-saving transitions, and only what the scheduler finds due is brought up to it
(`run_due`). After every jump the stored members equal a full evaluation at that instant, a
full sweep finds nothing left to change, and at the end the feed replays the stored state.
"""

from __future__ import annotations

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
from audiencefilter.service.db.models import (
    Audience,
    AudienceDue,
    Contact,
    Membership,
    MembershipDue,
)
from audiencefilter.service.domain import relations
from audiencefilter.service.domain.audience_filters import StoredAudience
from audiencefilter.service.domain.membership import records
from audiencefilter.service.domain.use_cases.membership_clock import sweep

from .conftest import ApiClient, make_tenant, sqlite_settings, url_settings
from .hands import Hands
from .test_membership_properties import World, replay

CLOCK_FILTERS: list[dict[str, Any]] = [
    {"createdAt": {"gte": {"ago": "PT36H"}}},
    {"createdAt": {"lt": {"ago": "P1D"}}, "points": {"gte": 0}},
    {"createdAt": {"within": {"this": "day", "timeZone": "Europe/Paris"}}},
    {"createdAt": {"anniversary": {"this": "week", "timeZone": "America/Santiago"}}},
    {"createdAt": {"gte": {"startOf": "week", "offset": -1, "timeZone": "Europe/Paris"}}},
    {"actions": {"where": {"createdAt": {"gte": {"ago": "P2D"}}}, "count": {"gte": 2}}},
    {"actions": {"none": {"createdAt": {"gte": {"ago": "PT12H"}}}}},
    {"OR": [{"createdAt": {"gte": {"ago": "PT6H"}}}, {"points": {"gte": 100}}]},
    {"NOT": {"createdAt": {"gte": {"ago": "P1M"}}}},
]
# Around the transitions of Europe/Paris (30 March 2031) and America/Santiago (5 April 2031).
STARTS = (datetime(2031, 3, 28, 21, tzinfo=UTC), datetime(2031, 4, 3, 23, 30, tzinfo=UTC))


class ClockWorld(World):
    """The operations of the membership properties, with time-dependent audiences."""

    def call_for(self, op: str, n: int, k: int = 0) -> Callable[[], httpx.Response] | None:
        if op == "audience":
            flt = CLOCK_FILTERS[n % len(CLOCK_FILTERS)]
            body = {"name": f"T{n}", "listId": self.list_id, "filters": flt}
            return lambda: self.request("POST", "/v4/audiences", json=body)
        return super().call_for(op, n, k)


def _app(settings_: Any, start: datetime) -> tuple[ApiClient, Hands]:
    hands = Hands(start)
    return ApiClient(create_app(settings_, clock=hands)), hands


@pytest.fixture(scope="module")
def sqlite_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiClient, Hands]]:
    path = tmp_path_factory.mktemp("clock") / "clock.db"
    api, hands = _app(sqlite_settings(path), STARTS[0])
    yield api, hands
    api.close()


@pytest.fixture(scope="module")
def pg_app(pg_migrated_database: Callable[[], str]) -> Iterator[tuple[ApiClient, Hands]]:
    api, hands = _app(url_settings(pg_migrated_database(), auto_migrate=True), STARTS[1])
    yield api, hands
    api.close()


OPS = ["create", "create", "create", "update", "action", "action", "audience", "audience"]
STEPS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(OPS), st.integers(0, 17), st.integers(0, 5)),
        # A jump of minutes to four days, in minutes.
        st.tuples(st.just("clock"), st.integers(1, 4 * 24 * 60), st.just(0)),
    ),
    min_size=6,
    max_size=16,
)


def run_sequence(api: ApiClient, hands: Hands, steps: list[tuple[str, int, int]]) -> None:
    tenant = make_tenant(api)
    world = ClockWorld(tenant, hands)
    database: Database = api.app.state.db
    for op, n, k in steps:
        if op == "clock":
            hands.at += timedelta(minutes=n)
            api.app.state.sweeper.run_once()
            check_membership(database, world.list_id, hands.at)
            assert _full_sweep(api, database) == 0  # nothing was left for a sweep to do
            _nothing_due(database, hands.at)
        else:
            world.apply(op, n, k)
    replay(tenant, database, world.list_id)


def check_membership(database: Database, list_id: str, now: datetime) -> None:
    """Stored rows = SQL evaluation = in-memory evaluation (related rows attached) at `now`."""
    with database.reading() as session:
        audiences = list(session.scalars(select(Audience).where(Audience.listId == list_id)))
        ids = list(session.scalars(select(Contact.id).where(Contact.listId == list_id)))
        for audience in audiences:
            flt = StoredAudience.of(audience).flt
            assert flt is not None
            stored = set(
                session.scalars(
                    select(Membership.contactId).where(Membership.audienceId == audience.id)
                )
            )
            condition = relations.condition(flt, now)
            in_sql = set(
                session.scalars(select(Contact.id).where(Contact.listId == list_id, condition))
            )
            rows, _ = records.records(session, ids, [flt])
            in_memory = {r["id"] for r in rows if flt.matches(r, now=now)}
            assert in_sql == in_memory, audience.filters
            assert stored == in_sql, (audience.filters, stored ^ in_sql, now)


def _full_sweep(api: ApiClient, database: Database) -> int:
    from audiencefilter.service.ground import clock

    with clock.using(api.app.state.sweeper.clock):
        return sweep(database)


def _nothing_due(database: Database, now: datetime) -> None:
    with database.reading() as session:
        for table in (AudienceDue, MembershipDue):
            due = list(session.scalars(select(table.dueAt)))
            assert all(as_aware(at) > now for at in due), (table.__tablename__, due, now)


def as_aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


PROPERTY = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PROPERTY
@given(steps=STEPS)
def test_time_moves_membership_exactly_on_sqlite(
    sqlite_app: tuple[ApiClient, Hands], steps: list[tuple[str, int, int]]
) -> None:
    run_sequence(*sqlite_app, steps)


@pytest.mark.postgres
@settings(PROPERTY, max_examples=5)
@given(steps=STEPS)
def test_time_moves_membership_exactly_on_postgres(
    pg_app: tuple[ApiClient, Hands], steps: list[tuple[str, int, int]]
) -> None:
    run_sequence(*pg_app, steps)
