"""Validation errors say where, what was expected, what was found, and what to do: like the
filter errors, not like pydantic."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Tenant


def _issues(response: Any) -> dict[str, dict[str, str]]:
    assert response.status_code == 400, response.text
    return {issue["pointer"]: issue for issue in response.json()["errors"]}


def test_unknown_body_field_suggests_the_nearest(tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = {"listId": lst["id"], "email": "ann@example.com", "fristName": "Ann"}
    issue = _issues(tenant.call("POST", "/v4/contacts", json=body))["/body/fristName"]
    assert issue == {
        "pointer": "/body/fristName",
        "detail": 'expected one of the known fields, found the unknown field "fristName"; '
        'did you mean "firstName"?',
        "expected": "one of the known fields",
        "found": 'the unknown field "fristName"',
        "suggestion": 'did you mean "firstName"?',
    }


def test_unknown_field_far_from_any_lists_the_known_ones(tenant: Tenant) -> None:
    body = {"name": "x", "subId": "con_x", "increase": 1, "zzzz": 1}
    issue = _issues(tenant.call("POST", "/v4/actions", json=body))["/body/zzzz"]
    assert issue["suggestion"] == "known fields: createdAt, increase, name, subId"


def test_email_pattern_is_named_not_shown(tenant: Tenant) -> None:
    lst = tenant.new_list()
    response = tenant.call("POST", "/v4/contacts", json={"listId": lst["id"], "email": "nope"})
    issue = _issues(response)["/body/email"]
    assert issue["detail"] == (
        'expected an email address such as ann@example.com, found the string "nope"'
    )
    assert "^" not in response.json()["message"]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ([1, 2], "expected a JSON object, found an array of 2 items"),
        ("text", 'expected a JSON object, found the string "text"'),
    ],
)
def test_a_body_that_is_not_an_object(tenant: Tenant, body: Any, detail: str) -> None:
    issue = _issues(tenant.call("POST", "/v4/lists", json=body))["/body"]
    assert issue["detail"] == detail
    assert "extract fields" not in issue["detail"]


def test_choices_types_bounds_and_missing_fields(tenant: Tenant) -> None:
    body = {"mode": "waitlst", "color": "red", "startFrom": -1, "branding": "yes"}
    issues = _issues(tenant.call("POST", "/v4/lists", json=body))
    assert issues["/body/mode"]["detail"] == (
        'expected one of "waitlist", "newsletter", found the string "waitlst"; '
        'did you mean "waitlist"?'
    )
    assert issues["/body/color"]["expected"] == "a colour as #rrggbb, such as #3355ff"
    assert issues["/body/startFrom"]["detail"] == "expected a number >= 0, found the number -1"
    assert issues["/body/branding"]["detail"] == ('expected true or false, found the string "yes"')
    assert issues["/body/name"]["detail"] == (
        "expected a value: the field is required, found nothing"
    )


def test_query_problems_read_alike(tenant: Tenant) -> None:
    response = tenant.call("GET", "/v4/contacts", params={"listId": "x", "order": "up"})
    issue = _issues(response)["/query/order"]
    assert issue["expected"] == 'one of "asc", "desc"' and issue["found"] == 'the string "up"'
    assert response.json()["message"] == (
        'Invalid request: /query/order: expected one of "asc", "desc", found the string "up"'
    )
