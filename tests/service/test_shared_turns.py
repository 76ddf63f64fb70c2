"""Import turns that only update contacts share their list's lock (PostgreSQL).

`list_lock.share`: such a turn takes the list's advisory lock shared, locks its contacts'
rows in the order of their ids and appends its events last (`events.appended_last`), so turns
of one list run side by side and wait for each other only from their first event to their
commit. Everything else (a turn that creates a contact, an audience, a deletion) still takes
the lock alone. These tests hold a turn inside its write (`Paused`: no sleeps, the other
request runs while it waits) and check:

- a turn updating other contacts of the list completes meanwhile;
- a turn creating a contact, and a turn updating one of the held contacts, wait (seen in
  `pg_locks`, not timed) and then write what they would have written after it;
- in every case the stored members equal the filters over the final rows, the feed replays to
  them with no pair moved twice in a row, and positions follow commit order;
- the differential: the same imports, one after another, answer the same results and write
  the same feed with the setting `shared_import_turns` on and off, and only "on" shares.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from audiencefilter.service.domain import contact_import, events, list_lock

from .conftest import ApiClient, Tenant, make_tenant, url_settings
from .test_write_turn_races import _replayed
from .test_write_turns import _feed, _members

pytestmark = pytest.mark.postgres

FILTERS = {
    "rich": "points >= 50",
    "french": 'country = "FR"',
    "both": 'points >= 50 AND country = "FR"',
}
WAIT = 120.0
"""The longest a test waits for a step it expects (a deadlock would fail it, not hang CI)."""


@pytest.fixture
def pg_settings(pg_migrated_database: Callable[[], str]) -> Callable[..., Any]:
    return lambda **overrides: url_settings(
        pg_migrated_database(), auto_migrate=True, membership_sweep_seconds=0, **overrides
    )


@pytest.fixture
def api(pg_settings: Callable[..., Any], app_factory: Callable[..., ApiClient]) -> ApiClient:
    return app_factory(pg_settings())


class Paused:
    """Holds the first import turn whose rows include `email` inside its write (after its
    locks, before its statements) until `release()`; `after`: right after its write instead
    (its contacts, members and pair counts written, its events not yet appended)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, email: str, after: bool = False) -> None:
        self.inside = threading.Event()
        self._released = threading.Event()
        real = contact_import.write

        def write(lw: Any, rows: Any, *args: Any, **kwargs: Any) -> Any:
            answer = real(lw, rows, *args, **kwargs) if after else None
            if not self.inside.is_set() and any(getattr(r, "key", "") == email for r in rows):
                self.inside.set()
                assert self._released.wait(WAIT), "the paused turn was never released"
            return answer if after else real(lw, rows, *args, **kwargs)

        monkeypatch.setattr(contact_import, "write", write)

    def release(self) -> None:
        self._released.set()


@contextmanager
def in_thread(call: Callable[[], Any]) -> Iterator[list[Any]]:
    """Runs `call` in a thread; the list holds its answer once the block ends."""
    answer: list[Any] = []
    thread = threading.Thread(target=lambda: answer.append(call()), daemon=True)
    thread.start()
    try:
        yield answer
    finally:
        thread.join(WAIT)
        assert not thread.is_alive(), "a request never finished"


def _setup(api: ApiClient, contacts: int = 20) -> tuple[Tenant, str, dict[str, str], list[str]]:
    """A list of `contacts` (`c{i}@shared.test`, points i, country DE) and three audiences."""
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    rows = [{"email": _email(i), "points": i, "country": "DE"} for i in range(contacts)]
    answer = _import(tenant, list_id, rows, "create")
    ids = {result["id"]: _email(result["row"] - 1) for result in answer["results"]}
    audiences = [
        tenant.ok("POST", "/v4/audiences", 201, json=_audience(list_id, name, text))["audience"][
            "id"
        ]
        for name, text in FILTERS.items()
    ]
    return tenant, list_id, ids, audiences


