"""Values every engine stores alike: `data`, `points`, emails, and key rotations that keep state.

Replays of what an outside attack found: `data` with NUL or a 65-bit integer was accepted and a
contact's `audiences` then disagreed with the audience's `subs`; actions pushed `points` past
the documented ±(2^53-1); composed and decomposed `á` made two contacts; `keys rotate` on a
disabled or expired key issued a fresh, enabled one.
"""

from __future__ import annotations

import json
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.ground.fields import MAX_SAFE_INTEGER

from .conftest import Tenant
from .test_rotate import Cli


@pytest.mark.parametrize(
    ("data", "pointer"),
    [
        ({"note": "a\x00b"}, "/body/data"),
        ({"nested": [{"deep": "\x00"}]}, "/body/data"),
        ({"a\x00": 1}, "/body/data"),
        ({"big": 2**64}, "/body/data"),
        ({"big": -(2**63) - 1}, "/body/data"),
        ({"list": [1, 2**63]}, "/body/data"),
    ],
)
def test_data_the_engines_would_store_differently_is_refused(
    tenant: Tenant, data: dict[str, Any], pointer: str
) -> None:
    lst = tenant.new_list()
    body = {"email": "a@example.com", "listId": lst["id"], "data": data}
    refused = tenant.call("POST", "/v4/contacts", json=body)
    assert refused.status_code in (400, 422), refused.text
    errors = refused.json()["errors"]
    assert errors[0]["pointer"].startswith(pointer)
    assert "NUL" in errors[0]["detail"] or "64 bits" in errors[0]["detail"]
    contact = tenant.new_contact(lst["id"], "b@example.com")
    patched = tenant.call("PATCH", f"/v4/contacts/{contact['id']}", json={"data": data})
    assert patched.status_code in (400, 422)


def test_the_largest_64_bit_integers_are_kept(tenant: Tenant) -> None:
    lst = tenant.new_list()
    data = {"top": 2**63 - 1, "bottom": -(2**63)}
    contact = tenant.new_contact(lst["id"], "a@example.com", data=data)
    assert contact["data"] == data


def _act(tenant: Tenant, contact_id: str, increase: int) -> Any:
    body = {"name": "push", "increase": increase, "subId": contact_id}
    return tenant.call("POST", "/v4/actions", json=body)


def test_actions_keep_points_within_the_documented_range(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "a@example.com", points=MAX_SAFE_INTEGER - 10)
    assert _act(tenant, contact["id"], 10).status_code == 201
    refused = _act(tenant, contact["id"], 1)
    assert refused.status_code == 422, refused.text
    assert "2^53" in refused.json()["message"]
    assert refused.json()["errors"][0]["pointer"] == "/body/increase"
    assert (
        tenant.ok("GET", f"/v4/contacts/{contact['id']}")["contact"]["points"] == MAX_SAFE_INTEGER
    )
    actions = tenant.ok("GET", f"/v4/actions?subId={contact['id']}")["actions"]
    assert len(actions) == 1  # the refused action was not recorded


def test_deleting_an_action_cannot_push_points_out_of_range(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "a@example.com", points=0)
    action = _act(tenant, contact["id"], 1000).json()["data"]["action"]
    low = -MAX_SAFE_INTEGER + 500
    patched = tenant.call("PATCH", f"/v4/contacts/{contact['id']}", json={"points": low})
    assert patched.status_code == 200
    refused = tenant.call("DELETE", f"/v4/actions/{action['id']}")
    assert refused.status_code == 422, refused.text
    assert tenant.ok("GET", f"/v4/contacts/{contact['id']}")["contact"]["points"] == low
    assert tenant.call("GET", f"/v4/actions/{action['id']}").status_code == 200


def test_emails_are_unicode_normalised_before_uniqueness(tenant: Tenant) -> None:
    lst = tenant.new_list()
    composed = unicodedata.normalize("NFC", "álvaro@example.com")
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    first = tenant.new_contact(lst["id"], decomposed)
    assert first["email"] == composed
    again = tenant.call("POST", "/v4/contacts", json={"email": composed, "listId": lst["id"]})
    assert again.status_code == 409
    found = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"], "email": decomposed})
    assert [c["id"] for c in found["contacts"]] == [first["id"]]
    filters = json.dumps({"email": {"equals": composed}})
    by_filter = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"], "filters": filters})
    assert [c["id"] for c in by_filter["contacts"]] == [first["id"]]


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path / "rotate.db", capsys)


def test_rotate_refuses_a_disabled_key(cli: Cli) -> None:
    old = cli.create("private")
    cli("keys", "disable", old)
    message = cli("keys", "rotate", old, status=1)[-1]
    assert "is disabled" in message and "enable" in message
    assert len(cli("keys", "list")) == 1 + 1  # header line and the one key: nothing issued


def test_rotate_refuses_an_expired_key(cli: Cli) -> None:
    past = (datetime.now(UTC) - timedelta(hours=1)).replace(microsecond=0)
    old = cli.create("private", "--expires-at", past.isoformat())
    message = cli("keys", "rotate", old, status=1)[-1]
    assert "expired" in message
