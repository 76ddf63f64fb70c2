"""Per-list custom fields: declared, checked on every write, named by the list's filters.

Replays of issue 27: in the service the contact model was fixed, so `birthday anniversary within
this week` could not be built, and nothing checked what a contact's `data` held.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.service.app import create_app

from .audience_helpers import member_emails, new_audience, smart
from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)  # a Friday: this week is 16-22 November
BIRTHDAYS_THIS_WEEK = 'birthday anniversary within this week in "Europe/Paris"'


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiClient]:
    """One app for the module: each test works in an account of its own (`tenant`)."""
    settings = sqlite_settings(
        tmp_path_factory.mktemp("fields") / "fields.db", membership_sweep_seconds=0
    )
    client = ApiClient(create_app(settings, clock=lambda: NOW))
    yield client
    client.close()


@pytest.fixture
def tenant(api: ApiClient) -> Tenant:
    return make_tenant(api)


def _declare(tenant: Tenant, list_id: str, key: str, kind: str, **body: Any) -> Any:
    body = {"key": key, "type": kind, **body}
    return tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json=body)["field"]


def _birthday_list(tenant: Tenant) -> str:
    list_id: str = tenant.new_list()["id"]
    _declare(tenant, list_id, "birthday", "date", label="Birthday")
    _declare(tenant, list_id, "tags", "string[]")
    return list_id


def test_a_birthday_segment_end_to_end(tenant: Tenant) -> None:
    lst = _birthday_list(tenant)
    audience = new_audience(tenant, lst, "Birthdays", filtersText=BIRTHDAYS_THIS_WEEK)["audience"]
    assert audience["filters"] == (
        '{"birthday":{"anniversary":{"this":"week","timeZone":"Europe/Paris"}}}'
    )
    assert audience["filtersText"] == BIRTHDAYS_THIS_WEEK
    for email, birthday in [
        ("monday@example.com", "1990-11-16"),
        ("sunday@example.com", "1985-11-22"),
        ("next@example.com", "1990-11-23"),
        ("none@example.com", None),
    ]:
        data = {} if birthday is None else {"birthday": birthday}
        tenant.new_contact(lst, email, data=data)
    assert sorted(member_emails(tenant, audience["id"])) == [
        "monday@example.com",
        "sunday@example.com",
    ]
    # The library gives the same answer over the same records.
    schema = af.CONTACT.with_fields(birthday=("date", ("data", "birthday")))
    flt = af.parse_text(BIRTHDAYS_THIS_WEEK, schema=schema)
    assert flt.matches({"data": {"birthday": "1990-11-16"}}, now=NOW)
    assert not flt.matches({"data": {"birthday": "1990-11-23"}}, now=NOW)


def test_the_catalogue_lists_contact_fields_custom_fields_and_relations(tenant: Tenant) -> None:
    lst = _birthday_list(tenant)
    catalogue = tenant.ok("GET", f"/v4/lists/{lst}/fields")
    by_key = {field["key"]: field for field in catalogue["fields"]}
    assert by_key["birthday"] == {
        "key": "birthday",
        "type": "date",
        "label": "Birthday",
        "custom": True,
        "operators": ["anniversary", "equals", "gt", "gte", "in", "lt", "lte", "notIn", "within"],
        "insensitive": False,
    }
    assert by_key["tags"]["label"] == "Tags"
    assert by_key["tags"]["operators"] == ["has", "hasEvery", "hasSome", "isEmpty"]
    assert by_key["firstName"] == {
        "key": "firstName",
        "type": "string",
        "label": "First name",
        "custom": False,
        "operators": [
            "blank",
            "contains",
            "endsWith",
            "equals",
            "gt",
            "gte",
            "in",
            "lt",
            "lte",
            "notIn",
            "startsWith",
        ],
        "insensitive": True,
    }
    assert by_key["isGDPR"]["type"] == "boolean"
    assert "actions" in {relation["key"] for relation in catalogue["relations"]}
    assert tenant.ok("GET", f"/v4/lists/{lst}")["list"]["customFields"] == [
        {"key": "birthday", "type": "date", "label": "Birthday"},
        {"key": "tags", "type": "string[]", "label": "Tags"},
    ]


def test_the_filter_schema_of_a_list_types_its_custom_fields(tenant: Tenant) -> None:
    lst = _birthday_list(tenant)
    other = tenant.new_list()["id"]
    schema = tenant.ok("GET", f"/v4/lists/{lst}/filter-schema")["schema"]
    assert "birthday" in schema["$defs"]["where"]["properties"]
    plain = tenant.ok("GET", f"/v4/lists/{other}/filter-schema")["schema"]
    assert "birthday" not in plain["$defs"]["where"]["properties"]


@pytest.mark.parametrize(
    ("data", "pointer", "expected"),
    [
        ({"birthday": "23/11/1990"}, "/body/data/birthday", "an ISO 8601 date (YYYY-MM-DD)"),
        ({"birthday": "1990-11-23T10:00:00Z"}, "/body/data/birthday", "an ISO 8601 date"),
        ({"tags": "vip"}, "/body/data/tags", "a list of strings"),
        ({"tags": ["vip", 3]}, "/body/data/tags", "a list of strings"),
    ],
)
def test_a_wrong_typed_custom_value_is_a_400_naming_the_field(
    tenant: Tenant, data: dict[str, Any], pointer: str, expected: str
) -> None:
    lst = _birthday_list(tenant)
    response = tenant.call(
        "POST", "/v4/contacts", json={"email": "a@example.com", "listId": lst, "data": data}
    )
    assert response.status_code == 400, response.text
    (issue,) = response.json()["errors"]
    assert issue["pointer"] == pointer
    assert issue["expected"].startswith(expected)
    assert issue["found"]
    assert pointer in response.json()["message"]
    contacts = tenant.ok("GET", "/v4/contacts", params={"listId": lst})["contacts"]
    assert contacts == []  # nothing written


def test_updates_and_sign_ups_are_checked_and_undeclared_keys_stay_free(tenant: Tenant) -> None:
    lst = _birthday_list(tenant)
    contact = tenant.new_contact(lst, "a@example.com", data={"birthday": None, "plan": 3})
    response = tenant.call("PATCH", f"/v4/contacts/{contact['id']}", json={"data": {"tags": [1]}})
    assert response.status_code == 400
    assert response.json()["errors"][0]["pointer"] == "/body/data/tags"
    tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"data": {"tags": ["vip"]}})
    tenant.ok("PATCH", f"/v4/lists/{lst}", json={"publicFields": ["data"]})
    response = tenant.call(
        "POST",
        "/v4/contacts",
        headers=tenant.public_headers,
        json={"email": "b@example.com", "listId": lst, "data": {"birthday": "soon"}},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["pointer"] == "/body/data/birthday"


def test_an_import_takes_custom_fields_beside_the_profile_and_checks_them(tenant: Tenant) -> None:
    lst = _birthday_list(tenant)
    birthdays = smart(tenant, lst, {"birthday": {"anniversary": {"this": "week"}}})["id"]
    rows = [
        {"email": "a@example.com", "birthday": "1990-11-18", "tags": ["vip"]},
        {"email": "b@example.com", "data": {"birthday": "1990-11-19"}},
        {"email": "c@example.com", "birthday": "18 November"},
    ]
    result = tenant.ok("POST", "/v4/contacts/import", params={"listId": lst}, json=rows)
    statuses = [row["status"] for row in result["results"]]
    assert statuses == ["created", "created", "invalid"]
    assert result["results"][2]["errors"][0]["pointer"] == "/data/birthday"
    assert sorted(member_emails(tenant, birthdays)) == ["a@example.com", "b@example.com"]
    first = tenant.ok("GET", f"/v4/contacts/{result['results'][0]['id']}")["contact"]
    assert first["data"] == {"birthday": "1990-11-18", "tags": ["vip"]}


def test_a_field_read_by_an_audience_keeps_its_type_and_cannot_be_removed(tenant: Tenant) -> None:
    lst = _birthday_list(tenant)
    audience = smart(tenant, lst, {"tags": {"has": "vip"}}, name="VIP")
    for method, body in [("PATCH", {"type": "string"}), ("DELETE", None)]:
        response = tenant.call(method, f"/v4/lists/{lst}/fields/tags", json=body)
        assert response.status_code == 409, response.text
        assert f"VIP ({audience['id']})" in response.json()["message"]
    relabelled = tenant.ok("PATCH", f"/v4/lists/{lst}/fields/tags", json={"label": "Labels"})
    assert relabelled["field"] == {"key": "tags", "type": "string[]", "label": "Labels"}
    # Unread fields change freely; once the audience reads something else, so does `tags`.
    tenant.ok("PATCH", f"/v4/lists/{lst}/fields/birthday", json={"type": "string"})
    tenant.ok("PATCH", f"/v4/audiences/{audience['id']}", json={"filters": {"points": {"gt": 1}}})
    tenant.ok("DELETE", f"/v4/lists/{lst}/fields/tags")
    assert "tags" not in {f["key"] for f in tenant.ok("GET", f"/v4/lists/{lst}/fields")["fields"]}


def test_a_filter_naming_an_undeclared_field_is_refused_with_the_librarys_hint(
    tenant: Tenant,
) -> None:
    lst = tenant.new_list()["id"]
    response = tenant.call(
        "POST", "/v4/audiences", json={"name": "B", "listId": lst, "filtersText": "birthday = 1"}
    )
    assert response.status_code == 400
    assert "birthday" in response.text


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"key": "points", "type": "number"}, 409),  # a contact field
        ({"key": "actions", "type": "number"}, 409),  # a relation
        ({"key": "and", "type": "string"}, 409),  # a word of the text syntax
        ({"key": "9lives", "type": "number"}, 400),
        ({"key": "signedUp", "type": "datetime"}, 400),  # no date-time inside JSON
        ({"key": "x", "type": "string", "label": ""}, 400),
        ({"key": "x", "type": "string", "extra": 1}, 422),
    ],
)
def test_bad_declarations_are_refused(tenant: Tenant, body: dict[str, Any], status: int) -> None:
    lst = tenant.new_list()["id"]
    response = tenant.call("POST", f"/v4/lists/{lst}/fields", json=body)
    assert response.status_code in {status, 400 if status == 422 else status}, response.text


def test_a_taken_key_is_a_409_and_an_unknown_one_a_404(tenant: Tenant) -> None:
    lst = _birthday_list(tenant)
    response = tenant.call("POST", f"/v4/lists/{lst}/fields", json={"key": "tags", "type": "date"})
    assert response.status_code == 409
    assert tenant.call("GET", f"/v4/lists/{lst}/fields/nope").status_code == 404


def test_the_same_filter_text_means_each_lists_own_fields(tenant: Tenant) -> None:
    """One canonical filter, two lists declaring `score` differently: each audience reads it
    with its own list's type (the cache key is the filter and its declarations)."""
    numbers, texts = tenant.new_list()["id"], tenant.new_list()["id"]
    _declare(tenant, numbers, "score", "number")
    _declare(tenant, texts, "score", "string")
    by_number = smart(tenant, numbers, {"score": {"in": [1]}}, name="N")
    refused = tenant.call(
        "POST",
        "/v4/audiences",
        json={"name": "T", "listId": texts, "filters": {"score": {"in": [1]}}},
    )
    assert refused.status_code == 400  # a number is no string
    by_text = smart(tenant, texts, {"score": {"in": ["1"]}}, name="T")
    tenant.new_contact(numbers, "n@example.com", data={"score": 1})
    tenant.new_contact(texts, "t@example.com", data={"score": "1"})
    assert member_emails(tenant, by_number["id"]) == ["n@example.com"]
    assert member_emails(tenant, by_text["id"]) == ["t@example.com"]
    preview = tenant.ok(
        "POST", "/v4/audiences/preview", json={"listId": texts, "filtersText": 'score = "1"'}
    )
    assert preview["count"] == 1
    listed = tenant.ok(
        "GET", "/v4/contacts", params={"listId": numbers, "filtersText": "score >= 1"}
    )["contacts"]
    assert [c["email"] for c in listed] == ["n@example.com"]
