"""Audiences that build in the background: a large list answers at once, `building`, with
progress; the members and their events follow when the build ends, exactly once.

"Large" is a setting (`audience_build_background_above`), so these lists hold a few contacts;
the scheduler's thread is off and each test moves the build itself, a chunk at a time
(`membership_builds.build_step`), so it asserts states and events, never durations. Every test runs
on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.db.engine import Database
from audiencefilter.service.domain import list_lock
from audiencefilter.service.domain.use_cases import membership_builds
from drills.receiver import Receiver

from ..waiting import wait_until
from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings
from .test_webhooks import LOCAL, new_hook, run_until, worker_of

ABOVE = 5
CHUNK = 3
RICH = {"points": {"gte": 10}}
NAMED_A = {"firstName": {"startsWith": "A"}}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    options: dict[str, Any] = {
        "audience_build_background_above": ABOVE,
        "audience_build_chunk": CHUNK,
        "membership_sweep_seconds": 0,
        "webhook_worker": False,
    }
    if request.param == "sqlite":
        return app_factory(sqlite_settings(tmp_path / "builds.db", **options))
    pg_migrated_database: Callable[[], str] = request.getfixturevalue("pg_migrated_database")
    return app_factory(url_settings(pg_migrated_database(), auto_migrate=True, **options))


@pytest.fixture
def tenant(api: ApiClient) -> Tenant:
    return make_tenant(api)


def _list(tenant: Tenant, people: list[tuple[str, str, int]]) -> tuple[str, dict[str, str]]:
    """A list of (email, firstName, points); its id and the contacts' ids by email."""
    lst = tenant.new_list()["id"]
    ids = {
        email: tenant.new_contact(lst, email, firstName=first, points=points)["id"]
        for email, first, points in people
    }
    return lst, ids


PEOPLE = [
    ("ann@example.com", "Ann", 50),
    ("bob@example.com", "Bob", 1),
    ("cat@example.com", "Cat", 12),
    ("dan@example.com", "Dan", 3),
    ("eve@example.com", "Eve", 30),
    ("fay@example.com", "Abe", 2),
    ("gus@example.com", "Gus", 0),
    ("hal@example.com", "Hal", 10),
]


def _step(tenant: Tenant) -> int | None:
    database: Database = tenant.client.app.state.db
    return membership_builds.build_step(database, CHUNK)


def _finish(tenant: Tenant) -> None:
    while _step(tenant) is not None:
        pass


def _membership_events(tenant: Tenant, list_id: str) -> list[tuple[str, str, str]]:
    """(type, contact, cause) of the list's audience.entered/left events, in order."""
    page = tenant.ok("GET", "/v4/events", params={"listId": list_id, "limit": 1000})
    return [
        (event["type"], event["contactId"], event["cause"])
        for event in page["events"]
        if event["type"] in ("audience.entered", "audience.left")
    ]


def _create(tenant: Tenant, list_id: str, filters: Any, **params: Any) -> dict[str, Any]:
    body = {"name": "Rich", "listId": list_id, "mode": "smart", "filters": filters}
    answer = tenant.ok("POST", "/v4/audiences", 201, json=body, params=params)
    return answer["audience"]  # type: ignore[no-any-return]


def _get(tenant: Tenant, audience_id: str) -> dict[str, Any]:
    return tenant.ok("GET", f"/v4/audiences/{audience_id}")["audience"]  # type: ignore[no-any-return]


def _emails(audience: dict[str, Any]) -> list[str]:
    return sorted(contact["email"] for contact in audience["subs"])


