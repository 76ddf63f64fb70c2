"""A list's time zone changed while another writer of the list is under way, on SQLite and
PostgreSQL: the stored members of a `createdAt within last day` audience end as its filter says
in the list's final zone, and stay so as the clock moves on.

A change of zone rewrites the zone stored with each filter of the list and judges every smart
audience again under the list's lock (`list_zone.py`). Each other writer read something of the
list before that lock: the zone its filter was read in, the members it evaluated, the list row
itself. These tests run the zone change at a chosen point of the other writer, in the same
thread (no sleeps, nothing left to chance), and check what was stored:

- **before its lock**, inside its write transaction (PostgreSQL: SQLite's write transaction is
  the lock, nothing lands there): a restore of a version, a new audience, another zone change,
  an import moving `createdAt`. The list read before the lock was trusted after it, so a filter
  read in the old zone passed the check that the zone had not changed, and was stored in it;
  and a zone change found the zone it asked for already set, and changed nothing;
- **after its evaluation** (a restore, the scheduler at a calendar boundary): the write, or
  its turns, must see that the filter in use is no longer the one evaluated;
- **after its commit, before its turns** (a restore): the turns stored the answer evaluated in
  the old zone, since they compared the filter's text and not the zone it is read in.

Then the clock moves just past the filter's next boundary in the final zone and the scheduler
runs: an audience whose next look was planned in the old zone was left stale.

The last test runs zone changes, imports moving `createdAt` and restores from threads, in an
order drawn from a seed, and checks the same at the end.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

import audiencefilter as af
from audiencefilter.service.db.models import Membership
from audiencefilter.service.domain import list_lock
from audiencefilter.service.domain.membership import snapshot
from audiencefilter.service.domain.use_cases import membership_turns

from .conftest import Tenant
from .hands import Hands, clocked_world, stamp

START = datetime(2031, 6, 1, 12, tzinfo=UTC)
TEXT = "createdAt within last day"
IN_KIRITIMATI = 'createdAt within last day in "Pacific/Kiritimati"'
KIRITIMATI, TOKYO = "Pacific/Kiritimati", "Asia/Tokyo"
ZONES = ("UTC", KIRITIMATI, TOKYO)
"""Yesterday at `START` (12:00 UTC): May 31 in UTC, June 1 in Kiritimati (UTC+14, 02:00 on
June 2 there), May 31 in Tokyo (21:00 there), each its own window of sign-ups."""
HOURS = range(-50, 2, 2)
"""Sign-ups every two hours before `START`: each zone's yesterday holds another twelve."""
WAIT = 120.0
"""The longest a thread is waited for (a hang fails the test, it never times it)."""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Tenant, Hands]]:
    yield from clocked_world(request, tmp_path / "zone_races.db", START)


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres)])
def pg_world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Tenant, Hands]]:
    """PostgreSQL alone, for a change landing inside another write transaction before its
    lock: SQLite's write transaction is its lock, so nothing lands there."""
    yield from clocked_world(request, tmp_path / "zone_races.db", START)


def _contacts(tenant: Tenant, list_id: str) -> list[str]:
    """A contact signed up at each of `HOURS` before `START`; their ids."""
    rows = [
        {"email": f"c{n}@zone.test", "createdAt": stamp(START + timedelta(hours=hour))}
        for n, hour in enumerate(HOURS)
    ]
    answer = tenant.ok("POST", f"/v4/contacts/import?listId={list_id}&mode=create", json=rows)
    return [result["id"] for result in answer["results"]]


def _audience(tenant: Tenant, list_id: str, text: str = TEXT) -> str:
    body = {"name": "Yesterday", "listId": list_id, "filtersText": text}
    return str(tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"])


def _versions(tenant: Tenant, list_id: str) -> str:
    """An audience whose version 1 is `TEXT` and version 2 (now) `IN_KIRITIMATI`: restoring 1
    after the list moved to Kiritimati moves no member, restoring it in UTC moves some."""
    audience = _audience(tenant, list_id)
    body = {"filtersText": IN_KIRITIMATI}
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json=body)
    return audience


