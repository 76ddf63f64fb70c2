"""Concurrent `PATCH /v4/contacts/{id}` share turns (PostgreSQL, `use_cases/contacts.py`).

Eight writers each update their own five contacts fifty times (random `points` and `country`,
which the audiences read), at once through the app in process with the setting
`shared_import_turns` on, and one after another on a second database with it off (every PATCH
its own transaction, the one-at-a-time path). Then:

- the concurrent run took its list's lock fewer times than it answered PATCHes (each lock is a
  turn's transaction, counted on the engine; the one-at-a-time run takes it once a PATCH);
- every answer of a contact, in the order its writer sent them, carries the fields and the
  audiences the one-at-a-time run answered (its rank depends on the other writers' rows at
  that instant, which concurrent writers make differ, so it is not compared);
- the final rows, the stored members and the feed's multiset of events per contact are the
  same; the feed's positions run 1, 2, 3... with no gap, and it replays to the stored members
  with no pair moved twice in a row.

No timing is asserted: the writers are only concurrent, and the lock count shows the turns.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import event, select

from audiencefilter.service.db.models import Event
from audiencefilter.service.domain import list_lock
from audiencefilter.service.domain.use_cases import contacts

from .conftest import ApiClient, Tenant, make_tenant, url_settings
from .test_write_turn_races import _replayed
from .test_write_turns import _feed, _members

pytestmark = pytest.mark.postgres

FILTERS = {
    "rich": "points >= 100",
    "french": 'country = "FR"',
    "rich-german": 'points >= 50 AND country = "DE"',
    "poor": "points < 20",
}
WRITERS = 8
CONTACTS_EACH = 5
PATCHES_EACH = 50
WAIT = 300.0
COUNTRIES = ("FR", "DE", "IT")


def _plan() -> list[list[tuple[int, dict[str, Any]]]]:
    """Each writer's PATCHes: (the index of its contact, the fields sent), in order."""
    draw = random.Random(52)
    plans = []
    for writer in range(WRITERS):
        mine = range(writer * CONTACTS_EACH, (writer + 1) * CONTACTS_EACH)
        plans.append(
            [
                (
                    draw.choice(mine),
                    {"points": draw.randrange(200), "country": draw.choice(COUNTRIES)},
                )
                for _ in range(PATCHES_EACH)
            ]
        )
    return plans


def _setup(api: ApiClient) -> tuple[Tenant, str, list[str], dict[str, str]]:
    """The list of the writers' contacts, their ids, and the audiences' names by id."""
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    rows = [
        {"email": f"w{i}@patch.test", "points": i, "country": "DE"}
        for i in range(WRITERS * CONTACTS_EACH)
    ]
    path = f"/v4/contacts/import?listId={list_id}&mode=create"
    results = tenant.ok("POST", path, json=rows)["results"]
    ids = [result["id"] for result in sorted(results, key=lambda r: r["row"])]
    names = {}
    for name, text in FILTERS.items():
        body = {"name": name, "listId": list_id, "filtersText": text}
        names[tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]] = name
    return tenant, list_id, ids, names


def _locks(api: ApiClient) -> list[int]:
    """Counts, from now on, the statements of the app's engine that take a list's lock."""
    counted = [0]

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "pg_advisory_xact_lock(" in statement:
            counted[0] += 1

    event.listen(api.app.state.db.engine, "before_cursor_execute", seen)
    return counted


def _answer(contact: dict[str, Any], names: dict[str, str]) -> tuple[Any, ...]:
    audiences = sorted(names[a["id"]] for a in contact["audiences"])
    return (contact["points"], contact["country"], tuple(audiences))


def _run(
    tenant: Tenant, ids: list[str], names: dict[str, str], at_once: bool
) -> dict[int, list[tuple[Any, ...]]]:
    """Sends the plan, each writer in its thread (`at_once`) or one writer after another;
    each contact's answers in order."""
    answers: dict[int, list[tuple[Any, ...]]] = {i: [] for i in range(len(ids))}
    failures: list[str] = []

    def writer(plan: list[tuple[int, dict[str, Any]]]) -> None:
        for index, sent in plan:
            response = tenant.call("PATCH", f"/v4/contacts/{ids[index]}", json=sent)
            if response.status_code != 200:
                failures.append(response.text)
                return
            contact = response.json()["data"]["contact"]
            assert contact["id"] == ids[index]
            answers[index].append(_answer(contact, names))

    plans = _plan()
    if at_once:
        threads = [threading.Thread(target=writer, args=(plan,), daemon=True) for plan in plans]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
            assert not thread.is_alive(), "a writer never finished"
    else:
        for plan in plans:
            writer(plan)
    assert failures == []
    return answers


