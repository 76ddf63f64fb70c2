"""Tenant isolation: another account's ids answer 404 everywhere and reveal nothing."""

from __future__ import annotations

from .conftest import Tenant


def test_other_accounts_see_nothing_of_a_tenant(tenant: Tenant, other_tenant: Tenant) -> None:
    lst = tenant.new_list(name="Private list")
    contact = tenant.new_contact(lst["id"], "secret@example.com", points=5)
    action = tenant.ok(
        "POST", "/v4/actions", 201, json={"name": "a", "increase": 2, "subId": contact["id"]}
    )["action"]
    other_list = other_tenant.new_list()

    probes = [
        ("GET", f"/v4/lists/{lst['id']}", None),
        ("PATCH", f"/v4/lists/{lst['id']}", {"name": "stolen"}),
        ("DELETE", f"/v4/lists/{lst['id']}", None),
        ("GET", f"/v4/contacts?listId={lst['id']}", None),
        ("GET", f"/v4/contacts/{contact['id']}", None),
        ("PATCH", f"/v4/contacts/{contact['id']}", {"points": 0}),
        ("DELETE", f"/v4/contacts/{contact['id']}", None),
        ("POST", "/v4/contacts", {"email": "intruder@example.com", "listId": lst["id"]}),
        ("POST", "/v4/actions", {"name": "x", "increase": 100, "subId": contact["id"]}),
        ("GET", f"/v4/actions?subId={contact['id']}", None),
        ("GET", f"/v4/actions/{action['id']}", None),
        ("DELETE", f"/v4/actions/{action['id']}", None),
    ]
    for method, path, body in probes:
        response = other_tenant.call(method, path, json=body)
        assert response.status_code == 404, (method, path, response.text)
        assert "secret" not in response.text and "Private" not in response.text

    assert [item["id"] for item in other_tenant.ok("GET", "/v4/lists")["lists"]] == [
        other_list["id"]
    ]
    assert [item["id"] for item in other_tenant.ok("GET", "/v4/projects")["projects"]] == [
        other_list["id"]
    ]
    # the owner's data is untouched
    assert tenant.ok("GET", f"/v4/lists/{lst['id']}")["list"]["name"] == "Private list"
    mine = tenant.ok("GET", f"/v4/contacts/{contact['id']}")["contact"]
    assert mine["points"] == 7
    assert tenant.ok("GET", f"/v4/actions/{action['id']}")["action"] == action
