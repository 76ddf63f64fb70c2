"""Issue 36: an import is written in bounded turns, and its `Idempotency-Key` follows them.

An import of 1,000 rows with 15 actions each wrote some 17,000 rows in one transaction; three at
a time held another account's write for 6.3 s on SQLite. Now each turn is a transaction of its
own (`use_cases/imports.py`), the key's record pending from the first turn to the last
(`http/idempotency_turns.py`). These tests count the write transactions, stop an import between
two turns and repeat it, and repeat it while it runs; the rows, the actions and the answer must
be those of one transaction. On SQLite and on PostgreSQL; nothing is timed.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from audiencefilter.service.db.models import Action, Contact
from audiencefilter.service.db.write_meter import WriteMeter
from audiencefilter.service.domain import contact_import
from audiencefilter.service.domain.use_cases import membership_turns
from audiencefilter.service.ground import clock
from audiencefilter.service.http import idempotency_turns

from .conftest import ApiClient, Tenant, make_tenant, settings_on
from .test_write_turns import (
    ROWS_PER_PAIR,
    ROWS_PER_TURN_BESIDES,
    _between_turns,
    _feed,
    _members,
)

TURN = 32
"""`PAIRS_PER_TURN` in these tests: a row with 2 actions on a list of one smart audience judged
in memory weighs 1 + 2 + 1/20 (`membership_turns.JUDGED_TOGETHER_PER_PAIR`), so a turn holds
10 rows."""
ROWS_PER_TURN = 10
KEY = "Idempotency-Key"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "imports.db", membership_sweep_seconds=0))


@pytest.fixture
def small_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(membership_turns, "PAIRS_PER_TURN", TURN)


class Stopped(Exception):
    """The writer of an import stops between two turns."""


def _row(index: int, **fields: Any) -> dict[str, Any]:
    actions = [
        {"name": "visit", "increase": 1, "createdAt": f"2024-01-{day:02d}T10:00:00Z"}
        for day in (1 + index % 20, 2 + index % 20)
    ]
    return {"email": f"r{index}@turns.test", "actions": actions, **fields}


def _list(tenant: Tenant) -> str:
    """A list with one smart audience, and three contacts there before any import."""
    list_id = str(tenant.new_list()["id"])
    body = {"name": "visitors", "listId": list_id, "filtersText": "points >= 2"}
    tenant.ok("POST", "/v4/audiences?limit=1", 201, json=body)
    for index in (3, 17, 40):
        tenant.new_contact(list_id, f"r{index}@turns.test", firstName="Before")
    return list_id


def _rows() -> list[Any]:
    """45 rows over 5 turns: new and existing emails, emails repeated in later turns (also of
    a contact there before), invalid rows."""
    rows: list[Any] = [_row(i) for i in range(41)]
    rows[7] = {"email": "not an email"}
    rows += [_row(3, firstName="Again"), _row(5, firstName="Again"), "no row", _row(8)]
    return rows


def _import(tenant: Tenant, list_id: str, mode: str, **kwargs: Any) -> httpx.Response:
    url = f"/v4/contacts/import?listId={list_id}&mode={mode}"
    return tenant.call("POST", url, json=_rows(), **kwargs)


def _state(api: ApiClient, list_id: str) -> dict[str, tuple[int, int]]:
    """`{email: (points, actions)}` of the list's contacts, read from the database."""
    with api.app.state.db.reading() as session:
        counted = (
            select(Contact.email, Contact.points, func.count(Action.id))
            .outerjoin(Action, Action.subId == Contact.id)
            .where(Contact.listId == list_id)
            .group_by(Contact.id, Contact.email, Contact.points)
        )
        return {email: (points, actions) for email, points, actions in session.execute(counted)}


def _plain(api: ApiClient, list_id: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The answer with each contact id replaced by its email, to compare two lists' imports."""
    with api.app.state.db.reading() as session:
        emails = {id_: email for id_, email in session.execute(select(Contact.id, Contact.email))}
    results = [
        {**result, "id": emails[result["id"]]} if "id" in result else result
        for result in answer["results"]
    ]
    return {**answer, "listId": None, "results": results}


def _one_transaction(
    api: ApiClient, tenant: Tenant, mode: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], dict[str, tuple[int, int]]]:
    """The same import on a list in the same state, in one turn: the answer to match."""
    list_id = _list(tenant)
    with monkeypatch.context() as patched:
        patched.setattr(membership_turns, "PAIRS_PER_TURN", 10**6)
        response = _import(tenant, list_id, mode)
    assert response.status_code == 200, response.text
    return _plain(api, list_id, response.json()["data"]), _state(api, list_id)


