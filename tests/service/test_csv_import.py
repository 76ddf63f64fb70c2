"""`POST /v4/contacts/import` with `text/csv`: a CRM export's columns, a column mapping, a dry
run naming every bad cell, and a file of 100,000 rows written in batches with its progress."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from audiencefilter.service.db.models import Contact
from audiencefilter.service.domain.use_cases import csv_imports

from .conftest import ApiClient, Tenant, make_tenant, settings_on

CSV = {"Content-Type": "text/csv"}
CRM_EXPORT = (
    "email,firstName,country,createdAt,birthday,plan\n"
    "ada@example.com,Ada,FR,2019-05-01T09:30:00+02:00,1990-11-23,pro\n"
    "grace@example.com,Grace,US,2020-01-02T03:04:05Z,,free\n"
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "csv.db", membership_sweep_seconds=0))


@pytest.fixture
def tenant(api: ApiClient) -> Tenant:
    return make_tenant(api)


def _crm_list(tenant: Tenant) -> str:
    """A list declaring the export's custom fields: `birthday` (a date) and `plan`."""
    list_id: str = tenant.new_list()["id"]
    for key, kind in (("birthday", "date"), ("plan", "string")):
        body = {"key": key, "type": kind}
        tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json=body)
    return list_id


def _post(tenant: Tenant, list_id: str, text: str, **params: Any) -> Any:
    query = {"listId": list_id, **params}
    return tenant.call(
        "POST", "/v4/contacts/import", params=query, content=text.encode(), headers=CSV
    )


def _contacts(tenant: Tenant, list_id: str) -> dict[str, dict[str, Any]]:
    query = {"listId": list_id, "sort": "email", "order": "asc"}
    found = tenant.ok("GET", "/v4/contacts", params=query)["contacts"]
    return {contact["email"]: contact for contact in found}


def test_a_crm_export_is_imported_with_its_custom_fields(tenant: Tenant) -> None:
    list_id = _crm_list(tenant)
    response = _post(tenant, list_id, CRM_EXPORT)
    assert response.status_code == 200, response.text
    body = response.json()["data"]
    assert (body["read"], body["written"], body["rejected"], body["created"]) == (2, 2, 0, 2)
    stored = _contacts(tenant, list_id)
    ada, grace = stored["ada@example.com"], stored["grace@example.com"]
    assert (ada["firstName"], ada["country"]) == ("Ada", "FR")
    assert ada["data"] == {"birthday": "1990-11-23", "plan": "pro"}
    assert ada["createdAt"].startswith("2019-05-01T07:30:00")
    assert grace["data"] == {"plan": "free"}  # an empty cell leaves the field out
    again = _post(tenant, list_id, CRM_EXPORT).json()["data"]
    assert (again["exists"], again["written"]) == (2, 0)


def test_actions_and_data_are_json_cells(tenant: Tenant) -> None:
    list_id = tenant.new_list()["id"]
    action = {"name": "share", "increase": 5, "createdAt": "2020-02-03T10:00:00Z"}
    cells = json.dumps([action]).replace('"', '""'), json.dumps({"a": [1]}).replace('"', '""')
    text = f'email,points,isVerified,actions,data\nada@example.com,,1,"{cells[0]}","{cells[1]}"\n'
    assert _post(tenant, list_id, text).json()["data"]["created"] == 1
    ada = _contacts(tenant, list_id)["ada@example.com"]
    assert (ada["points"], ada["isVerified"], ada["data"]) == (5, True, {"a": [1]})


def test_a_mapping_renames_columns_fills_custom_fields_and_leaves_columns_out(
    tenant: Tenant,
) -> None:
    list_id = _crm_list(tenant)
    text = "E-mail address,Land,Geburtstag,Notes\nada@example.com,FR,1990-11-23,call her\n"
    mapping = {
        "E-mail address": "email",
        "Land": "country",
        "Geburtstag": "birthday",
        "Notes": None,
    }
    response = _post(tenant, list_id, text, mapping=json.dumps(mapping))
    assert response.status_code == 200, response.text
    ada = _contacts(tenant, list_id)["ada@example.com"]
    assert (ada["country"], ada["data"]) == ("FR", {"birthday": "1990-11-23"})


