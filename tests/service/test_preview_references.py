"""Preview and create read an audience reference by one rule (`references.check_known`): an
id that is not an audience of the list is refused by both, where preview once answered it
as 0 contacts with no warning; an audience of the list is read by both. On SQLite and
PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import ApiClient, Tenant, make_tenant, settings_on

UNKNOWN = "Filters refer to an audience that is not an audience of this list"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def tenant_on(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> Tenant:
    api = app_factory(settings_on(request, tmp_path / "refs.db", membership_sweep_seconds=0))
    return make_tenant(api)


def _in(audience_id: str) -> dict[str, Any]:
    return {"audiences": {"some": {"id": audience_id}}}


def _vip(tenant: Tenant) -> tuple[str, str, str]:
    """A list, its VIP audience (one member) and another list's audience."""
    lst = tenant.new_list()["id"]
    tenant.new_contact(lst, "vip@example.com", points=50)
    tenant.new_contact(lst, "low@example.com", points=1)
    body = {"listId": lst, "name": "VIP", "filters": {"points": {"gte": 10}}}
    vip = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    other = tenant.new_list()["id"]
    body = {"listId": other, "name": "Elsewhere", "filters": {"points": {"gte": 10}}}
    elsewhere = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    return lst, vip, elsewhere


def test_preview_refuses_an_unknown_reference_as_create_does(tenant_on: Tenant) -> None:
    lst, _, elsewhere = _vip(tenant_on)
    for missing in ("aud_missing", elsewhere):
        where = _in(missing)
        created = tenant_on.call(
            "POST", "/v4/audiences", json={"listId": lst, "name": "x", "filters": where}
        )
        previewed = tenant_on.call(
            "POST", "/v4/audiences/preview", json={"listId": lst, "filters": where}
        )
        for response in (created, previewed):
            assert response.status_code == 400, response.text
            assert response.json()["message"] == UNKNOWN
            assert missing in str(response.json()["errors"])


def test_preview_and_create_read_a_known_reference_alike(tenant_on: Tenant) -> None:
    lst, vip, _ = _vip(tenant_on)
    where = _in(vip)
    previewed = tenant_on.ok(
        "POST", "/v4/audiences/preview", json={"listId": lst, "filters": where}
    )
    body = {"listId": lst, "name": "In VIP", "filters": where}
    created = tenant_on.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    assert previewed["count"] == 1
    assert [c["email"] for c in previewed["contacts"]] == [c["email"] for c in created["subs"]]
