"""Versions of an audience, on SQLite and PostgreSQL: every creation and every change of name,
mode or filter kept with the key that made it and when; listed, shown, restored (a new
version); membership history at T naming the version in force; existing audiences given their
version 1 by migration 0014.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text

from audiencefilter.service.db import migrate
from audiencefilter.service.db.engine import Database, make_engine
from audiencefilter.service.db.models import Account, ApiKey
from audiencefilter.service.domain.accounts import issue_key

from .conftest import Tenant, make_tenant, sqlite_settings, url_settings
from .hands import Hands, clocked_world, stamp

START = datetime(2031, 6, 1, 8, tzinfo=UTC)
GERMANY = 'country = "DE"'
FRANCE = 'country = "FR"'


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Tenant, Hands]]:
    yield from clocked_world(request, tmp_path / "versions.db", START)


def _key_id(tenant: Tenant) -> str:
    database: Database = tenant.client.app.state.db
    statement = select(ApiKey.id).where(
        ApiKey.accountId == tenant.account_id, ApiKey.type == "private"
    )
    with database.reading() as session:
        return str(session.scalars(statement).one())


def _setup(tenant: Tenant) -> tuple[str, dict[str, str], str]:
    """A list with a German and a French contact, and a smart audience of the German."""
    lst = tenant.new_list()["id"]
    ids = {
        country: tenant.new_contact(lst, f"{country.lower()}@example.com", country=country)["id"]
        for country in ("DE", "FR")
    }
    body = {"name": "Germany", "listId": lst, "filtersText": GERMANY}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    return lst, ids, audience


def _versions(tenant: Tenant, audience: str, **params: Any) -> dict[str, Any]:
    return dict(tenant.ok("GET", f"/v4/audiences/{audience}/versions", params=params))


def _members(tenant: Tenant, audience: str, **params: Any) -> dict[str, Any]:
    return dict(tenant.ok("GET", f"/v4/audiences/{audience}/members", params=params))


def test_each_change_is_a_version_with_its_key_and_time(world: tuple[Tenant, Hands]) -> None:
    tenant, hands = world
    _, _, audience = _setup(tenant)
    created = hands.at
    renamed = hands.later()
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"name": "Deutschland"})
    changed = hands.later()
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"filtersText": FRANCE})
    hands.later()
    # Nothing changed: no version.
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"name": "Deutschland"})
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"filtersText": FRANCE})
    listed = _versions(tenant, audience)
    versions = listed["versions"]
    assert [v["number"] for v in versions] == [3, 2, 1]
    assert listed["pagination"]["total"] == 3
    assert [v["current"] for v in versions] == [True, False, False]
    assert [v["name"] for v in versions] == ["Deutschland", "Deutschland", "Germany"]
    assert [v["filtersText"] for v in versions] == [FRANCE, GERMANY, GERMANY]
    assert {v["keyId"] for v in versions} == {_key_id(tenant)}
    assert [v["mode"] for v in versions] == ["smart"] * 3
    assert [v["restoredFrom"] for v in versions] == [None] * 3
    moments = [datetime.fromisoformat(v["createdAt"].replace("Z", "+00:00")) for v in versions]
    assert moments == [changed, renamed, created]
    page = _versions(tenant, audience, limit=1, page=2)
    assert [v["number"] for v in page["versions"]] == [2]
    shown = tenant.ok("GET", f"/v4/audiences/{audience}/versions/1")["version"]
    assert shown == versions[2]


def test_a_mode_change_is_a_version(world: tuple[Tenant, Hands]) -> None:
    tenant, _ = world
    _, _, audience = _setup(tenant)
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"mode": "manual"})
    versions = _versions(tenant, audience)["versions"]
    assert [(v["number"], v["mode"]) for v in versions] == [(2, "manual"), (1, "smart")]


def test_an_unknown_version_or_audience_is_a_404(
    world: tuple[Tenant, Hands],
) -> None:
    tenant, _ = world
    _, _, audience = _setup(tenant)
    other = make_tenant(tenant.client)
    for who, url in [
        (tenant, f"/v4/audiences/{audience}/versions/2"),
        (tenant, "/v4/audiences/aud_00000000000000000000/versions"),
        (other, f"/v4/audiences/{audience}/versions"),
        (other, f"/v4/audiences/{audience}/versions/1"),
    ]:
        assert who.call("GET", url).status_code == 404, url
    response = other.call("POST", f"/v4/audiences/{audience}/versions/1/restore")
    assert response.status_code == 404
    assert tenant.call("GET", f"/v4/audiences/{audience}/versions/0").status_code == 400


def test_a_restore_is_a_new_version_and_moves_members(world: tuple[Tenant, Hands]) -> None:
    tenant, hands = world
    lst, ids, audience = _setup(tenant)
    hands.later()
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"name": "France", "filtersText": FRANCE})
    assert {m["contactId"] for m in _members(tenant, audience)["members"]} == {ids["FR"]}
    hands.later()
    restored = tenant.ok("POST", f"/v4/audiences/{audience}/versions/1/restore")["audience"]
    assert (restored["name"], restored["filtersText"]) == ("Germany", GERMANY)
    assert {c["id"] for c in restored["subs"]} == {ids["DE"]}
    versions = _versions(tenant, audience)["versions"]
    assert [(v["number"], v["restoredFrom"], v["current"]) for v in versions] == [
        (3, 1, True),
        (2, None, False),
        (1, None, False),
    ]
    assert versions[0]["filters"] == versions[2]["filters"]
    # Restoring the version in force again still makes a version.
    tenant.ok("POST", f"/v4/audiences/{audience}/versions/3/restore")
    assert _versions(tenant, audience)["versions"][0]["restoredFrom"] == 3
    page = tenant.ok("GET", "/v4/events", params={"listId": lst, "limit": 1000})
    entered = [e for e in page["events"] if e["type"] == "audience.entered"]
    assert (entered[-1]["contactId"], entered[-1]["cause"]) == (ids["DE"], "audience.updated")


def test_a_restore_reads_the_filter_with_the_lists_fields_now(
    world: tuple[Tenant, Hands],
) -> None:
    """A version whose filter names a custom field since removed is refused, as typing it
    would be; the audience stays as it is."""
    tenant, _ = world
    lst = tenant.new_list()["id"]
    body = {"key": "plan", "type": "string", "label": "Plan"}
    tenant.ok("POST", f"/v4/lists/{lst}/fields", 201, json=body)
    created = {"name": "Pro", "listId": lst, "filtersText": 'plan = "pro"'}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=created)["audience"]["id"]
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"filtersText": GERMANY})
    tenant.ok("DELETE", f"/v4/lists/{lst}/fields/plan")
    response = tenant.call("POST", f"/v4/audiences/{audience}/versions/1/restore")
    assert response.status_code == 400, response.text
    assert len(_versions(tenant, audience)["versions"]) == 2
    assert tenant.ok("GET", f"/v4/audiences/{audience}")["audience"]["filtersText"] == GERMANY


def test_a_manual_version_restores_without_a_filter(world: tuple[Tenant, Hands]) -> None:
    tenant, _ = world
    lst = tenant.new_list()["id"]
    body = {"name": "Hand-picked", "listId": lst}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"mode": "smart", "filtersText": GERMANY})
    restored = tenant.ok("POST", f"/v4/audiences/{audience}/versions/1/restore")["audience"]
    assert (restored["mode"], restored["filters"]) == ("manual", None)


def test_history_at_an_instant_names_the_version_in_force(world: tuple[Tenant, Hands]) -> None:
    tenant, hands = world
    before = hands.at - timedelta(minutes=1)
    _, ids, audience = _setup(tenant)
    first = hands.later()
    hands.later()
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"filtersText": FRANCE})
    second = hands.later()
    expected = [(before, None, set()), (first, 1, {ids["DE"]}), (second, 2, {ids["FR"]})]
    for moment, version, members in expected:
        page = _members(tenant, audience, at=stamp(moment))
        assert page["version"] == version, moment
        assert {m["contactId"] for m in page["members"]} == members
    assert _members(tenant, audience)["version"] == 2


def test_another_key_is_named_by_its_version(world: tuple[Tenant, Hands]) -> None:
    tenant, _ = world
    _, _, audience = _setup(tenant)
    first = _key_id(tenant)
    database: Database = tenant.client.app.state.db
    with database.transaction() as session:
        account = session.get(Account, tenant.account_id)
        assert account is not None
        key, secret = issue_key(session, account, "private", None, label="crm-sync")
        second = key.id
    headers = {"apiKey": secret}
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"name": "Other"}, headers=headers)
    versions = _versions(tenant, audience)["versions"]
    assert [v["keyId"] for v in versions] == [second, first]
    assert [v["keyLabel"] for v in versions] == ["crm-sync", None]
    one = tenant.ok("GET", f"/v4/audiences/{audience}/versions/2")["version"]
    assert one["keyLabel"] == "crm-sync"


def test_deleting_an_audience_deletes_its_versions(world: tuple[Tenant, Hands]) -> None:
    from audiencefilter.service.db.models import AudienceVersion  # the table of migration 0014

    tenant, _ = world
    _, _, audience = _setup(tenant)
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"name": "Other"})
    tenant.ok("DELETE", f"/v4/audiences/{audience}")
    database: Database = tenant.client.app.state.db
    statement = select(func.count()).where(AudienceVersion.audienceId == audience)
    with database.reading() as session:
        assert session.scalar(statement) == 0


ROWS = [
    "INSERT INTO accounts (id, name, plan, created_at) VALUES ('acc_1', 'a', 'free', '{at}')",
    "INSERT INTO lists (id, account_id, url, name, mode, branding, referrals, start_from, "
    "columns, created_at, updated_at) VALUES ('lst_1', 'acc_1', 'u', 'L', 'waitlist', "
    "{true}, {true}, 1, '[]', '{at}', '{at}')",
    "INSERT INTO audiences (id, list_id, name, mode, filters, created_at, updated_at) VALUES "
    """('aud_1', 'lst_1', 'Germany', 'smart', '{{"country":"DE"}}', '{at}', '{at}')""",
]


def _backfilled(engine_url: str, true: str) -> None:
    engine = make_engine(url_settings(engine_url))
    try:
        migrate.upgrade(engine, "0013")
        with engine.begin() as connection:
            for row in ROWS:
                connection.execute(text(row.format(at="2030-01-02 03:04:05", true=true)))
        migrate.upgrade(engine)
        with engine.connect() as connection:
            found = connection.execute(
                text(
                    "SELECT audience_id, number, name, mode, filters, key_id FROM audience_versions"
                )
            ).all()
            zone = connection.execute(text("SELECT time_zone FROM lists")).scalar_one()
        assert [tuple(row) for row in found] == [
            ("aud_1", 1, "Germany", "smart", '{"country":"DE"}', None)
        ]
        assert zone == "UTC"
    finally:
        engine.dispose()


def test_migration_gives_existing_audiences_their_version_1_on_sqlite(tmp_path: Path) -> None:
    _backfilled(sqlite_settings(tmp_path / "m.db").database_url, "1")


@pytest.mark.postgres
def test_migration_gives_existing_audiences_their_version_1_on_postgres(
    pg_database: Callable[[], str],
) -> None:
    _backfilled(pg_database(), "true")
