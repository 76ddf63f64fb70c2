"""The write's fixed statements on the driver's cursor: the same answers, rows and events.

`db/driver_path.py` runs a write's fixed statements (a PATCH's update, the memberships it moves,
its events, its pairs' note, the list's advisory lock, SQLite's `BEGIN`, the key's read) on the
driver's cursor, its parameters and rows
converted as SQLAlchemy converts them (the setting `driver_statements`). Two applications, one
with the setting on and one off, on SQLite and on PostgreSQL, run the same generated contacts,
audiences and updates (the library's record and filter strategies) at one instant: every answer,
every audience's members and the list's whole event feed must agree. Beside that, what the
execution did besides running the statement: the engine's events (the write meter, the mirror of
the prepared statements), SQLAlchemy's error wrapping (a duplicate e-mail is still a 409), text
statements, and the statements it cannot run so, which go through SQLAlchemy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import bindparam, inspect, select, text, update

from audiencefilter.service.app import create_app
from audiencefilter.service.db import driver_path, prepared_cache
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import ApiKey, Contact, List
from audiencefilter.service.db.write_meter import WriteMeter
from audiencefilter.service.ground import keys
from audiencefilter.testing.strategies import NOW, records, where_clauses

from .audience_helpers import members_on_each
from .conftest import BOTH_DATABASES, ApiClient, Tenant, make_tenant, settings_on

FIELDS = ("firstName", "company", "country", "city", "points", "referrals", "isVerified")
KEPT = "audiencefilter_prepared_texts"
"""Where `prepared_cache` keeps a SQLite connection's mirror."""
HIDDEN = {"id", "listId", "createdAt", "updatedAt", "url", "referralLink", "privateLink"}
HIDDEN |= {"position"}
"""An answer's fields that differ between the two applications by construction: the ids, and
the position, whose ties (equal points, one instant) fall to the random ids."""


@pytest.fixture(scope="module", params=BOTH_DATABASES)
def pair(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Tenant, Tenant]]:
    """Two applications at one instant: the driver path on, off."""
    folder = tmp_path_factory.mktemp("driver")
    apps = []
    for name, on in (("on", True), ("off", False)):
        app_settings = settings_on(
            request, folder / f"{name}.db", membership_sweep_seconds=0, driver_statements=on
        )
        apps.append(ApiClient(create_app(app_settings, clock=lambda: NOW)))
    yield make_tenant(apps[0]), make_tenant(apps[1])
    for app in apps:
        app.close()


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: v.isoformat()))


def _body(record: dict[str, Any]) -> dict[str, Any]:
    return _json({k: v for k, v in record.items() if k in FIELDS and v is not None})


def _shown(answer: Any) -> Any:
    """An answer without what names the application's own rows; a contact's audiences in
    their names' order (the answer orders them by id, random on each application)."""
    if isinstance(answer, dict):
        shown = {k: _shown(v) for k, v in answer.items() if k not in HIDDEN}
        if isinstance(shown.get("audiences"), list):
            shown["audiences"] = sorted(shown["audiences"], key=json.dumps)
        return shown
    if isinstance(answer, list):
        return [_shown(v) for v in answer]
    return answer


class Twins:
    """The same calls on both applications; their answers must agree but for the ids."""

    def __init__(self, pair: tuple[Tenant, Tenant]) -> None:
        self.pair = pair
        self.lists = [t.new_list()["id"] for t in pair]

    def both(self, method: str, urls: list[str], body: dict[str, Any]) -> list[Any]:
        answers = [t.call(method, u, json=body) for t, u in zip(self.pair, urls, strict=True)]
        codes = [a.status_code for a in answers]
        assert codes[0] == codes[1], [a.text for a in answers]
        shown = [_shown(a.json()) for a in answers]
        assert shown[0] == shown[1]
        return [a.json().get("data") for a in answers]

    def create(self, url: str, body: dict[str, Any], key: str) -> list[str] | None:
        urls = [url, url]
        bodies = [{**body, "listId": lst} for lst in self.lists]
        answers = [
            t.call("POST", u, json=b) for t, u, b in zip(self.pair, urls, bodies, strict=True)
        ]
        codes = [a.status_code for a in answers]
        assert codes[0] == codes[1], [a.text for a in answers]
        shown = [_shown(a.json()) for a in answers]
        assert shown[0] == shown[1], json.dumps(shown)
        if codes[0] >= 300:
            return None
        return [a.json()["data"][key]["id"] for a in answers]

    def members(self, audiences: list[list[str]]) -> list[list[list[str]]]:
        return members_on_each(self.pair, audiences)

    def feeds(self) -> list[list[tuple[Any, ...]]]:
        """Each list's events: type, cause, instant, payload (its ids aside), sorted: one
        write's events of several audiences come in their audiences' order, by random id."""
        sides = []
        for t, lst in zip(self.pair, self.lists, strict=True):
            events = t.ok("GET", f"/v4/events?listId={lst}&limit=1000")["events"]
            shown = [
                (e["type"], e["cause"], e["occurredAt"], _shown(e.get("payload"))) for e in events
            ]
            sides.append(sorted(shown, key=json.dumps))
        return sides


