"""`Idempotency-Key`: retries replay the first answer, reuse for another request is refused.

Each POST that creates or changes something is checked by counting rows before and after, since
an answer that looks right could still hide a second creation. Time is moved by replacing
`idempotency.now`, never by waiting.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import httpx
import pytest
from sqlalchemy import ColumnElement, func, select, update

from audiencefilter.service.db.models import (
    Action,
    Audience,
    AudienceMember,
    Contact,
    IdempotencyRecord,
    List,
)
from audiencefilter.service.http import idempotency

from .conftest import ApiClient, Tenant, gather, make_tenant, url_settings

KEY = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
DAY = timedelta(hours=24)


def _key() -> str:
    return str(uuid.uuid4())


def _count(client: ApiClient, model: type[Any], *where: ColumnElement[bool]) -> int:
    with client.app.state.db.reading() as session:
        return int(session.scalar(select(func.count()).select_from(model).where(*where)) or 0)


@dataclass
class Kind:
    """One POST: how to send it, another body for it, and what it adds."""

    url: str
    body: dict[str, Any]
    other: dict[str, Any]
    status: int
    created: Callable[[], int]


def _kinds(tenant: Tenant) -> dict[str, Kind]:
    client = tenant.client
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "first@example.com")
    extra = tenant.new_contact(lst["id"], "second@example.com")
    manual = tenant.ok("POST", "/v4/audiences", 201, json={"name": "m", "listId": lst["id"]})
    audience_id = manual["audience"]["id"]
    smart = {"name": "s", "listId": lst["id"], "filtersText": "points >= 0"}
    return {
        "lists": Kind(
            "/v4/lists",
            {"name": "Retry list"},
            {"name": "Another list"},
            201,
            lambda: _count(client, List, List.accountId == tenant.account_id),
        ),
        "contacts": Kind(
            "/v4/contacts",
            {"email": "retry@example.com", "listId": lst["id"]},
            {"email": "other@example.com", "listId": lst["id"]},
            201,
            lambda: _count(client, Contact, Contact.listId == lst["id"]),
        ),
        "actions": Kind(
            "/v4/actions",
            {"name": "share", "increase": 7, "subId": contact["id"]},
            {"name": "share", "increase": 8, "subId": contact["id"]},
            201,
            lambda: _count(client, Action, Action.subId == contact["id"]),
        ),
        "audiences": Kind(
            "/v4/audiences",
            smart,
            {**smart, "filtersText": "points >= 1"},
            201,
            lambda: _count(client, Audience, Audience.listId == lst["id"]),
        ),
        "members": Kind(
            f"/v4/audiences/{audience_id}/members",
            {"contactIds": [contact["id"]]},
            {"contactIds": [extra["id"]]},
            200,
            lambda: _count(client, AudienceMember, AudienceMember.audienceId == audience_id),
        ),
    }


KINDS = ("lists", "contacts", "actions", "audiences", "members")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[timedelta], None]]:
    """Moves the idempotency clock forward from now."""
    start = datetime.now(UTC)
    moved = [timedelta()]
    monkeypatch.setattr(idempotency, "now", lambda: start + moved[0])

    def advance(by: timedelta) -> None:
        moved[0] += by

    yield advance


@pytest.mark.parametrize("kind", KINDS)
def test_retry_replays_the_first_answer_and_creates_nothing(tenant: Tenant, kind: str) -> None:
    post = _kinds(tenant)[kind]
    key = _key()
    first = tenant.call("POST", post.url, json=post.body, headers={KEY: key})
    assert first.status_code == post.status, first.text
    assert REPLAYED not in first.headers
    after_first = post.created()
    for _ in range(2):
        again = tenant.call("POST", post.url, json=post.body, headers={KEY: key})
        assert again.status_code == post.status
        assert again.content == first.content
        assert again.headers[REPLAYED] == "true"
        assert again.headers["content-type"] == "application/json"
    assert post.created() == after_first


@pytest.mark.parametrize("kind", KINDS)
def test_same_key_with_another_body_is_422_and_creates_nothing(tenant: Tenant, kind: str) -> None:
    post = _kinds(tenant)[kind]
    key = _key()
    assert tenant.call("POST", post.url, json=post.body, headers={KEY: key}).status_code < 300
    before = post.created()
    refused = tenant.call("POST", post.url, json=post.other, headers={KEY: key})
    assert refused.status_code == 422
    body = refused.json()
    assert set(body) == {"error", "message", "status", "detail"} and body["error"] == 422
    assert "already used with a different request" in body["message"]
    assert "new key" in body["message"]
    assert post.created() == before


def test_key_order_and_spacing_of_the_body_do_not_matter(tenant: Tenant) -> None:
    lst = tenant.new_list()
    key = _key()
    first = tenant.call(
        "POST",
        "/v4/contacts",
        content=f'{{"email": "a@example.com", "listId": "{lst["id"]}"}}',
        headers={KEY: key, "Content-Type": "application/json"},
    )
    again = tenant.call(
        "POST",
        "/v4/contacts",
        content=f'{{"listId":"{lst["id"]}","email":"a@example.com"}}',
        headers={KEY: key, "Content-Type": "application/json"},
    )
    assert first.status_code == again.status_code == 201
    assert again.content == first.content and again.headers[REPLAYED] == "true"


def test_same_key_on_another_path_or_query_is_422(tenant: Tenant) -> None:
    lst = tenant.new_list()
    key = _key()
    body = {"name": "a", "listId": lst["id"]}
    assert tenant.call("POST", "/v4/audiences", json=body, headers={KEY: key}).status_code == 201
    other_query = tenant.call(
        "POST", "/v4/audiences", json=body, params={"limit": 5}, headers={KEY: key}
    )
    assert other_query.status_code == 422
    other_path = tenant.call("POST", "/v4/lists", json={"name": "a"}, headers={KEY: key})
    assert other_path.status_code == 422
    assert _count(tenant.client, Audience, Audience.listId == lst["id"]) == 1
    assert _count(tenant.client, List, List.accountId == tenant.account_id) == 1


def test_another_key_or_no_key_creates_again(tenant: Tenant) -> None:
    body = {"name": "Twice"}
    first = tenant.ok("POST", "/v4/lists", 201, json=body, headers={KEY: _key()})
    second = tenant.ok("POST", "/v4/lists", 201, json=body, headers={KEY: _key()})
    third = tenant.ok("POST", "/v4/lists", 201, json=body)
    assert len({first["list"]["id"], second["list"]["id"], third["list"]["id"]}) == 3


def test_keys_belong_to_their_account(client: ApiClient, tenant: Tenant) -> None:
    other = make_tenant(client)
    key = _key()
    mine = tenant.call("POST", "/v4/lists", json={"name": "Same"}, headers={KEY: key})
    theirs = other.call("POST", "/v4/lists", json={"name": "Same"}, headers={KEY: key})
    assert mine.status_code == theirs.status_code == 201
    assert REPLAYED not in theirs.headers
    assert mine.json()["data"]["list"]["id"] != theirs.json()["data"]["list"]["id"]
    different = other.call("POST", "/v4/lists", json={"name": "Else"}, headers={KEY: _key()})
    assert different.status_code == 201


def test_public_key_sign_ups_replay_too(tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = {"email": "form@example.com", "listId": lst["id"]}
    headers = {**tenant.public_headers, KEY: _key()}
    first = tenant.client.post("/v4/contacts", json=body, headers=headers)
    again = tenant.client.post("/v4/contacts", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content and again.headers[REPLAYED] == "true"
    assert _count(tenant.client, Contact, Contact.listId == lst["id"]) == 1


def test_an_expired_key_runs_again(tenant: Tenant, clock: Callable[[timedelta], None]) -> None:
    key = _key()
    first = tenant.ok("POST", "/v4/lists", 201, json={"name": "Old"}, headers={KEY: key})
    clock(DAY - timedelta(seconds=1))
    kept = tenant.call("POST", "/v4/lists", json={"name": "Old"}, headers={KEY: key})
    assert kept.headers.get(REPLAYED) == "true"
    clock(timedelta(seconds=2))
    fresh = tenant.call("POST", "/v4/lists", json={"name": "Old"}, headers={KEY: key})
    assert fresh.status_code == 201 and REPLAYED not in fresh.headers
    assert fresh.json()["data"]["list"]["id"] != first["list"]["id"]
    # The new answer is the one remembered now; another body is refused again.
    again = tenant.call("POST", "/v4/lists", json={"name": "Old"}, headers={KEY: key})
    assert again.content == fresh.content and again.headers[REPLAYED] == "true"
    assert tenant.call("POST", "/v4/lists", json={}, headers={KEY: key}).status_code == 400
    other = tenant.call("POST", "/v4/lists", json={"name": "New"}, headers={KEY: key})
    assert other.status_code == 422


def test_an_expired_key_may_carry_another_request(
    tenant: Tenant, clock: Callable[[timedelta], None]
) -> None:
    key = _key()
    tenant.ok("POST", "/v4/lists", 201, json={"name": "Before"}, headers={KEY: key})
    clock(DAY)
    tenant.ok("POST", "/v4/lists", 201, json={"name": "After"}, headers={KEY: key})


def test_the_ttl_comes_from_the_settings(
    app_factory: Callable[..., ApiClient], clock: Callable[[timedelta], None]
) -> None:
    api = app_factory(idempotency_ttl_seconds=60)
    tenant = make_tenant(api)
    key = _key()
    tenant.ok("POST", "/v4/lists", 201, json={"name": "Short"}, headers={KEY: key})
    clock(timedelta(seconds=59))
    assert tenant.call("POST", "/v4/lists", json={"name": "Short"}, headers={KEY: key}).headers[
        REPLAYED
    ]
    clock(timedelta(seconds=1))
    fresh = tenant.call("POST", "/v4/lists", json={"name": "Short"}, headers={KEY: key})
    assert fresh.status_code == 201 and REPLAYED not in fresh.headers
    assert _count(api, List, List.accountId == tenant.account_id) == 2


def test_expired_records_are_purged_in_bounded_batches(
    tenant: Tenant, clock: Callable[[timedelta], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idempotency, "PURGE_BATCH", 3)
    client = tenant.client
    mine = IdempotencyRecord.accountId == tenant.account_id
    for index in range(5):
        tenant.ok("POST", "/v4/lists", 201, json={"name": f"L{index}"}, headers={KEY: _key()})
    assert _count(client, IdempotencyRecord, mine) == 5
    clock(DAY + timedelta(seconds=1))
    tenant.ok("POST", "/v4/lists", 201, json={"name": "next"}, headers={KEY: _key()})
    assert _count(client, IdempotencyRecord, mine) == 5 - 3 + 1
    tenant.ok("POST", "/v4/lists", 201, json={"name": "then"}, headers={KEY: _key()})
    assert _count(client, IdempotencyRecord, mine) == 2
    # Requests without a key neither read nor write records.
    tenant.ok("POST", "/v4/lists", 201, json={"name": "plain"})
    assert _count(client, IdempotencyRecord, mine) == 2


def _same_key_at_once(client: ApiClient, tenant: Tenant, calls: int = 10) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "racer@example.com")
    key = _key()
    headers = {**tenant.headers, KEY: key}
    sign_up: Callable[[], Awaitable[httpx.Response]] = partial(
        client.http.post,
        "/v4/contacts",
        json={"email": "same@example.com", "listId": lst["id"]},
        headers=headers,
    )
    answers = gather(client, [sign_up] * calls)
    assert {answer.status_code for answer in answers} == {201}
    assert len({answer.content for answer in answers}) == 1
    assert sum(REPLAYED not in answer.headers for answer in answers) == 1
    assert _count(client, Contact, Contact.listId == lst["id"]) == 2

    headers = {**tenant.headers, KEY: _key()}
    click: Callable[[], Awaitable[httpx.Response]] = partial(
        client.http.post,
        "/v4/actions",
        json={"name": "click", "increase": 5, "subId": contact["id"]},
        headers=headers,
    )
    answers = gather(client, [click] * calls)
    assert {answer.status_code for answer in answers} == {201}
    assert len({answer.content for answer in answers}) == 1
    points = tenant.ok("GET", f"/v4/contacts/{contact['id']}")["contact"]["points"]
    assert points == 5
    assert _count(client, Action, Action.subId == contact["id"]) == 1


def test_concurrent_requests_with_one_key_create_once(client: ApiClient, tenant: Tenant) -> None:
    _same_key_at_once(client, tenant)


def test_a_failed_request_is_not_remembered(tenant: Tenant) -> None:
    lst = tenant.new_list()
    taken = tenant.new_contact(lst["id"], "taken@example.com")
    key = _key()
    body = {"email": "TAKEN@example.com", "listId": lst["id"]}
    conflict = tenant.call("POST", "/v4/contacts", json=body, headers={KEY: key})
    assert conflict.status_code == 409
    assert conflict.json()["message"] == "A contact with this email already exists in this list"
    assert tenant.call("POST", "/v4/contacts", json=body, headers={KEY: key}).status_code == 409
    tenant.ok("DELETE", f"/v4/contacts/{taken['id']}")
    created = tenant.call("POST", "/v4/contacts", json=body, headers={KEY: key})
    assert created.status_code == 201 and REPLAYED not in created.headers
    again = tenant.call("POST", "/v4/contacts", json=body, headers={KEY: key})
    assert again.content == created.content and again.headers[REPLAYED] == "true"


def test_a_refused_request_leaves_the_key_free(tenant: Tenant) -> None:
    lst = tenant.new_list()
    elsewhere = tenant.new_contact(tenant.new_list()["id"], "far@example.com")
    here = tenant.new_contact(lst["id"], "near@example.com")
    audience = tenant.ok("POST", "/v4/audiences", 201, json={"name": "m", "listId": lst["id"]})
    url = f"/v4/audiences/{audience['audience']['id']}/members"
    key = _key()
    refused = tenant.call("POST", url, json={"contactIds": [elsewhere["id"]]}, headers={KEY: key})
    assert refused.status_code == 400
    rule = tenant.call("POST", "/v4/audiences", json={"name": ""}, headers={KEY: key})
    assert rule.status_code == 400
    missing = tenant.call(
        "POST",
        "/v4/actions",
        json={"name": "a", "increase": 1, "subId": "con_0"},
        headers={KEY: key},
    )
    assert missing.status_code == 404
    added = tenant.call("POST", url, json={"contactIds": [here["id"]]}, headers={KEY: key})
    assert added.status_code == 200 and added.json()["data"]["added"] == [here["id"]]
    assert _count(tenant.client, IdempotencyRecord, IdempotencyRecord.key == key) == 1


@pytest.mark.parametrize(
    "key",
    ["x" * 256, "", "tab\there", "new\x01line"],
    ids=["too-long", "empty", "tab", "control"],
)
def test_a_malformed_key_is_400(tenant: Tenant, key: str) -> None:
    response = tenant.call("POST", "/v4/lists", json={"name": "k"}, headers={KEY: key})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == 400 and "message" in body
    assert body["errors"][0]["pointer"] == f"/header/{KEY}"
    assert _count(tenant.client, List, List.accountId == tenant.account_id) == 0


def test_the_longest_key_and_printable_punctuation_are_accepted(tenant: Tenant) -> None:
    for key in ("k" * 255, "order 42: {retry} #1 ~!"):
        tenant.ok("POST", "/v4/lists", 201, json={"name": "k"}, headers={KEY: key})
        again = tenant.call("POST", "/v4/lists", json={"name": "k"}, headers={KEY: key})
        assert again.headers[REPLAYED] == "true"


def test_an_audience_left_pending_is_answered_and_completed(tenant: Tenant) -> None:
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "member@example.com")
    key = _key()
    body = {"name": "smart", "listId": lst["id"], "filtersText": "points >= 0"}
    first = tenant.call("POST", "/v4/audiences", json=body, headers={KEY: key})
    assert first.status_code == 201
    audience_id = first.json()["data"]["audience"]["id"]
    record = (IdempotencyRecord.accountId == tenant.account_id) & (IdempotencyRecord.key == key)
    database = tenant.client.app.state.db
    with database.transaction() as session:  # as if the first request died before completing it
        session.execute(update(IdempotencyRecord).where(record).values(status=0, body=audience_id))
    again = tenant.call("POST", "/v4/audiences", json=body, headers={KEY: key})
    assert again.status_code == 201 and again.headers[REPLAYED] == "true"
    assert again.json()["data"]["audience"]["id"] == audience_id
    assert [sub["email"] for sub in again.json()["data"]["audience"]["subs"]] == [
        "member@example.com"
    ]
    with database.reading() as session:
        status, stored = session.execute(
            select(IdempotencyRecord.status, IdempotencyRecord.body).where(record)
        ).one()
    assert status == 201 and stored.encode() == again.content
    assert _count(tenant.client, Audience, Audience.listId == lst["id"]) == 1


def test_the_header_is_documented_on_every_changing_post(client: ApiClient) -> None:
    document = client.get("/openapi.json").json()
    changing = {
        ("/v4/lists", "post"),
        ("/v4/contacts", "post"),
        ("/v4/actions", "post"),
        ("/v4/audiences", "post"),
        ("/v4/audiences/{id}/members", "post"),
        ("/v4/contacts/import", "post"),
        ("/v4/webhooks", "post"),
        ("/v4/webhooks/{id}/secret", "post"),
        ("/v4/webhooks/{id}/deliveries/{deliveryId}/redeliver", "post"),
    }
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            headers = {
                parameter["name"]: parameter
                for parameter in operation.get("parameters", [])
                if parameter["in"] == "header"
            }
            if (path, method) in changing:
                parameter = headers[KEY]
                assert parameter["required"] is False
                assert "retry" in parameter["description"]
                assert parameter["schema"]["anyOf"][0]["maxLength"] == 255
            else:
                assert KEY not in headers, (path, method)


@pytest.mark.postgres
def test_one_key_creates_once_on_postgres(
    app_factory: Callable[..., ApiClient], pg_database: Callable[[], str]
) -> None:
    settings = url_settings(
        pg_database(),
        auto_migrate=True,
        db_pool_size=20,
    )
    api = app_factory(settings)
    tenant = make_tenant(api)
    _same_key_at_once(api, tenant)
    # A conflict of the effect itself stays a 409 and leaves the key free.
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "dup@example.com")
    key = _key()
    body = {"email": "dup@example.com", "listId": lst["id"]}
    for _ in range(2):
        conflict = tenant.call("POST", "/v4/contacts", json=body, headers={KEY: key})
        assert conflict.status_code == 409
        assert conflict.json()["message"].startswith("A contact with this email")
