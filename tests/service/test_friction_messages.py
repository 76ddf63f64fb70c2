"""Refusals a new user meets first say what to do in words: the field they meant, why a type
does not exist, what a key may hold."""

from __future__ import annotations

from typing import Any

from .conftest import Tenant


def _issue(response: Any, pointer: str) -> dict[str, str]:
    assert response.status_code == 400, response.text
    issues = {issue["pointer"]: issue for issue in response.json()["errors"]}
    return issues[pointer]  # type: ignore[no-any-return]


def test_an_action_for_contact_id_suggests_sub_id(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "doer@example.com")
    body = {"name": "bought", "increase": 1, "contactId": contact["id"]}
    issue = _issue(tenant.call("POST", "/v4/actions", json=body), "/body/contactId")
    assert issue["suggestion"] == 'did you mean "subId"?'


def test_a_datetime_custom_field_is_refused_saying_why(tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = {"key": "lastOrder", "type": "datetime"}
    issue = _issue(tenant.call("POST", f"/v4/lists/{lst['id']}/fields", json=body), "/body/type")
    assert issue["found"] == 'the string "datetime"'
    suggestion = issue["suggestion"]
    assert "did you mean" not in suggestion
    assert "time of day" in suggestion and '"date"' in suggestion and "actions" in suggestion
    assert "order" in suggestion  # the reason: a date-time inside JSON has no shared order


def test_a_datetime_type_change_is_refused_alike(tenant: Tenant) -> None:
    lst = tenant.new_list()
    tenant.ok("POST", f"/v4/lists/{lst['id']}/fields", 201, json={"key": "day", "type": "date"})
    response = tenant.call("PATCH", f"/v4/lists/{lst['id']}/fields/day", json={"type": "timestamp"})
    assert "time of day" in _issue(response, "/body/type")["suggestion"]


def test_a_bad_field_key_is_explained_in_words(tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = {"key": "Bad Key", "type": "date"}
    issue = _issue(tenant.call("POST", f"/v4/lists/{lst['id']}/fields", json=body), "/body/key")
    assert issue["expected"] == (
        "a key of 1 to 64 letters (A-Z, a-z), digits and underscores, starting with a letter, "
        "such as birthday or plan_2"
    )
    assert "^" not in issue["detail"] and "{0,63}" not in issue["detail"]
