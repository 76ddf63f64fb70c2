"""`GET /v4/lists/{listId}/action-names`: the names a list's actions carry, for the builder's
pick-list, most frequent first; another list's or another account's names never show."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import ApiClient, Tenant, make_tenant, settings_on


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "names.db", membership_sweep_seconds=0))


def _act(tenant: Tenant, contact_id: str, *names: str) -> None:
    for name in names:
        body = {"name": name, "increase": 1, "subId": contact_id}
        tenant.ok("POST", "/v4/actions", 201, json=body)


def test_the_names_of_a_list_most_frequent_first(api: ApiClient) -> None:
    tenant = make_tenant(api)
    shop, other = tenant.new_list(), tenant.new_list()
    ann = tenant.new_contact(shop["id"], "ann@example.com")
    bob = tenant.new_contact(shop["id"], "bob@example.com")
    _act(tenant, ann["id"], "share", "purchase", "share")
    _act(tenant, bob["id"], "share", "like", "Purchase")
    _act(tenant, tenant.new_contact(other["id"], "eve@example.com")["id"], "unsubscribe")
    names = tenant.ok("GET", f"/v4/lists/{shop['id']}/action-names")["names"]
    assert names == [
        {"name": "share", "count": 3},
        {"name": "Purchase", "count": 1},
        {"name": "like", "count": 1},
        {"name": "purchase", "count": 1},
    ]
    limited = tenant.ok("GET", f"/v4/lists/{shop['id']}/action-names?limit=2")["names"]
    assert [n["name"] for n in limited] == ["share", "Purchase"]
    empty = tenant.new_list()
    assert tenant.ok("GET", f"/v4/lists/{empty['id']}/action-names")["names"] == []


def test_another_accounts_list_is_not_found(api: ApiClient) -> None:
    owner, stranger = make_tenant(api), make_tenant(api)
    shop = owner.new_list()
    _act(owner, owner.new_contact(shop["id"], "ann@example.com")["id"], "share")
    answer = stranger.call("GET", f"/v4/lists/{shop['id']}/action-names")
    assert answer.status_code == 404
    public = api.get(f"/v4/lists/{shop['id']}/action-names", headers=owner.public_headers)
    assert public.status_code == 403