TALLY = {"audiences": 0, "moves": 0}
"""What the generated runs made: the last test of the module checks that they made some."""


@settings(
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(where_clauses(max_leaves=3), min_size=1, max_size=4),
    st.lists(records(), min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(0, 3), records()), max_size=6),
)
def test_the_driver_path_answers_stores_and_announces_as_sqlalchemy(
    pair: tuple[Tenant, Tenant],
    filters: list[dict[str, Any]],
    contacts: list[dict[str, Any]],
    updates: list[tuple[int, dict[str, Any]]],
) -> None:
    twins = Twins(pair)
    audiences = []
    for index, where in enumerate(filters):
        body = {"name": f"a{index}", "filters": json.dumps(where)}
        made = twins.create("/v4/audiences", body, "audience")
        if made is not None:
            audiences.append(made)
    made_contacts = []
    for index, record in enumerate(contacts):
        body = {**_body(record), "email": f"c{index}@example.com"}
        made = twins.create("/v4/contacts", body, "contact")
        if made is not None:
            made_contacts.append(made)
    for place, record in updates:
        if not made_contacts:
            break
        ids = made_contacts[place % len(made_contacts)]
        twins.both("PATCH", [f"/v4/contacts/{i}" for i in ids], _body(record))
        members = twins.members(audiences)
        assert all(on == off for on, off in members)
    feeds = twins.feeds()
    assert feeds[0] == feeds[1]
    TALLY["audiences"] += len(audiences)
    TALLY["moves"] += sum(1 for event in feeds[0] if event[0].startswith("audience."))


def test_a_duplicate_email_is_a_conflict_on_either_path(pair: tuple[Tenant, Tenant]) -> None:
    """The driver's `IntegrityError` is wrapped as SQLAlchemy wraps it, so the route's
    handling of it (409) holds."""
    twins = Twins(pair)
    first = twins.create("/v4/contacts", {"email": "ada@example.com"}, "contact")
    second = twins.create("/v4/contacts", {"email": "bob@example.com"}, "contact")
    assert first is not None and second is not None
    for tenant, contact_id in zip(pair, second, strict=True):
        answer = tenant.call(
            "PATCH", f"/v4/contacts/{contact_id}", json={"email": "ada@example.com"}
        )
        assert answer.status_code == 409, answer.text
        # The transaction was rolled back and the connection lent again works.
        assert tenant.ok("PATCH", f"/v4/contacts/{contact_id}", json={"points": 3})


def test_a_disabled_key_is_refused_on_either_path(pair: tuple[Tenant, Tenant]) -> None:
    """The key's read (`Database.read_row`) on the driver path reads the flag as a bool."""
    for side in pair:
        tenant = make_tenant(side.client)
        assert tenant.call("GET", "/v4/lists").status_code == 200
        digest = keys.digest(tenant.private_key)
        with tenant.client.app.state.db.transaction() as session:
            session.execute(update(ApiKey).where(ApiKey.digest == digest).values(disabled=True))
        refused = tenant.call("GET", "/v4/lists")
        assert refused.status_code == 401
        assert refused.json()["message"] == "This API key is disabled"


def test_the_engine_events_see_the_driver_path(pair: tuple[Tenant, Tenant]) -> None:
    """The write meter counts the same writes and rows on both paths; on SQLite the mirror
    of the driver's prepared statements holds the texts the driver path ran."""
    records_by_side = []
    for tenant in pair:
        lst = tenant.new_list()["id"]
        audience = {"name": "hi", "listId": lst, "filters": '{"points": {"gte": 10}}'}
        tenant.ok("POST", "/v4/audiences", 201, json=audience)
        contact = tenant.new_contact(lst, "ada@example.com", points=1)
        database: Database = tenant.client.app.state.db
        with WriteMeter(database.engine) as meter:
            for points in (50, 2, 70):
                tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"points": points})
        records_by_side.append(meter.records)
        if database.engine.dialect.name == "sqlite" and database.driver_statements:
            with database.engine.connect() as connection:
                kept: prepared_cache.Kept = connection.connection.info[
                    "audiencefilter_prepared_texts"
                ]
                assert any(t.startswith("UPDATE contacts SET points") for t in kept.texts)
    assert len(records_by_side[0]) == 3
    assert records_by_side[0] == records_by_side[1]


