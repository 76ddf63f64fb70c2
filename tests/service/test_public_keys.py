"""Public keys reveal nothing, spend only their own budget, and share no idempotency records.

Replays of what an outside attack found: a sign-up's answer carried the contact's audiences, a
repeat sign-up answered 409 (an email oracle), forbidden calls with the public key spent the
account's quota, and a public key replaying a private key's `Idempotency-Key` got its answer.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

import httpx

from audiencefilter.service.db.models import Contact

from .audience_helpers import member_emails
from .conftest import ApiClient, Tenant, make_tenant
from .test_idempotency import _count

KEY = "Idempotency-Key"


def sign_up(tenant: Tenant, list_id: str, email: str, **headers: str) -> dict[str, object]:
    response = tenant.client.post(
        "/v4/contacts",
        json={"email": email, "listId": list_id},
        headers={**tenant.public_headers, **headers},
    )
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def test_a_sign_up_answer_names_no_audience_and_no_other_contact(tenant: Tenant) -> None:
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "first@example.com", points=50)
    filters = json.dumps({"email": {"endsWith": "@example.com"}})
    body = {"name": "Secret plans", "listId": lst["id"], "filters": filters}
    tenant.ok("POST", "/v4/audiences", 201, json=body)
    answer = sign_up(tenant, lst["id"], "new@example.com")
    assert answer == {"data": {"contact": {"email": "new@example.com", "listId": lst["id"]}}}
    assert "Secret plans" not in json.dumps(answer)
    # the contact exists, with its audiences, for the private key
    contacts = tenant.ok("GET", f"/v4/contacts?listId={lst['id']}&email=new@example.com")
    assert contacts["contacts"][0]["audiences"][0]["name"] == "Secret plans"


def test_a_repeat_sign_up_answers_like_a_new_one_and_changes_nothing(tenant: Tenant) -> None:
    lst = tenant.new_list()
    existing = tenant.new_contact(lst["id"], "known@example.com", firstName="Ann", points=7)
    fresh = sign_up(tenant, lst["id"], "unknown@example.com")
    repeat = sign_up(tenant, lst["id"], "Known@Example.com")
    assert set(repeat["data"]) == set(fresh["data"]) == {"contact"}  # type: ignore[call-overload]
    assert repeat == {"data": {"contact": {"email": "Known@Example.com", "listId": lst["id"]}}}
    again = tenant.ok("GET", f"/v4/contacts/{existing['id']}")["contact"]
    assert again["firstName"] == "Ann" and again["points"] == 7
    assert again["email"] == "known@example.com"
    assert _count(tenant.client, Contact, Contact.listId == lst["id"]) == 2
    # the private key still learns of duplicates
    duplicate = tenant.call(
        "POST", "/v4/contacts", json={"email": "known@example.com", "listId": lst["id"]}
    )
    assert duplicate.status_code == 409


def test_forbidden_calls_with_the_public_key_never_spend_the_private_budget(
    app_factory: Callable[..., ApiClient],
) -> None:
    api = app_factory(rate_limit_free="5/minute")
    tenant = make_tenant(api)
    statuses = [
        tenant.call("GET", "/v4/lists", headers=tenant.public_headers).status_code for _ in range(7)
    ]
    assert statuses == [403] * 5 + [429] * 2
    mine = tenant.call("GET", "/v4/lists")
    assert mine.status_code == 200
    assert mine.headers["ratelimit"].startswith('"free";r=4;t=')


def test_a_public_key_cannot_replay_a_private_key_s_record(tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = {"email": "private@example.com", "listId": lst["id"]}
    key = str(uuid.uuid4())
    first = tenant.call("POST", "/v4/contacts", json=body, headers={KEY: key})
    assert first.status_code == 201
    replay = tenant.client.post(
        "/v4/contacts", json=body, headers={**tenant.public_headers, KEY: key}
    )
    assert replay.status_code == 201
    assert replay.headers.get("Idempotent-Replayed") is None
    assert first.json()["data"]["contact"]["id"] not in replay.text
    assert replay.json() == {"data": {"contact": body}}
    # and the other way round: the private key's retry is its own request
    other_key = str(uuid.uuid4())
    signed = tenant.client.post(
        "/v4/contacts",
        json={**body, "email": "public@example.com"},
        headers={**tenant.public_headers, KEY: other_key},
    )
    assert signed.status_code == 201
    private = tenant.call(
        "POST",
        "/v4/contacts",
        json={**body, "email": "public@example.com"},
        headers={KEY: other_key},
    )
    assert private.status_code == 409 and private.headers.get("Idempotent-Replayed") is None
    # a public key's own retry still replays
    again = tenant.client.post(
        "/v4/contacts",
        json={**body, "email": "public@example.com"},
        headers={**tenant.public_headers, KEY: other_key},
    )
    assert again.headers["Idempotent-Replayed"] == "true" and again.content == signed.content


VIP_FRANCE = {"data": {"path": ["tags"], "array_contains": "vip"}}


def _vip_list(tenant: Tenant, **settings: object) -> tuple[str, str]:
    """A list with a private "VIP France" smart audience over `data.tags`: (list, audience)."""
    lst = tenant.new_list(**settings)["id"]
    body = {"name": "VIP France", "listId": lst, "mode": "smart", "filters": VIP_FRANCE}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    return lst, audience


def _sign_up_with(tenant: Tenant, list_id: str, **fields: object) -> httpx.Response:
    body = {"email": "mallory@example.com", "listId": list_id, **fields}
    return tenant.client.post("/v4/contacts", json=body, headers=tenant.public_headers)


def test_a_public_sign_up_may_not_put_itself_into_a_private_audience(tenant: Tenant) -> None:
    lst, vip = _vip_list(tenant)
    refused = _sign_up_with(tenant, lst, firstName="Mal", data={"tags": ["vip"]})
    assert refused.status_code == 403, refused.text
    assert refused.json()["message"].startswith("A public key may not set data in this list")
    assert [issue["pointer"] for issue in refused.json()["errors"]] == ["/body/data"]
    assert tenant.ok("GET", "/v4/contacts", params={"listId": lst})["contacts"] == []
    assert member_emails(tenant, vip) == []


def test_a_list_that_ignores_other_fields_creates_the_contact_without_them(tenant: Tenant) -> None:
    lst, vip = _vip_list(tenant, publicFieldsPolicy="ignore")
    answer = _sign_up_with(tenant, lst, firstName="Mal", company="Acme", data={"tags": ["vip"]})
    assert answer.status_code == 201, answer.text
    contact = tenant.ok("GET", "/v4/contacts", params={"listId": lst})["contacts"][0]
    assert (contact["firstName"], contact["company"], contact["data"]) == ("Mal", None, {})
    assert member_emails(tenant, vip) == []


def test_a_list_names_the_fields_a_public_sign_up_may_set(tenant: Tenant) -> None:
    lst, vip = _vip_list(tenant)
    settings = tenant.ok("GET", f"/v4/lists/{lst}")["list"]
    assert (settings["publicFields"], settings["publicFieldsPolicy"]) == (
        ["firstName", "lastName", "name"],
        "refuse",
    )
    changed = tenant.ok("PATCH", f"/v4/lists/{lst}", json={"publicFields": ["data", "data"]})
    assert changed["list"]["publicFields"] == ["data"]
    assert _sign_up_with(tenant, lst, data={"tags": ["vip"]}).status_code == 201
    assert member_emails(tenant, vip) == ["mallory@example.com"]
    assert _sign_up_with(tenant, lst, firstName="Mal").status_code == 403
    protected = tenant.call("PATCH", f"/v4/lists/{lst}", json={"publicFields": ["points"]})
    assert protected.status_code == 400
    assert protected.json()["errors"][0]["pointer"] == "/body/publicFields/0"
