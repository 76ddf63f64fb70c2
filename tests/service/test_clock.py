"""The service on a clock of its own: relative dates, timestamps and key expiry move with it.

A smart audience of "signed up in the last day" must lose a contact when a day has passed, in
SQL (its members, a preview, the contacts listing) and in memory (each contact's `audiences`)
alike, without the test waiting a day.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from audiencefilter.service.app import create_app

from .audience_helpers import contact_audiences, member_emails, smart
from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings
from .hands import Hands

START = datetime(2030, 1, 1, tzinfo=UTC)
LAST_DAY = {"createdAt": {"gte": {"ago": "P1D"}}}


@pytest.fixture
def hands() -> Hands:
    return Hands(START)


@pytest.fixture
def api(tmp_path: Path, hands: Hands) -> Iterator[ApiClient]:
    client = ApiClient(create_app(sqlite_settings(tmp_path / "clock.db"), clock=hands))
    yield client
    client.close()


def _listed(tenant: Tenant, list_id: str, filters: object) -> list[str]:
    params = {"listId": list_id, "filters": json.dumps(filters)}
    return sorted(c["email"] for c in tenant.ok("GET", "/v4/contacts", params=params)["contacts"])


def _previewed(tenant: Tenant, list_id: str) -> int:
    body = {"listId": list_id, "filters": LAST_DAY}
    return int(tenant.ok("POST", "/v4/audiences/preview", json=body)["count"])


def test_relative_audiences_follow_the_service_clock(api: ApiClient, hands: Hands) -> None:
    tenant = make_tenant(api)
    lst = tenant.new_list()
    early = tenant.new_contact(lst["id"], "early@example.com")
    assert early["createdAt"] == "2030-01-01T00:00:00Z"
    hands.advance(hours=12)
    late = tenant.new_contact(lst["id"], "late@example.com")
    audience = smart(tenant, lst["id"], LAST_DAY)

    both = ["early@example.com", "late@example.com"]
    assert sorted(member_emails(tenant, audience["id"])) == both
    assert _listed(tenant, lst["id"], LAST_DAY) == both
    assert _previewed(tenant, lst["id"]) == 2
    assert audience["id"] in contact_audiences(tenant, early["id"])

    hands.advance(hours=18)  # `early` is 30 hours old, `late` 18
    assert member_emails(tenant, audience["id"]) == ["late@example.com"]
    assert _listed(tenant, lst["id"], LAST_DAY) == ["late@example.com"]
    assert _previewed(tenant, lst["id"]) == 1
    assert audience["id"] not in contact_audiences(tenant, early["id"])
    assert audience["id"] in contact_audiences(tenant, late["id"])

    hands.advance(days=1)
    assert member_emails(tenant, audience["id"]) == []
    assert contact_audiences(tenant, late["id"]) == []


def test_keys_expire_on_the_service_clock(api: ApiClient, hands: Hands) -> None:
    tenant = make_tenant(api, expires_at=START + timedelta(hours=1))
    assert tenant.call("GET", "/v4/lists").status_code == 200
    hands.advance(hours=2)
    response = tenant.call("GET", "/v4/lists")
    assert response.status_code == 401
    assert response.json()["message"] == "This API key has expired"


def test_without_a_clock_the_service_uses_the_system_clock(client: ApiClient) -> None:
    tenant = make_tenant(client)
    before = datetime.now(UTC)
    created = tenant.new_contact(tenant.new_list()["id"], "now@example.com")["createdAt"]
    moment = datetime.fromisoformat(created.replace("Z", "+00:00"))
    assert before - timedelta(seconds=1) <= moment <= datetime.now(UTC) + timedelta(seconds=1)
