"""One ownership query for every kind of row: found with its list for the owner, 404 for others.

`owned()` is the one lookup the `owned_*` helpers share, so a list, a contact, an audience, an
action and a webhook are checked against the account the same way, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.db.models import Action, Audience, Base, Contact, List, Webhook
from audiencefilter.service.db.queries import owned
from audiencefilter.service.ground.errors import NotFound

from .audience_helpers import manual
from .conftest import ApiClient, Tenant, make_tenant, settings_on
from .test_webhooks import LOCAL, new_hook


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    path = tmp_path / "owned.db"
    hooks: dict[str, Any] = {"webhook_worker": False, "webhook_allowed_networks": LOCAL}
    return app_factory(settings_on(request, path, membership_sweep_seconds=0, **hooks))


def _rows(tenant: Tenant, list_id: str) -> dict[type[Base], str]:
    """One row of each owned kind in `list_id`, by model."""
    contact = tenant.new_contact(list_id, "owned@example.com")
    body = {"name": "a", "increase": 1, "subId": contact["id"]}
    action = tenant.ok("POST", "/v4/actions", 201, json=body)["action"]
    hook = new_hook(tenant, list_id, "http://127.0.0.1:9/hook")
    return {
        List: list_id,
        Contact: contact["id"],
        Audience: manual(tenant, list_id)["id"],
        Action: action["id"],
        Webhook: hook["id"],
    }


def _owned(api: ApiClient, account_id: str, model: type[Base], row_id: str) -> tuple[Any, str]:
    with api.app.state.db.reading() as session:
        row, lst = owned(session, account_id, model, row_id)
        return row.id, lst.id


def test_each_kind_is_found_with_its_list_by_its_owner_only(api: ApiClient) -> None:
    tenant, other = make_tenant(api), make_tenant(api)
    list_id = str(tenant.new_list()["id"])
    rows = _rows(tenant, list_id)
    for model, row_id in rows.items():
        assert _owned(api, tenant.account_id, model, row_id) == (row_id, list_id)
        for account_id, probe in [(other.account_id, row_id), (tenant.account_id, "no/such")]:
            with pytest.raises(NotFound, match=f"{model.__name__} not found"):
                _owned(api, account_id, model, probe)
