"""A filter a database the service stores in would refuse is a 400 when it is read.

Found by probing the neighbours of a refusal of the library (a list's literal holding NUL on
SQLite): a filter over a custom field whose literal SQLite's JSON functions cannot compare
(NUL) or that no JSON number keeps (an integer beyond 64 bits that no double holds) reached
the compilation of its statement and failed the request with a 500, on creating an audience,
estimating it, comparing it and searching contacts. `relations.check_answerable` now compiles
the condition for both databases as the filter is read; the same filter is refused on either,
so an audience one deployment keeps, another can answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import BOTH_DATABASES, ApiClient, Tenant, make_tenant, module_app

REFUSED: list[tuple[str, dict[str, Any]]] = [
    ("string, NUL", {"nick": "a\x00"}),
    ("string, NUL inside contains", {"nick": {"contains": "\x00", "mode": "insensitive"}}),
    ("string list, has NUL", {"tags": {"has": "\x00"}}),
    ("string list, hasEvery with NUL", {"tags": {"hasEvery": ["\x00", "a"]}}),
    ("string list, not hasSome with NUL", {"NOT": {"tags": {"hasSome": ["b", "a\x00"]}}}),
    ("number, beyond 64 bits", {"score": {"equals": 2**70 + 1}}),
    ("number, in beyond 64 bits", {"score": {"in": [1, 2**70 + 1]}}),
    ("inside OR", {"OR": [{"score": 1}, {"tags": {"has": "\x00"}}]}),
]
ANSWERED: list[tuple[str, dict[str, Any]]] = [
    ("string", {"nick": "a"}),
    ("string list, has", {"tags": {"has": "a"}}),
    ("number, within 64 bits", {"score": {"equals": 2**62}}),
    ("number list", {"scores": {"has": 3}}),
]


@pytest.fixture(scope="module", params=BOTH_DATABASES)
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiClient]:
    with module_app(request, tmp_path_factory, "answerable") as client:
        yield client


@pytest.fixture(scope="module")
def listed(api: ApiClient) -> tuple[Tenant, str]:
    tenant = make_tenant(api)
    list_id: str = tenant.new_list()["id"]
    fields = (("nick", "string"), ("tags", "string[]"), ("score", "number"), ("scores", "number[]"))
    for key, kind in fields:
        tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json={"key": key, "type": kind})
    tenant.ok(
        "POST", "/v4/contacts", 201,
        json={"email": "a@example.com", "listId": list_id,
              "data": {"nick": "a", "tags": ["a"], "score": 2**62, "scores": [3]}},
    )  # fmt: skip
    return tenant, list_id


def _asks(list_id: str, where: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    text = json.dumps(where)
    return [
        ("POST", "/v4/audiences?wait=true",
         {"json": {"name": "n", "listId": list_id, "filters": text}}),
        ("POST", "/v4/audiences/estimate", {"json": {"listId": list_id, "filters": text}}),
        ("POST", "/v4/audiences/compare",
         {"json": {"listId": list_id, "a": {"filters": text}, "b": {"filters": '{"score": 1}'}}}),
        ("GET", "/v4/contacts", {"params": {"listId": list_id, "filters": text}}),
    ]  # fmt: skip


@pytest.mark.parametrize(("name", "where"), REFUSED, ids=[name for name, _ in REFUSED])
def test_a_filter_a_store_would_refuse_is_a_400_naming_it(
    listed: tuple[Tenant, str], name: str, where: dict[str, Any]
) -> None:
    tenant, list_id = listed
    for method, path, kwargs in _asks(list_id, where):
        answer = tenant.client.request(method, path, headers=tenant.headers, **kwargs)
        assert answer.status_code == 400, (path, answer.status_code, answer.text[:300])
        body = answer.json()
        assert body["errors"], (path, body)
        details = json.dumps(body["errors"])
        assert "NUL" in details or "64 bits" in details or "double" in details, (path, details)


def test_a_refused_filter_is_refused_by_a_patch_too(listed: tuple[Tenant, str]) -> None:
    tenant, list_id = listed
    audience = tenant.ok(
        "POST", "/v4/audiences?wait=true", 201,
        json={"name": "patched", "listId": list_id, "filters": '{"nick": "a"}'},
    )["audience"]  # fmt: skip
    answer = tenant.client.request(
        "PATCH", f"/v4/audiences/{audience['id']}", headers=tenant.headers,
        json={"filters": json.dumps({"tags": {"has": "\x00"}})},
    )  # fmt: skip
    assert answer.status_code == 400, answer.text[:300]
    kept = tenant.ok("GET", f"/v4/audiences/{audience['id']}")["audience"]
    assert json.loads(kept["filters"]) == {"nick": {"equals": "a"}}


@pytest.mark.parametrize(("name", "where"), ANSWERED, ids=[name for name, _ in ANSWERED])
def test_the_same_fields_without_such_literals_are_answered(
    listed: tuple[Tenant, str], name: str, where: dict[str, Any]
) -> None:
    tenant, list_id = listed
    asked = {"listId": list_id, "filters": json.dumps(where)}
    found = tenant.ok("GET", "/v4/contacts", params=asked)
    assert [c["email"] for c in found["contacts"]] == ["a@example.com"]
