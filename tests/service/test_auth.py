"""The apiKey check: missing, malformed, unknown, expired, disabled; public-key restrictions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, update

from audiencefilter.service.db.models import ApiKey
from audiencefilter.service.ground import keys

from .conftest import ApiClient, Tenant, make_tenant

PRIVATE_ONLY = [
    ("GET", "/v4/contacts?listId={list}"),
    ("GET", "/v4/contacts/{contact}"),
    ("PATCH", "/v4/contacts/{contact}"),
    ("DELETE", "/v4/contacts/{contact}"),
    ("GET", "/v4/lists"),
    ("POST", "/v4/lists"),
    ("GET", "/v4/lists/{list}"),
    ("PATCH", "/v4/lists/{list}"),
    ("DELETE", "/v4/lists/{list}"),
    ("GET", "/v4/projects"),
    ("POST", "/v4/actions"),
    ("GET", "/v4/actions?subId={contact}"),
    ("GET", "/v4/actions/{action}"),
    ("DELETE", "/v4/actions/{action}"),
]


def _fixtures(tenant: Tenant) -> dict[str, str]:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "someone@example.com")
    action = tenant.ok(
        "POST", "/v4/actions", 201, json={"name": "x", "increase": 1, "subId": contact["id"]}
    )["action"]
    return {"list": lst["id"], "contact": contact["id"], "action": action["id"]}


def _body(method: str, ids: dict[str, str]) -> dict[str, Any] | None:
    if method == "POST":
        return {"name": "n", "increase": 1, "subId": ids["contact"]}
    if method == "PATCH":
        return {"name": "renamed"}
    return None


class QueryCounter:
    def __init__(self, client: ApiClient) -> None:
        self.engine = client.app.state.db.engine
        self.statements: list[str] = []

    def __enter__(self) -> QueryCounter:
        event.listen(self.engine, "before_cursor_execute", self._count)
        return self

    def __exit__(self, *_: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self._count)

    def _count(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        self.statements.append(statement)


def test_missing_key_is_401(client: ApiClient) -> None:
    response = client.get("/v4/lists")
    assert response.status_code == 401
    assert response.json() == {
        "error": 401,
        "message": "Missing API key: send it in the apiKey header",
        "status": 401,
        "detail": "Missing API key: send it in the apiKey header",
    }


@pytest.mark.parametrize(
    "presented",
    ["nonsense", "afk_priv_" + "A" * 28, "Bearer xyz", "afk_pub_short"],
)
def test_malformed_key_is_refused_without_a_database_query(
    client: ApiClient, presented: str
) -> None:
    with QueryCounter(client) as counter:
        response = client.get("/v4/lists", headers={"apiKey": presented})
    assert response.status_code == 401
    assert response.json()["message"] == "Invalid API key"
    assert counter.statements == []


def test_well_formed_unknown_key_is_looked_up_and_refused(client: ApiClient) -> None:
    with QueryCounter(client) as counter:
        response = client.get("/v4/lists", headers={"apiKey": keys.generate("private")})
    assert response.status_code == 401
    queries = [sql for sql in counter.statements if sql != "BEGIN"]
    assert len(queries) == 1 and "FROM api_keys" in queries[0]


def test_expired_key_is_401(client: ApiClient) -> None:
    expired = make_tenant(client, expires_at=datetime.now(UTC) - timedelta(seconds=1))
    response = expired.call("GET", "/v4/lists")
    assert response.status_code == 401
    assert response.json()["message"] == "This API key has expired"


def test_key_with_future_expiry_works(client: ApiClient) -> None:
    tenant = make_tenant(client, expires_at=datetime.now(UTC) + timedelta(hours=1))
    assert tenant.call("GET", "/v4/lists").status_code == 200


def test_disabled_key_is_401_and_enabled_again_works(client: ApiClient, tenant: Tenant) -> None:
    digest = keys.digest(tenant.private_key)

    def set_disabled(value: bool) -> None:
        with client.app.state.db.transaction() as session:
            session.execute(update(ApiKey).where(ApiKey.digest == digest).values(disabled=value))

    set_disabled(True)
    response = tenant.call("GET", "/v4/lists")
    assert response.status_code == 401
    assert response.json()["message"] == "This API key is disabled"
    set_disabled(False)
    assert tenant.call("GET", "/v4/lists").status_code == 200


def test_public_key_gets_403_everywhere_but_contact_creation(tenant: Tenant) -> None:
    ids = _fixtures(tenant)
    for method, template in PRIVATE_ONLY:
        response = tenant.call(
            method,
            template.format(**ids),
            headers=tenant.public_headers,
            json=_body(method, ids),
        )
        assert response.status_code == 403, (method, template, response.text)
        assert response.json() == {
            "error": 403,
            "message": "Public keys may only create contacts (POST /v4/contacts)",
            "status": 403,
            "detail": "Public keys may only create contacts (POST /v4/contacts)",
        }
    # nothing was changed by the refused calls
    assert tenant.ok("GET", f"/v4/lists/{ids['list']}")["list"]["name"] == "Launch list"


def test_public_key_creates_a_contact_with_profile_fields(tenant: Tenant) -> None:
    lst = tenant.new_list(publicFields=["firstName", "data"])
    response = tenant.call(
        "POST",
        "/v4/contacts",
        headers=tenant.public_headers,
        json={
            "email": "Fan@Example.com",
            "listId": lst["id"],
            "firstName": "Fan",
            "data": {"a": 1},
        },
    )
    assert response.status_code == 201, response.text
    assert response.json() == {
        "data": {"contact": {"email": "Fan@Example.com", "listId": lst["id"]}}
    }
    found = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"]})["contacts"][0]
    assert (found["email"], found["firstName"], found["data"]) == (
        "Fan@Example.com",
        "Fan",
        {"a": 1},
    )


def test_public_key_may_not_set_points_or_flags(tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = {
        "email": "cheat@example.com",
        "listId": lst["id"],
        "points": 1000,
        "isVerified": True,
        "isGDPR": False,
    }
    response = tenant.call("POST", "/v4/contacts", headers=tenant.public_headers, json=body)
    assert response.status_code == 400
    error = response.json()
    assert error["message"] == "Public keys cannot set: points, isVerified, isGDPR"
    assert [issue["pointer"] for issue in error["errors"]] == [
        "/body/points",
        "/body/isVerified",
        "/body/isGDPR",
    ]
    contacts = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"]})["contacts"]
    assert contacts == []


def test_public_key_of_another_account_cannot_reach_a_list(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    lst = tenant.new_list()
    response = other_tenant.call(
        "POST",
        "/v4/contacts",
        headers=other_tenant.public_headers,
        json={"email": "x@example.com", "listId": lst["id"]},
    )
    assert response.status_code == 404