def _turn_commits(meter: WriteMeter) -> int:
    return sum(1 for record in meter.records if record.committed)


@pytest.mark.parametrize("mode", ["create", "upsert"])
def test_an_import_is_written_in_bounded_turns_and_answers_as_one_transaction(
    api: ApiClient, small_turns: None, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """45 rows, 10 a turn: 5 write transactions, none above a turn's rows, and the same
    answer, rows and actions as the import in one transaction; each contact created has its
    event and its membership."""
    tenant = make_tenant(api)
    expected, expected_state = _one_transaction(api, tenant, mode, monkeypatch)
    list_id = _list(tenant)
    before = len(_feed(tenant, list_id))
    with WriteMeter(api.app.state.db.engine) as meter:
        response = _import(tenant, list_id, mode)
    assert response.status_code == 200, response.text
    assert _turn_commits(meter) == -(-len(_rows()) // ROWS_PER_TURN)
    bound = TURN * ROWS_PER_PAIR + ROWS_PER_TURN_BESIDES
    assert meter.largest.rows <= bound, meter.largest
    answer = response.json()["data"]
    assert _plain(api, list_id, answer) == expected
    assert _state(api, list_id) == expected_state
    created = {r["id"] for r in answer["results"] if r["status"] == "created"}
    events = _feed(tenant, list_id)[before:]
    assert Counter(e["contactId"] for e in events if e["type"] == "contact.created") == Counter(
        created
    )
    assert created & {e["contactId"] for e in events if e["type"] == "audience.entered"} == created


def test_an_import_stopped_between_turns_resumes_after_its_last_turn(
    api: ApiClient, small_turns: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer stops after two turns (a process killed: it releases nothing). The same
    request with the key is told the import is in progress until the lease has passed, then
    resumes at the third turn: every contact and action once, and the answer of one
    transaction; a further retry replays it byte for byte."""
    tenant = make_tenant(api)
    expected, expected_state = _one_transaction(api, tenant, "upsert", monkeypatch)
    list_id = _list(tenant)
    headers = {KEY: "stopped-import"}
    monkeypatch.setattr(idempotency_turns, "_release", lambda *_: None)

    def stop() -> None:
        raise Stopped

    with pytest.raises(Stopped), _between_turns(api, 3, stop):
        _import(tenant, list_id, "upsert", headers=headers)
    assert 0 < len(_state(api, list_id)) - 3 < 40  # half-way
    waiting = _import(tenant, list_id, "upsert", headers=headers)
    assert waiting.status_code == 409, waiting.text
    assert int(waiting.headers["Retry-After"]) >= 1
    later = clock.now() + idempotency_turns.LEASE
    with clock.using(lambda: later), WriteMeter(api.app.state.db.engine) as meter:
        resumed = _import(tenant, list_id, "upsert", headers=headers)
    assert resumed.status_code == 200, resumed.text
    assert _turn_commits(meter) == 3  # the turns left, none again
    assert _plain(api, list_id, resumed.json()["data"]) == expected
    assert _state(api, list_id) == expected_state
    replay = _import(tenant, list_id, "upsert", headers=headers)
    assert (replay.content, replay.headers["Idempotent-Replayed"]) == (resumed.content, "true")


def test_an_import_that_failed_between_turns_resumes_at_once(
    api: ApiClient, small_turns: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn that fails in a live writer releases the record: the retry resumes without
    waiting for the lease, and applies no row twice."""
    tenant = make_tenant(api)
    expected, expected_state = _one_transaction(api, tenant, "create", monkeypatch)
    list_id = _list(tenant)
    headers = {KEY: "failed-import"}

    def stop() -> None:
        raise Stopped

    with pytest.raises(Stopped), _between_turns(api, 4, stop):
        _import(tenant, list_id, "create", headers=headers)
    resumed = _import(tenant, list_id, "create", headers=headers)
    assert resumed.status_code == 200, resumed.text
    assert _plain(api, list_id, resumed.json()["data"]) == expected
    assert _state(api, list_id) == expected_state


def test_a_repeat_while_the_import_runs_is_told_to_retry(api: ApiClient, small_turns: None) -> None:
    """The same key during the turns: a 409 naming the key, with Retry-After, that changes
    nothing; the same key after the end replays the answer."""
    tenant = make_tenant(api)
    list_id = _list(tenant)
    headers = {KEY: "busy-import"}
    during: list[httpx.Response] = []

    def repeat() -> None:
        during.append(_import(tenant, list_id, "create", headers=headers))

    with _between_turns(api, 3, repeat):
        first = _import(tenant, list_id, "create", headers=headers)
    assert first.status_code == 200, first.text
    assert during[0].status_code == 409, during[0].text
    assert "Idempotency-Key" in during[0].json()["message"]
    assert int(during[0].headers["Retry-After"]) >= 1
    replay = _import(tenant, list_id, "create", headers=headers)
    assert replay.content == first.content and replay.headers["Idempotent-Replayed"] == "true"


def test_a_stalled_writer_taken_over_stops_and_applies_nothing_twice(
    api: ApiClient, small_turns: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer whose lease ran out between two turns is taken over by the retry, which
    finishes the import; the first writer, at its next turn, finds the record no longer its
    own and stops with a 409. Rows and actions are those of one import."""
    tenant = make_tenant(api)
    expected, expected_state = _one_transaction(api, tenant, "upsert", monkeypatch)
    list_id = _list(tenant)
    headers = {KEY: "stalled-import"}
    during: list[httpx.Response] = []

    def take_over() -> None:
        later = clock.now() + idempotency_turns.LEASE
        with clock.using(lambda: later):
            during.append(_import(tenant, list_id, "upsert", headers=headers))

    with _between_turns(api, 3, take_over):
        stalled = _import(tenant, list_id, "upsert", headers=headers)
    assert during[0].status_code == 200, during[0].text
    assert stalled.status_code == 409, stalled.text
    assert _plain(api, list_id, during[0].json()["data"]) == expected
    assert _state(api, list_id) == expected_state


def test_concurrent_repeats_of_an_import_write_it_once(
    api: ApiClient, small_turns: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four requests with one key at once: each answers the import or a 409 in progress, at
    least one the import, all of these the same; the rows and actions are those of one."""
    tenant = make_tenant(api)
    expected, expected_state = _one_transaction(api, tenant, "upsert", monkeypatch)
    list_id = _list(tenant)
    headers = {KEY: "twin-import"}
    answers: list[httpx.Response] = []
    threads = [
        threading.Thread(
            target=lambda: answers.append(_import(tenant, list_id, "upsert", headers=headers))
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted({a.status_code for a in answers}) in ([200], [200, 409]), [
        a.text for a in answers
    ]
    done = [json.loads(a.content) for a in answers if a.status_code == 200]
    assert all(answer == done[0] for answer in done)
    assert _plain(api, list_id, done[0]["data"]) == expected
    assert _state(api, list_id) == expected_state


def _upsert_statements(api: ApiClient, tenant: Tenant, list_id: str, contacts: range) -> int:
    """Writing statements of the one turn of an upsert of these existing contacts, each
    changing other fields than the row before it."""
    rows = [
        {"email": f"r{index}@turns.test", "points": 100 + index}
        if index % 2
        else {"email": f"r{index}@turns.test", "firstName": "Changed", "points": index}
        for index in contacts
    ]
    url = f"/v4/contacts/import?listId={list_id}&mode=upsert"
    with WriteMeter(api.app.state.db.engine) as meter:
        answer = tenant.ok("POST", url, json=rows)
    assert answer["updated"] == len(contacts), answer
    return max(record.statements for record in meter.records if record.committed)


def test_a_turn_of_an_upsert_runs_as_many_statements_for_many_contacts_as_for_few(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four and thirty contacts, each in one turn: the same writing statements. The contacts
    were updated by the ORM's flush, one `UPDATE` a contact whenever two in a row changed
    different fields (on SQLite 9 statements for 4 contacts and 18 for 30, before); now one per
    set of fields changed."""
    monkeypatch.setattr(membership_turns, "PAIRS_PER_TURN", 10**6)
    tenant = make_tenant(api)
    list_id = _list(tenant)
    for index in range(40):
        if index not in (3, 17):
            tenant.new_contact(list_id, f"r{index}@turns.test", points=1)
    few = _upsert_statements(api, tenant, list_id, range(4))
    many = _upsert_statements(api, tenant, list_id, range(4, 34))
    assert many == few, (few, many)


def test_a_turn_whose_rows_would_move_too_many_pairs_takes_fewer_rows(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are taken by what they write and what judging them costs (a row here weighs
    1 + 6/20), so the first turn holds rows that move every audience: 15 rows moving 6 pairs
    each where the turn may move 20. It is undone and cut before any membership is written
    (to 2 rows: 80% of what fits), and the next turns expect 6 pairs a row (2 rows each);
    no turn writes past the bound (210 rows in a turn without the cut), and every contact
    enters every audience once, with its event."""
    monkeypatch.setattr(membership_turns, "PAIRS_PER_TURN", 20)
    tenant = make_tenant(api)
    list_id = str(tenant.new_list()["id"])
    audiences = [
        tenant.ok("POST", "/v4/audiences?limit=1", 201, json=body)["audience"]["id"]
        for body in (
            {"name": f"over {bound}", "listId": list_id, "filtersText": f"points >= {bound}"}
            for bound in range(10, 70, 10)
        )
    ]
    emails = [f"m{index}@turns.test" for index in range(30)]
    for email in emails:
        tenant.new_contact(list_id, email, points=0)
    before = len(_feed(tenant, list_id))
    rows = [{"email": email, "points": 1000} for email in emails]
    with WriteMeter(api.app.state.db.engine) as meter:
        answer = tenant.ok("POST", f"/v4/contacts/import?listId={list_id}&mode=upsert", json=rows)
    assert answer["updated"] == 30, answer
    assert meter.largest.rows <= 20 * ROWS_PER_PAIR + ROWS_PER_TURN_BESIDES, meter.largest
    assert _turn_commits(meter) == 15
    entered = Counter(
        (e["audienceId"], e["contactId"])
        for e in _feed(tenant, list_id)[before:]
        if e["type"] == "audience.entered"
    )
    assert len(entered) == 6 * 30 and set(entered.values()) == {1}
    for audience_id in audiences:
        assert len(_members(tenant, audience_id)) == 30


def test_each_row_is_read_once_however_many_tries_its_turn_takes(
    api: ApiClient, small_turns: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL a turn that creates contacts first tries to share the list's lock, reads
    its rows, gives up, and reads them again under the lock alone: the rows read by the try are
    taken again (the list's custom fields unchanged), so each row is validated once."""
    from audiencefilter.service.domain import import_rows

    reads: Counter[int] = Counter()
    plain = import_rows.read

    def counted(number: int, value: Any, lst: Any) -> Any:
        reads[number] += 1
        return plain(number, value, lst)

    monkeypatch.setattr(import_rows, "read", counted)
    tenant = make_tenant(api)
    answer = _import(tenant, _list(tenant), "upsert").json()["data"]
    assert answer["rows"] == len(_rows())
    assert sorted(reads) == list(range(1, len(_rows()) + 1))
    assert set(reads.values()) == {1}


@pytest.mark.parametrize("key", [None, "raced-import"])
def test_a_conflict_after_committed_turns_lists_what_they_wrote(
    api: ApiClient, small_turns: None, monkeypatch: pytest.MonkeyPatch, key: str | None
) -> None:
    """A contact of a later turn's email created by another request while that turn runs: the
    409 says which rows the turns before it wrote (`progress`, the answer of those rows), and
    those rows are in the list; the import sent again writes the rest."""
    tenant = make_tenant(api)
    list_id = _list(tenant)
    raced = "r25@turns.test"
    looked_up = contact_import._existing

    def unseen(session: Any, list_id: str, keys: list[str]) -> dict[str, Any]:
        return {k: c for k, c in looked_up(session, list_id, keys).items() if k != raced}

    def meanwhile() -> None:  # created before the turn, hidden from its look-up: as a race
        tenant.new_contact(list_id, raced)
        monkeypatch.setattr(contact_import, "_existing", unseen)

    headers = {KEY: key} if key else {}
    with _between_turns(api, 3, meanwhile):
        response = _import(tenant, list_id, "create", headers=headers)
    assert response.status_code == 409, response.text
    progress = response.json()["progress"]
    written = progress["rows"]
    assert ROWS_PER_TURN <= written == len(progress["results"]) <= 25, progress
    created = {r["id"] for r in progress["results"] if r["status"] == "created"}
    assert progress["created"] == len(created) > 0
    stored = set(_state(api, list_id))
    assert len(stored) == 3 + 1 + len(created)
    assert {f"r{i}@turns.test" for i in range(written) if i != 7} <= stored
    monkeypatch.setattr(contact_import, "_existing", looked_up)
    again = _import(tenant, list_id, "create", headers=headers)
    assert again.status_code == 200, again.text
