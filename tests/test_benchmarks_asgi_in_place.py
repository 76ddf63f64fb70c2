"""The in-place caller of the benchmarks (benchmarks/asgi_in_place.py) answers as httpx does:
two applications on one database, one called in place and one through httpx, give the same
status, type and JSON (or CSV) for the same requests: a write with a body, a list, a page whose
size is in the query string, an update, an export, a refusal without the key's header. A
caller that dropped the body, a header or the query string would answer otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from audiencefilter.service import Settings  # noqa: E402
from audiencefilter.service.db.models import new_id  # noqa: E402
from audiencefilter.service.domain.use_cases import keys  # noqa: E402
from benchmarks.asgi_in_place import InPlaceClient  # noqa: E402
from benchmarks.service_audiences import InProcessClient  # noqa: E402

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
CONTACTS = [
    {"email": f"c{n}@example.com", "firstName": f"C{n}", "country": "US", "points": 10 * n}
    for n in range(5)
]


@pytest.fixture
def callers(tmp_path: Path) -> Iterator[tuple[InPlaceClient, InProcessClient, dict[str, str]]]:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'twins.db'}",
        auto_migrate=True,
        rate_limit_free="100000/minute",
        rate_limit_pro="100000/minute",
        membership_sweep_seconds=0,
    )
    in_place = InPlaceClient(settings, clock=lambda: NOW)
    try:
        through_httpx = InProcessClient(settings, clock=lambda: NOW)
        try:
            issued = keys.issue(in_place.app.state.db, new_id("twins"), "pro", "private")
            yield in_place, through_httpx, {"apiKey": issued.plaintext}
        finally:
            through_httpx.close()
    finally:
        in_place.close()


def both(
    callers: tuple[InPlaceClient, InProcessClient, dict[str, str]],
    method: str,
    url: str,
    **kwargs: Any,
) -> Any:
    """The in-place answer, after asserting that httpx gives the same one."""
    in_place, through_httpx, headers = callers
    kwargs.setdefault("headers", headers)
    ours, theirs = (c.request(method, url, **kwargs) for c in (in_place, through_httpx))
    assert ours.status_code == theirs.status_code, (url, ours.text, theirs.text)
    assert ours.headers["content-type"] == theirs.headers["content-type"]
    if ours.headers["content-type"].startswith("application/json"):
        assert ours.json() == theirs.json()
        return ours.json()
    assert ours.text == theirs.text
    return ours.text


def test_the_in_place_caller_answers_as_httpx_does(
    callers: tuple[InPlaceClient, InProcessClient, dict[str, str]],
) -> None:
    in_place, _, headers = callers
    created = in_place.request("POST", "/v4/lists", headers=headers, json={"name": "twins"})
    assert created.status_code == 201, created.text
    assert created.json()["data"]["list"]["name"] == "twins"  # the body was read
    list_id = created.json()["data"]["list"]["id"]
    imported = in_place.request(
        "POST", f"/v4/contacts/import?listId={list_id}", headers=headers, json=CONTACTS
    )
    assert imported.json()["data"]["created"] == len(CONTACTS), imported.text

    assert both(callers, "GET", f"/v4/lists/{list_id}")["data"]["list"]["name"] == "twins"
    page = both(callers, "GET", f"/v4/contacts?listId={list_id}&limit=2&sort=points")
    assert len(page["data"]["contacts"]) == 2  # the query string was read
    refused = both(callers, "GET", f"/v4/lists/{list_id}", headers={})
    assert "data" not in refused  # without the key's header: refused, the same way

    contact = page["data"]["contacts"][0]["id"]
    for points in (500, 5):  # the same move on each side: from 0 points to `points`
        answers = []
        for caller in callers[:2]:
            reset = in_place.request(
                "PATCH", f"/v4/contacts/{contact}", headers=headers, json={"points": 0}
            )
            assert reset.status_code == 200, reset.text
            answer = caller.request(
                "PATCH", f"/v4/contacts/{contact}", headers=headers, json={"points": points}
            )
            answers.append((answer.status_code, answer.json()))
        assert answers[0] == answers[1]
        assert answers[0][1]["data"]["contact"]["points"] == points

    body = {"name": "many", "listId": list_id, "filters": {"points": {"gte": 20}}}
    audience = in_place.request("POST", "/v4/audiences?wait=true", headers=headers, json=body)
    assert audience.status_code == 201, audience.text
    audience_id = audience.json()["data"]["audience"]["id"]
    exported = both(callers, "GET", f"/v4/audiences/{audience_id}/export?format=csv")
    members = audience.json()["data"]["pagination"]["total"]
    assert members >= 2 and exported.count("@example.com") == members
    invalid = both(callers, "POST", "/v4/lists", json={"name": ""})
    assert "data" not in invalid
