"""Every deletion leaves no membership or event behind, on both engines.

`memberships` and `events` have no foreign keys (migration 0012: their checks cost every
moved row of a contact update), so what a deletion must take with it is the code's to delete:
a deleted contact leaves its audiences (its `audience.left` events say so), a deleted audience
loses its members the same way, and a deleted list takes its memberships and events. After
each deletion, of a contact, a smart and a manual audience, and a list with everything in it,
the tables hold no row naming what is gone, and the other list is untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from .audience_helpers import manual, smart
from .conftest import ApiClient, Tenant, make_tenant, settings_on

ORPHANS = {
    "memberships of a deleted audience": (
        "SELECT count(*) FROM memberships m WHERE NOT EXISTS "
        "(SELECT 1 FROM audiences a WHERE a.id = m.audience_id)"
    ),
    "memberships of a deleted contact": (
        "SELECT count(*) FROM memberships m WHERE NOT EXISTS "
        "(SELECT 1 FROM contacts c WHERE c.id = m.contact_id)"
    ),
    "events of a deleted list": (
        "SELECT count(*) FROM events e WHERE NOT EXISTS "
        "(SELECT 1 FROM lists l WHERE l.id = e.list_id)"
    ),
}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "deletions.db", membership_sweep_seconds=0))


def _orphans(api: ApiClient) -> dict[str, int]:
    with api.app.state.db.engine.connect() as connection:
        return {name: connection.execute(text(sql)).scalar_one() for name, sql in ORPHANS.items()}


def _count(api: ApiClient, sql: str, **params: Any) -> int:
    with api.app.state.db.engine.connect() as connection:
        return int(connection.execute(text(sql), params).scalar_one())


Filled = tuple[str, list[dict[str, Any]], dict[str, Any], dict[str, Any]]


def _filled_list(tenant: Tenant) -> Filled:
    """A list of four contacts, a smart audience of the rich and a manual one of two."""
    list_id = tenant.new_list()["id"]
    people = [tenant.new_contact(list_id, f"p{i}@example.com", points=i * 10) for i in range(4)]
    rich = smart(tenant, list_id, {"points": {"gte": 10}}, name="rich")
    hand = manual(tenant, list_id, name="hand")
    chosen = [people[0]["id"], people[3]["id"]]
    tenant.ok("POST", f"/v4/audiences/{hand['id']}/members", json={"contactIds": chosen})
    return list_id, people, rich, hand


def _members(api: ApiClient, audience_id: str) -> int:
    sql = "SELECT count(*) FROM memberships WHERE audience_id = :a"
    return _count(api, sql, a=audience_id)


def test_every_deletion_leaves_no_row_naming_what_is_gone(api: ApiClient) -> None:
    tenant = make_tenant(api)
    list_id, people, rich, hand = _filled_list(tenant)
    kept_list, kept_people, kept_rich, kept_hand = _filled_list(tenant)
    assert (_members(api, rich["id"]), _members(api, hand["id"])) == (3, 2)
    assert _orphans(api) == dict.fromkeys(ORPHANS, 0)

    tenant.ok("DELETE", f"/v4/contacts/{people[3]['id']}")
    assert (_members(api, rich["id"]), _members(api, hand["id"])) == (2, 1)
    assert _orphans(api) == dict.fromkeys(ORPHANS, 0)

    tenant.ok("DELETE", f"/v4/audiences/{rich['id']}")
    tenant.ok("DELETE", f"/v4/audiences/{hand['id']}")
    assert (_members(api, rich["id"]), _members(api, hand["id"])) == (0, 0)
    assert _orphans(api) == dict.fromkeys(ORPHANS, 0)

    again = smart(tenant, list_id, {"points": {"gte": 0}}, name="everyone")
    assert _members(api, again["id"]) == 3
    assert _count(api, "SELECT count(*) FROM events WHERE list_id = :l", l=list_id) > 0
    tenant.ok("DELETE", f"/v4/lists/{list_id}")
    assert _members(api, again["id"]) == 0
    assert _count(api, "SELECT count(*) FROM events WHERE list_id = :l", l=list_id) == 0
    assert _orphans(api) == dict.fromkeys(ORPHANS, 0)

    assert (_members(api, kept_rich["id"]), _members(api, kept_hand["id"])) == (3, 2)
    assert len(kept_people) == 4
    assert _count(api, "SELECT count(*) FROM events WHERE list_id = :l", l=kept_list) > 0