def _audience(list_id: str, name: str, text: str) -> dict[str, Any]:
    return {"name": name, "listId": list_id, "filtersText": text}


def _email(index: int) -> str:
    return f"c{index}@shared.test"


def _import(tenant: Tenant, list_id: str, rows: list[dict[str, Any]], mode: str = "upsert") -> Any:
    return tenant.ok("POST", f"/v4/contacts/import?listId={list_id}&mode={mode}", json=rows)


def _rows(indexes: range, points: int, country: str) -> list[dict[str, Any]]:
    return [{"email": _email(i), "points": points + i, "country": country} for i in indexes]


def _waiting(api: ApiClient, locktype: str) -> None:
    """Returns once some backend of the app's database waits for a lock of `locktype`."""
    url = api.app.state.db.engine.url.render_as_string(hide_password=False)
    query = "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = %s"
    deadline = time.monotonic() + WAIT
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as connection:
        while time.monotonic() < deadline:
            row = connection.execute(query, (locktype,)).fetchone()
            if row is not None and row[0] > 0:
                return
            time.sleep(0.02)
    raise AssertionError(f"no backend waited for a lock of type {locktype}")


def _behind_a_held_turn(
    api: ApiClient,
    monkeypatch: pytest.MonkeyPatch,
    tenant: Tenant,
    list_id: str,
    other: Callable[[], Any],
    locktype: str,
    after: bool = False,
) -> tuple[Any, Any]:
    """Holds an import of contacts 0-9 (points 50 + i, FR) inside its write (`Paused`), runs
    `other` meanwhile until some backend waits for a lock of `locktype`, then lets both finish;
    the held import's answer and `other`'s."""
    held = Paused(monkeypatch, _email(0), after)
    with in_thread(lambda: _import(tenant, list_id, _rows(range(0, 10), 50, "FR"))) as first:
        assert held.inside.wait(WAIT)
        with in_thread(other) as second:
            try:
                _waiting(api, locktype)
            finally:
                held.release()
    return first[0], second[0]


def _check(tenant: Tenant, list_id: str, audiences: list[str], before: dict[str, set[str]]) -> None:
    """The stored members equal each filter over the rows as they are now, and the feed since
    `before` replays to them with no pair moving twice in a row."""
    contacts = tenant.ok("GET", f"/v4/contacts?listId={list_id}&limit=1000")["contacts"]
    rows = {contact["id"]: contact for contact in contacts}
    expected = {
        audiences[0]: {c for c, row in rows.items() if row["points"] >= 50},
        audiences[1]: {c for c, row in rows.items() if row["country"] == "FR"},
        audiences[2]: {c for c, r in rows.items() if r["points"] >= 50 and r["country"] == "FR"},
    }
    stored = {audience: _members(tenant, audience) for audience in audiences}
    assert stored == expected
    feed = _feed(tenant, list_id)
    replayed, doubled = _replayed(before, feed)
    assert doubled == []
    assert {a: replayed.get(a, set()) for a in audiences} == expected


def _start(tenant: Tenant, audiences: list[str]) -> dict[str, set[str]]:
    return {audience: set() for audience in audiences}


