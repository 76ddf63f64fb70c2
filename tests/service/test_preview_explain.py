"""`POST /v4/audiences/preview` with `explainContactId`: why one contact is in or out."""

from __future__ import annotations

from typing import Any

import audiencefilter as af
from audiencefilter.service.domain.audience_filters import SCHEMA

from .conftest import Tenant

FILTER = 'points >= 100 and (country = "FR" or count(actions where name = "share") >= 2)'


def _explain(tenant: Tenant, list_id: str, contact_id: str) -> dict[str, Any]:
    body = {"listId": list_id, "filtersText": FILTER, "explainContactId": contact_id}
    return tenant.ok("POST", "/v4/audiences/preview", json=body)["explanation"]  # type: ignore[no-any-return]


def test_an_explanation_says_which_conditions_held(tenant: Tenant) -> None:
    lst = tenant.new_list()
    ann = tenant.new_contact(lst["id"], "ann@example.com", points=150, country="DE")
    for _ in range(2):
        body = {"name": "share", "increase": 0, "subId": ann["id"]}
        tenant.ok("POST", "/v4/actions", 201, json=body)
    explanation = _explain(tenant, lst["id"], ann["id"])
    assert explanation["contactId"] == ann["id"]
    assert explanation["outcome"] == "TRUE"
    assert explanation["label"] == "all of"
    points, either = explanation["children"]
    assert points == {
        "outcome": "TRUE",
        "label": "points >= 100",
        "seen": "points = 150",
        "words": "Points = 150",
        "children": None,
    }
    country, shares = either["children"]
    assert (country["outcome"], country["seen"]) == ("FALSE", 'country = "DE"')
    assert shares["outcome"] == "TRUE"


def test_an_explanation_agrees_with_the_library_for_a_contact_out(tenant: Tenant) -> None:
    lst = tenant.new_list()
    bob = tenant.new_contact(lst["id"], "bob@example.com", points=50)
    explanation = _explain(tenant, lst["id"], bob["id"])
    record: dict[str, Any] = {"points": 50, "country": None, "actions": []}
    expected = af.parse_text(FILTER, schema=SCHEMA).explain(record)
    assert explanation["outcome"] == expected.outcome.value == "FALSE"
    assert explanation["children"][1]["outcome"] == "UNKNOWN"  # country is null, no shares


def test_without_a_contact_there_is_no_explanation(tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = {"listId": lst["id"], "filtersText": FILTER}
    assert tenant.ok("POST", "/v4/audiences/preview", json=body)["explanation"] is None


def test_a_contact_of_another_list_is_not_found(tenant: Tenant) -> None:
    lst, other = tenant.new_list(), tenant.new_list()
    stranger = tenant.new_contact(other["id"], "eve@example.com")
    body = {"listId": lst["id"], "filtersText": FILTER, "explainContactId": stranger["id"]}
    response = tenant.call("POST", "/v4/audiences/preview", json=body)
    assert response.status_code == 404
    assert response.json()["message"] == "Contact not found"
