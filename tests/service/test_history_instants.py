"""`at` of the members listing read as RFC 3339 or refused, on SQLite and PostgreSQL: every
part of a date-time at and past its range, week and ordinal dates, ISO 8601's other shapes,
characters around the text, offsets up to ±23:59 at the ends of the years 0001 and 9999.

Each value is answered 200 with the members at the instant it names (the test's own reading of
it, in UTC) or 400 naming `/query/at` with what was found and the fix; never 500. The export,
which does not take `at`, refuses it and any other unknown parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.app import create_app

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings
from .hands import Hands

CREATED = datetime(2031, 6, 1, 8, tzinfo=UTC)
NOW = CREATED + timedelta(days=2)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Tenant, Hands]]:
    options: dict[str, Any] = {"membership_sweep_seconds": 0, "webhook_worker": False}
    if request.param == "sqlite":
        settings = sqlite_settings(tmp_path / "instants.db", **options)
    else:
        pg_migrated_database: Callable[[], str] = request.getfixturevalue("pg_migrated_database")
        settings = url_settings(pg_migrated_database(), auto_migrate=True, **options)
    hands = Hands(CREATED)
    api = ApiClient(create_app(settings, clock=hands), raise_app_exceptions=False)
    yield make_tenant(api), hands
    api.close()


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


# Values naming an instant, and that instant in UTC.
READ: list[tuple[str, datetime]] = [
    ("2031-06-01T10:20:30Z", _utc(2031, 6, 1, 10, 20, 30)),
    ("2031-06-01t10:20:30z", _utc(2031, 6, 1, 10, 20, 30)),  # RFC 3339 allows lower case
    ("2031-06-01T10:20:30.5Z", _utc(2031, 6, 1, 10, 20, 30, 500000)),
    ("2031-06-01T10:20:30.123456789Z", _utc(2031, 6, 1, 10, 20, 30, 123456)),
    ("2031-06-01T10:20:30+00:00", _utc(2031, 6, 1, 10, 20, 30)),
    ("2031-06-01T10:20:30-00:00", _utc(2031, 6, 1, 10, 20, 30)),
    ("2031-06-01T12:20:30+02:00", _utc(2031, 6, 1, 10, 20, 30)),
    ("2031-06-01T10:20:30+14:00", _utc(2031, 5, 31, 20, 20, 30)),  # before the audience
    ("2031-06-01T10:20:30-14:00", _utc(2031, 6, 2, 0, 20, 30)),
    ("2031-06-01T10:20:30+23:59", _utc(2031, 5, 31, 10, 21, 30)),
    ("2031-06-01T10:20:30-23:59", _utc(2031, 6, 2, 10, 19, 30)),
    ("2031-06-01T23:59:59.999999Z", _utc(2031, 6, 1, 23, 59, 59, 999999)),
    ("2031-06-01T00:00:00Z", _utc(2031, 6, 1)),
    ("2030-01-31T00:00:00Z", _utc(2030, 1, 31)),
    ("2030-12-31T00:00:00Z", _utc(2030, 12, 31)),
    ("2028-02-29T00:00:00Z", _utc(2028, 2, 29)),
    ("2000-02-29T00:00:00Z", _utc(2000, 2, 29)),
    ("0001-01-01T00:00:00Z", _utc(1, 1, 1)),
    ("0001-01-01T00:00:00-14:00", _utc(1, 1, 1, 14)),
    ("0001-01-01T00:00:00-23:59", _utc(1, 1, 1, 23, 59)),
    ("0001-01-01T23:59:00+23:59", _utc(1, 1, 1)),
]

# Values naming no instant (or one out of range or in the future), and a word of the refusal.
REFUSED: list[tuple[str, str]] = [
    ("yesterday", "not a date-time"),
    ("", "not a date-time"),
    ("2031-06-01T10:20:30", "no offset"),
    ("2031-06-01", "not a date-time"),
    ("2031-13-01T00:00:00Z", "month"),
    ("2031-00-01T00:00:00Z", "month"),
    ("2031-06-00T00:00:00Z", "day"),
    ("2031-06-31T00:00:00Z", "day"),
    ("2031-01-32T00:00:00Z", "day"),
    ("2031-02-29T00:00:00Z", "day"),
    ("1900-02-29T00:00:00Z", "day"),
    ("2031-06-01T24:00:00Z", "hour"),
    ("2031-06-01T10:60:00Z", "minute"),
    ("2031-06-01T10:20:60Z", "leap second"),
    ("2031-06-01T10:20:61Z", "second"),
    ("2031-06-01T10:20:30+24:00", "offset"),
    ("2031-06-01T10:20:30-24:00", "offset"),
    ("2031-06-01T10:20:30+02:60", "offset"),
    ("0000-01-01T00:00:00Z", "year"),
    ("2026-W01-1T00:00:00Z", "week date"),
    ("2026W011T00:00:00Z", "week date"),
    ("2026-001T00:00:00Z", "ordinal date"),
    ("2026001T00:00:00Z", "ordinal date"),
    ("20310601T102030Z", "basic"),
    ("2031-06-01T10:20Z", "not a date-time"),
    ("2031-06-01T10:20:30+02", "not a date-time"),
    ("2031-06-01T10:20:30+0200", "not a date-time"),
    ("2031-06-01T10:20:30,5Z", "not a date-time"),
    ("2031-06-01T10:20:30.Z", "not a date-time"),
    ("2031-06-01 10:20:30Z", "separator"),
    ("2031-06-01T10:20:30 02:00", "%2B"),
    ("2031-06-01T10:20:30+02:00:00", "not a date-time"),
    ("２031-06-01T10:20:30Z", "U+FF12"),
    ("2031-06-01T10:20:3\u0660Z", "U+0660"),
    ("0001-01-01T00:00:00+14:00", "range"),
    ("0001-01-01T00:00:00+23:59", "range"),
    ("0001-01-01T00:00:00+00:01", "range"),
    ("9999-12-31T23:59:59-14:00", "range"),
    ("9999-12-31T23:59:59-23:59", "range"),
    ("9999-12-31T23:59:59Z", "future"),
    ("9999-12-31T23:59:59+14:00", "future"),
    ("2031-06-04T00:00:00Z", "future"),
    ("2" * 65, "long"),
]
for _char in ("\x00", " ", "\t", "\n", "\r", "\x1f", "\x7f", "\x85", "\u00a0", "\u200b"):
    _code = f"U+{ord(_char):04X}"
    REFUSED += [
        ("2031-06-01T10:20:30Z" + _char, _code),
        (_char + "2031-06-01T10:20:30Z", _code),
        ("2031-06-01T10:20" + _char + ":30Z", _code),
    ]


def _members_then(tenant: Tenant, hands: Hands) -> tuple[str, set[str]]:
    """An audience of two members, created at `CREATED`; the clock then moved to `NOW`."""
    lst = tenant.new_list()["id"]
    ids = {tenant.new_contact(lst, f"m{n}@example.com", points=50)["id"] for n in range(2)}
    body = {"name": "Then", "listId": lst, "filters": {"points": {"gte": 10}}}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    hands.at = NOW
    return audience, ids


def test_every_at_is_read_as_rfc_3339_or_refused_naming_at_and_the_fix(
    world: tuple[Tenant, Hands],
) -> None:
    tenant, hands = world
    audience, ids = _members_then(tenant, hands)
    url = f"/v4/audiences/{audience}/members"
    wrong: list[str] = []
    for text, moment in READ:
        response = tenant.call("GET", url, params={"at": text})
        if response.status_code != 200:
            wrong.append(f"{text!r}: {response.status_code} {response.text[:200]}")
            continue
        page = response.json()["data"]
        expected = ids if moment >= CREATED else set()
        found = {m["contactId"] for m in page["members"]}
        if datetime.fromisoformat(page["at"]) != moment or found != expected:
            wrong.append(f"{text!r}: at {page['at']}, {len(found)} members")
    for text, words in REFUSED:
        response = tenant.call("GET", url, params={"at": text})
        if response.status_code != 400:
            wrong.append(f"{text!r}: {response.status_code} {response.text[:200]}")
            continue
        issue = response.json()["errors"][0]
        said = f"{issue['detail']} {issue.get('suggestion', '')}"
        if issue["pointer"] != "/query/at" or not issue.get("suggestion") or words not in said:
            wrong.append(f"{text!r}: {issue}")
        elif "2026-05-01T09:30:00Z" not in issue["expected"]:
            wrong.append(f"{text!r}: {issue}")
    assert not wrong, f"{len(wrong)} of {len(READ) + len(REFUSED)}:\n" + "\n".join(wrong)


def test_the_export_refuses_at_and_unknown_parameters(world: tuple[Tenant, Hands]) -> None:
    tenant, hands = world
    audience, ids = _members_then(tenant, hands)
    url = f"/v4/audiences/{audience}/export"
    for params, name in [
        ({"at": "2031-06-01T10:20:30Z"}, "at"),
        ({"format": "csv", "at": "2031-06-01T10:20:30Z"}, "at"),
        ({"fromat": "csv"}, "fromat"),
        ({"limit": "5"}, "limit"),
    ]:
        response = tenant.call("GET", url, params=params)
        assert response.status_code == 400, (params, response.text)
        issue = response.json()["errors"][0]
        assert issue["pointer"] == f"/query/{name}" and issue.get("suggestion"), issue
        if name == "at":
            assert "/members?at=" in issue["suggestion"], issue
        if name == "fromat":
            assert '"format"' in issue["suggestion"], issue
    lines = tenant.call("GET", url, params={"format": "jsonl"}).text.splitlines()
    assert len(lines) == len(ids)