def test_a_turn_updating_other_contacts_runs_while_one_is_held(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant, list_id, _, audiences = _setup(api)
    held = Paused(monkeypatch, _email(0))
    with in_thread(lambda: _import(tenant, list_id, _rows(range(0, 10), 50, "FR"))) as first:
        assert held.inside.wait(WAIT)
        # The held turn holds its list's lock shared and its ten contacts' rows.
        second = _import(tenant, list_id, _rows(range(10, 20), 40, "FR"))
        assert second["updated"] == 10
        held.release()
    assert first[0]["updated"] == 10
    _check(tenant, list_id, audiences, _start(tenant, audiences))
    # Positions follow commit order: the second import's events come before the first's.
    feed = [event for event in _feed(tenant, list_id) if event["cause"] == "contact.imported"]
    updates = [e["contactId"] for e in feed if e["type"] == "contact.updated"]
    emails = {
        c["id"]: c["email"]
        for c in tenant.ok("GET", f"/v4/contacts?listId={list_id}&limit=1000")["contacts"]
    }
    assert [emails[c] for c in updates[-20:]] == [_email(i) for i in [*range(10, 20), *range(10)]]


def test_a_turn_creating_a_contact_waits_for_the_shared_turn(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant, list_id, _, audiences = _setup(api)
    rows = [
        *_rows(range(10, 12), 60, "FR"),
        {"email": "new@shared.test", "points": 70, "country": "FR"},
    ]

    def creating() -> Any:  # waits for the list's lock
        return _import(tenant, list_id, rows)

    first, second = _behind_a_held_turn(api, monkeypatch, tenant, list_id, creating, "advisory")
    assert first["updated"] == 10
    assert (second["created"], second["updated"]) == (1, 2)
    _check(tenant, list_id, audiences, _start(tenant, audiences))


def test_a_turn_updating_a_held_contact_waits_and_writes_after_it(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant, list_id, _, audiences = _setup(api)

    def overlapping() -> Any:  # contacts 5-9 are held by the first turn: it waits for their rows
        return _import(tenant, list_id, _rows(range(5, 15), 100, "DE"))

    first, second = _behind_a_held_turn(
        api, monkeypatch, tenant, list_id, overlapping, "transactionid"
    )
    assert first["updated"] == 10 and second["updated"] == 10
    contacts = tenant.ok("GET", f"/v4/contacts?listId={list_id}&limit=1000")["contacts"]
    final = {c["email"]: (c["points"], c["country"]) for c in contacts}
    assert final[_email(7)] == (107, "DE")  # the second import's values, written after the first
    assert final[_email(2)] == (52, "FR")
    _check(tenant, list_id, audiences, _start(tenant, audiences))


def test_an_audience_created_meanwhile_waits_for_the_shared_turn(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant, list_id, _, audiences = _setup(api)
    body = _audience(list_id, "german", 'country = "DE"')

    def creating() -> Any:
        return tenant.ok("POST", "/v4/audiences", 201, json=body)

    _, created = _behind_a_held_turn(api, monkeypatch, tenant, list_id, creating, "advisory")
    german = created["audience"]["id"]
    assert _members(tenant, german) == {
        c["id"]
        for c in tenant.ok("GET", f"/v4/contacts?listId={list_id}&limit=1000")["contacts"]
        if c["country"] == "DE"
    }
    _check(tenant, list_id, audiences, _start(tenant, audiences))


def test_held_back_appends_are_dropped_with_the_block_that_raised(api: ApiClient) -> None:
    tenant, list_id, _, _ = _setup(api, contacts=1)
    before = len(_feed(tenant, list_id))
    database = api.app.state.db
    with database.transaction() as session:
        with pytest.raises(RuntimeError), events.appended_last(session):
            events.append(session, list_id, [events.NewEvent(events.CONTACT_UPDATED)])
            raise RuntimeError("undone")
        with events.appended_last(session):
            assert events.append(session, list_id, [events.NewEvent(events.CONTACT_UPDATED)]) == []
            assert list_lock.head(session, list_id) == before  # nothing appended yet
    feed = _feed(tenant, list_id)
    assert len(feed) == before + 1


# The differential: the same imports, one after another, with the setting on and off.

SCRIPT: list[list[dict[str, Any]]] = [
    _rows(range(0, 30), 40, "FR"),
    [
        *_rows(range(10, 20), 55, "DE"),
        {"email": "fresh@shared.test", "points": 90, "country": "FR"},
    ],
    [*_rows(range(0, 5), 40, "FR"), *_rows(range(0, 5), 80, "DE"), {"email": "bad"}],
    [
        {
            "email": _email(3),
            "actions": [{"name": "buy", "increase": 7, "createdAt": "2026-01-02T03:04:05Z"}],
        }
    ],
    [
        {"email": _email(3).upper(), "country": "FR", "data": {"tier": 1}},
        *_rows(range(25, 40), 10, "FR"),
    ],
]


def _replay(api: ApiClient, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any], int]:
    """The script's answers and feed with ids replaced by emails and names, and how many
    blocks held their appends back."""
    shared = 0
    real = events.appended_last

    def counted(session: Any) -> Any:
        nonlocal shared
        shared += 1
        return real(session)

    monkeypatch.setattr(events, "appended_last", counted)
    tenant, list_id, _, audiences = _setup(api, contacts=40)
    answers = [_import(tenant, list_id, rows) for rows in SCRIPT]
    monkeypatch.setattr(events, "appended_last", real)
    contacts = tenant.ok("GET", f"/v4/contacts?listId={list_id}&limit=1000")["contacts"]
    names = {c["id"]: c["email"] for c in contacts} | dict(zip(audiences, FILTERS, strict=True))
    plain = [
        {**answer, "listId": None, "results": [_named(r, names) for r in answer["results"]]}
        for answer in answers
    ]
    feed = [
        (
            e["type"],
            names.get(e["contactId"]),
            names.get(e["audienceId"]),
            e["cause"],
            _named(e["data"], names),
        )
        for e in _feed(tenant, list_id)
    ]
    return plain, feed, shared


def _named(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {key: _named(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [_named(item, names) for item in value]
    return names.get(value, value) if isinstance(value, str) else value


def test_the_same_imports_answer_and_feed_the_same_shared_or_not(
    pg_settings: Callable[..., Any],
    app_factory: Callable[..., ApiClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    on = _replay(app_factory(pg_settings(shared_import_turns=True)), monkeypatch)
    off = _replay(app_factory(pg_settings(shared_import_turns=False)), monkeypatch)
    assert on[0] == off[0]
    assert on[1] == off[1]
    assert on[2] > 0 and off[2] == 0  # only "on" shared its turns


def test_a_turn_after_one_that_created_takes_the_lock_alone_at_once(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn after one that created contacts does not try to share the list's lock (the try
    would look its rows' contacts up only to find new ones again and take the lock alone);
    once a turn created none, the next tries again, and an update-only part shares."""
    from audiencefilter.service.domain.use_cases import membership_turns

    tenant, list_id, _, _ = _setup(api, contacts=20)
    log: list[tuple[str, bool]] = []
    real_write, real_lock = contact_import.write, contact_import.lock_existing

    def write(*args: Any, **kwargs: Any) -> Any:
        results, moved = real_write(*args, **kwargs)
        log.append(("write", any(r["status"] == "created" for r in results)))
        return results, moved

    def lock_existing(*args: Any, **kwargs: Any) -> bool:
        shares = real_lock(*args, **kwargs)
        log.append(("try", shares))
        return shares

    monkeypatch.setattr(contact_import, "write", write)
    monkeypatch.setattr(contact_import, "lock_existing", lock_existing)
    monkeypatch.setattr(membership_turns, "PAIRS_PER_TURN", 10)
    # 40 new contacts, then the 20 there before: turns that create, then turns that update.
    answer = _import(tenant, list_id, _rows(range(20, 60), 0, "FR") + _rows(range(20), 5, "FR"))
    assert answer["created"] == 40 and answer["updated"] == 20
    writes = [created for kind, created in log if kind == "write"]
    assert writes.count(True) >= 3 and writes.count(False) >= 3  # several turns of each
    for before, after in zip(log, log[1:], strict=False):
        if before == ("write", True):
            assert after[0] == "write", "a turn tried to share right after one that created"
    assert ("try", True) in log  # the update-only turns shared again
    assert log[0] == ("try", False)  # the import's first turn tries
