"""A CSV export writes each declared custom field as its own column (the rest of `data` in a
`data` column), and the CSV import reads such a file back into the same contacts."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.api.routes.exports import _parsed

from .conftest import ApiClient, Tenant, make_tenant, settings_on

DECLARED = (("birthday", "date"), ("plan", "string"), ("tags", "string[]"))
ROWS = [
    {
        "email": "ada@example.com",
        "points": 12,
        "data": {"birthday": "1990-11-23", "plan": "pro", "tags": ["a", "b"], "rank": 1},
    },
    {"email": "bo@example.com", "points": 3, "data": {"plan": "free"}},
    {"email": "cy@example.com", "points": 7, "data": {"note": "=1+1"}},
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def tenant(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> Tenant:
    api = app_factory(settings_on(request, tmp_path / "export.db", membership_sweep_seconds=0))
    return make_tenant(api)


def _list_with_fields(tenant: Tenant) -> str:
    list_id: str = tenant.new_list()["id"]
    for key, kind in DECLARED:
        tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json={"key": key, "type": kind})
    return list_id


def _exported(tenant: Tenant) -> str:
    list_id = _list_with_fields(tenant)
    tenant.ok("POST", "/v4/contacts/import", params={"listId": list_id}, json=ROWS)
    body = {"name": "Everyone", "listId": list_id, "filtersText": "points >= 0"}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    response = tenant.call(
        "GET", f"/v4/audiences/{audience['id']}/export", params={"format": "csv"}
    )
    assert response.status_code == 200, response.text
    return response.text


def _data(tenant: Tenant, list_id: str) -> dict[str, Any]:
    query = {"listId": list_id, "sort": "email", "order": "asc"}
    return {
        c["email"]: c["data"] for c in tenant.ok("GET", "/v4/contacts", params=query)["contacts"]
    }


def test_each_custom_field_is_a_column_and_the_rest_stays_in_data(tenant: Tenant) -> None:
    text = _exported(tenant)
    header = next(csv.reader(io.StringIO(text)))
    at = header.index("birthday")
    assert header[at : at + 4] == ["birthday", "plan", "tags", "data"]
    rows = {row["email"]: row for row in csv.DictReader(io.StringIO(text))}
    ada, bo, cy = rows["ada@example.com"], rows["bo@example.com"], rows["cy@example.com"]
    assert (ada["birthday"], ada["plan"], json.loads(ada["tags"])) == (
        "1990-11-23",
        "pro",
        ["a", "b"],
    )
    assert json.loads(ada["data"]) == {"rank": 1}
    assert (bo["birthday"], bo["plan"], bo["tags"], bo["data"]) == ("", "free", "", "")
    assert json.loads(cy["data"]) == {"note": "=1+1"}  # JSON text: no formula to neutralise


def test_the_csv_import_reads_the_export_back(tenant: Tenant) -> None:
    text = _exported(tenant)
    copy = _list_with_fields(tenant)
    response = tenant.call(
        "POST",
        "/v4/contacts/import",
        params={"listId": copy, "mapping": '{"listId": null}'},  # into another list
        content=text.encode(),
        headers={"Content-Type": "text/csv"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"]["created"] == len(ROWS), response.text
    assert _data(tenant, copy) == {row["email"]: row["data"] for row in ROWS}


@pytest.mark.parametrize(
    "number",
    [2**63 - 1, -(2**63), 2**64, -(2**63) - 1, -9999999999999999999, 99999999999999991611393],
    ids=str,
)
def test_stored_data_is_read_with_every_integer_exact(number: int) -> None:
    """The export reads stored `data` with orjson where it can; orjson reads an integer beyond
    64 bits as a rounded float without a word, so a document with a long run of digits goes to
    the standard library. Writes keep `data`'s integers within 64 bits; this holds the reading
    exact whatever the table holds."""
    stored = json.dumps({"n": number, "list": [number], "text": f"{number}"})
    read = _parsed(stored)
    assert read == {"n": number, "list": [number], "text": f"{number}"}
    assert type(read["n"]) is int and type(read["list"][0]) is int
