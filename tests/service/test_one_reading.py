"""A filter sent without saving it is read one way by the preview, the estimate and the
comparison (`domain/list_filters.py`), on SQLite and PostgreSQL: a reference to another audience
by its name, a calendar rule on a custom field of a list in another zone, and the refusals
(an unknown name, an id of no audience of the list) answer alike in all three.

The clock stands at 2031-06-01 12:00 UTC, 2031-06-02 02:00 in Pacific/Kiritimati (UTC+14):
"birthday anniversary within today" selects the June 2 birthdays on a list kept in that zone.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.app import create_app

from .conftest import ApiClient, Tenant, make_tenant, settings_on

START = datetime(2031, 6, 1, 12, tzinfo=UTC)
EAST = "Pacific/Kiritimati"
# birthday (June 1 or 2) and points of each contact; "VIP" is points >= 100.
PEOPLE = [("06-01", 5), ("06-02", 50), ("06-01", 150), ("06-02", 500), ("06-02", 700)]
FILTERS = [
    'audiences some (name = "VIP") and points < 600',  # 150 and 500
    "birthday anniversary within today",  # June 2 in the list's zone: 50, 500, 700
    'audiences some (name in ["VIP"]) and birthday anniversary within today',  # 500 and 700
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def tenant(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tenant]:
    settings = settings_on(request, tmp_path / "reading.db", membership_sweep_seconds=0)
    api = ApiClient(create_app(settings, clock=lambda: START))
    yield make_tenant(api)
    api.close()


def _list(tenant: Tenant) -> str:
    """A list kept in Pacific/Kiritimati with a `birthday` date field, its contacts, and the
    audience "VIP"."""
    lst: str = tenant.new_list(timeZone=EAST)["id"]
    body = {"key": "birthday", "type": "date", "label": "Birthday"}
    tenant.ok("POST", f"/v4/lists/{lst}/fields", 201, json=body)
    for n, (day, points) in enumerate(PEOPLE):
        data = {"birthday": f"1990-{day}"}
        tenant.new_contact(lst, f"c{n}@example.com", points=points, data=data)
    vip = {"name": "VIP", "listId": lst, "filtersText": "points >= 100"}
    tenant.ok("POST", "/v4/audiences", 201, json=vip)
    return lst


def _answers(tenant: Tenant, lst: str, text: str) -> list[Any]:
    """The preview's, the estimate's and the comparison's answers to one filter."""
    body = {"listId": lst, "filtersText": text}
    return [
        tenant.call("POST", "/v4/audiences/preview", json=body),
        tenant.call("POST", "/v4/audiences/estimate", json={**body, "exact": True}),
        tenant.call(
            "POST",
            "/v4/audiences/compare",
            json={"listId": lst, "a": {"filtersText": text}, "b": {"filtersText": "points >= 0"}},
        ),
    ]


@pytest.mark.parametrize("text", FILTERS)
def test_estimate_and_compare_count_what_the_preview_counts(tenant: Tenant, text: str) -> None:
    lst = _list(tenant)
    preview, estimate, compared = _answers(tenant, lst, text)
    for answer in (preview, estimate, compared):
        assert answer.status_code == 200, answer.text
    counted = preview.json()["data"]["count"]
    assert counted == {FILTERS[0]: 2, FILTERS[1]: 3, FILTERS[2]: 2}[text]
    estimated = estimate.json()["data"]
    assert estimated["exact"] == estimated["estimate"] == counted  # the list is within the sample
    assert estimated["filtersText"] == preview.json()["data"]["filtersText"]
    counts = compared.json()["data"]["counts"]
    assert (counts["both"], counts["aOnly"]) == (counted, 0)
    assert compared.json()["data"]["a"]["filters"] == preview.json()["data"]["filters"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('audiences some (name = "Gold") and points > 1', "not an audience of this list"),
        ('audiences some (id = "aud_nowhere")', "'aud_nowhere' is not an audience of list"),
    ],
)
def test_estimate_and_compare_refuse_what_the_preview_refuses(
    tenant: Tenant, text: str, words: str
) -> None:
    lst = _list(tenant)
    preview, estimate, compared = _answers(tenant, lst, text)
    assert preview.status_code == 400 and words in preview.text, preview.text
    for answer in (estimate, compared):
        assert answer.status_code == 400, answer.text
        assert answer.json()["message"] == preview.json()["message"]
        assert answer.json()["details"] == preview.json()["details"]


def test_compare_proves_in_the_lists_zone(tenant: Tenant) -> None:
    """The relation is proven over the filters as the counts read them: a calendar rule naming
    no zone in the list's zone, so it is the same as one naming that zone."""
    lst = _list(tenant)
    body = {"filtersText": "birthday anniversary within today", "name": "Today", "listId": lst}
    saved = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    named = {"filtersText": f'birthday anniversary within today in "{EAST}"'}
    for side in ({"filtersText": body["filtersText"]}, {"audienceId": saved}):
        found = tenant.ok(
            "POST", "/v4/audiences/compare", json={"listId": lst, "a": side, "b": named}
        )
        assert found["relation"] == "equivalent", found
        assert (found["counts"]["both"], found["counts"]["aOnly"]) == (3, 0)
