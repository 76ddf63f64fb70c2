"""Lists (projects): every field, create/read/update/delete, cascade, url uniqueness, paging."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from audiencefilter.service.db.models import Action, Audience, AudienceMember, Contact

from .conftest import ApiClient, Tenant

FULL_LIST: dict[str, Any] = {
    "name": "Spring launch",
    "url": "spring-launch-test-1",
    "mode": "newsletter",
    "color": "#12ab9F",
    "title": "Be first",
    "desc": "Our spring launch",
    "socialDescription": "Join us",
    "branding": False,
    "referrals": False,
    "startFrom": 100,
    "senderName": "Team",
    "replyTo": "reply@example.com",
    "sender": "news@example.com",
    "legal": "Terms apply",
    "domainId": "dom_1",
    "defaultPageId": "page_1",
    "referralPageId": "page_2",
    "successPageId": "page_3",
    "listSettingsId": "set_1",
    "whitelistEmailId": "wl_1",
    "templateId": "tpl_1",
    "themeId": "theme_1",
    "icon": "https://example.com/icon.png",
    "favicon": "https://example.com/favicon.ico",
    "ogImage": "https://example.com/og.png",
    "columns": ["email", "points"],
    "customHeadCode": "<meta name='x'>",
    "customBodyCode": "<script></script>",
    "analyticsA": "A-1",
    "analyticsB": "B-2",
    "allowedOrigins": ["https://example.com", "http://localhost:8080"],
    "publicFields": ["firstName", "company", "data"],
    "publicFieldsPolicy": "ignore",
    "timeZone": "Europe/Paris",
}
LIST_KEYS = {*FULL_LIST, "id", "createdAt", "updatedAt", "userId", "customFields"}


def test_create_list_with_every_field_and_read_it_back(tenant: Tenant) -> None:
    created = tenant.new_list(**FULL_LIST)
    assert set(created) == LIST_KEYS
    assert {key: created[key] for key in FULL_LIST} == FULL_LIST
    assert created["userId"] == tenant.account_id
    assert created["id"].startswith("lst_")
    assert created["createdAt"].endswith("Z")
    assert tenant.ok("GET", f"/v4/lists/{created['id']}")["list"] == created


def test_new_list_defaults(tenant: Tenant) -> None:
    created = tenant.new_list(name="Défaut & Co!")
    assert created["url"].startswith("d-faut-co-")
    assert (created["mode"], created["branding"], created["referrals"]) == ("waitlist", True, True)
    assert (created["startFrom"], created["columns"], created["color"]) == (1, [], None)


def test_list_url_is_unique_across_accounts(tenant: Tenant, other_tenant: Tenant) -> None:
    tenant.new_list(url="taken-url-1")
    response = other_tenant.call("POST", "/v4/lists", json={"name": "x", "url": "taken-url-1"})
    assert response.status_code == 409
    assert response.json() == {
        "error": 409,
        "message": "This list url is already taken",
        "status": 409,
        "detail": "This list url is already taken",
    }


def test_patch_list_changes_only_the_fields_sent(tenant: Tenant) -> None:
    created = tenant.new_list(title="Old", color="#000000")
    updated = tenant.ok(
        "PATCH", f"/v4/lists/{created['id']}", json={"title": "New", "color": None, "startFrom": 5}
    )["list"]
    assert (updated["title"], updated["color"], updated["startFrom"]) == ("New", None, 5)
    assert updated["name"] == created["name"]
    assert updated["updatedAt"] >= created["updatedAt"]


def test_patch_list_refuses_null_name_and_bad_values(tenant: Tenant) -> None:
    created = tenant.new_list()
    for body, pointer in [
        ({"name": None}, "/body/name"),
        ({"color": "red"}, "/body/color"),
        ({"mode": "party"}, "/body/mode"),
        ({"startFrom": -1}, "/body/startFrom"),
        ({"url": "Has Spaces"}, "/body/url"),
        ({"branding": 1}, "/body/branding"),
        ({"columns": ["a"] * 101}, "/body/columns"),
    ]:
        response = tenant.call("PATCH", f"/v4/lists/{created['id']}", json=body)
        assert response.status_code == 400, body
        assert [issue["pointer"] for issue in response.json()["errors"]] == [pointer]


def test_lists_and_projects_are_paginated(tenant: Tenant) -> None:
    made = [tenant.new_list(name=f"L{index}")["id"] for index in range(5)]
    first = tenant.ok("GET", "/v4/lists", params={"limit": 2})
    assert first["pagination"] == {"total": 5, "pages": 3, "currentPage": 1, "perPage": 2}
    third = tenant.ok("GET", "/v4/projects", params={"limit": 2, "page": 3})
    assert len(third["projects"]) == 1
    everything = tenant.ok("GET", "/v4/projects")["projects"]
    assert sorted(lst["id"] for lst in everything) == sorted(made)
    assert [lst["id"] for lst in tenant.ok("GET", "/v4/lists")["lists"]] == [
        lst["id"] for lst in everything
    ]


def test_delete_list_cascades_to_contacts_actions_and_audiences(
    client: ApiClient, tenant: Tenant
) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "gone@example.com")
    tenant.ok("POST", "/v4/actions", 201, json={"name": "a", "increase": 2, "subId": contact["id"]})
    with client.app.state.db.transaction() as session:
        audience = Audience(listId=lst["id"], name="Fans", mode="manual")
        session.add(audience)
        session.flush()
        session.add(AudienceMember(audienceId=audience.id, contactId=contact["id"]))

    deleted = tenant.ok("DELETE", f"/v4/lists/{lst['id']}")["list"]
    assert deleted["id"] == lst["id"]
    assert tenant.call("GET", f"/v4/lists/{lst['id']}").status_code == 404
    assert tenant.call("GET", f"/v4/contacts/{contact['id']}").status_code == 404
    with client.app.state.db.session(write=False) as session:
        for model, column in [
            (Contact, Contact.listId == lst["id"]),
            (Action, Action.subId == contact["id"]),
            (Audience, Audience.listId == lst["id"]),
            (AudienceMember, AudienceMember.contactId == contact["id"]),
        ]:
            assert session.scalar(select(func.count()).select_from(model).where(column)) == 0


def test_unknown_list_is_404(tenant: Tenant) -> None:
    for method in ("GET", "PATCH", "DELETE"):
        response = tenant.call(method, "/v4/lists/lst_doesnotexist", json={"name": "x"})
        assert response.status_code == 404
        assert response.json() == {
            "error": 404,
            "message": "List not found",
            "status": 404,
            "detail": "List not found",
        }
