"""An erasure leaves the contact's data in no file, and a replayed import still reads.

After an erasure every SQLite table was clean, but the `-wal` file still held the e-mail, the
names, the phone number and the custom values (the frames written before the erasure), until
some 40 MB of later writes overwrote them. The service deletes with `secure_delete` and clears
the WAL once an erasure commits: the database file, its `-wal` and its `-shm` are searched for
the bytes of each erased value.

A replayed import answer (`Idempotency-Key`) whose contact was erased since kept the contact's
id alone: its row's `row` and `status` were dropped with the personal data.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from audiencefilter.service import create_app

from .conftest import ApiClient, Tenant, make_tenant, settings_on, sqlite_settings

ERASED = {
    "email": "quintessa.vandermolen@example.com",
    "firstName": "Quintessa",
    "lastName": "Vandermolen",
    "phoneNumber": "+44 7700 900461",
    "data": {"plan": "Zanzibarite-Platinum"},
}
KEPT = "keeper.ottoline@example.com"


@pytest.fixture
def sqlite_file(tmp_path: Path) -> Iterator[tuple[ApiClient, Path]]:
    path = tmp_path / "erased.db"
    client = ApiClient(create_app(sqlite_settings(path, membership_sweep_seconds=0)))
    yield client, path
    client.close()


def _files(path: Path) -> bytes:
    """The database file, its WAL and its shared memory index, as bytes."""
    names = (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
    return b"".join(name.read_bytes() for name in names if name.exists())


def _needles() -> list[bytes]:
    values = [ERASED["email"], ERASED["firstName"], ERASED["lastName"], ERASED["phoneNumber"]]
    return [value.encode() for value in (*values, ERASED["data"]["plan"])]  # type: ignore[index]


def test_no_file_of_the_database_holds_an_erased_contact(
    sqlite_file: tuple[ApiClient, Path],
) -> None:
    api, path = sqlite_file
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json={"key": "plan", "type": "string"})
    contact = tenant.new_contact(list_id, **ERASED)
    tenant.new_contact(list_id, KEPT)
    for points in range(3):  # the row written again: more frames of it in the WAL
        tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"points": points})
    assert all(needle in _files(path) for needle in _needles())
    tenant.ok("POST", f"/v4/lists/{list_id}/contacts/{contact['id']}/erase")
    on_disk = _files(path)
    assert [needle for needle in _needles() if needle in on_disk] == []
    assert KEPT.encode() in on_disk  # the other contact is still there


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def tenant(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tenant]:
    settings = settings_on(request, tmp_path / "replay.db", membership_sweep_seconds=0)
    client = ApiClient(create_app(settings))
    yield make_tenant(client)
    client.close()


@pytest.mark.parametrize("status", ["created", "exists"])
def test_a_replayed_import_keeps_the_row_and_status_of_an_erased_contact(
    tenant: Tenant, status: str
) -> None:
    list_id = tenant.new_list()["id"]
    if status == "exists":
        tenant.new_contact(list_id, ERASED["email"])  # type: ignore[arg-type]
    rows = [{"email": ERASED["email"], "firstName": "Q"}, {"email": KEPT}]
    key = {"Idempotency-Key": f"import-{status}"}
    query = {"listId": list_id}
    first = tenant.ok("POST", "/v4/contacts/import", params=query, json=rows, headers=key)
    erased_id = first["results"][0]["id"]
    assert first["results"][0]["status"] == status
    tenant.ok("POST", f"/v4/lists/{list_id}/contacts/{erased_id}/erase")
    again = tenant.call("POST", "/v4/contacts/import", params=query, json=rows, headers=key)
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    results = again.json()["data"]["results"]
    assert results[0] == {"row": 1, "status": status, "id": erased_id, "erased": True}
    assert results[1] == first["results"][1]
    assert ERASED["email"] not in again.text
