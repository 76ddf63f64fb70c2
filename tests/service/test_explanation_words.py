"""An explanation in a person's words: `words` names fields by the labels the builder shows
(a custom field by its label, never `data.birthday`) and the actions or audiences that decided
a behaviour by name, never by id; `seen` keeps the library's exact words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import ApiClient, Tenant, make_tenant, settings_on


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "words.db", membership_sweep_seconds=0))


def _explained(tenant: Tenant, list_id: str, contact_id: str, text: str) -> dict[str, Any]:
    body = {"listId": list_id, "filtersText": text, "explainContactId": contact_id}
    return tenant.ok("POST", "/v4/audiences/preview", json=body)["explanation"]  # type: ignore[no-any-return]


def _leaves(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [leaf for child in node["children"] or [] for leaf in _leaves(child)] or [node]


def test_fields_by_their_labels_and_actions_by_name(api: ApiClient) -> None:
    tenant = make_tenant(api)
    lst = tenant.new_list()
    field = {"key": "birthday", "type": "date", "label": "Date of birth"}
    tenant.ok("POST", f"/v4/lists/{lst['id']}/fields", 201, json=field)
    data = {"birthday": "1990-05-01", "plan": "pro"}
    ann = tenant.new_contact(lst["id"], "ann@example.com", points=150, data=data)
    body = {"name": "share", "increase": 2, "subId": ann["id"]}
    action = tenant.ok("POST", "/v4/actions", 201, json=body)["action"]
    text = (
        'birthday = 1990-05-01 and points >= 100 and createdAt is not null and data.plan = "pro"'
        ' and actions some (name = "share") and data.missing = 1'
    )
    birthday, points, created, plan, shares, missing = _leaves(
        _explained(tenant, lst["id"], ann["id"], text)
    )
    assert birthday["seen"] == 'data.birthday = "1990-05-01"'  # the library's words, kept
    assert birthday["words"] == 'Date of birth = "1990-05-01"'
    assert points["words"] == "Points = 152"  # the action added 2
    assert created["words"].startswith("Signed up at = ")
    assert plan["words"] == 'Custom data › plan = "pro"'
    assert missing["words"] == "Custom data › missing is missing"
    assert action["id"] in shares["seen"]
    day = action["createdAt"][:10]
    assert shares["words"] == f'1 actions where name = "share": share on {day}'
    assert action["id"] not in shares["words"]


def test_audiences_by_name_and_an_id_in_quotes_left_alone(api: ApiClient) -> None:
    tenant = make_tenant(api)
    lst = tenant.new_list()
    ann = tenant.new_contact(lst["id"], "ann@example.com", points=5)
    body = {"name": "Everyone", "listId": lst["id"], "filtersText": "points >= 0"}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    text = f'audiences some (id = "{audience["id"]}")'
    explanation = _explained(tenant, lst["id"], ann["id"], text)
    assert explanation["words"] == f'1 audiences where id = "{audience["id"]}": “Everyone”'