def test_a_column_no_field_takes_is_refused_before_any_row(tenant: Tenant) -> None:
    list_id = _crm_list(tenant)
    text = "E-mail address,Notes\nada@example.com,x\n"
    response = _post(
        tenant, list_id, text, mapping=json.dumps({"E-mail address": "email", "Nope": "city"})
    )
    assert response.status_code == 400, response.text
    pointers = [issue["pointer"] for issue in response.json()["errors"]]
    assert pointers == ["/query/mapping/Nope", "/body/header/Notes"]
    assert _contacts(tenant, list_id) == {}
    twice = _post(tenant, list_id, "email,Mail\na@x.io,b@x.io\n", mapping='{"Mail": "email"}')
    assert twice.status_code == 400 and "one column" in twice.text
    assert _post(tenant, list_id, "email\na@x.io\n", mapping="[1]").status_code == 400


BAD_CELLS = (
    "email,firstName,country,createdAt,birthday,plan\n"
    "ada@example.com,Ada,FR,2019-05-01T09:30:00+02:00,1990-11-23,pro\n"
    "bob@example.com,Bob,DE,yesterday,1990-13-45,pro\n"
    "not-an-email,Cy,US,2019-05-01T09:30:00Z,,free\n"
    "dee@example.com,Dee\n"
)


def test_a_dry_run_names_every_bad_cell_and_writes_nothing(tenant: Tenant) -> None:
    list_id = _crm_list(tenant)
    response = _post(tenant, list_id, BAD_CELLS, dryRun="true")
    assert response.status_code == 200, response.text
    body = response.json()["data"]
    assert (body["dryRun"], body["rows"], body["valid"], body["invalid"]) == (True, 4, 1, 3)
    named = [(p["row"], p.get("column"), p["pointer"]) for p in body["problems"]]
    assert named == [
        (2, "createdAt", "/createdAt"),
        (2, "birthday", "/data/birthday"),
        (3, "email", "/email"),
        (4, None, ""),
    ]
    assert "YYYY-MM-DD" in body["problems"][1]["detail"]
    assert "expected 6 cells" in body["problems"][3]["detail"]
    [preview] = body["preview"]
    assert preview["row"] == 1
    assert preview["contact"]["data"] == {"birthday": "1990-11-23", "plan": "pro"}
    assert preview["contact"]["createdAt"].startswith("2019-05-01T07:30:00")
    assert _contacts(tenant, list_id) == {}


def test_the_import_names_bad_cells_in_its_results(tenant: Tenant) -> None:
    list_id = _crm_list(tenant)
    body = _post(tenant, list_id, BAD_CELLS).json()["data"]
    assert (body["read"], body["written"], body["rejected"]) == (4, 1, 3)
    assert [result["row"] for result in body["results"]] == [2, 3, 4]
    columns = [error.get("column") for error in body["results"][0]["errors"]]
    assert columns == ["createdAt", "birthday"]
    assert list(_contacts(tenant, list_id)) == ["ada@example.com"]


def test_csv_parameters_and_keys_are_for_csv_only(tenant: Tenant) -> None:
    list_id = tenant.new_list()["id"]
    params = {"listId": list_id, "dryRun": "true"}
    response = tenant.call("POST", "/v4/contacts/import", params=params, json=[])
    assert response.status_code == 400 and "text/csv" in response.text
    keyed = tenant.call(
        "POST",
        "/v4/contacts/import",
        params={"listId": list_id},
        content=b"email\na@x.io\n",
        headers={**CSV, "Idempotency-Key": "csv-once"},
    )
    assert keyed.status_code == 400 and "Idempotency-Key" in keyed.text


def test_json_and_bytes_that_are_not_utf8_are_refused(tenant: Tenant) -> None:
    list_id = tenant.new_list()["id"]
    assert _post(tenant, list_id, '[{"email": "a@x.io"}]').status_code == 400
    query = {"listId": list_id}
    latin = tenant.call(
        "POST", "/v4/contacts/import", params=query, content=b"email\n\xe9@x.io\n", headers=CSV
    )
    assert latin.status_code == 400 and "UTF-8" in latin.text