def _zone(tenant: Tenant, list_id: str, zone: str) -> Any:
    return tenant.call("PATCH", f"/v4/lists/{list_id}", json={"timeZone": zone})


def _restore(tenant: Tenant, audience: str, number: int = 1) -> Any:
    return tenant.call("POST", f"/v4/audiences/{audience}/versions/{number}/restore")


def _stored(tenant: Tenant, audience: str) -> set[str]:
    """The audience's `memberships` rows (its reads judge a moving filter live instead)."""
    with tenant.client.app.state.db.reading() as session:
        rows = select(Membership.contactId).where(Membership.audienceId == audience)
        return set(session.scalars(rows))


def _live(tenant: Tenant, audience: str) -> set[str]:
    page = tenant.ok("GET", f"/v4/audiences/{audience}/members", params={"limit": 1000})
    return {member["contactId"] for member in page["members"]}


def _expected(tenant: Tenant, list_id: str, audience: str, at: datetime) -> tuple[set[str], Any]:
    """The contacts the audience's filter selects at `at`, read in the list's zone and judged
    by the library in memory; and that filter."""
    zone = tenant.ok("GET", f"/v4/lists/{list_id}")["list"]["timeZone"]
    filters = tenant.ok("GET", f"/v4/audiences/{audience}")["audience"]["filters"]
    text = filters if isinstance(filters, str) else json.dumps(filters)
    flt = af.parse(text, af.CONTACT.in_zone(zone))
    contacts = tenant.ok("GET", "/v4/contacts", params={"listId": list_id, "limit": 1000})
    chosen = {
        contact["id"]
        for contact in contacts["contacts"]
        if flt.matches({"createdAt": af.parse_datetime(contact["createdAt"])}, now=at)
    }
    return chosen, flt


def _check(tenant: Tenant, hands: Hands, list_id: str, audience: str) -> None:
    """Stored and live members equal the filter in the list's zone, now and once the clock
    has passed the filter's next boundary and the scheduler has run."""
    expected, flt = _expected(tenant, list_id, audience, hands.at)
    assert _stored(tenant, audience) == expected
    assert _live(tenant, audience) == expected
    step = flt.clock.next_step(hands.at)
    assert step is not None
    hands.at = step + timedelta(seconds=1)
    tenant.client.app.state.sweeper.run_once()
    expected, _ = _expected(tenant, list_id, audience, hands.at)
    assert _stored(tenant, audience) == expected, "stale after the next boundary"
    assert _live(tenant, audience) == expected


