"""A list's time zone, on SQLite and PostgreSQL: set and shown, validated, used by calendar
rules naming no zone (stored audiences, previews, contact searches, the field catalogue, the
clock's boundaries), and a change of it judged as a change of each smart audience, its events
saying why.

The clock stands at 2031-06-01 12:00 UTC, which is 2031-06-02 02:00 in Pacific/Kiritimati
(UTC+14): "birthday anniversary within today" selects the June 1 birthdays in UTC and the
June 2 ones there.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.db.engine import Database
from audiencefilter.service.domain.use_cases import membership_clock
from audiencefilter.service.ground import clock

from .conftest import Tenant
from .hands import Hands, clocked_world

START = datetime(2031, 6, 1, 12, tzinfo=UTC)
EAST = "Pacific/Kiritimati"
TODAY = "birthday anniversary within today"
CAUSE = "list.time_zone_changed"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Tenant, Hands]]:
    yield from clocked_world(
        request, tmp_path / "zone.db", START, **{"audience_build_background_above": 6}
    )


def _list(tenant: Tenant, contacts: int = 2, **fields: Any) -> tuple[str, dict[str, str]]:
    """A list with a `birthday` date field and contacts born on June 1 and June 2 (and as
    many more, alternately, as `contacts` asks); its id and the email to id of each."""
    lst = tenant.new_list(**fields)["id"]
    body = {"key": "birthday", "type": "date", "label": "Birthday"}
    tenant.ok("POST", f"/v4/lists/{lst}/fields", 201, json=body)
    ids = {}
    for n in range(contacts):
        day = "1990-06-01" if n % 2 == 0 else "1990-06-02"
        email = f"c{n}@example.com"
        ids[email] = tenant.new_contact(lst, email, data={"birthday": day})["id"]
    return lst, ids


def _audience(tenant: Tenant, lst: str, text: str = TODAY) -> str:
    body = {"name": "Birthdays", "listId": lst, "filtersText": text}
    return str(tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"])


def _members(tenant: Tenant, audience_id: str) -> set[str]:
    page = tenant.ok("GET", f"/v4/audiences/{audience_id}/members", params={"limit": 1000})
    return {member["contactId"] for member in page["members"]}


def _events(tenant: Tenant, lst: str) -> list[dict[str, Any]]:
    page = tenant.ok("GET", "/v4/events", params={"listId": lst, "limit": 1000})
    assert not page["hasMore"]
    return list(page["events"])


def _zone(tenant: Tenant, lst: str, zone: str) -> dict[str, Any]:
    return dict(tenant.ok("PATCH", f"/v4/lists/{lst}", json={"timeZone": zone})["list"])


def test_a_list_shows_its_zone_utc_by_default(world: tuple[Tenant, Hands]) -> None:
    tenant, _ = world
    plain = tenant.new_list()
    assert plain["timeZone"] == "UTC"
    east = tenant.new_list(timeZone=EAST)
    assert east["timeZone"] == EAST
    assert tenant.ok("GET", f"/v4/lists/{east['id']}")["list"]["timeZone"] == EAST
    listed = tenant.ok("GET", "/v4/lists")["lists"]
    assert {item["id"]: item["timeZone"] for item in listed}[east["id"]] == EAST
    assert _zone(tenant, plain["id"], "Europe/Paris")["timeZone"] == "Europe/Paris"


@pytest.mark.parametrize(
    ("zone", "hint"),
    [("europe/paris", "Europe/Paris"), ("Mars/Olympus", "IANA"), ("", ""), ("+02:00", "")],
)
def test_a_zone_that_is_no_iana_name_is_refused(
    world: tuple[Tenant, Hands], zone: str, hint: str
) -> None:
    tenant, _ = world
    lst = tenant.new_list()["id"]
    for method, url, body in [
        ("POST", "/v4/lists", {"name": "Zoned", "timeZone": zone}),
        ("PATCH", f"/v4/lists/{lst}", {"timeZone": zone}),
    ]:
        response = tenant.call(method, url, json=body)
        assert response.status_code == 400, response.text
        assert "timeZone" in response.text and hint in response.text
    assert tenant.ok("GET", f"/v4/lists/{lst}")["list"]["timeZone"] == "UTC"


def test_calendar_rules_without_a_zone_use_the_lists(world: tuple[Tenant, Hands]) -> None:
    tenant, _ = world
    lst, ids = _list(tenant, timeZone=EAST)
    june_2 = {ids["c1@example.com"]}
    assert _members(tenant, _audience(tenant, lst)) == june_2
    # A rule naming its own zone keeps it.
    in_utc = _audience(tenant, lst, 'birthday anniversary within today in "UTC"')
    assert _members(tenant, in_utc) == {ids["c0@example.com"]}
    preview = tenant.ok("POST", "/v4/audiences/preview", json={"listId": lst, "filtersText": TODAY})
    assert {c["id"] for c in preview["contacts"]} == june_2
    found = tenant.ok("GET", "/v4/contacts", params={"listId": lst, "filtersText": TODAY})
    assert {c["id"] for c in found["contacts"]} == june_2
    catalogue = tenant.ok("GET", f"/v4/lists/{lst}/fields")
    assert catalogue["defaultTimeZone"] == EAST


def test_changing_the_zone_moves_members_and_says_why(world: tuple[Tenant, Hands]) -> None:
    tenant, _ = world
    lst, ids = _list(tenant)
    audience = _audience(tenant, lst)
    fixed = _audience(tenant, lst, 'birthday anniversary within today in "UTC"')
    june_1, june_2 = {ids["c0@example.com"]}, {ids["c1@example.com"]}
    assert _members(tenant, audience) == june_1
    before = len(_events(tenant, lst))
    _zone(tenant, lst, EAST)
    assert _members(tenant, audience) == june_2
    assert _members(tenant, fixed) == june_1
    new = _events(tenant, lst)[before:]
    moved = {
        (e["type"], e["contactId"], e["cause"]) for e in new if e["type"] != "audience.updated"
    }
    assert moved == {
        ("audience.left", ids["c0@example.com"], CAUSE),
        ("audience.entered", ids["c1@example.com"], CAUSE),
    }
    updated = [e for e in new if e["type"] == "audience.updated"]
    assert {(e["audienceId"], e["cause"]) for e in updated} == {(audience, CAUSE), (fixed, CAUSE)}
    # The same zone again changes nothing and writes no event.
    count = len(_events(tenant, lst))
    _zone(tenant, lst, EAST)
    assert len(_events(tenant, lst)) == count
    # Back to UTC: back to the June 1 birthdays.
    _zone(tenant, lst, "UTC")
    assert _members(tenant, audience) == june_1


def test_an_audience_read_after_the_change_keeps_the_new_zone(
    world: tuple[Tenant, Hands],
) -> None:
    """A later update of the audience (its name) and a new filter both read in the new zone."""
    tenant, _ = world
    lst, ids = _list(tenant)
    audience = _audience(tenant, lst)
    _zone(tenant, lst, EAST)
    tenant.ok("PATCH", f"/v4/audiences/{audience}", json={"name": "Renamed"})
    assert _members(tenant, audience) == {ids["c1@example.com"]}
    tenant.ok(
        "PATCH", f"/v4/audiences/{audience}", json={"filtersText": TODAY + " AND points >= 0"}
    )
    assert _members(tenant, audience) == {ids["c1@example.com"]}


def test_the_clock_moves_members_at_the_lists_midnight(world: tuple[Tenant, Hands]) -> None:
    """In Kiritimati June 2 ends at 10:00 UTC on June 2: the June 2 birthdays leave then, the
    June 3 one enters, and not at UTC midnight."""
    tenant, hands = world
    lst, ids = _list(tenant, timeZone=EAST)
    june_3 = tenant.new_contact(lst, "june3@example.com", data={"birthday": "1990-06-03"})["id"]
    audience = _audience(tenant, lst)
    assert _members(tenant, audience) == {ids["c1@example.com"]}
    database: Database = tenant.client.app.state.db
    for moment, expected in [
        (datetime(2031, 6, 2, 9, 59, tzinfo=UTC), {ids["c1@example.com"]}),
        (datetime(2031, 6, 2, 10, 0, 1, tzinfo=UTC), {june_3}),
    ]:
        hands.at = moment
        with clock.using(hands):
            membership_clock.run_due(database)
        assert _members(tenant, audience) == expected


def test_a_large_list_is_built_again_in_the_background(world: tuple[Tenant, Hands]) -> None:
    tenant, _ = world
    lst, ids = _list(tenant, contacts=8)
    audience = tenant.ok(
        "POST",
        "/v4/audiences",
        201,
        json={"name": "B", "listId": lst, "filtersText": TODAY},
        params={"wait": "true"},
    )["audience"]["id"]
    june_1 = {cid for email, cid in ids.items() if int(email[1:].split("@")[0]) % 2 == 0}
    assert _members(tenant, audience) == june_1
    _zone(tenant, lst, EAST)
    shown = tenant.ok("GET", f"/v4/audiences/{audience}")["audience"]
    assert shown["status"] == "building"
    database: Database = tenant.client.app.state.db
    with clock.using(world[1]):
        membership_clock.run_due(database)
    assert _members(tenant, audience) == set(ids.values()) - june_1
    causes = {e["cause"] for e in _events(tenant, lst) if e["type"] == "audience.entered"}
    assert CAUSE in causes


def test_a_filter_read_before_a_zone_change_is_refused(world: tuple[Tenant, Hands]) -> None:
    """The zone a filter was read in is checked under the list's lock: a filter read in UTC
    is not stored once the list moved to another zone."""
    from audiencefilter.service.db.models import List
    from audiencefilter.service.domain import custom_fields
    from audiencefilter.service.domain.audience_filters import read_filters
    from audiencefilter.service.ground.errors import Conflict

    tenant, _ = world
    lst, _ = _list(tenant, timeZone=EAST)
    read = read_filters(None, TODAY, {"birthday": "date"}, zone="UTC")
    database: Database = tenant.client.app.state.db
    with database.reading() as session:
        stored = session.get(List, lst)
        assert stored is not None
        with pytest.raises(Conflict, match="timeZone"):
            custom_fields.check_unchanged(stored, read.fields)
        in_east = read_filters(None, TODAY, {"birthday": "date"}, zone=EAST)
        custom_fields.check_unchanged(stored, in_east.fields)
