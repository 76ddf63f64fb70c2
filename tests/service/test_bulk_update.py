"""An upsert import writes the changed fields of its contacts as the ORM's update by primary
key did, on SQLite and on PostgreSQL, whatever the fields' types: on PostgreSQL they travel as
one JSON array per set of fields changed, read by the server as rows of the contacts' own type
(`db/bulk.update_by_id`). Texts with quotes, backslashes, braces, the unit separator and text
outside ASCII, empty texts, `null`, booleans, the largest safe integer, instants with an offset,
and `data` where `true` and `1` differ, in rows that change different sets of fields."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from audiencefilter.service.db.models import Contact

from .conftest import ApiClient, make_tenant, settings_on

TEXTS = ['say "hi", {then} \\ go', "Ünïcödé \u2603", "a\x1fb", "", "line\nbreak", "x" * 200]


def _changes(index: int) -> dict[str, Any]:
    """Row `index`'s new fields: each row changes its own mix of fields and types."""
    shapes: list[dict[str, Any]] = [
        {"firstName": TEXTS[index % len(TEXTS)], "points": 2**53 - 1 - index},
        {"lastName": None, "isVerified": True, "country": "FR"},
        {"data": {"optin": 1, "nested": {"list": [True, None, "t"]}}, "referrals": index},
        {"data": {"optin": True}, "unsubscribed": True, "company": TEXTS[0]},
        {"createdAt": "2021-03-04T05:06:07.123456+02:00", "city": TEXTS[1]},
        {"points": -index, "isGDPR": True, "phoneNumber": "+33 1 23 45 67 89"},
    ]
    return shapes[index % len(shapes)]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "updates.db", membership_sweep_seconds=0))


def _stored(api: ApiClient, list_id: str) -> dict[str, Contact]:
    with api.app.state.db.reading() as session:
        found = session.scalars(select(Contact).where(Contact.listId == list_id)).all()
        session.expunge_all()
        return {contact.email: contact for contact in found}


def test_an_upsert_writes_every_changed_field_as_sent(api: ApiClient) -> None:
    tenant = make_tenant(api)
    list_id = str(tenant.new_list()["id"])
    rows = [
        {"email": f"u{i}@bulk.test", "firstName": "Before", "lastName": "Kept", "data": {"k": 1}}
        for i in range(30)
    ]
    url = f"/v4/contacts/import?listId={list_id}"
    assert tenant.ok("POST", url, json=rows)["created"] == 30
    updates = [{"email": f"U{i}@bulk.test", **_changes(i)} for i in range(30)]
    answer = tenant.ok("POST", f"{url}&mode=upsert", json=updates)
    assert answer["updated"] == 30, answer
    stored = _stored(api, list_id)
    for index in range(30):
        contact = stored[f"u{index}@bulk.test"]
        for name, value in _changes(index).items():
            found = getattr(contact, name)
            if name == "createdAt":
                assert found.astimezone(UTC) == datetime.fromisoformat(value).astimezone(UTC)
            else:
                assert found == value and type(found) is type(value), (index, name, found)
        kept = {"firstName": "Before", "lastName": "Kept", "data": {"k": 1}}
        for name, value in kept.items():
            if name not in _changes(index):
                assert getattr(contact, name) == value, (index, name)


def test_data_keeps_true_and_one_apart(api: ApiClient) -> None:
    tenant = make_tenant(api)
    list_id = str(tenant.new_list()["id"])
    url = f"/v4/contacts/import?listId={list_id}"
    tenant.ok("POST", url, json=[{"email": "t@bulk.test", "data": {"optin": True}}])
    tenant.ok("POST", f"{url}&mode=upsert", json=[{"email": "t@bulk.test", "data": {"optin": 1}}])
    optin = _stored(api, list_id)["t@bulk.test"].data["optin"]
    assert optin == 1 and optin is not True
