"""Audiences: the resource, the rules of the specification and their exact messages, updates."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import audiencefilter as af

from .audience_helpers import (
    AUDIENCE_KEYS,
    INVALID,
    SUMMARY_KEYS,
    audience_ids,
    contact_audiences,
    manual,
    member_emails,
    new_audience,
    rule_body,
    rule_error,
    smart,
)
from .conftest import ApiClient, Tenant, make_tenant


def _people(tenant: Tenant) -> tuple[str, dict[str, dict[str, Any]]]:
    lst = tenant.new_list()
    people = {
        "low": tenant.new_contact(lst["id"], "low@example.com", points=5, country="FR"),
        "mid": tenant.new_contact(lst["id"], "mid@example.com", points=50, country="DE"),
        "top": tenant.new_contact(lst["id"], "top@example.com", points=500, country="FR"),
    }
    return lst["id"], people


def test_create_smart_audience_returns_every_field_and_its_members(tenant: Tenant) -> None:
    list_id, people = _people(tenant)
    created = new_audience(tenant, list_id, "Big spenders", filters='{"points": {"gte": 10}}')
    audience = created["audience"]
    assert set(audience) == AUDIENCE_KEYS
    assert (audience["name"], audience["mode"], audience["listId"]) == (
        "Big spenders",
        "smart",
        list_id,
    )
    assert audience["filters"] == '{"points":{"gte":10}}'
    assert audience["filtersText"] == "points >= 10"
    assert audience["createdAt"].endswith("Z") and audience["updatedAt"].endswith("Z")
    assert [sub["email"] for sub in audience["subs"]] == ["top@example.com", "mid@example.com"]
    assert audience["subs"][0] == tenant.ok("GET", f"/v4/contacts/{people['top']['id']}")["contact"]
    assert created["pagination"] == {"total": 2, "pages": 1, "currentPage": 1, "perPage": 20000}
    assert created["warnings"] == []
    fetched = tenant.ok("GET", f"/v4/audiences/{audience['id']}")
    assert fetched == {"audience": audience, "pagination": created["pagination"]}


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ({"points": {"gte": 10}}, '{"points":{"gte":10}}'),
        ('{ "country" : "FR" }', '{"country":{"equals":"FR"}}'),
        ({"country": "FR"}, '{"country":{"equals":"FR"}}'),
        (
            {"AND": [{"points": {"gt": 1}}], "email": {"endsWith": ".com", "mode": "insensitive"}},
            '{"points":{"gt":1},"email":{"endsWith":".com","mode":"insensitive"}}',
        ),
    ],
)
def test_filters_are_stored_as_canonical_json_whatever_their_spelling(
    tenant: Tenant, given: Any, canonical: str
) -> None:
    list_id, _ = _people(tenant)
    audience = smart(tenant, list_id, given)
    assert audience["filters"] == canonical
    assert audience["filters"] == af.parse(given).to_json()
    assert audience["filtersText"] == af.parse(given).to_text()


def test_filters_text_reads_to_the_same_audience_as_json(tenant: Tenant) -> None:
    list_id, _ = _people(tenant)
    text = 'points >= 10 and country in ["FR", "DE"]'
    from_text = new_audience(tenant, list_id, filtersText=text)["audience"]
    from_json = smart(tenant, list_id, {"points": {"gte": 10}, "country": {"in": ["FR", "DE"]}})
    assert from_text["mode"] == "smart"
    assert from_text["filters"] == from_json["filters"]
    assert from_text["filtersText"] == from_json["filtersText"] == text
    assert [s["id"] for s in from_text["subs"]] == [s["id"] for s in from_json["subs"]]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": "No list"},
        {"listId": "LIST"},
        {"name": "", "listId": "LIST"},
        {"name": "Empty list id", "listId": ""},
        {"name": None, "listId": "LIST"},
        {"name": "Null list", "listId": None, "filters": {"points": 1}},
    ],
)
def test_name_and_list_id_are_required(tenant: Tenant, body: dict[str, Any]) -> None:
    list_id, _ = _people(tenant)
    body = {key: list_id if value == "LIST" else value for key, value in body.items()}
    assert rule_error(tenant, "POST", "/v4/audiences", json=body) == rule_body(
        "Name and listId are required"
    )


@pytest.mark.parametrize("body", [{"mode": "smart"}, {"mode": "smart", "filters": None}])
def test_smart_mode_without_filters_is_refused(tenant: Tenant, body: dict[str, Any]) -> None:
    list_id, _ = _people(tenant)
    full = {"name": "x", "listId": list_id, **body}
    assert rule_error(tenant, "POST", "/v4/audiences", json=full) == rule_body(
        "Filters are required for smart mode"
    )


EMPTY_FILTERS: list[dict[str, Any]] = [
    {"filters": ""},
    {"filters": "   "},
    {"filters": "{}"},
    {"filters": " { } "},
    {"filters": {}},
    {"filters": {"AND": []}},
    {"filters": '{"points": {}}'},
    {"filtersText": ""},
    {"filtersText": "  \n "},
    # Everyone, however spelled: what folds to TRUE is refused as `{}` is.
    {"filters": {"OR": [{"country": "XX"}, {}]}},
    {"filters": '{"NOT": {"AND": [{"country": "XX"}, {"country": {"in": []}}]}}'},
    {"filters": {"OR": [{"country": "XX"}, {"country": {"notIn": []}}]}},
    {"filters": {"$or": [{"country": "XX"}, {}]}, "filtersFormat": "mongodb"},
    {"filters": "country = 'XX' OR TRUE", "filtersFormat": "sql"},
    {"filters": "NOT (country = 'XX' AND FALSE)", "filtersFormat": "sql"},
    {"filters": {"or": [{"==": [{"var": "country"}, "XX"]}, True]}, "filtersFormat": "jsonlogic"},
    {"filtersText": 'country = "XX" or true'},
    {"filtersText": 'not (country = "XX" and false)'},
]


@pytest.mark.parametrize("filters", EMPTY_FILTERS)
def test_empty_filters_are_refused_for_smart_mode(tenant: Tenant, filters: dict[str, Any]) -> None:
    list_id, _ = _people(tenant)
    expected = {
        "error": "Filters cannot be empty for smart mode",
        "status": 400,
        "detail": "Filters cannot be empty for smart mode",
    }
    for mode in ({"mode": "smart"}, {}):
        body = {"name": "x", "listId": list_id, **mode, **filters}
        assert rule_error(tenant, "POST", "/v4/audiences", json=body) == expected
    audience = smart(tenant, list_id, {"points": 1})
    path = f"/v4/audiences/{audience['id']}"
    assert rule_error(tenant, "PATCH", path, json=filters) == expected
    assert rule_error(tenant, "PATCH", path, json={"filters": None}) == expected
    assert tenant.ok("GET", path)["audience"]["filters"] == '{"points":{"equals":1}}'
    preview = {"listId": list_id, **filters}
    assert rule_error(tenant, "POST", "/v4/audiences/preview", json=preview) == expected


@pytest.mark.parametrize(
    ("filters", "path", "expect"),
    [
        ('{"points": ', "", {"message": "invalid JSON: Expecting value", "line": 1}),
        ({"pointz": {"gte": 1}}, "pointz", {"suggestion": 'did you mean "points"?'}),
        ('{"points": {"gtee": 1}}', "points.gtee", {"suggestion": 'did you mean "gte"?'}),
        ({"points": {"gte": "ten"}}, "points.gte", {}),
        ({"OR": [{"country": "FR"}, {"isVerified": {"gt": True}}]}, "OR[1].isVerified.gt", {}),
        ([{"points": 1}], "", {}),
        (5, "", {}),
        ('{"email": "a", "email": "b"}', "email", {}),
    ],
)
def test_invalid_filters_answer_the_spec_message_with_the_library_problems(
    tenant: Tenant, filters: Any, path: str, expect: dict[str, Any]
) -> None:
    list_id, _ = _people(tenant)
    body = rule_error(
        tenant, "POST", "/v4/audiences", json={"name": "x", "listId": list_id, "filters": filters}
    )
    assert body["error"] == INVALID and "message" not in body
    issue = body["details"][0]
    assert issue["path"] == path and issue["message"]
    for key, value in expect.items():
        assert issue[key] == value if key != "message" else issue[key].startswith(value)
    with pytest.raises(af.FilterError) as raised:
        af.parse(filters)
    assert body["details"] == raised.value.to_dicts()
    assert tenant.ok("GET", "/v4/audiences", params={"listId": list_id})["audiences"] == []


def test_invalid_filters_text_reports_line_and_column(tenant: Tenant) -> None:
    list_id, _ = _people(tenant)
    text = "points >= 10 and\ncountry inn ['FR']"
    body = rule_error(
        tenant, "POST", "/v4/audiences", json={"name": "x", "listId": list_id, "filtersText": text}
    )
    assert body["error"] == INVALID and "message" not in body
    assert body["details"][0]["line"] == 2 and body["details"][0]["column"] >= 1
    with pytest.raises(af.FilterError) as raised:
        af.parse_text(text)
    assert body["details"] == raised.value.to_dicts()


def test_filters_and_filters_text_together_are_refused(tenant: Tenant) -> None:
    list_id, _ = _people(tenant)
    body = {"name": "x", "listId": list_id, "filters": {"points": 1}, "filtersText": "points = 1"}
    assert rule_error(tenant, "POST", "/v4/audiences", json=body) == rule_body(
        "Send either filters or filtersText, not both"
    )


def test_mode_defaults_to_smart_with_filters_and_manual_without(tenant: Tenant) -> None:
    list_id, _ = _people(tenant)
    assert smart(tenant, list_id, {"points": 1})["mode"] == "smart"
    hand = new_audience(tenant, list_id)["audience"]
    assert (hand["mode"], hand["filters"], hand["filtersText"], hand["subs"]) == (
        "manual",
        None,
        None,
        [],
    )


def test_a_manual_audience_keeps_given_filters_unused(tenant: Tenant) -> None:
    list_id, people = _people(tenant)
    hand = new_audience(tenant, list_id, mode="manual", filters={"points": {"gte": 10}})
    audience = hand["audience"]
    assert audience["filters"] == '{"points":{"gte":10}}' and audience["subs"] == []
    assert audience["id"] not in contact_audiences(tenant, people["top"]["id"])


def test_update_changes_name_filters_and_mode_by_the_rules(tenant: Tenant) -> None:
    list_id, people = _people(tenant)
    audience = smart(tenant, list_id, {"points": {"gte": 10}}, name="Before")
    path = f"/v4/audiences/{audience['id']}"

    renamed = tenant.ok("PATCH", path, json={"name": "After"})
    assert renamed["audience"]["name"] == "After"
    assert renamed["audience"]["filters"] == audience["filters"]
    assert renamed["warnings"] == []

    narrowed = tenant.ok("PATCH", path, json={"filters": '{"points": {"gte": 100}}'})["audience"]
    assert [s["email"] for s in narrowed["subs"]] == ["top@example.com"]
    assert narrowed["updatedAt"] > audience["updatedAt"]

    # To manual: the filter stays stored but out of use; members are the stored ones (none).
    as_manual = tenant.ok("PATCH", path, json={"mode": "manual"})["audience"]
    assert (as_manual["mode"], as_manual["filters"]) == ("manual", '{"points":{"gte":100}}')
    assert as_manual["subs"] == []
    assert audience["id"] not in contact_audiences(tenant, people["top"]["id"])

    # Back to smart without filters: the stored filter is used again.
    back = tenant.ok("PATCH", path, json={"mode": "smart"})["audience"]
    assert [s["email"] for s in back["subs"]] == ["top@example.com"]
    assert contact_audiences(tenant, people["top"]["id"]) == [audience["id"]]

    by_text = tenant.ok("PATCH", path, json={"filtersText": 'country = "FR"'})["audience"]
    assert by_text["filters"] == '{"country":{"equals":"FR"}}'
    assert sorted(s["email"] for s in by_text["subs"]) == ["low@example.com", "top@example.com"]

    # On a manual audience, null clears the stored filter; smart then has nothing to use.
    tenant.ok("PATCH", path, json={"mode": "manual", "filters": None})
    assert tenant.ok("GET", path)["audience"]["filters"] is None
    assert rule_error(tenant, "PATCH", path, json={"mode": "smart"}) == rule_body(
        "Filters are required for smart mode"
    )
    switched = tenant.ok("PATCH", path, json={"mode": "smart", "filters": {"points": 5}})
    assert [s["email"] for s in switched["audience"]["subs"]] == ["low@example.com"]


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"name": ""}, "/body/name"),
        ({"name": None}, "/body/name"),
        ({"mode": "dynamic"}, "/body/mode"),
        ({"listId": "lst_x"}, "/body/listId"),
        ({"filtersText": 5}, "/body/filtersText"),
    ],
)
def test_invalid_update_bodies_are_400_with_a_pointer(
    tenant: Tenant, body: dict[str, Any], pointer: str
) -> None:
    list_id, _ = _people(tenant)
    audience = smart(tenant, list_id, {"points": 1})
    response = tenant.call("PATCH", f"/v4/audiences/{audience['id']}", json=body)
    assert response.status_code == 400
    assert pointer in [issue["pointer"] for issue in response.json()["errors"]]


def test_list_audiences_newest_first_with_member_counts(tenant: Tenant) -> None:
    list_id, people = _people(tenant)
    first = smart(tenant, list_id, {"points": {"gte": 10}}, name="first")
    second = manual(tenant, list_id, name="second")
    tenant.ok(
        "POST", f"/v4/audiences/{second['id']}/members", json={"contactIds": [people["low"]["id"]]}
    )
    third = smart(tenant, list_id, {"points": {"gt": 10, "lt": 5}}, name="third")
    listed = tenant.ok("GET", "/v4/audiences", params={"listId": list_id})
    assert [a["id"] for a in listed["audiences"]] == [third["id"], second["id"], first["id"]]
    assert all(set(a) == SUMMARY_KEYS for a in listed["audiences"])
    assert [a["subsCount"] for a in listed["audiences"]] == [0, 1, 2]
    assert listed["pagination"] == {"total": 3, "pages": 1, "currentPage": 1, "perPage": 20000}
    paged = tenant.ok("GET", "/v4/audiences", params={"listId": list_id, "limit": 2, "page": 2})
    assert [a["id"] for a in paged["audiences"]] == [first["id"]]
    missing = tenant.call("GET", "/v4/audiences")
    assert missing.status_code == 400 and missing.json()["errors"][0]["pointer"] == "/query/listId"


def test_delete_audience_returns_it_and_removes_it_everywhere(tenant: Tenant) -> None:
    list_id, people = _people(tenant)
    audience = smart(tenant, list_id, {"points": {"gte": 10}})
    hand = manual(tenant, list_id)
    tenant.ok(
        "POST", f"/v4/audiences/{hand['id']}/members", json={"contactIds": [people["top"]["id"]]}
    )
    assert contact_audiences(tenant, people["top"]["id"]) == [audience["id"], hand["id"]]
    for target, count in ((audience, 2), (hand, 1)):
        deleted = tenant.ok("DELETE", f"/v4/audiences/{target['id']}")["audience"]
        assert set(deleted) == SUMMARY_KEYS and deleted["subsCount"] == count
        assert tenant.call("GET", f"/v4/audiences/{target['id']}").status_code == 404
        assert tenant.call("DELETE", f"/v4/audiences/{target['id']}").status_code == 404
    assert contact_audiences(tenant, people["top"]["id"]) == []


def test_unsatisfiable_filters_succeed_with_a_warning(tenant: Tenant) -> None:
    list_id, _ = _people(tenant)
    never = {"points": {"gt": 10, "lt": 5}}
    created = new_audience(tenant, list_id, filters=never)
    assert created["audience"]["subs"] == []
    assert [w["code"] for w in created["warnings"]] == ["unsatisfiable"]
    assert "never match" in created["warnings"][0]["message"]
    path = f"/v4/audiences/{created['audience']['id']}"
    assert tenant.ok("PATCH", path, json={"filters": {"points": 1}})["warnings"] == []
    assert tenant.ok("PATCH", path, json={"filtersText": "country in []"})["warnings"] != []
    assert tenant.ok("PATCH", path, json={"mode": "manual"})["warnings"] == []
    preview = tenant.ok("POST", "/v4/audiences/preview", json={"listId": list_id, "filters": never})
    assert [w["code"] for w in preview["warnings"]] == ["unsatisfiable"]
    assert "warnings" not in tenant.ok("GET", path)


def test_audiences_of_another_account_are_404_and_reveal_nothing(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    list_id, people = _people(tenant)
    audience = smart(tenant, list_id, {"points": {"gte": 10}}, name="Secret VIPs")
    hand = manual(tenant, list_id, name="Secret hand-picked")
    their_list = other_tenant.new_list()
    theirs = other_tenant.new_contact(their_list["id"], "intruder@example.com")
    their_audience = manual(other_tenant, their_list["id"])
    probes: list[tuple[str, str, Any]] = [
        ("GET", f"/v4/audiences/{audience['id']}", None),
        ("PATCH", f"/v4/audiences/{audience['id']}", {"name": "stolen"}),
        ("DELETE", f"/v4/audiences/{audience['id']}", None),
        ("GET", f"/v4/audiences?listId={list_id}", None),
        ("POST", "/v4/audiences", {"name": "x", "listId": list_id, "filters": {"points": 1}}),
        ("POST", "/v4/audiences/preview", {"listId": list_id, "filters": {"points": 1}}),
        ("POST", f"/v4/audiences/{hand['id']}/members", {"contactIds": [theirs["id"]]}),
        ("DELETE", f"/v4/audiences/{hand['id']}/members/{people['top']['id']}", None),
        (
            "POST",
            f"/v4/audiences/{their_audience['id']}/members",
            {"contactIds": [people["top"]["id"]]},
        ),
        ("GET", f"/v4/contacts?listId={list_id}&filters=%7B%7D", None),
    ]
    for method, path, body in probes:
        response = other_tenant.call(method, path, json=body)
        assert response.status_code == 404, (method, path, response.text)
        assert "Secret" not in response.text and "@example.com" not in response.text
    # Nothing changed for the owner, nothing leaked into the intruder's audience.
    assert tenant.ok("GET", f"/v4/audiences/{audience['id']}")["audience"]["name"] == "Secret VIPs"
    assert member_emails(other_tenant, their_audience["id"]) == []
    assert contact_audiences(tenant, people["top"]["id"]) == [audience["id"]]


def test_a_list_holds_a_bounded_number_of_audiences(
    app_factory: Callable[..., ApiClient],
) -> None:
    tenant = make_tenant(app_factory(max_audiences_per_list=2))
    lst = tenant.new_list()
    manual(tenant, lst["id"])
    smart(tenant, lst["id"], {"points": 1})
    response = tenant.call("POST", "/v4/audiences", json={"name": "3", "listId": lst["id"]})
    assert response.status_code == 409
    assert response.json() == {
        "error": 409,
        "message": "A list holds at most 2 audiences",
        "status": 409,
        "detail": "A list holds at most 2 audiences",
    }
    assert len(tenant.ok("GET", "/v4/audiences", params={"listId": lst["id"]})["audiences"]) == 2


def test_audiences_on_contacts_name_id_name_and_mode(tenant: Tenant) -> None:
    list_id, people = _people(tenant)
    audience = smart(tenant, list_id, {"country": "FR"}, name="French")
    contact = tenant.ok("GET", f"/v4/contacts/{people['low']['id']}")["contact"]
    assert contact["audiences"] == [{"id": audience["id"], "name": "French", "mode": "smart"}]
    assert audience_ids(tenant.ok("GET", f"/v4/contacts/{people['mid']['id']}")["contact"]) == []


def test_canonical_filters_survive_a_round_trip(tenant: Tenant) -> None:
    list_id, _ = _people(tenant)
    audience = smart(tenant, list_id, {"createdAt": {"gte": "2024-01-01T02:00:00+02:00"}})
    assert json.loads(audience["filters"]) == {"createdAt": {"gte": "2024-01-01T00:00:00Z"}}
    again = smart(tenant, list_id, audience["filters"])
    also = new_audience(tenant, list_id, filtersText=audience["filtersText"])["audience"]
    assert again["filters"] == also["filters"] == audience["filters"]
