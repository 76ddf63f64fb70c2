"""Import turns at once and the kept pair counts: one after another, no deadlock, no move lost.

Import turns that only update contacts share their list's lock (`list_lock.share`) and run
side by side, but each adds to the counts of the pairs of audiences its contacts moved
(`membership/overlaps.py`): rows no turn owns. Two upserts taking the same pairs' rows in
different orders deadlocked, and PostgreSQL failed one of the imports (a 503 under four
importers of one list). A shared turn now takes the list's counts lock
(`list_lock.hold_counts`) before its first write of a count. These tests check:

- a turn moving the pairs a held turn moved waits for that lock (seen in `pg_locks`, not
  timed), not for a row of the counts, and both then write what the filters say;
- many importers at once, each on contacts of its own, all answer 200 and the kept counts
  equal the members (the concurrency the rate benchmark found the deadlock with), on
  PostgreSQL and on SQLite (whose writers take turns: the same answer);
- a transaction holding the list's lock alone takes no counts lock.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from audiencefilter.service.domain import list_lock
from audiencefilter.service.domain.membership import overlaps

from .conftest import ApiClient, settings_on, url_settings
from .test_overlap_kept import check_kept
from .test_shared_turns import (
    WAIT,
    _behind_a_held_turn,
    _check,
    _email,
    _import,
    _rows,
    _setup,
    _start,
)


@pytest.fixture
def api(
    pg_migrated_database: Callable[[], str], app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(
        url_settings(pg_migrated_database(), auto_migrate=True, membership_sweep_seconds=0)
    )


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def either_api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "turns.db", membership_sweep_seconds=0))


@pytest.mark.postgres
def test_a_turn_moving_the_same_pairs_waits_for_the_counts_lock(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant, list_id, _, audiences = _setup(api)

    def same_pairs() -> Any:  # into the same three audiences as the held turn's contacts
        return _import(tenant, list_id, _rows(range(10, 20), 60, "FR"))

    # Held after its write; the other waits for the counts lock (before it: for a count's row).
    first, second = _behind_a_held_turn(
        api, monkeypatch, tenant, list_id, same_pairs, "advisory", after=True
    )
    assert first["updated"] == 10 and second["updated"] == 10
    _check(tenant, list_id, audiences, _start(tenant, audiences))
    check_kept(tenant, api.app.state.db, list_id)


IMPORTERS = 4
REQUESTS = 16
ROWS = 8
CONTACTS = 64
MORE = ("points >= 20", "points < 70", 'country = "DE"', 'points >= 35 OR country = "DE"')
"""Audiences beside `_setup`'s three: seven, so a contact's move changes many pairs' counts."""


WAYS = [(True, 1, False), (True, 3, False), (False, 64, False), (True, 3, True)]
"""How one contact's move is counted (noted and settled every 1 or 3 notes, or added at once),
and whether the writers mix: importers on any contact of the list, and one writer PATCHing."""


@pytest.mark.parametrize(
    ("noted", "every", "mixed"), WAYS, ids=["noted-1", "noted-3", "at-once", "mixed-noted-3"]
)
def test_importers_of_one_list_at_once_all_succeed_and_keep_the_counts(
    either_api: ApiClient, monkeypatch: pytest.MonkeyPatch, noted: bool, every: int, mixed: bool
) -> None:
    """Four importers of one list, each on contacts of its own, alternating requests where one
    row changes (its contact's move is noted, `overlaps.NOTED`) with requests where every row
    does (their pairs are added after the list's notes are settled): the writes of the counts
    that deadlocked, or lost a move noted while the list was settled. Seeded; settling every
    `every` notes rather than 64, so it happens often. `mixed`: three importers choose among
    all the contacts and the fourth writer PATCHes one contact a request."""
    monkeypatch.setattr(overlaps, "NOTE_ONE_CONTACT", noted)
    monkeypatch.setattr(overlaps, "SETTLE_EVERY", every)
    api = either_api
    tenant, list_id, ids, audiences = _setup(api, contacts=CONTACTS)
    by_email = {email: contact_id for contact_id, email in ids.items()}
    for index, filters in enumerate(MORE):
        body = {"name": f"more{index}", "listId": list_id, "filtersText": filters}
        tenant.ok("POST", "/v4/audiences", 201, json=body)
    failures: list[str] = []

    def importer(number: int) -> None:
        rng = random.Random(number)
        own = list(range(CONTACTS)) if mixed else list(range(number, CONTACTS, IMPORTERS))
        values = {i: (i, "DE") for i in own}  # as `_setup` made them
        for request in range(REQUESTS):
            chosen = rng.sample(own, ROWS)
            moving = chosen if request % 2 else chosen[:1]
            for i in moving:
                values[i] = (rng.randrange(0, 100), rng.choice(("FR", "DE")))
            rows = [{"email": _email(i), "points": values[i][0], "country": values[i][1]}
                    for i in chosen]  # fmt: skip
            if mixed and number == IMPORTERS - 1:
                path, body = f"/v4/contacts/{by_email[_email(chosen[0])]}", rows[0]
                response = tenant.call("PATCH", path, json=body)
            else:
                path = f"/v4/contacts/import?listId={list_id}&mode=upsert"
                response = tenant.call("POST", path, json=rows)
            if response.status_code != 200:
                failures.append(f"{response.status_code} {response.text[:200]}")

    threads = [threading.Thread(target=importer, args=(n,), daemon=True) for n in range(IMPORTERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive(), "an importer never finished"
    assert failures == []
    _check(tenant, list_id, audiences, _start(tenant, audiences))
    check_kept(tenant, api.app.state.db, list_id)


@pytest.mark.postgres
def test_a_list_locked_alone_takes_no_counts_lock(api: ApiClient) -> None:
    _, list_id, _, _ = _setup(api, contacts=1)
    database = api.app.state.db
    with database.transaction() as session:
        list_lock.take(session, list_id)
        list_lock.hold_counts(session, list_id)
        assert _advisory_locks(session) == 1  # the list's own
    with database.transaction() as session:
        assert list_lock.share(session, list_id)
        list_lock.hold_counts(session, list_id)
        list_lock.hold_counts(session, list_id)  # once a transaction
        assert _advisory_locks(session) == 2  # the list's, shared, and its counts lock


def _advisory_locks(session: Any) -> int:
    return int(session.execute(_MINE).scalar_one())


_MINE = text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")
