"""Actions: points go up on create and back down on delete, atomically, also under load."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial

import httpx
import pytest

from .conftest import ApiClient, Tenant, gather, make_tenant, url_settings

CONCURRENT = 100


def _points(tenant: Tenant, contact_id: str) -> int:
    return tenant.ok("GET", f"/v4/contacts/{contact_id}")["contact"]["points"]  # type: ignore[no-any-return]


def test_action_lifecycle_moves_points(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "doer@example.com", points=10)
    body = {"name": "shared", "increase": 5, "subId": contact["id"]}
    action = tenant.ok("POST", "/v4/actions", 201, json=body)["action"]
    assert set(action) == {"id", "name", "increase", "createdAt", "updatedAt", "subId"}
    assert (action["name"], action["increase"], action["subId"]) == ("shared", 5, contact["id"])
    assert _points(tenant, contact["id"]) == 15
    minus = tenant.ok(
        "POST", "/v4/actions", 201, json={"name": "penalty", "increase": -3, "subId": contact["id"]}
    )["action"]
    assert _points(tenant, contact["id"]) == 12

    assert tenant.ok("GET", f"/v4/actions/{action['id']}")["action"] == action
    listed = tenant.ok("GET", "/v4/actions", params={"subId": contact["id"]})
    assert [item["id"] for item in listed["actions"]] == [minus["id"], action["id"]]
    assert listed["pagination"] == {"total": 2, "pages": 1, "currentPage": 1, "perPage": 20000}

    assert tenant.ok("DELETE", f"/v4/actions/{action['id']}")["action"] == action
    assert _points(tenant, contact["id"]) == 7
    again = tenant.call("DELETE", f"/v4/actions/{action['id']}")
    assert again.status_code == 404 and again.json()["message"] == "Action not found"
    assert _points(tenant, contact["id"]) == 7


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"increase": 1, "subId": "x"}, "/body/name"),
        ({"name": "a", "subId": "x"}, "/body/increase"),
        ({"name": "a", "increase": True, "subId": "x"}, "/body/increase"),
        ({"name": "a", "increase": "1", "subId": "x"}, "/body/increase"),
        ({"name": "a", "increase": 10**9 + 1, "subId": "x"}, "/body/increase"),
        ({"name": "", "increase": 1, "subId": "x"}, "/body/name"),
    ],
)
def test_invalid_actions_are_400(tenant: Tenant, body: dict[str, object], pointer: str) -> None:
    response = tenant.call("POST", "/v4/actions", json=body)
    assert response.status_code == 400
    assert pointer in [issue["pointer"] for issue in response.json()["errors"]]


def test_action_for_unknown_contact_is_404(tenant: Tenant) -> None:
    response = tenant.call("POST", "/v4/actions", json={"name": "a", "increase": 1, "subId": "no"})
    assert response.status_code == 404 and response.json()["message"] == "Contact not found"
    assert tenant.call("GET", "/v4/actions", params={"subId": "no"}).status_code == 404
    assert tenant.call("GET", "/v4/actions").status_code == 400


def _refusals(responses: list[httpx.Response], caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the failed answers said and the service logged of them, a few, short: a list of a
    hundred statuses hid them."""
    said = [response.text[:200] for response in responses if response.status_code >= 500]
    logged = [record.getMessage()[:300] for record in caplog.records if record.levelno >= 40]
    return said[:3] + logged[:3]


def _hammer(client: ApiClient, tenant: Tenant, caplog: pytest.LogCaptureFixture) -> None:
    """100 concurrent increments, then 50 concurrent deletes racing with 50 more increments."""
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "busy@example.com")
    body = {"name": "click", "increase": 1, "subId": contact["id"]}
    post: Callable[[], Awaitable[httpx.Response]] = partial(
        client.http.post, "/v4/actions", json=body, headers=tenant.headers
    )
    responses = gather(client, [post] * CONCURRENT)
    statuses = Counter(response.status_code for response in responses)
    assert statuses == {201: CONCURRENT}, _refusals(responses, caplog)
    assert _points(tenant, contact["id"]) == CONCURRENT

    doomed = [response.json()["data"]["action"]["id"] for response in responses[:50]]
    deletes: list[Callable[[], Awaitable[httpx.Response]]] = [
        partial(client.http.delete, f"/v4/actions/{action_id}", headers=tenant.headers)
        for action_id in doomed + doomed  # each delete sent twice: only one may count
    ]
    mixed = gather(client, deletes + [post] * 50)
    counted = Counter(response.status_code for response in mixed)
    assert counted == {201: 50, 200: 50, 404: 50}, _refusals(mixed, caplog)
    assert _points(tenant, contact["id"]) == CONCURRENT
    listed = tenant.ok("GET", "/v4/actions", params={"subId": contact["id"]})
    assert listed["pagination"]["total"] == CONCURRENT


def test_concurrent_point_changes_lose_nothing_on_sqlite(
    client: ApiClient, tenant: Tenant, caplog: pytest.LogCaptureFixture
) -> None:
    _hammer(client, tenant, caplog)


@pytest.mark.postgres
def test_concurrent_point_changes_lose_nothing_on_postgres(
    app_factory: Callable[..., ApiClient],
    pg_database: Callable[[], str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = url_settings(
        pg_database(),
        auto_migrate=True,
        db_pool_size=20,
    )
    api = app_factory(settings)
    _hammer(api, make_tenant(api), caplog)
