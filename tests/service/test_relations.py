"""Relation filters in the service: smart audiences over a contact's `actions` and over the
list's other `audiences`, in previews, stored membership, listings and events, on SQLite and
PostgreSQL. Stored membership is checked against live evaluation (a preview runs the filter in
SQL at the moment of the request) after every write that can move it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.app import create_app

from .audience_helpers import manual, member_emails, smart
from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings
from .hands import Hands

START = datetime(2030, 1, 1, tzinfo=UTC)
SHARED_TWICE_IN_30_DAYS: dict[str, Any] = {
    "actions": {
        "count": {"gte": 2},
        "where": {"name": "share", "createdAt": {"gte": {"ago": "P30D"}}},
    }
}
EVER_SHARED: dict[str, Any] = {"actions": {"some": {"name": "share"}}}


@pytest.fixture
def hands() -> Hands:
    return Hands(START)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(request: pytest.FixtureRequest, tmp_path: Path, hands: Hands) -> Iterator[ApiClient]:
    if request.param == "sqlite":
        settings = sqlite_settings(tmp_path / "relations.db", membership_sweep_seconds=0)
    else:
        pg_migrated_database: Callable[[], str] = request.getfixturevalue("pg_migrated_database")
        settings = url_settings(
            pg_migrated_database(), auto_migrate=True, membership_sweep_seconds=0
        )
    client = ApiClient(create_app(settings, clock=hands))
    yield client
    client.close()


@pytest.fixture
def tenant(api: ApiClient) -> Tenant:
    return make_tenant(api)


def _act(tenant: Tenant, contact_id: str, name: str = "share") -> str:
    body = {"name": name, "increase": 1, "subId": contact_id}
    return tenant.ok("POST", "/v4/actions", 201, json=body)["action"]["id"]  # type: ignore[no-any-return]


def _live(tenant: Tenant, list_id: str, flt: Any) -> list[str]:
    """Who the filter selects now, judged in SQL by the preview."""
    body = {"listId": list_id, "filters": flt}
    preview = tenant.ok("POST", "/v4/audiences/preview", json=body)
    return sorted(c["email"] for c in preview["contacts"])


def _listed(tenant: Tenant, list_id: str, flt: Any) -> list[str]:
    import json

    params = {"listId": list_id, "filters": json.dumps(flt)}
    page = tenant.ok("GET", "/v4/contacts", params=params)
    return sorted(c["email"] for c in page["contacts"])


def _causes(tenant: Tenant, list_id: str, after: str | None) -> tuple[list[Any], str]:
    query: dict[str, Any] = {"listId": list_id, "limit": 1000}
    if after is not None:
        query["after"] = after
    page = tenant.ok("GET", "/v4/events", params=query)
    found = [
        (e["type"].split(".")[1], e["contactId"], e["cause"])
        for e in page["events"]
        if e["type"] in ("audience.entered", "audience.left")
    ]
    return found, page["next"]


def _agrees(tenant: Tenant, list_id: str, audience_id: str, flt: Any) -> list[str]:
    stored = sorted(member_emails(tenant, audience_id))
    assert stored == _live(tenant, list_id, flt) == _listed(tenant, list_id, flt)
    return stored


@pytest.mark.parametrize(
    "flt",
    [
        EVER_SHARED,
        SHARED_TWICE_IN_30_DAYS,
        {"actions": {"none": {}}},
        {"actions": {"every": {"increase": {"gt": 0}}}},
        {
            "actions": {
                "sum": {"increase": {"gte": 5}},
                "max": {"createdAt": {"lt": {"ago": "P1D"}}},
            }
        },
        {"audiences": {"some": {"name": "VIP"}}},
        {"audiences": {"count": {"gte": 0}}},
    ],
)
def test_relation_filters_never_fail_the_server(tenant: Tenant, flt: Any) -> None:
    lst = tenant.new_list()["id"]
    tenant.new_contact(lst, "ada@example.com")
    for method, path, kwargs in [
        ("POST", "/v4/audiences/preview", {"json": {"listId": lst, "filters": flt}}),
        ("GET", "/v4/contacts", {"params": {"listId": lst, "filters": str(flt).replace("'", '"')}}),
        ("POST", "/v4/audiences", {"json": {"name": "R", "listId": lst, "filters": flt}}),
    ]:
        response = tenant.call(method, path, **kwargs)
        assert response.status_code < 500, response.text


def test_membership_follows_actions(tenant: Tenant, hands: Hands) -> None:
    lst = tenant.new_list()["id"]
    ada = tenant.new_contact(lst, "ada@example.com")["id"]
    bob = tenant.new_contact(lst, "bob@example.com")["id"]
    sharers = smart(tenant, lst, SHARED_TWICE_IN_30_DAYS, "Sharers")["id"]
    ever = smart(tenant, lst, EVER_SHARED, "Ever")["id"]
    assert _agrees(tenant, lst, sharers, SHARED_TWICE_IN_30_DAYS) == []
    _, cursor = _causes(tenant, lst, None)

    first = _act(tenant, ada)
    assert _agrees(tenant, lst, ever, EVER_SHARED) == ["ada@example.com"]
    assert _agrees(tenant, lst, sharers, SHARED_TWICE_IN_30_DAYS) == []
    _act(tenant, ada, "like")  # not a share: no change
    assert _agrees(tenant, lst, sharers, SHARED_TWICE_IN_30_DAYS) == []
    _act(tenant, ada)
    _act(tenant, bob)
    assert _agrees(tenant, lst, sharers, SHARED_TWICE_IN_30_DAYS) == ["ada@example.com"]
    assert _agrees(tenant, lst, ever, EVER_SHARED) == ["ada@example.com", "bob@example.com"]
    found, cursor = _causes(tenant, lst, cursor)
    assert found == [
        ("entered", ada, "action.created"),
        ("entered", ada, "action.created"),
        ("entered", bob, "action.created"),
    ]

    tenant.ok("DELETE", f"/v4/actions/{first}")
    assert _agrees(tenant, lst, sharers, SHARED_TWICE_IN_30_DAYS) == []
    assert _agrees(tenant, lst, ever, EVER_SHARED) == ["ada@example.com", "bob@example.com"]
    found, cursor = _causes(tenant, lst, cursor)
    assert found == [("left", ada, "action.deleted")]

    # The window moves with the clock: the sweep brings the stored rows along.
    hands.at = START + timedelta(days=1)
    _act(tenant, ada)
    _act(tenant, bob)
    _act(tenant, bob)
    assert sorted(member_emails(tenant, sharers)) == ["ada@example.com", "bob@example.com"]
    _, cursor = _causes(tenant, lst, cursor)
    hands.at = START + timedelta(days=30, hours=12)  # ada's first two shares are 30.5 days old
    assert tenant.client.app.state.sweeper.run_once() == 1
    found, cursor = _causes(tenant, lst, cursor)
    assert found == [("left", ada, "clock")]
    assert _agrees(tenant, lst, sharers, SHARED_TWICE_IN_30_DAYS) == ["bob@example.com"]


def test_manual_members_count_as_related_audiences(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    ada = tenant.new_contact(lst, "ada@example.com")["id"]
    tenant.new_contact(lst, "bob@example.com")
    vip = manual(tenant, lst, "VIP")["id"]
    tenant.ok("POST", f"/v4/audiences/{vip}/members", json={"contactIds": [ada]})
    flt = {"audiences": {"some": {"name": "VIP"}}}
    assert _live(tenant, lst, flt) == ["ada@example.com"]
    assert _listed(tenant, lst, flt) == ["ada@example.com"]


def _in(*ids: str) -> dict[str, Any]:
    return {"audiences": {"some": {"id": {"in": list(ids)}}}}


def _not_in(audience_id: str) -> dict[str, Any]:
    return {"audiences": {"none": {"id": audience_id}}}


def test_audiences_of_audiences_follow_every_write(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    ada = tenant.new_contact(lst, "ada@example.com", points=150)["id"]
    bob = tenant.new_contact(lst, "bob@example.com", points=120)["id"]
    tenant.new_contact(lst, "cyd@example.com", points=5)
    vip = smart(tenant, lst, {"points": {"gte": 100}}, "VIP")["id"]
    churned = manual(tenant, lst, "Churned")["id"]
    kept_filter = {"AND": [_in(vip), _not_in(churned)]}
    kept = smart(tenant, lst, kept_filter, "Kept VIP")["id"]
    # An audience over an audience over audiences: resolved in dependency order.
    top_filter = {"audiences": {"count": {"gte": 1}, "where": {"id": kept}}}
    top = smart(tenant, lst, top_filter, "Top")["id"]
    both = ["ada@example.com", "bob@example.com"]
    assert _agrees(tenant, lst, kept, kept_filter) == both
    assert _agrees(tenant, lst, top, top_filter) == both
    _, cursor = _causes(tenant, lst, None)

    tenant.ok("POST", f"/v4/audiences/{churned}/members", json={"contactIds": [bob]})
    assert _agrees(tenant, lst, kept, kept_filter) == ["ada@example.com"]
    assert _agrees(tenant, lst, top, top_filter) == ["ada@example.com"]
    found, cursor = _causes(tenant, lst, cursor)
    assert found == [
        ("entered", bob, "members.added"),
        ("left", bob, "members.added"),
        ("left", bob, "members.added"),
    ]

    tenant.ok("PATCH", f"/v4/contacts/{ada}", json={"points": 1})  # per contact, in order
    assert _agrees(tenant, lst, kept, kept_filter) == []
    assert _agrees(tenant, lst, top, top_filter) == []
    found, cursor = _causes(tenant, lst, cursor)
    assert [(kind, who) for kind, who, _ in found] == [("left", ada)] * 3

    tenant.ok("PATCH", f"/v4/audiences/{vip}", json={"filters": {"points": {"lte": 10}}})
    assert _agrees(tenant, lst, kept, kept_filter) == ["ada@example.com", "cyd@example.com"]
    assert _agrees(tenant, lst, top, top_filter) == ["ada@example.com", "cyd@example.com"]

    tenant.ok("DELETE", f"/v4/audiences/{churned}/members/{bob}")
    assert _agrees(tenant, lst, kept, kept_filter) == ["ada@example.com", "cyd@example.com"]


def test_audience_references_are_checked(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    other = tenant.new_list()["id"]
    a = smart(tenant, lst, {"points": {"gte": 1}}, "A")["id"]
    b = smart(tenant, lst, _in(a), "B")["id"]
    elsewhere = manual(tenant, other, "Elsewhere")["id"]

    def refused(method: str, path: str, body: Any, status: int = 400) -> str:
        response = tenant.call(method, path, json=body)
        assert response.status_code == status, response.text
        return response.text

    for flt in (_in(elsewhere), _in("aud_unknown")):
        text = refused("POST", "/v4/audiences", {"name": "X", "listId": lst, "filters": flt})
        assert "not an audience of this list" in text
    for flt in (
        {"audiences": {"some": {"name": {"contains": "A"}}}},  # `name = "A"` reads as A's id
        {"audiences": {"every": {"id": a}}},
        {"audiences": {"count": {"gte": 2}}},
    ):
        text = refused("POST", "/v4/audiences", {"name": "X", "listId": lst, "filters": flt})
        assert "by id" in text
    text = refused("PATCH", f"/v4/audiences/{a}", {"filters": _in(b)})
    assert "cycle" in text and "B (" in text
    text = refused("PATCH", f"/v4/audiences/{a}", {"filters": _in(a)})
    assert "cycle" in text
    text = refused("DELETE", f"/v4/audiences/{a}", None, 409)
    assert f"A ({a})" in text and f"B ({b})" in text
    tenant.ok("DELETE", f"/v4/audiences/{b}")
    tenant.ok("DELETE", f"/v4/audiences/{a}")


def test_the_sweep_moves_audiences_that_read_relative_ones(tenant: Tenant, hands: Hands) -> None:
    lst = tenant.new_list()["id"]
    ada = tenant.new_contact(lst, "ada@example.com")["id"]
    new = smart(tenant, lst, {"createdAt": {"gte": {"ago": "P1D"}}}, "New")["id"]
    reader = smart(tenant, lst, _in(new), "Reads New")["id"]
    assert member_emails(tenant, reader) == ["ada@example.com"]
    _, cursor = _causes(tenant, lst, None)
    hands.at = START + timedelta(days=2)
    assert tenant.client.app.state.sweeper.run_once() == 2
    found, _ = _causes(tenant, lst, cursor)
    assert found == [("left", ada, "clock"), ("left", ada, "clock")]
    assert _agrees(tenant, lst, reader, _in(new)) == []


def test_an_action_write_never_loads_the_contacts_history(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each action write loaded every action of the contact into Python to decide behaviour
    audiences (a contact with 1,000 actions cost 4x a new one); audiences over actions alone are
    now decided in SQL for the written contact, and no related row is loaded."""
    from audiencefilter.service.domain import relations

    lst = tenant.new_list()["id"]
    ada = tenant.new_contact(lst, "ada@example.com")["id"]
    sharers = smart(tenant, lst, SHARED_TWICE_IN_30_DAYS, "Sharers")["id"]
    ever = smart(tenant, lst, EVER_SHARED, "Ever")["id"]
    loaded: list[Any] = []
    real = relations.related_rows

    def counting(session: Any, contact_ids: Any, wanted: Any) -> Any:
        loaded.append(set(wanted))
        return real(session, contact_ids, wanted)

    monkeypatch.setattr(relations, "related_rows", counting)
    for _ in range(3):
        _act(tenant, ada)
    assert loaded == []
    assert member_emails(tenant, sharers) == ["ada@example.com"]
    assert member_emails(tenant, ever) == ["ada@example.com"]
    assert _agrees(tenant, lst, sharers, SHARED_TWICE_IN_30_DAYS) == ["ada@example.com"]