def test_a_large_list_answers_building_then_builds_in_chunks(tenant: Tenant) -> None:
    lst, ids = _list(tenant, PEOPLE)
    created = _create(tenant, lst, RICH)
    assert (created["status"], created["progress"]) == ("building", {"done": 0, "total": 8})
    assert created["subs"] == [] and created["filters"] is not None
    assert _membership_events(tenant, lst) == []

    assert _step(tenant) == 0
    seen = _get(tenant, created["id"])
    assert (seen["status"], seen["progress"]) == ("building", {"done": 3, "total": 8})
    listed = tenant.ok("GET", "/v4/audiences", params={"listId": lst})["audiences"]
    assert [(a["status"], a["progress"], a["subsCount"]) for a in listed] == [
        ("building", {"done": 3, "total": 8}, 0)
    ]

    # a write during the build judges no building audience, and the build's end counts it
    tenant.ok("PATCH", f"/v4/contacts/{ids['bob@example.com']}", json={"points": 99})
    tenant.ok("DELETE", f"/v4/contacts/{ids['ann@example.com']}")
    assert _membership_events(tenant, lst) == []

    _finish(tenant)
    built = _get(tenant, created["id"])
    assert (built["status"], built["progress"]) == ("built", None)
    expected = ["bob@example.com", "cat@example.com", "eve@example.com", "hal@example.com"]
    assert _emails(built) == expected
    entered = sorted(ids[email] for email in expected)
    events = _membership_events(tenant, lst)
    assert sorted(contact for _, contact, _ in events) == entered
    assert {(kind, cause) for kind, _, cause in events} == {
        ("audience.entered", "audience.created")
    }

    # built, it follows writes again
    tenant.ok("PATCH", f"/v4/contacts/{ids['dan@example.com']}", json={"points": 40})
    assert "dan@example.com" in _emails(_get(tenant, created["id"]))


def test_a_change_of_filter_while_building_restarts_cleanly(tenant: Tenant) -> None:
    lst, ids = _list(tenant, PEOPLE)
    created = _create(tenant, lst, RICH)
    assert _step(tenant) == 0  # some members of RICH staged
    changed = tenant.ok("PATCH", f"/v4/audiences/{created['id']}", json={"filters": NAMED_A})
    assert (changed["audience"]["status"], changed["audience"]["progress"]) == (
        "building",
        {"done": 0, "total": 8},
    )
    _finish(tenant)
    built = _get(tenant, created["id"])
    assert built["status"] == "built"
    assert _emails(built) == ["ann@example.com", "fay@example.com"]
    events = _membership_events(tenant, lst)
    assert sorted(events) == sorted(
        ("audience.entered", ids[email], "audience.updated")
        for email in ("ann@example.com", "fay@example.com")
    )


def test_small_lists_and_waiting_clients_get_the_audience_built(tenant: Tenant) -> None:
    small, small_ids = _list(tenant, PEOPLE[:ABOVE])
    answer = _create(tenant, small, RICH)
    assert (answer["status"], answer["progress"]) == ("built", None)
    assert _emails(answer) == ["ann@example.com", "cat@example.com", "eve@example.com"]

    large, _ = _list(tenant, PEOPLE)
    waited = _create(tenant, large, RICH, wait="true")
    assert (waited["status"], waited["progress"]) == ("built", None)
    assert len(waited["subs"]) == 4 and len(_membership_events(tenant, large)) == 4
    assert _step(tenant) is None  # nothing was left to build


def test_a_filter_change_on_a_large_built_audience_moves_members_once_built(
    tenant: Tenant,
) -> None:
    lst, ids = _list(tenant, PEOPLE)
    audience = _create(tenant, lst, RICH, wait="true")
    before = _membership_events(tenant, lst)
    changed = tenant.ok("PATCH", f"/v4/audiences/{audience['id']}", json={"filters": NAMED_A})
    assert changed["audience"]["status"] == "building"
    assert _membership_events(tenant, lst) == before  # the older members stay until built
    _finish(tenant)
    assert _emails(_get(tenant, audience["id"])) == ["ann@example.com", "fay@example.com"]
    after = _membership_events(tenant, lst)[len(before) :]
    left = {"cat@example.com", "eve@example.com", "hal@example.com"}
    assert sorted(after) == sorted(
        [("audience.left", ids[email], "audience.updated") for email in left]
        + [("audience.entered", ids["fay@example.com"], "audience.updated")]
    )


