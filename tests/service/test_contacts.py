"""Contacts: shape, creation, uniqueness, filters, sorting, positions, paging, update, delete."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import httpx
import pytest

from .conftest import ApiClient, Tenant, gather

CONTACT_KEYS = {
    "id",
    "email",
    "firstName",
    "lastName",
    "phoneNumber",
    "createdAt",
    "points",
    "referrals",
    "listId",
    "isVerified",
    "unsubscribed",
    "data",
    "address",
    "isGDPR",
    "name",
    "socialOne",
    "socialTwo",
    "website",
    "company",
    "country",
    "city",
    "list",
    "audiences",
    "referralLink",
    "privateLink",
    "position",
}
PROFILE: dict[str, Any] = {
    "firstName": "Ada",
    "lastName": "Lovelace",
    "phoneNumber": "+44 20 0000",
    "name": "Ada Lovelace",
    "company": "Analytical Engines",
    "country": "United Kingdom",
    "city": "London",
    "address": "12 St James's Square",
    "website": "https://ada.example.com",
    "socialOne": "@ada",
    "socialTwo": "ada.l",
    "data": {"plan": "gold", "tags": ["a", "b"], "n": 1.5, "nested": {"ok": None}},
    "points": 42,
    "referrals": 3,
    "isVerified": True,
    "unsubscribed": True,
    "isGDPR": True,
}


def _contacts(tenant: Tenant, list_id: str, **params: Any) -> list[dict[str, Any]]:
    data = tenant.ok("GET", "/v4/contacts", params={"listId": list_id, **params})
    return data["contacts"]  # type: ignore[no-any-return]


def _emails(tenant: Tenant, list_id: str, **params: Any) -> list[str]:
    return [contact["email"] for contact in _contacts(tenant, list_id, **params)]


def _nested(depth: int) -> Any:
    return [_nested(depth - 1)] if depth else 1


def test_contact_has_every_field_of_the_spec(tenant: Tenant) -> None:
    lst = tenant.new_list(color="#ff0000", title="T", desc="D")
    contact = tenant.new_contact(lst["id"], "ada@example.com", **PROFILE)
    assert set(contact) == CONTACT_KEYS
    assert {key: contact[key] for key in PROFILE} == PROFILE
    assert contact["listId"] == lst["id"] and contact["audiences"] == []
    assert contact["list"] == {
        key: lst[key]
        for key in ("id", "name", "url", "mode", "referrals", "color", "title", "desc")
    }
    assert contact["referralLink"].startswith(f"https://pages.example.com/{lst['url']}?ref=")
    assert contact["privateLink"] == (
        f"https://pages.example.com/{lst['url']}/subscriber/{contact['id']}"
    )
    assert tenant.ok("GET", f"/v4/contacts/{contact['id']}")["contact"] == contact


def test_contact_created_with_only_an_email_has_nulls_and_defaults(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "only@example.com")
    for field in ("firstName", "lastName", "phoneNumber", "name", "company", "city", "website"):
        assert contact[field] is None
    assert (contact["points"], contact["referrals"], contact["data"]) == (0, 0, {})
    assert (contact["isVerified"], contact["unsubscribed"], contact["isGDPR"]) == (
        False,
        False,
        False,
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [("ada@example.com", "ADA@Example.COM"), ("élodie@example.com", "ÉLODIE@EXAMPLE.COM")],
)
def test_duplicate_email_in_a_list_is_409_and_creates_nothing(
    tenant: Tenant, first: str, second: str
) -> None:
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], first)
    response = tenant.call("POST", "/v4/contacts", json={"email": second, "listId": lst["id"]})
    assert response.status_code == 409
    assert response.json() == {
        "error": 409,
        "message": "A contact with this email already exists in this list",
        "status": 409,
        "detail": "A contact with this email already exists in this list",
    }
    assert _emails(tenant, lst["id"]) == [first]
    other = tenant.new_list()
    assert tenant.new_contact(other["id"], second)["email"] == second


def test_concurrent_duplicate_signups_create_one_contact(client: ApiClient, tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = {"email": "race@example.com", "listId": lst["id"]}
    calls: list[Callable[[], Awaitable[httpx.Response]]] = [
        partial(client.http.post, "/v4/contacts", json=body, headers=tenant.headers)
        for _ in range(20)
    ]
    statuses = sorted(response.status_code for response in gather(client, calls))
    assert statuses == [201] + [409] * 19
    assert _emails(tenant, lst["id"]) == ["race@example.com"]


def test_unknown_list_on_create_is_404(tenant: Tenant) -> None:
    response = tenant.call(
        "POST", "/v4/contacts", json={"email": "a@example.com", "listId": "lst_nope"}
    )
    assert response.status_code == 404
    assert response.json()["message"] == "List not found"


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"listId": "x"}, "/body/email"),
        ({"email": "not-an-email", "listId": "x"}, "/body/email"),
        ({"email": "a@example.com"}, "/body/listId"),
        ({"email": "a@example.com", "listId": "x", "points": True}, "/body/points"),
        ({"email": "a@example.com", "listId": "x", "points": "5"}, "/body/points"),
        ({"email": "a@example.com", "listId": "x", "points": 1.5}, "/body/points"),
        ({"email": "a@example.com", "listId": "x", "points": 2**53}, "/body/points"),
        ({"email": "a@example.com", "listId": "x", "referrals": -1}, "/body/referrals"),
        ({"email": "a@example.com", "listId": "x", "isVerified": 1}, "/body/isVerified"),
        ({"email": "a@example.com", "listId": "x", "isVerified": "true"}, "/body/isVerified"),
        ({"email": "a@example.com", "listId": "x", "firstName": 5}, "/body/firstName"),
        ({"email": "a@example.com", "listId": "x", "firstName": "a\x00b"}, "/body/firstName"),
        ({"email": "a@example.com", "listId": "x", "firstName": "a" * 256}, "/body/firstName"),
        ({"email": "a@example.com", "listId": "x", "data": []}, "/body/data"),
        ({"email": "a@example.com", "listId": "x", "data": {"n": _nested(40)}}, "/body/data"),
        ({"email": "a@example.com", "listId": "x", "nickname": "z"}, "/body/nickname"),
    ],
)
def test_invalid_contact_bodies_are_400_with_a_pointer(
    tenant: Tenant, body: dict[str, Any], pointer: str
) -> None:
    response = tenant.call("POST", "/v4/contacts", json=body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["error"] == 400 and error["message"].startswith("Invalid request: ")
    assert pointer in [issue["pointer"] for issue in error["errors"]]


def _population(tenant: Tenant) -> str:
    lst = tenant.new_list()
    people = [
        ("amy@example.com", "Amy", "Zed", 10, {"company": "100% Pure", "isVerified": True}),
        ("bob@example.com", "Bob", "Young", 30, {"company": "Under_score", "city": "Köln"}),
        ("cy@example.org", None, "Xu", 30, {"company": "Plain", "country": "Ísland"}),
        ("dee@example.org", "Dee", None, 0, {"website": "https://dee.example", "isGDPR": True}),
        ("eve@test.net", "Éve", "West", 5, {"socialOne": "@EveW", "unsubscribed": True}),
    ]
    for email, first, last, points, extra in people:
        tenant.new_contact(lst["id"], email, firstName=first, lastName=last, points=points, **extra)
    return lst["id"]  # type: ignore[no-any-return]


def test_text_filters_are_partial_and_case_insensitive(tenant: Tenant) -> None:
    list_id = _population(tenant)
    assert sorted(_emails(tenant, list_id, email="EXAMPLE.ORG")) == [
        "cy@example.org",
        "dee@example.org",
    ]
    assert _emails(tenant, list_id, firstName="éVE") == ["eve@test.net"]
    assert _emails(tenant, list_id, city="KÖLN") == ["bob@example.com"]
    assert _emails(tenant, list_id, country="ísl") == ["cy@example.org"]
    assert _emails(tenant, list_id, website="DEE.EX") == ["dee@example.org"]
    assert _emails(tenant, list_id, socialOne="@evew") == ["eve@test.net"]
    assert _emails(tenant, list_id, lastName="y", firstName="b") == ["bob@example.com"]
    assert _emails(tenant, list_id, name="anything") == []
    assert _emails(tenant, list_id, phoneNumber="1") == []


def test_percent_and_underscore_in_filters_are_literal(tenant: Tenant) -> None:
    list_id = _population(tenant)
    assert _emails(tenant, list_id, company="%") == ["amy@example.com"]
    assert _emails(tenant, list_id, company="_") == ["bob@example.com"]
    assert _emails(tenant, list_id, company="n_e") == []  # a wildcard would match "nde"
    assert _emails(tenant, list_id, company="r_s") == ["bob@example.com"]
    assert _emails(tenant, list_id, company="0% p") == ["amy@example.com"]


def test_flag_filters(tenant: Tenant) -> None:
    list_id = _population(tenant)
    assert _emails(tenant, list_id, isVerified="true") == ["amy@example.com"]
    assert len(_emails(tenant, list_id, isVerified="false")) == 4
    assert _emails(tenant, list_id, isGDPR="TRUE") == ["dee@example.org"]
    assert _emails(tenant, list_id, unsubscribed="true", isGDPR="false") == ["eve@test.net"]


def test_default_sort_is_points_then_created_at_descending(tenant: Tenant) -> None:
    list_id = _population(tenant)
    assert _emails(tenant, list_id) == [
        "cy@example.org",
        "bob@example.com",
        "amy@example.com",
        "eve@test.net",
        "dee@example.org",
    ]
    assert _emails(tenant, list_id, order="asc") == [
        "dee@example.org",
        "eve@test.net",
        "amy@example.com",
        "bob@example.com",
        "cy@example.org",
    ]


@pytest.mark.parametrize(
    ("sort", "order", "expected"),
    [
        ("email", "asc", ["amy", "bob", "cy", "dee", "eve"]),
        ("email", "desc", ["eve", "dee", "cy", "bob", "amy"]),
        ("firstName", "asc", ["amy", "bob", "dee", "eve", "cy"]),  # nulls last
        ("firstName", "desc", ["eve", "dee", "bob", "amy", "cy"]),
        ("lastName", "asc", ["eve", "cy", "bob", "amy", "dee"]),
        ("createdAt", "asc", ["amy", "bob", "cy", "dee", "eve"]),
        ("createdAt", "desc", ["eve", "dee", "cy", "bob", "amy"]),
        ("points", "asc", ["dee", "eve", "amy", "bob", "cy"]),
        ("position", "asc", ["bob", "cy", "amy", "eve", "dee"]),
        ("position", "desc", ["dee", "eve", "amy", "cy", "bob"]),
    ],
)
def test_sort_keys_and_order(tenant: Tenant, sort: str, order: str, expected: list[str]) -> None:
    list_id = _population(tenant)
    emails = _emails(tenant, list_id, sort=sort, order=order)
    assert [email.split("@")[0] for email in emails] == expected


def test_positions_rank_by_points_then_signup_from_start_from(tenant: Tenant) -> None:
    list_id = _population(tenant)
    tenant.ok("PATCH", f"/v4/lists/{list_id}", json={"startFrom": 100})
    contacts = _contacts(tenant, list_id, sort="position", order="asc")
    assert [contact["position"] for contact in contacts] == [100, 101, 102, 103, 104]
    # a filter or a page does not change anyone's position
    only = _contacts(tenant, list_id, email="eve")
    assert only[0]["position"] == 103
    paged = _contacts(tenant, list_id, sort="position", order="asc", limit=2, page=2)
    assert [contact["position"] for contact in paged] == [102, 103]
    single = tenant.ok("GET", f"/v4/contacts/{only[0]['id']}")["contact"]
    assert single["position"] == 103


def test_pagination_object_and_pages(tenant: Tenant) -> None:
    list_id = _population(tenant)
    data = tenant.ok("GET", "/v4/contacts", params={"listId": list_id, "limit": 2, "page": 3})
    assert data["pagination"] == {"total": 5, "pages": 3, "currentPage": 3, "perPage": 2}
    assert len(data["contacts"]) == 1
    beyond = tenant.ok("GET", "/v4/contacts", params={"listId": list_id, "limit": 2, "page": 9})
    assert beyond["contacts"] == [] and beyond["pagination"]["total"] == 5
    default = tenant.ok("GET", "/v4/contacts", params={"listId": list_id})
    assert default["pagination"] == {"total": 5, "pages": 1, "currentPage": 1, "perPage": 20000}
    filtered = tenant.ok("GET", "/v4/contacts", params={"listId": list_id, "email": "example.org"})
    assert filtered["pagination"]["total"] == 2


@pytest.mark.parametrize(
    ("params", "pointer"),
    [
        ({}, "/query/listId"),
        ({"limit": 0}, "/query/limit"),
        ({"limit": 20001}, "/query/limit"),
        ({"limit": "ten"}, "/query/limit"),
        ({"page": 0}, "/query/page"),
        ({"page": 2**31}, "/query/page"),
        ({"sort": "city"}, "/query/sort"),
        ({"order": "up"}, "/query/order"),
        ({"isVerified": "yes"}, "/query/isVerified"),
        ({"email": "x" * 256}, "/query/email"),
    ],
)
def test_invalid_list_parameters_are_400(
    tenant: Tenant, params: dict[str, Any], pointer: str
) -> None:
    lst = tenant.new_list()
    query = {"listId": lst["id"], **params} if params else {}
    response = tenant.call("GET", "/v4/contacts", params=query)
    assert response.status_code == 400, response.text
    assert [issue["pointer"] for issue in response.json()["errors"]] == [pointer]


def test_listing_an_unknown_list_is_404(tenant: Tenant) -> None:
    response = tenant.call("GET", "/v4/contacts", params={"listId": "lst_unknown"})
    assert response.status_code == 404


def test_patch_updates_every_field(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "before@example.com")
    changes = {"email": "after@example.com", **PROFILE}
    updated = tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json=changes)["contact"]
    assert {key: updated[key] for key in changes} == changes
    assert updated["id"] == contact["id"] and updated["createdAt"] == contact["createdAt"]
    assert tenant.ok("GET", f"/v4/contacts/{contact['id']}")["contact"] == updated


def test_patch_null_clears_profile_fields_but_not_required_ones(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "c@example.com", city="Paris", points=4)
    cleared = tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"city": None})["contact"]
    assert cleared["city"] is None and cleared["points"] == 4
    for field in ("email", "points", "isVerified", "data"):
        response = tenant.call("PATCH", f"/v4/contacts/{contact['id']}", json={field: None})
        assert response.status_code == 400, field
    unchanged = tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={})["contact"]
    assert unchanged == cleared


def test_patch_email_to_a_taken_one_is_409(tenant: Tenant) -> None:
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "one@example.com")
    two = tenant.new_contact(lst["id"], "two@example.com")
    response = tenant.call("PATCH", f"/v4/contacts/{two['id']}", json={"email": "ONE@example.com"})
    assert response.status_code == 409
    assert tenant.ok("GET", f"/v4/contacts/{two['id']}")["contact"]["email"] == "two@example.com"
    renamed = tenant.ok("PATCH", f"/v4/contacts/{two['id']}", json={"email": "TWO@example.com"})
    assert renamed["contact"]["email"] == "TWO@example.com"


def test_delete_contact_returns_it_and_then_404(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "bye@example.com")
    deleted = tenant.ok("DELETE", f"/v4/contacts/{contact['id']}")["contact"]
    assert deleted["id"] == contact["id"] and deleted["email"] == "bye@example.com"
    for method in ("GET", "PATCH", "DELETE"):
        response = tenant.call(method, f"/v4/contacts/{contact['id']}", json={})
        assert response.status_code == 404
        assert response.json()["message"] == "Contact not found"
    assert _contacts(tenant, lst["id"]) == []


def test_data_keeps_64_bit_integers_and_fractions(tenant: Tenant) -> None:
    lst = tenant.new_list()
    data = {"huge": 2**63 - 1, "negative": -(2**63), "text": "a b", "nested": [{"x": [1.25]}]}
    contact = tenant.new_contact(lst["id"], "numbers@example.com", data=data)
    assert contact["data"] == data
    assert tenant.ok("GET", f"/v4/contacts/{contact['id']}")["contact"]["data"] == data
    listed = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"]})["contacts"]
    assert listed[0]["data"] == data and listed[0]["createdAt"] == contact["createdAt"]


def test_non_finite_numbers_in_data_are_400(tenant: Tenant) -> None:
    lst = tenant.new_list()
    list_id = lst["id"]
    body = '{"email": "nan@example.com", "listId": "' + list_id + '", "data": {"n": NaN}}'
    response = tenant.call(
        "POST", "/v4/contacts", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["pointer"] == "/body/data"
