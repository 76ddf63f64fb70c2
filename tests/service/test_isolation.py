"""Issue 26, "one account's work stalls another's writes": heavy evaluation of an audience's
members runs outside the write transaction, an action reads none of its contact's history, and
creating an audience measures its filter once.

Every test here counts (calls, rows, statements, work done under the write lock); none times.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event

from audiencefilter import filter as library_filter

from .conftest import Tenant


def _count_costings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each measure of a filter's cost (the library's walker, `Filter.cost`) appends to the
    list returned."""
    made: list[int] = []
    real = library_filter.cost

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(library_filter, "cost", counting)
    return made


def test_creating_a_smart_audience_measures_its_filter_once(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was measured three times: the budget of one filter, the weight of the cached stored
    form, and the budget of the list; the cost measured first now goes through."""
    list_id = tenant.new_list()["id"]
    costings = _count_costings(monkeypatch)
    where: dict[str, Any] = {"points": {"gte": 81731}, "email": {"endsWith": "@cost.example"}}
    body = {"listId": list_id, "name": "once", "mode": "smart", "filters": where}
    tenant.ok("POST", "/v4/audiences", 201, json=body)
    assert len(costings) == 1


def _give_actions(tenant: Tenant, contact_id: str, count: int) -> None:
    """`count` actions of the contact, written straight to the database (their points too)."""
    from audiencefilter.service.db.models import Action, Contact

    database = tenant.client.app.state.db
    with database.transaction() as session:
        session.add_all(Action(name="visit", increase=1, subId=contact_id) for _ in range(count))
        session.get(Contact, contact_id).points += count


def _count_action_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of action rows each in-memory load of related rows brought into Python."""
    from audiencefilter.service.domain import relations

    loaded: list[int] = []
    real = relations.related_rows

    def counting(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        loaded.append(sum(len(rows) for rows in found.get(relations.ACTIONS, {}).values()))
        return found

    monkeypatch.setattr(relations, "related_rows", counting)
    return loaded


def test_an_action_loads_none_of_its_contacts_history(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each action reloaded every action of its contact to judge the list's behaviour
    audiences in memory (4x the cost at 1,000 actions); they are judged in SQL now."""
    list_id = tenant.new_list()["id"]
    contact = tenant.new_contact(list_id, "busy@example.com")
    _give_actions(tenant, contact["id"], 1000)
    regulars = {"name": "regulars", "listId": list_id, "filtersText": "count(actions) >= 1001"}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=regulars)["audience"]
    loaded = _count_action_rows(monkeypatch)
    action = {"name": "visit", "increase": 1, "subId": contact["id"]}
    tenant.ok("POST", "/v4/actions", 201, json=action)
    assert sum(loaded) == 0
    members = tenant.ok("GET", f"/v4/audiences/{audience['id']}")["audience"]["subs"]
    assert [member["id"] for member in members] == [contact["id"]]


MARKER = "stalls-nobody"


@contextmanager
def _probing_the_write_lock(
    tenant: Tenant, marker: str, during: Callable[[], None] | None = None
) -> Iterator[list[bool]]:
    """Whenever a select bound to `marker` (the filter being evaluated) is about to run,
    another connection tries to take SQLite's write lock at once (no busy wait), the way
    another account's write would; the list says whether each try got it. `during` then runs
    a concurrent write of the test's own."""
    engine = tenant.client.app.state.db.engine
    path = engine.url.database
    tries: list[bool] = []

    def probe(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if not statement.lstrip().upper().startswith("SELECT") or marker not in repr(parameters):
            return
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            tries.append(True)
        except sqlite3.OperationalError:
            tries.append(False)
        finally:
            other.close()
        if during is not None and len(tries) == 1 and tries[0]:
            during()

    event.listen(engine, "before_cursor_execute", probe)
    try:
        yield tries
    finally:
        event.remove(engine, "before_cursor_execute", probe)


def _members(tenant: Tenant, audience_id: str) -> set[str]:
    subs = tenant.ok("GET", f"/v4/audiences/{audience_id}")["audience"]["subs"]
    return {contact["id"] for contact in subs}


def test_creating_an_audience_evaluates_its_members_without_the_write_lock(
    tenant: Tenant,
) -> None:
    """Creating a smart audience ran its filter over the whole list inside `BEGIN IMMEDIATE`:
    on SQLite no other account could write meanwhile (11-12 s measured)."""
    list_id = tenant.new_list()["id"]
    inside = tenant.new_contact(list_id, "in@example.com", firstName=MARKER)
    tenant.new_contact(list_id, "out@example.com", firstName="someone")
    body = {"name": "heavy", "listId": list_id, "filters": {"firstName": MARKER}}
    with _probing_the_write_lock(tenant, MARKER) as tries:
        audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    assert tries and all(tries), tries
    assert _members(tenant, audience["id"]) == {inside["id"]}


def test_contacts_written_during_the_evaluation_are_judged_again_under_the_lock(
    tenant: Tenant,
) -> None:
    """The snapshot's answer is stored for the contacts nobody wrote since; a contact updated
    (an event) or given points by an action (no event) meanwhile is judged again, so the
    stored members are exact when the audience commits, and its events complete."""
    from audiencefilter.service.db.models import Contact
    from audiencefilter.service.domain import events, list_write
    from audiencefilter.service.domain.use_cases import actions, unit

    list_id = tenant.new_list()["id"]
    renamed = tenant.new_contact(list_id, "renamed@example.com", firstName="someone")
    scorer = tenant.new_contact(list_id, "scorer@example.com", firstName=MARKER, points=1)
    left_alone = tenant.new_contact(list_id, "alone@example.com", firstName=MARKER, points=50)
    database = tenant.client.app.state.db

    def meanwhile() -> None:
        with database.transaction() as session:
            session.get(Contact, renamed["id"]).firstName = MARKER
            session.get(Contact, renamed["id"]).points = 99
            session.flush()
            write = list_write.for_contact(session, tenant.account_id, renamed["id"])
            write.wrote(updated=[(renamed["id"], ["firstName", "points"])])
            write.finish(events.CAUSE_CONTACT_UPDATED)
        action = {"subId": scorer["id"], "name": "visit", "increase": 69}  # no event
        actions.create(tenant.account_id, action, unit.InTransaction(database))

    where = {"firstName": MARKER, "points": {"gte": 10}}
    body = {"name": "scored", "listId": list_id, "filters": where}
    with _probing_the_write_lock(tenant, MARKER, meanwhile) as tries:
        audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    assert tries and all(tries), tries
    expected = {renamed["id"], scorer["id"], left_alone["id"]}
    assert _members(tenant, audience["id"]) == expected
    feed = tenant.ok("GET", f"/v4/events?listId={list_id}&limit=1000")["events"]
    entered = {e["contactId"] for e in feed if e["type"] == "audience.entered"}
    assert entered == expected


@pytest.mark.parametrize("meanwhile", ["nothing", "an action created", "an action deleted"])
def test_the_points_are_read_again_only_when_an_action_landed_since_the_snapshot(
    on_both: Tenant, monkeypatch: pytest.MonkeyPatch, meanwhile: str
) -> None:
    """An action changes a contact's points and appends no event, so a snapshot read every
    contact's points and read them all again under the lock to find it (54 ms a reading over
    200,000 contacts on PostgreSQL). Actions now count themselves on the list's counter row:
    the second reading is made when that count moved, and then finds the contact; otherwise
    it is not made at all. The action lands between the snapshot and its store."""
    from audiencefilter.service.domain.membership import snapshot
    from audiencefilter.service.domain.use_cases import actions, unit

    tenant = on_both
    list_id = tenant.new_list()["id"]
    database = tenant.client.app.state.db
    low = tenant.new_contact(list_id, "low@example.com", points=1)
    high = tenant.new_contact(list_id, "high@example.com", points=20)
    given = {"subId": high["id"], "name": "visit", "increase": 15}
    given_id = tenant.ok("POST", "/v4/actions", 201, json=given)["action"]["id"]
    readings: list[str] = []
    real_points, real_evaluate = snapshot._points, snapshot.evaluate

    def points(session: Any, list_id: str) -> str:
        readings.append(list_id)
        return real_points(session, list_id)

    def evaluate(*args: Any) -> snapshot.Snapshot:
        taken = real_evaluate(*args)
        if meanwhile == "an action created":  # low: 1 + 30 points, now a member
            action = {"subId": low["id"], "name": "visit", "increase": 30}
            actions.create(tenant.account_id, action, unit.InTransaction(database))
        elif meanwhile == "an action deleted":  # high: 35 - 15 points, no longer a member
            actions.remove(database, tenant.account_id, given_id)
        return taken

    monkeypatch.setattr(snapshot, "_points", points)
    monkeypatch.setattr(snapshot, "evaluate", evaluate)
    body = {"name": "scored", "listId": list_id, "filters": {"points": {"gte": 25}}}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    expected = {
        "nothing": {high["id"]},
        "an action created": {low["id"], high["id"]},
        "an action deleted": set(),
    }[meanwhile]
    assert _members(tenant, audience["id"]) == expected
    assert len(readings) == (1 if meanwhile == "nothing" else 2), readings
    feed = tenant.ok("GET", f"/v4/events?listId={list_id}&limit=1000")["events"]
    entered = {e["contactId"] for e in feed if e["type"] == "audience.entered"}
    assert entered == expected


def test_patching_the_root_of_a_chain_evaluates_no_audience_over_the_list_under_the_lock(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Patching the root of a chain of audiences ran one SQL set difference over the whole
    list per audience of the chain, all under the lock (12.5 s for 100). The root is evaluated
    before the lock; the chain is judged again only for the contacts whose membership moved."""
    from audiencefilter.service.domain.membership import store

    list_id = tenant.new_list()["id"]
    ids = [tenant.new_contact(list_id, f"c{i}@example.com", points=i)["id"] for i in range(6)]
    root = tenant.ok(
        "POST",
        "/v4/audiences",
        201,
        json={"name": "root", "listId": list_id, "filtersText": "points >= 3"},
    )["audience"]
    chain = [root["id"]]
    for index in range(4):
        where = {"audiences": {"some": {"id": chain[-1]}}}
        link = {"name": f"link{index}", "listId": list_id, "filters": where}
        chain.append(tenant.ok("POST", "/v4/audiences", 201, json=link)["audience"]["id"])
    whole_list: list[str] = []
    real = store._refresh

    def counting(session: Any, audience: Any, *args: Any) -> int:
        whole_list.append(audience.id)
        return int(real(session, audience, *args))

    monkeypatch.setattr(store, "_refresh", counting)
    patch = {"filters": {"points": {"gte": 4}, "NOT": {"email": {"endsWith": MARKER}}}}
    with _probing_the_write_lock(tenant, MARKER) as tries:
        tenant.ok("PATCH", f"/v4/audiences/{root['id']}", json=patch)
    assert whole_list == []
    assert tries and all(tries), tries
    for audience_id in chain:
        assert _members(tenant, audience_id) == set(ids[4:])


def test_the_clock_sweep_evaluates_without_the_write_lock(tenant: Tenant) -> None:
    """The sweep refreshed each time-dependent audience (hundreds of zoned anniversaries
    within budget) inside `BEGIN IMMEDIATE`, every minute."""
    list_id = tenant.new_list()["id"]
    contact = tenant.new_contact(list_id, "new@example.com", firstName=MARKER)
    recent = {"firstName": MARKER, "createdAt": {"gte": {"ago": "P1D"}}}
    body = {"name": "recent", "listId": list_id, "filters": recent}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    assert _members(tenant, audience["id"]) == {contact["id"]}
    with _probing_the_write_lock(tenant, MARKER) as tries:
        tenant.client.app.state.sweeper.run_once()
    assert tries and all(tries), tries


def test_an_action_of_a_list_without_a_counter_row_makes_one_and_counts_itself(
    on_both: Tenant,
) -> None:
    """Lists made before the counter existed have no row: an action's count makes it (as an
    advance does), so a snapshot taken before it (a count of 0) sees the count move."""
    from sqlalchemy import delete

    from audiencefilter.service.db.models import EventHead
    from audiencefilter.service.domain import list_lock

    tenant = on_both
    list_id = tenant.new_list()["id"]
    contact = tenant.new_contact(list_id, "one@example.com", points=1)
    database = tenant.client.app.state.db
    with database.transaction() as session:
        session.execute(delete(EventHead).where(EventHead.listId == list_id))
    with database.reading() as session:
        assert list_lock.heads(session, list_id) == (0, 0, 0)
    action = {"subId": contact["id"], "name": "visit", "increase": 2}
    tenant.ok("POST", "/v4/actions", 201, json=action)
    tenant.ok("POST", "/v4/actions", 201, json=action)
    with database.reading() as session:
        assert list_lock.heads(session, list_id).acted == 2
