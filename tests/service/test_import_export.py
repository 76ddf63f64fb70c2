"""Bulk contact import (JSON array or JSON Lines, a result per row, idempotent, one request for
the rate limits) and the streamed export of an audience's members (CSV and JSON Lines)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

import pytest

from audiencefilter.service.api.routes import imports
from audiencefilter.service.domain.use_cases import exports

from .conftest import ApiClient, Tenant, make_tenant

LINES = {"Content-Type": "application/x-ndjson"}


def _import(tenant: Tenant, list_id: str, rows: Any, **kwargs: Any) -> Any:
    return tenant.call(
        "POST", "/v4/contacts/import", params={"listId": list_id}, json=rows, **kwargs
    )


def _emails(tenant: Tenant, list_id: str) -> list[str]:
    data = tenant.ok(
        "GET", "/v4/contacts", params={"listId": list_id, "sort": "email", "order": "asc"}
    )
    return [contact["email"] for contact in data["contacts"]]


def test_every_row_gets_its_result(tenant: Tenant) -> None:
    lst = tenant.new_list()
    ada = tenant.new_contact(lst["id"], "ada@example.com")
    rows = [
        {"email": "ADA@example.com", "points": 5},
        {"email": "bob@example.com", "points": 150, "data": {"plan": "pro"}},
        {"email": "Bob@example.com"},
        {"email": "nope", "fristName": "x"},
        "cy@example.com",
        {"email": "dee@example.com", "listId": "lst_elsewhere"},
        {"email": "eve@example.com", "listId": lst["id"], "isVerified": True},
    ]
    response = _import(tenant, lst["id"], rows)
    assert response.status_code == 200, response.text
    body = response.json()["data"]
    assert {key: body[key] for key in ("rows", "created", "exists", "duplicate", "invalid")} == {
        "rows": 7,
        "created": 2,
        "exists": 1,
        "duplicate": 1,
        "invalid": 3,
    }
    results = body["results"]
    assert results[0] == {"row": 1, "status": "exists", "id": ada["id"]}
    assert results[1]["status"] == "created" and results[1]["id"].startswith("con_")
    assert results[2] == {"row": 3, "status": "duplicate", "sameAsRow": 2}
    assert [issue["pointer"] for issue in results[3]["errors"]] == ["/email", "/fristName"]
    assert results[3]["errors"][1]["suggestion"] == 'did you mean "firstName"?'
    assert results[4]["errors"] == [
        {
            "pointer": "",
            "detail": 'expected a JSON object, found the string "cy@example.com"',
            "expected": "a JSON object",
            "found": 'the string "cy@example.com"',
        }
    ]
    assert results[5]["errors"][0]["pointer"] == "/listId"
    assert results[6]["status"] == "created"
    assert _emails(tenant, lst["id"]) == ["ada@example.com", "bob@example.com", "eve@example.com"]
    bob = tenant.ok("GET", f"/v4/contacts/{results[1]['id']}")["contact"]
    assert (bob["points"], bob["data"]) == (150, {"plan": "pro"})
    ada_after = tenant.ok("GET", f"/v4/contacts/{ada['id']}")["contact"]
    assert ada_after["points"] == 0  # an existing contact is never changed


def test_json_lines_rows_are_numbered_by_line(tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = b'{"email": "ann@example.com"}\n\n{"email": \n{"email": "bo@example.com"}\n'
    response = tenant.call(
        "POST", "/v4/contacts/import", params={"listId": lst["id"]}, content=body, headers=LINES
    )
    results = response.json()["data"]["results"]
    assert [(r["row"], r["status"]) for r in results] == [
        (1, "created"),
        (3, "invalid"),
        (4, "created"),
    ]
    assert results[1]["errors"][0]["detail"].startswith("invalid JSON (Expecting value")


def test_the_same_import_twice_creates_nothing_new(tenant: Tenant) -> None:
    lst = tenant.new_list()
    rows = [{"email": f"u{i}@example.com"} for i in range(5)]
    first = _import(tenant, lst["id"], rows).json()["data"]
    second = _import(tenant, lst["id"], rows).json()["data"]
    assert (first["created"], second["created"], second["exists"]) == (5, 0, 5)
    assert [r["id"] for r in first["results"]] == [r["id"] for r in second["results"]]
    assert len(_emails(tenant, lst["id"])) == 5


def test_an_idempotency_key_replays_the_first_answer(tenant: Tenant) -> None:
    lst = tenant.new_list()
    rows = [{"email": "ann@example.com"}, {"email": "bo@example.com"}]
    headers = {"Idempotency-Key": "import-1"}
    first = _import(tenant, lst["id"], rows, headers=headers)
    again = _import(tenant, lst["id"], rows, headers=headers)
    assert again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true"
    other = _import(tenant, lst["id"], rows[:1], headers=headers)
    assert other.status_code == 422


def test_an_import_is_one_request_for_the_rate_limit(
    app_factory: Callable[..., ApiClient],
) -> None:
    api = app_factory(rate_limit_free="3/minute")
    tenant = make_tenant(api)
    lst = tenant.new_list()  # 1 of 3
    rows = [{"email": f"u{i}@example.com"} for i in range(200)]
    response = _import(tenant, lst["id"], rows)  # 2 of 3
    assert response.status_code == 200 and response.json()["data"]["created"] == 200
    assert response.headers["RateLimit"].startswith('"free";r=1;')


@pytest.mark.parametrize(
    ("content", "headers", "detail"),
    [
        (b'{"email": "a@b.c"}', {}, "expected a JSON array of contacts, found an object"),
        (
            b"{oops",
            {},
            "expected a JSON array of contacts, or JSON Lines with Content-Type: "
            "application/x-ndjson, found text that is not JSON",
        ),
    ],
)
def test_a_body_that_is_no_list_of_rows(
    tenant: Tenant, content: bytes, headers: dict[str, str], detail: str
) -> None:
    lst = tenant.new_list()
    response = tenant.call(
        "POST",
        "/v4/contacts/import",
        params={"listId": lst["id"]},
        content=content,
        headers={"Content-Type": "application/json", **headers},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["detail"].startswith(detail)


def test_too_many_rows(tenant: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(imports, "MAX_IMPORT_ROWS", 3)
    lst = tenant.new_list()
    response = _import(tenant, lst["id"], [{"email": f"u{i}@example.com"} for i in range(4)])
    assert response.status_code == 413
    assert response.json()["message"] == (
        "An import holds at most 3 rows (MAX_IMPORT_ROWS); this one has 4: send it in parts"
    )
    assert response.json()["errors"][0]["detail"] == "expected at most 3 rows, found 4 rows"
    assert _emails(tenant, lst["id"]) == []


def test_other_accounts_lists_and_public_keys_are_refused(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    lst = other_tenant.new_list()
    assert _import(tenant, lst["id"], [{"email": "a@b.c"}]).status_code == 404
    mine = tenant.new_list()
    public = tenant.client.post(
        "/v4/contacts/import",
        params={"listId": mine["id"]},
        json=[{"email": "a@b.c"}],
        headers=tenant.public_headers,
    )
    assert public.status_code == 403


def _audience_of_top_scorers(tenant: Tenant) -> tuple[str, dict[str, Any]]:
    lst = tenant.new_list()
    rows = [
        {
            "email": f"u{i:02}@example.com",
            "points": 10 * i,
            "data": {"rank": i},
            "firstName": 'Ann, "the first"' if i == 0 else None,
            "isVerified": i % 2 == 0,
        }
        for i in range(12)
    ]
    _import(tenant, lst["id"], rows)
    audience = tenant.ok(
        "POST",
        "/v4/audiences",
        201,
        json={
            "name": "Top",
            "listId": lst["id"],
            "filtersText": "points >= 50 or firstName != null",
        },
    )["audience"]
    return lst["id"], audience


@pytest.mark.parametrize("batch", [1000, 2])
def test_export_as_json_lines(tenant: Tenant, monkeypatch: pytest.MonkeyPatch, batch: int) -> None:
    monkeypatch.setattr(exports, "BATCH", batch)  # 2: seven batches, keyset paging exercised
    _, audience = _audience_of_top_scorers(tenant)
    response = tenant.call("GET", f"/v4/audiences/{audience['id']}/export")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    records = [json.loads(line) for line in response.text.splitlines()]
    assert sorted(r["email"] for r in records) == [
        "u00@example.com",
        *[f"u{i:02}@example.com" for i in range(5, 12)],
    ]
    assert [r["id"] for r in records] == sorted(r["id"] for r in records)
    first = next(r for r in records if r["email"] == "u07@example.com")
    assert first["data"] == {"rank": 7} and first["points"] == 70 and first["isVerified"] is False


def test_export_as_csv(tenant: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exports, "BATCH", 3)
    _, audience = _audience_of_top_scorers(tenant)
    response = tenant.call(
        "GET", f"/v4/audiences/{audience['id']}/export", params={"format": "csv"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"] == (
        f'attachment; filename="{audience["id"]}.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == 8
    ann = next(row for row in rows if row["email"] == "u00@example.com")
    assert ann["firstName"] == 'Ann, "the first"' and ann["isVerified"] == "true"
    assert json.loads(ann["data"]) == {"rank": 0} and ann["lastName"] == ""
    assert ann["createdAt"].endswith("Z")


def test_export_of_a_manual_audience_and_of_another_account(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    lst = tenant.new_list()
    ann = tenant.new_contact(lst["id"], "ann@example.com")
    tenant.new_contact(lst["id"], "bo@example.com")
    audience = tenant.ok(
        "POST", "/v4/audiences", 201, json={"name": "Hand-picked", "listId": lst["id"]}
    )["audience"]
    tenant.ok("POST", f"/v4/audiences/{audience['id']}/members", json={"contactIds": [ann["id"]]})
    lines = tenant.call("GET", f"/v4/audiences/{audience['id']}/export").text.splitlines()
    assert [json.loads(line)["email"] for line in lines] == ["ann@example.com"]
    assert other_tenant.call("GET", f"/v4/audiences/{audience['id']}/export").status_code == 404
    bad = tenant.call("GET", f"/v4/audiences/{audience['id']}/export", params={"format": "xml"})
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["expected"] == 'one of "csv", "jsonl"'


@pytest.mark.parametrize("rows", [[[]], ["cy@example.com"], [{"email": 3}]])
def test_rows_that_are_no_contact_are_in_the_contract_and_answered_per_row(
    tenant: Tenant, rows: list[Any]
) -> None:
    """The document says what the service does: any value is a row, each invalid one gets its
    own result. (It said rows were contacts, so a schema-driven client expected a 4xx.)"""
    import jsonschema

    document = tenant.client.get("/openapi.json").json()
    body = document["paths"]["/v4/contacts/import"]["post"]["requestBody"]
    schema = dict(body["content"]["application/json"]["schema"])
    schema["components"] = document["components"]
    jsonschema.validate(rows, schema)
    for send in (rows, "\n".join(json.dumps(row) for row in rows)):
        extra = {"content": send, "headers": LINES} if isinstance(send, str) else {"json": send}
        response = tenant.call(
            "POST", "/v4/contacts/import", params={"listId": tenant.new_list()["id"]}, **extra
        )
        assert response.status_code == 200, response.text
        assert response.json()["data"]["invalid"] == len(rows)
