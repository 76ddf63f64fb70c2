"""A CSV saved by French or German Excel imports as exported, with the options its dry run
proposes.

Replay of a finding: a file separated by `;`, with dates written `26/11/2026` and decimals
`1 234,56`, had every row refused, and the import had no option for it. Here such a file of
3,000 contacts (three of the import's batches; a few hundred on PostgreSQL) is dry-run, the
proposal is taken as it is, and the import stores exactly what the same contacts written in
ISO store in another list. A date that reads two ways under no stated order is refused with its
row, its column and both readings; an option sent with a JSON import is a 400.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from .conftest import ApiClient, Tenant, make_tenant, settings_on

CSV = {"Content-Type": "text/csv"}
FIELDS = (("birthday", "date"), ("lifetimeValue", "number"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "euro.db", membership_sweep_seconds=0))


def _list(tenant: Tenant) -> str:
    list_id: str = tenant.new_list()["id"]
    for key, kind in FIELDS:
        tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json={"key": key, "type": kind})
    return list_id


def _contacts(count: int) -> list[tuple[str, date, int, str]]:
    """(email, birthday, lifetime value in cents, signed-up instant) per contact."""
    start = date(1950, 1, 1)
    return [
        (f"c{n}@example.com", start + timedelta(days=n * 7 % 20000), n * 12345 % 10**8, "")
        for n in range(count)
    ]


def _european(rows: list[tuple[str, date, int, str]]) -> str:
    lines = ["email;birthday;lifetimeValue"]
    for email, day, cents in ((r[0], r[1], r[2]) for r in rows):
        whole = f"{cents // 100:,}".replace(",", "\u00a0")
        lines.append(f"{email};{day:%d/%m/%Y};{whole},{cents % 100:02d}")
    return "\n".join(lines) + "\n"


def _iso(rows: list[tuple[str, date, int, str]]) -> str:
    lines = ["email,birthday,lifetimeValue"]
    lines += [f"{email},{day.isoformat()},{cents / 100}" for email, day, cents, _ in rows]
    return "\n".join(lines) + "\n"


def _post(tenant: Tenant, list_id: str, text: str, **params: Any) -> Any:
    query = {"listId": list_id, **params}
    response = tenant.call(
        "POST", "/v4/contacts/import", params=query, content=text.encode(), headers=CSV
    )
    assert response.status_code == 200, response.text[:500]
    return response.json()["data"]


def _stored(tenant: Tenant, list_id: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    page = 1
    while True:
        query = {"listId": list_id, "sort": "email", "limit": 5000, "page": page}
        contacts = tenant.ok("GET", "/v4/contacts", params=query)["contacts"]
        found.update({c["email"]: c["data"] for c in contacts})
        if len(contacts) < 5000:
            return found
        page += 1


def test_a_european_file_imports_with_the_proposed_options(
    api: ApiClient, request: pytest.FixtureRequest
) -> None:
    count = 3_000 if request.node.callspec.params["api"] == "sqlite" else 300
    tenant = make_tenant(api)
    rows = _contacts(count)
    euro, iso = _list(tenant), _list(tenant)
    text = _european(rows)

    refused = _post(tenant, euro, text, dryRun="true")
    assert refused["format"]["delimiter"] == ";" and refused["valid"] < count
    assert refused["proposed"] == {"dateOrder": "DMY", "decimal": ","}
    assert any("DD/MM/YYYY" in reason for reason in refused["proposedBecause"])

    checked = _post(tenant, euro, text, dryRun="true", **refused["proposed"])
    assert (checked["valid"], checked["invalid"]) == (count, 0)
    done = _post(tenant, euro, text, **refused["proposed"])
    assert (done["created"], done["rejected"]) == (count, 0)
    assert _post(tenant, iso, _iso(rows))["created"] == count
    assert _stored(tenant, euro) == _stored(tenant, iso)


def test_an_ambiguous_date_is_refused_with_both_readings(api: ApiClient) -> None:
    tenant = make_tenant(api)
    list_id = _list(tenant)
    text = "email;birthday\nann@example.com;01/02/1990\nbob@example.com;26/11/1990\n"
    checked = _post(tenant, list_id, text, dryRun="true")
    first = checked["problems"][0]
    assert (first["row"], first["column"]) == (1, "birthday")
    assert "1 February 1990" in first["detail"] and "2 January 1990" in first["detail"]
    assert checked["proposed"] == {"dateOrder": "DMY"}


def test_the_format_options_are_for_csv_only(api: ApiClient) -> None:
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    params = {"listId": list_id, "dateOrder": "DMY"}
    response = tenant.call("POST", "/v4/contacts/import", params=params, json=[])
    assert response.status_code == 400 and "dateOrder" in response.text
    bad = tenant.call(
        "POST",
        "/v4/contacts/import",
        params={"listId": list_id, "decimal": ";"},
        content=b"email\na@x.io\n",
        headers=CSV,
    )
    assert bad.status_code in (400, 422)
