"""A filter may name another audience of its list by name: preview, create and update resolve
the name to the audience's id alike, and refuse a name no audience or several audiences have."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import ApiClient, Tenant, make_tenant, settings_on


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def tenant(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> Tenant:
    api = app_factory(settings_on(request, tmp_path / "names.db", membership_sweep_seconds=0))
    return make_tenant(api)


def _list_with_vip(tenant: Tenant) -> tuple[str, str]:
    """A list of four contacts, two of them (points >= 100) in the audience "VIP"."""
    list_id: str = tenant.new_list()["id"]
    for i, points in enumerate((5, 50, 150, 500)):
        tenant.new_contact(list_id, f"c{i}@example.com", points=points)
    body = {"name": "VIP", "listId": list_id, "filtersText": "points >= 100"}
    vip: str = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    return list_id, vip


def _preview(tenant: Tenant, list_id: str, text: str) -> Any:
    body = {"listId": list_id, "filtersText": text}
    return tenant.call("POST", "/v4/audiences/preview", json=body)


def test_a_name_reads_as_the_id_in_preview_create_and_update(tenant: Tenant) -> None:
    list_id, vip = _list_with_vip(tenant)
    text = 'audiences some (name = "VIP") and points < 400'
    preview = _preview(tenant, list_id, text)
    assert preview.status_code == 200, preview.text
    assert preview.json()["data"]["count"] == 1
    assert vip in preview.json()["data"]["filtersText"]
    body = {"name": "Kept VIP", "listId": list_id, "filtersText": text}
    created = tenant.call("POST", "/v4/audiences", json=body)
    assert created.status_code == 201, created.text
    kept = created.json()["data"]["audience"]
    assert vip in kept["filtersText"]
    wider = {"filtersText": 'audiences some (name in ["VIP"]) or points < 10'}
    updated = tenant.call("PATCH", f"/v4/audiences/{kept['id']}", json=wider)
    assert updated.status_code == 200, updated.text
    assert vip in updated.json()["data"]["audience"]["filtersText"]
    # Renaming VIP changes nothing the stored filter reads: it holds the id.
    tenant.ok("PATCH", f"/v4/audiences/{vip}", json={"name": "Gold"})
    read = tenant.ok("GET", f"/v4/audiences/{kept['id']}")
    assert vip in read["audience"]["filtersText"] and read["pagination"]["total"] == 3


def _refused(response: Any, words: str) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    assert body["error"] == 400 and words in body["message"]
    return body


def test_an_unknown_name_is_refused_in_preview_create_and_update(tenant: Tenant) -> None:
    list_id, vip = _list_with_vip(tenant)
    text = 'audiences some (name = "Nobody")'
    _refused(_preview(tenant, list_id, text), '"Nobody"')
    body = {"name": "Nobody's", "listId": list_id, "filtersText": text}
    _refused(tenant.call("POST", "/v4/audiences", json=body), '"Nobody"')
    patch = tenant.call("PATCH", f"/v4/audiences/{vip}", json={"filtersText": text})
    _refused(patch, '"Nobody"')


def test_an_ambiguous_name_is_refused_with_the_candidates(tenant: Tenant) -> None:
    list_id, vip = _list_with_vip(tenant)
    body = {"name": "VIP", "listId": list_id, "filtersText": "points >= 400"}
    twin = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    text = 'audiences none (name = "VIP")'
    for response in (
        _preview(tenant, list_id, text),
        tenant.call(
            "POST",
            "/v4/audiences",
            json={"name": "Not VIP", "listId": list_id, "filtersText": text},
        ),
    ):
        refusal = _refused(response, '"VIP"')
        assert vip in refusal["message"] and twin in refusal["message"]
        assert vip in refusal["errors"][0]["detail"] and twin in refusal["errors"][0]["detail"]


def test_another_lists_audience_is_no_candidate(tenant: Tenant) -> None:
    list_id, vip = _list_with_vip(tenant)
    _, other_vip = _list_with_vip(tenant)
    preview = _preview(tenant, list_id, 'audiences some (name = "VIP")')
    assert preview.status_code == 200, preview.text
    shown = preview.json()["data"]
    assert shown["count"] == 2 and vip in shown["filtersText"]
    assert other_vip not in shown["filtersText"]