class Once:
    """Runs `work` once, at the first call of the wrapped function after `arm()`: before it
    (`before`) or after it returns; the call then goes on as it would."""

    def __init__(self, work: Callable[[], Any], before: bool = True) -> None:
        self.work, self.before = work, before
        self.armed = False
        self.answers: list[Any] = []

    def arm(self) -> None:
        self.armed = True

    def wrap(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            fire, self.armed = self.armed, False
            if fire and self.before:
                self.answers.append(self.work())
            answer = real(*args, **kwargs)
            if fire and not self.before:
                self.answers.append(self.work())
            return answer

        return wrapped


def _before_lock(monkeypatch: pytest.MonkeyPatch, once: Once) -> None:
    """`once` runs when a writer first asks for its list's lock (PostgreSQL's advisory lock,
    alone or shared by an import turn), inside its transaction, after what it read before."""
    monkeypatch.setattr(list_lock, "_hold", once.wrap(list_lock._hold))
    monkeypatch.setattr(list_lock, "share", once.wrap(list_lock.share))


def test_a_restore_read_before_the_zone_changed_is_not_stored_in_the_old_zone(
    pg_world: tuple[Tenant, Hands], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The restore's transaction read the list in UTC, the list moved to Kiritimati before
    the restore's lock: the restore stored version 1's filter read in UTC, its members judged
    there, in a list now in Kiritimati (and so they stayed)."""
    tenant, hands = pg_world
    list_id = tenant.new_list()["id"]
    _contacts(tenant, list_id)
    audience = _versions(tenant, list_id)
    once = Once(lambda: _zone(tenant, list_id, KIRITIMATI))
    _before_lock(monkeypatch, once)
    once.arm()
    restored = _restore(tenant, audience)
    assert once.answers[0].status_code == 200
    assert restored.status_code in (200, 409), restored.text
    _check(tenant, hands, list_id, audience)


def test_a_new_audience_read_before_the_zone_changed_is_not_stored_in_the_old_zone(
    pg_world: tuple[Tenant, Hands], monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant, hands = pg_world
    list_id = tenant.new_list()["id"]
    _contacts(tenant, list_id)
    once = Once(lambda: _zone(tenant, list_id, KIRITIMATI))
    _before_lock(monkeypatch, once)
    once.arm()
    body = {"name": "Yesterday", "listId": list_id, "filtersText": TEXT}
    created = tenant.call("POST", "/v4/audiences", json=body)
    assert created.status_code in (201, 409), created.text
    if created.status_code == 409:
        assert "timeZone" in created.text  # read in UTC: sent again, it is read in Kiritimati
        created = tenant.call("POST", "/v4/audiences", json=body)
    assert created.status_code == 201, created.text
    _check(tenant, hands, list_id, created.json()["data"]["audience"]["id"])


def test_a_zone_change_waiting_for_another_sets_its_own_zone(
    pg_world: tuple[Tenant, Hands], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list in Kiritimati; a change to Kiritimati read it so, then the list moved to UTC
    before its lock: it found its zone already set (the row read before the lock) and changed
    nothing, answering Kiritimati for a list left in UTC."""
    tenant, hands = pg_world
    list_id = tenant.new_list(timeZone=KIRITIMATI)["id"]
    _contacts(tenant, list_id)
    audience = _audience(tenant, list_id)
    once = Once(lambda: _zone(tenant, list_id, "UTC"))
    _before_lock(monkeypatch, once)
    once.arm()
    answer = _zone(tenant, list_id, KIRITIMATI)
    assert answer.status_code == 200 and answer.json()["data"]["list"]["timeZone"] == KIRITIMATI
    assert tenant.ok("GET", f"/v4/lists/{list_id}")["list"]["timeZone"] == KIRITIMATI
    _check(tenant, hands, list_id, audience)


def test_an_import_moving_created_at_waiting_for_a_zone_change_is_judged_in_the_new_zone(
    pg_world: tuple[Tenant, Hands], monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant, hands = pg_world
    list_id = tenant.new_list()["id"]
    _contacts(tenant, list_id)
    audience = _audience(tenant, list_id)
    once = Once(lambda: _zone(tenant, list_id, KIRITIMATI))
    _before_lock(monkeypatch, once)
    once.arm()
    assert _move(tenant, list_id, {n: -4 for n in range(len(HOURS))}).status_code == 200
    _check(tenant, hands, list_id, audience)


def _move(tenant: Tenant, list_id: str, hours: dict[int, int]) -> Any:
    """Upserts contacts `c{n}` signed up `hours[n]` hours from `START`; the answer."""
    url = f"/v4/contacts/import?listId={list_id}&mode=upsert"
    rows = [
        {"email": f"c{n}@zone.test", "createdAt": stamp(START + timedelta(hours=hour))}
        for n, hour in hours.items()
    ]
    return tenant.call("POST", url, json=rows)


def test_a_restore_evaluated_before_the_zone_changed_is_not_stored_in_the_old_zone(
    world: tuple[Tenant, Hands], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The zone changed after the restore evaluated version 1 in UTC, before its write."""
    tenant, hands = world
    list_id = tenant.new_list()["id"]
    _contacts(tenant, list_id)
    audience = _versions(tenant, list_id)
    once = Once(lambda: _zone(tenant, list_id, KIRITIMATI), before=False)
    monkeypatch.setattr(snapshot, "evaluate", once.wrap(snapshot.evaluate))
    once.arm()
    restored = _restore(tenant, audience)
    assert once.answers[0].status_code == 200
    assert restored.status_code in (200, 409), restored.text
    _check(tenant, hands, list_id, audience)


def test_the_turns_of_a_restore_stop_when_the_zone_changed_after_its_commit(
    world: tuple[Tenant, Hands], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The restore committed version 1 read in UTC, its members (evaluated in UTC) left to
    its turns; the list moved to Kiritimati, which judged version 1 there (no member moved:
    version 2 read Kiritimati's yesterday already); then the turns stored UTC's answer,
    since the filter's text was still the one evaluated."""
    tenant, hands = world
    list_id = tenant.new_list()["id"]
    _contacts(tenant, list_id)
    audience = _versions(tenant, list_id)
    once = Once(lambda: _zone(tenant, list_id, KIRITIMATI))
    monkeypatch.setattr(membership_turns, "store", once.wrap(membership_turns.store))
    once.arm()
    restored = _restore(tenant, audience)
    assert once.answers[0].status_code == 200
    assert restored.status_code == 200, restored.text
    _check(tenant, hands, list_id, audience)


def test_the_scheduler_at_a_boundary_does_not_store_the_old_zone(
    world: tuple[Tenant, Hands], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At UTC's midnight the scheduler evaluated the audience in UTC; the list moved to Tokyo
    meanwhile. Its turns stored UTC's answer, and it planned its next look at UTC's next
    midnight, past Tokyo's, so the members stayed stale through Tokyo's."""
    tenant, hands = world
    list_id = tenant.new_list()["id"]
    _contacts(tenant, list_id)
    audience = _audience(tenant, list_id)
    hands.at = datetime(2031, 6, 2, 0, 0, 1, tzinfo=UTC)
    once = Once(lambda: _zone(tenant, list_id, TOKYO), before=False)
    monkeypatch.setattr(snapshot, "evaluate", once.wrap(snapshot.evaluate))
    once.arm()
    tenant.client.app.state.sweeper.run_once()
    assert once.answers and once.answers[0].status_code == 200
    _check(tenant, hands, list_id, audience)


ROUNDS = 2
WRITERS = 3
STEPS = 6


@pytest.mark.parametrize("seed", range(ROUNDS))
def test_zone_changes_imports_and_restores_at_once_leave_the_filter_in_the_final_zone(
    world: tuple[Tenant, Hands], seed: int
) -> None:
    """Three writers at once, each a sequence drawn from the seed of zone changes, imports
    moving `createdAt` across the zones' yesterdays and restores of the audience's three
    versions. Whatever the order the database lets them through, the members end as the
    filter in use says in the list's final zone (a restore that read a zone since changed
    is refused, 409, and sent by no one again: its version stays unrestored)."""
    tenant, hands = world
    list_id = tenant.new_list()["id"]
    _contacts(tenant, list_id)
    audience = _versions(tenant, list_id)
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"filtersText": f'{TEXT} in "{TOKYO}"'})
    plans = [_plan(random.Random(seed * WRITERS + n)) for n in range(WRITERS)]
    failures: list[str] = []
    threads = [
        threading.Thread(target=_run, args=(tenant, list_id, audience, plan, failures))
        for plan in plans
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive(), "a writer never finished"
    assert failures == []
    _check(tenant, hands, list_id, audience)


Step = tuple[str, Any]


def _plan(rng: random.Random) -> list[Step]:
    steps: list[Step] = []
    for _ in range(STEPS):
        kind = rng.choice(("zone", "move", "restore"))
        if kind == "zone":
            steps.append((kind, rng.choice(ZONES)))
        elif kind == "move":
            chosen = rng.sample(range(len(HOURS)), 4)
            steps.append((kind, {n: rng.randrange(-50, 2) for n in chosen}))
        else:
            steps.append((kind, rng.randrange(1, 4)))
    return steps


def _run(
    tenant: Tenant, list_id: str, audience: str, plan: list[Step], failures: list[str]
) -> None:
    for kind, value in plan:
        if kind == "zone":
            answer = _zone(tenant, list_id, value)
        elif kind == "move":
            answer = _move(tenant, list_id, value)
        else:
            answer = _restore(tenant, audience, value)
        refused = kind == "restore" and answer.status_code == 409
        if answer.status_code != 200 and not refused:
            failures.append(f"{kind} {value}: {answer.status_code} {answer.text}")