def test_a_repeated_email_in_a_later_batch_is_a_duplicate(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(csv_imports, "BATCH", 2)
    list_id = tenant.new_list()["id"]
    text = "email\na@x.io\nb@x.io\nc@x.io\nA@x.io\n"
    body = _post(tenant, list_id, text).json()["data"]
    assert (body["created"], body["duplicate"]) == (3, 1)
    assert body["results"] == [{"row": 4, "status": "duplicate", "sameAsRow": 1}]


@pytest.mark.slow
def test_a_file_of_100000_rows_streams_its_progress(
    app_factory: Callable[..., ApiClient], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long file answers a progress line after each batch, then its result, every bad cell
    counted and the rest stored. The batch is cut by ten for the test, and the file more: each
    batch is a turn of its own, and thirty of them stream the progress as a thousand do."""
    from .conftest import sqlite_settings

    monkeypatch.setattr(csv_imports, "BATCH", 100)
    api = app_factory(sqlite_settings(tmp_path / "big.db", membership_sweep_seconds=0))
    tenant = make_tenant(api)
    list_id = _crm_list(tenant)
    rows = 3_000
    lines = ["email,firstName,country,birthday,plan"]
    lines += [
        f"c{n}@example.com,N{n},FR,{'1990-13-01' if n % 1000 == 7 else '1990-01-02'},pro"
        for n in range(rows)
    ]
    response = tenant.call(
        "POST",
        "/v4/contacts/import",
        params={"listId": list_id},
        content="\n".join(lines).encode(),
        headers={**CSV, "Accept": "application/x-ndjson"},
    )
    assert response.status_code == 200, response.text[:500]
    answers = [json.loads(line) for line in response.text.splitlines()]
    reads = [answer["progress"]["read"] for answer in answers[:-1]]
    assert reads == list(range(csv_imports.BATCH, rows + 1, csv_imports.BATCH))
    result = answers[-1]["data"]
    rejected = rows // 1000
    assert len(reads) == 30
    assert (result["read"], result["written"], result["rejected"]) == (
        rows,
        rows - rejected,
        rejected,
    )
    assert {error["column"] for r in result["results"] for error in r["errors"]} == {"birthday"}
    with api.app.state.db.reading() as session:
        stored = session.scalar(select(func.count()).where(Contact.listId == list_id))
    assert stored == rows - rejected


def test_a_csv_over_its_own_limit_is_a_413_and_may_exceed_the_json_limit(
    app_factory: Callable[..., ApiClient], tmp_path: Path
) -> None:
    from .conftest import sqlite_settings

    settings = sqlite_settings(tmp_path / "limit.db", max_body_bytes=200, max_csv_import_bytes=2000)
    tenant = make_tenant(app_factory(settings))
    list_id = tenant.new_list()["id"]
    rows = "email\n" + "".join(f"c{n}@example.com\n" for n in range(40))  # 600 bytes
    assert len(rows) > 200
    assert _post(tenant, list_id, rows).json()["data"]["created"] == 40
    too_large = _post(tenant, list_id, rows * 4)
    assert too_large.status_code == 413, too_large.text
    assert "2000 bytes" in too_large.json()["message"]


def test_a_dry_run_names_the_rows_that_repeat_an_email(tenant: Tenant) -> None:
    list_id = tenant.new_list()["id"]
    text = "email\nann@x.io\nbob@x.io\nANN@x.io\nbad\nbob@x.io\n"
    body = _post(tenant, list_id, text, dryRun="true").json()["data"]
    assert body["duplicates"] == 2 and body["duplicatesCheckedRows"] == 5
    assert body["duplicateRows"] == [
        {"row": 3, "sameAsRow": 1, "email": "ANN@x.io"},
        {"row": 5, "sameAsRow": 2, "email": "bob@x.io"},
    ]
    written = _post(tenant, list_id, text).json()["data"]
    assert written["duplicate"] == 2 and written["created"] == 2