def test_a_statement_the_driver_path_cannot_run_goes_through_sqlalchemy(
    pair: tuple[Tenant, Tenant],
) -> None:
    """An expanding `IN` is rendered at each run: it is not compiled once, so SQLAlchemy runs
    it, and both ways give the same rows, keys and types; text runs on the cursor, its columns
    named by it."""
    database: Database = pair[0].client.app.state.db
    expanding = select(Contact.id, Contact.createdAt).where(
        Contact.id.in_(bindparam("ids", expanding=True))
    )
    fixed = select(Contact.id, Contact.createdAt, Contact.isVerified).where(
        Contact.id == bindparam("id")
    )
    with database.transaction() as session:
        contact_id = session.scalar(select(Contact.id).limit(1))
        assert contact_id is not None
        connection = session.connection()
        assert not driver_path.compiled_for(expanding, connection.dialect, ["ids"]).direct
        assert driver_path.compiled_for(fixed, connection.dialect, ["id"]).direct
        for statement, parameters in (
            (expanding, {"ids": [contact_id]}),
            (fixed, {"id": contact_id}),
        ):
            on = driver_path.execute(connection, statement, parameters)
            off = driver_path.execute(connection, statement, parameters, direct=False)
            assert on == off
            assert on.rows and [type(v) for v in on.rows[0]] == [type(v) for v in off.rows[0]]
        plain = text("SELECT :n AS one, 'x' AS two")
        assert driver_path.compiled_for(plain, connection.dialect, ["n"]).direct
        on = driver_path.execute(connection, plain, {"n": 1})
        assert on == driver_path.execute(connection, plain, {"n": 1}, direct=False)
        assert on.keys == ("one", "two") and on.rows == [(1, "x")]


def test_an_object_made_from_a_driver_path_row_is_what_the_orm_loads(
    pair: tuple[Tenant, Tenant],
) -> None:
    """`driver_path.loaded`: the list the door makes from its row equals the list the ORM
    loads (every column, those read and those left to load later), is persistent and clean
    (its commit writes nothing of it), writes a change of one column alone, and is the
    session's own object where the session holds one already."""
    database: Database = pair[0].client.app.state.db
    list_id = pair[0].new_list(timeZone="Asia/Tokyo")["id"]
    given = (List.id, List.name, List.timeZone, List.customFields, List.startFrom)
    with database.transaction() as session:
        row = driver_path.run(
            session, select(*given).where(List.id == bindparam("id")), {"id": list_id}
        )
        values = dict(zip([c.key for c in given], row.rows[0], strict=True))
        made = driver_path.loaded(session, List, values)
        state = inspect(made)
        assert state.persistent and not session.dirty and not session.new
        assert set(state.unloaded) == {c.key for c in inspect(List).column_attrs} - set(values)
        columns = [c.key for c in inspect(List).column_attrs]
        seen = [getattr(made, key) for key in columns]  # the rest read by one statement
        assert driver_path.loaded(session, List, values) is made
        session.flush()
        assert not session.dirty
        made.title = "made"
    with database.transaction() as session:
        orm = session.get(List, list_id)
        changed = {"title": "made", "updatedAt": orm.updatedAt}  # and its onupdate
        assert [getattr(orm, key) for key in columns] == [
            changed.get(key, value) for key, value in zip(columns, seen, strict=True)
        ]
        assert seen[columns.index("timeZone")] == "Asia/Tokyo"
        held = session.get(List, list_id)
        assert driver_path.loaded(session, List, {"id": list_id, "name": "other"}) is held
        assert held is not None and held.name != "other"


def test_the_generated_runs_made_audiences_and_moved_members(pair: tuple[Tenant, Tenant]) -> None:
    """The differential test compared something: its audiences were accepted and members
    entered or left them (run after it, in this module's order)."""
    assert TALLY["audiences"] > 0
    assert TALLY["moves"] > 0