def _state(tenant: Tenant, list_id: str, ids: list[str], names: dict[str, str]) -> tuple[Any, ...]:
    """The final rows, the stored members and the feed's events per contact (by index)."""
    index = {contact_id: i for i, contact_id in enumerate(ids)}
    contacts = tenant.ok("GET", f"/v4/contacts?listId={list_id}&limit=1000")["contacts"]
    rows = {index[c["id"]]: (c["points"], c["country"]) for c in contacts}
    members = {
        name: {index[c] for c in _members(tenant, audience)} for audience, name in names.items()
    }
    feed = _feed(tenant, list_id)
    with tenant.client.app.state.db.reading() as session:
        stored = session.execute(
            select(Event.position, Event.id).where(Event.listId == list_id).order_by(Event.position)
        ).all()
    assert [position for position, _ in stored] == list(range(1, len(feed) + 1))
    assert [event_id for _, event_id in stored] == [e["id"] for e in feed]
    replayed, doubled = _replayed({a: set() for a in names}, feed)
    assert doubled == []
    assert {names[a]: {index[c] for c in cs} for a, cs in replayed.items() if a in names} == (
        members
    )
    events: dict[int, Counter[tuple[Any, ...]]] = {}
    for e in feed:
        if e.get("contactId") in index:
            kind = (e["type"], names.get(e.get("audienceId") or ""), e.get("cause"))
            events.setdefault(index[e["contactId"]], Counter())[kind] += 1
    return rows, members, events


@pytest.fixture
def pg_app(pg_database: Callable[[], str], app_factory: Callable[..., ApiClient]) -> Any:
    return lambda shared: app_factory(
        url_settings(
            pg_database(),
            auto_migrate=True,
            membership_sweep_seconds=0,
            shared_import_turns=shared,
        )
    )


def _hold_first_turn(monkeypatch: pytest.MonkeyPatch, api: ApiClient, tenant: Tenant) -> None:
    """Holds the first turn, its lock not yet taken, until the other writers' PATCHes wait
    for it (the turn after it then holds them all): without it, whether two requests meet
    depends on the machine's speed."""
    real = list_lock.contacts_to_write
    held = threading.Event()

    def contacts_to_write(session: Any, account_id: str, contact_ids: Any) -> Any:
        if not held.is_set():
            held.set()
            deadline = time.monotonic() + WAIT
            while contacts.waiting(api.app.state.db, tenant.account_id) < WRITERS - 1:
                assert time.monotonic() < deadline, "the other writers never came"
                time.sleep(0.01)
        return real(session, account_id, contact_ids)

    monkeypatch.setattr(list_lock, "contacts_to_write", contacts_to_write)


def test_concurrent_patches_share_turns_and_write_what_one_at_a_time_writes(
    pg_app: Callable[[bool], ApiClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    alone_api = pg_app(False)
    tenant, list_id, ids, names = _setup(alone_api)
    alone_locks = _locks(alone_api)
    alone = _run(tenant, ids, names, at_once=False)
    requests = WRITERS * PATCHES_EACH
    assert alone_locks[0] >= requests  # the one-at-a-time path: a lock (a commit) a PATCH
    expected = _state(tenant, list_id, ids, names)

    shared_api = pg_app(True)
    tenant, list_id, ids, names = _setup(shared_api)
    shared_locks = _locks(shared_api)
    _hold_first_turn(monkeypatch, shared_api, tenant)
    shared = _run(tenant, ids, names, at_once=True)
    assert shared_locks[0] < requests, "every PATCH took the list's lock alone: no turn shared"
    assert shared == alone
    assert _state(tenant, list_id, ids, names) == expected


def test_a_shared_turn_answers_each_request_its_own_error(
    pg_app: Callable[[bool], ApiClient],
) -> None:
    """A PATCH refused within a turn (an email another contact has, an unknown contact) is
    refused alone: the others of its turn are written and answered."""
    api = pg_app(True)
    tenant, list_id, ids, names = _setup(api)
    taken = "w1@patch.test"
    sends: list[tuple[str, dict[str, Any], int]] = []
    for i in range(WRITERS * CONTACTS_EACH):
        if i % 5 == 0:
            sends.append((ids[i], {"email": taken}, 409))
        elif i % 7 == 0:
            sends.append(("con_" + "0" * 20, {"points": 1}, 404))
        else:
            sends.append((ids[i], {"points": 150, "country": "FR"}, 200))
    statuses: dict[int, int] = {}
    start = threading.Barrier(len(sends))

    def send(n: int, contact_id: str, sent: dict[str, Any]) -> None:
        start.wait(WAIT)
        statuses[n] = tenant.call("PATCH", f"/v4/contacts/{contact_id}", json=sent).status_code

    threads = [
        threading.Thread(target=send, args=(n, c, s), daemon=True)
        for n, (c, s, _) in enumerate(sends)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert statuses == {n: status for n, (_, _, status) in enumerate(sends)}
    _, members, _ = _state(tenant, list_id, ids, names)
    written = {ids.index(c) for c, _, status in sends if status == 200}
    assert members["rich"] == written
    assert members["french"] == written