def test_a_building_audience_deleted_or_made_manual_ends_its_build(tenant: Tenant) -> None:
    lst, _ = _list(tenant, PEOPLE)
    deleted = _create(tenant, lst, RICH)
    manual = _create(tenant, lst, RICH)
    gone = tenant.ok("DELETE", f"/v4/audiences/{deleted['id']}")["audience"]
    assert (gone["status"], gone["progress"]) == ("building", {"done": 0, "total": 8})
    made = tenant.ok("PATCH", f"/v4/audiences/{manual['id']}", json={"mode": "manual"})
    assert (made["audience"]["status"], made["audience"]["subs"]) == ("built", [])
    assert _step(tenant) is None
    assert _membership_events(tenant, lst) == []


def test_the_schedulers_thread_builds_it(
    tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> None:
    """The service's own machinery runs the build: the membership scheduler's thread."""
    settings = sqlite_settings(
        tmp_path / "threaded.db",
        audience_build_background_above=ABOVE,
        audience_build_chunk=CHUNK,
        membership_sweep_seconds=0.05,
        webhook_worker=False,
    )
    tenant = make_tenant(app_factory(settings))
    lst, _ = _list(tenant, PEOPLE)
    created = _create(tenant, lst, RICH)
    assert created["status"] == "building"
    built = wait_until(
        lambda: (found := _get(tenant, created["id"]))["status"] == "built" and found,
        "the background build",
    )
    assert _emails(built) == [
        "ann@example.com",
        "cat@example.com",
        "eve@example.com",
        "hal@example.com",
    ]
    assert len(_membership_events(tenant, lst)) == 4


def test_webhooks_follow_once_built(tmp_path: Path, app_factory: Callable[..., ApiClient]) -> None:
    settings = sqlite_settings(
        tmp_path / "hooks.db",
        audience_build_background_above=ABOVE,
        audience_build_chunk=CHUNK,
        membership_sweep_seconds=0,
        webhook_allowed_networks=LOCAL,
        webhook_worker=False,
    )
    api = app_factory(settings)
    tenant = make_tenant(api)
    lst, ids = _list(tenant, PEOPLE)
    receiver = Receiver()
    try:
        new_hook(tenant, lst, receiver.url, eventTypes=["audience.entered"])
        created = _create(tenant, lst, RICH)
        assert _step(tenant) == 0
        run_until(api, lambda: worker_of(api).run_once() == 0)
        assert receiver.snapshot() == []  # building: nothing to send yet
        _finish(tenant)
        run_until(api, lambda: len(receiver.succeeded()) >= 4)
        payloads = [item.payload()["data"] for item in receiver.succeeded()]
        assert {p["audienceId"] for p in payloads} == {created["id"]}
        expected = ("ann@example.com", "cat@example.com", "eve@example.com", "hal@example.com")
        assert sorted(p["contactId"] for p in payloads) == sorted(ids[e] for e in expected)
    finally:
        receiver.close()


def _replay(tenant: Tenant, list_id: str, audience_id: str) -> set[str]:
    """The audience's members after every move of its feed; fails on a move made twice
    (entering as a member, leaving as none)."""
    members: set[str] = set()
    page = tenant.ok("GET", "/v4/events", params={"listId": list_id, "limit": 1000})
    for event in page["events"]:
        if event.get("audienceId") != audience_id:
            continue
        if event["type"] == "audience.entered":
            assert event["contactId"] not in members, event
            members.add(event["contactId"])
        elif event["type"] == "audience.left":
            assert event["contactId"] in members, event
            members.remove(event["contactId"])
    return members


def test_a_change_built_in_the_background_stops_turns_under_way(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change stored in turns (`?wait=true`) overtaken between two turns by changes built in
    the background (back to its own filter, even) stores no further turn: the build stores the
    members, each move once, and no unfinished mark is left to store the turns' snapshot."""
    from audiencefilter.service.db.models import Audience, AudienceDue
    from audiencefilter.service.domain import write_effects
    from audiencefilter.service.domain.membership import due
    from audiencefilter.service.domain.use_cases import membership_clock, membership_turns
    from audiencefilter.service.ground import clock

    monkeypatch.setattr(membership_turns, "PAIRS_PER_TURN", 2)  # 8 contacts: several turns
    lst, ids = _list(tenant, PEOPLE)
    audience_id = _create(tenant, lst, RICH, wait="true")["id"]
    rich = {ids[e] for e in ("ann@example.com", "cat@example.com", "eve@example.com")}
    rich.add(ids["hal@example.com"])
    assert {c["id"] for c in _get(tenant, audience_id)["subs"]} == rich
    named_a = {ids["ann@example.com"], ids["fay@example.com"]}
    database: Database = tenant.client.app.state.db
    with database.reading() as session:
        rich_stored = session.get(Audience, audience_id).filters  # type: ignore[union-attr]
    real = database.transaction
    opened = [0]
    seen: list[int] = []

    def restart_in_background(filters: Any) -> None:
        with real() as session:
            audience = session.get(Audience, audience_id)
            assert audience is not None
            list_lock.take(session, audience.listId)
            audience.filters = filters
            session.flush()
            write_effects.audience_updated(session, audience, membership=True, background=True)

    def transaction() -> Any:
        opened[0] += 1
        if opened[0] == 3:  # the PATCH's write, its first turn, then this
            with database.reading() as session:
                named_a_stored = session.get(Audience, audience_id).filters  # type: ignore[union-attr]
            restart_in_background(rich_stored)
            restart_in_background(named_a_stored)  # the turns' own filter, built again
            seen.append(len(_membership_events(tenant, lst)))
        return real()

    monkeypatch.setattr(database, "transaction", transaction)
    answer = tenant.ok(
        "PATCH", f"/v4/audiences/{audience_id}", json={"filters": NAMED_A}, params={"wait": "true"}
    )
    monkeypatch.undo()
    assert seen, "the background changes did not come between two turns"
    assert answer["audience"]["status"] == "building"
    assert len(_membership_events(tenant, lst)) == seen[0]  # no turn after the build's start
    with database.reading() as session:
        assert session.get(AudienceDue, audience_id) is None  # no unfinished mark
    _finish(tenant)
    assert {c["id"] for c in _get(tenant, audience_id)["subs"]} == named_a
    assert _replay(tenant, lst, audience_id) == named_a
    later = clock.now() + 2 * due.RESUME_AFTER
    with clock.using(lambda: later):
        assert membership_clock.run_due(database) == 0


def test_a_change_stored_in_turns_ends_a_build_under_way(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build under way, then a change sent with `?wait=true`: its members are stored in turns
    and the build ends, so its older chunks never store the filter it was building."""
    from audiencefilter.service.domain.use_cases import membership_turns

    monkeypatch.setattr(membership_turns, "PAIRS_PER_TURN", 2)
    lst, ids = _list(tenant, PEOPLE)
    audience_id = _create(tenant, lst, RICH, wait="true")["id"]
    rich = {ids[e] for e in ("ann@example.com", "cat@example.com", "eve@example.com")}
    rich.add(ids["hal@example.com"])
    assert {c["id"] for c in _get(tenant, audience_id)["subs"]} == rich
    changed = tenant.ok("PATCH", f"/v4/audiences/{audience_id}", json={"filters": NAMED_A})
    assert changed["audience"]["status"] == "building"
    assert _step(tenant) == 0  # a chunk of NAMED_A staged
    poor = {"points": {"lt": 3}}
    waited = tenant.ok(
        "PATCH", f"/v4/audiences/{audience_id}", json={"filters": poor}, params={"wait": "true"}
    )
    assert waited["audience"]["status"] == "built"
    expected = {ids[e] for e in ("bob@example.com", "fay@example.com", "gus@example.com")}
    assert {c["id"] for c in waited["audience"]["subs"]} == expected
    assert _step(tenant) is None  # the build ended
    assert _replay(tenant, lst, audience_id) == expected


def test_a_builds_end_stores_its_members_in_bounded_turns(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: the end of a build stored the whole difference in one transaction (a hundred
    thousand members at once on a large list). Now in turns of `PAIRS_PER_TURN` pairs, the
    audience `building` until the last: 4 members, 2 a turn, are 2 transactions of members
    between the one that ends the judging and the two that end the build."""
    from audiencefilter.service.db.write_meter import WriteMeter
    from audiencefilter.service.domain.use_cases import membership_turns

    from .test_write_turns import ROWS_PER_PAIR, ROWS_PER_TURN_BESIDES, _between_turns

    monkeypatch.setattr(membership_turns, "PAIRS_PER_TURN", 2)
    lst, ids = _list(tenant, PEOPLE)
    created = _create(tenant, lst, RICH)
    for _ in range(3):  # 8 contacts, 3 a chunk: staged
        assert _step(tenant) == 0
    seen: list[dict[str, Any]] = []
    database: Database = tenant.client.app.state.db
    with (
        WriteMeter(database.engine) as meter,
        _between_turns(tenant.client, 3, lambda: seen.append(_get(tenant, created["id"]))),
    ):
        assert _step(tenant) == 4
    committed = [record for record in meter.records if record.committed]
    assert len(committed) == 1 + 2 + 2, committed
    assert meter.largest.rows <= 2 * ROWS_PER_PAIR + ROWS_PER_TURN_BESIDES, meter.largest
    assert (seen[0]["status"], len(seen[0]["subs"])) == ("building", 2)
    built = _get(tenant, created["id"])
    assert (built["status"], built["progress"]) == ("built", None)
    rich = ["ann@example.com", "cat@example.com", "eve@example.com", "hal@example.com"]
    assert _emails(built) == rich
    events = _membership_events(tenant, lst)
    assert sorted(contact for _, contact, _ in events) == sorted(ids[email] for email in rich)
    assert _step(tenant) is None


def test_builds_take_turns_across_accounts(api: ApiClient, tenant: Tenant) -> None:
    """Four builds of account A are queued, then one of account B: B's build ends first, with
    A's builds having taken about as many steps as B's own meanwhile (turns by account), not
    after all of A's (oldest first)."""
    queued = [_create(tenant, _list(tenant, PEOPLE)[0], RICH)["id"] for _ in range(4)]
    other = make_tenant(api)
    late = _create(other, _list(other, PEOPLE)[0], RICH)["id"]
    builder = api.app.state.sweeper.builds
    ended: list[str] = []
    steps = 0
    while builder.step() is not None:
        steps += 1
        for audience_id, owner in [*((a, tenant) for a in queued), (late, other)]:
            if audience_id not in ended and _get(owner, audience_id)["status"] == "built":
                ended.append(audience_id)
        if ended == [late]:
            break
    # B's build takes its chunks and the step that ends it; A's builds one step between two
    own = -(-len(PEOPLE) // CHUNK) + 1
    assert ended == [late] and steps <= 2 * own, (steps, own)
    assert all(_get(tenant, a)["status"] == "building" for a in queued)
    while builder.step() is not None:
        pass
    assert all(_get(tenant, a)["status"] == "built" for a in queued)


def test_a_built_calendar_audience_waits_for_its_next_step(tenant: Tenant) -> None:
    """A filter of calendar values only, once built, is looked at again at its next step after
    the build's evaluation, not at once: the scheduler evaluating a large list again right
    after its build held every account's clock-driven changes for as long."""
    from sqlalchemy import select

    from audiencefilter.service.db.models import AudienceDue

    lst, _ = _list(tenant, PEOPLE)
    created = _create(tenant, lst, {"createdAt": {"within": {"this": "day"}}})
    assert created["status"] == "building"
    _finish(tenant)
    assert _get(tenant, created["id"])["status"] == "built"
    database: Database = tenant.client.app.state.db
    with database.reading() as session:
        due = session.scalar(
            select(AudienceDue.dueAt).where(AudienceDue.audienceId == created["id"])
        )
    assert due is not None
    stamp = due.replace(tzinfo=UTC) if due.tzinfo is None else due
    assert stamp > datetime.now(UTC) and (stamp.hour, stamp.minute, stamp.second) == (0, 0, 0)
