"""A CSV import refuses a hostile cell as its row, and never answers an error after writing rows
it does not report.

A JSON cell nested 5,000 deep used to stop the file with a `RecursionError`: a 500, in a dry run
too, and with the first thousand rows already written while the client was told the request
failed. Each hostile cell (deep arrays and objects, numbers past a double, `NaN`, a lone
surrogate, a huge integer, a 10 MB cell, NUL) is tried in each kind of column (a JSON cell, a
list field, the actions, a number, a date, a date-time, text), in a dry run and a real one,
between good rows: every answer is a 200, the cell's row alone is refused (or, for text, stored
as it was), the good rows around it are read. An error once rows are written says which
(`progress`). A lone surrogate escape in an action's cell used to be a 500 too: the error naming
the value could not be encoded.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import func, select

from audiencefilter.service.db.models import Contact
from audiencefilter.service.domain import csv_rows

from .conftest import BOTH_DATABASES, ApiClient, Tenant, make_tenant, module_app

CSV = {"Content-Type": "text/csv"}
DEEP = 5000

HOSTILE: dict[str, str] = {
    "deep arrays": "[" * DEEP + "]" * DEEP,
    "deep objects": '{"a":' * DEEP + "1" + "}" * DEEP,
    "arrays past the data bound": "[" * 100 + "]" * 100,
    "a number past a double": "1e999999",
    "NaN": "NaN",
    "minus infinity": "-Infinity",
    "a lone surrogate escape": '"\\ud800"',
    "a huge integer": "9" * 5000,
    "NUL": "a\x00b",
    "a NUL escape": '"\\u0000"',
    "a 10 MB cell": "x" * 10_000_000,
}
"""Hostile values, as the text of a cell (a JSON cell's, wrapped by `COLUMNS`)."""

COLUMNS: dict[str, tuple[str, Callable[[str], str]]] = {
    "json": ("data", lambda value: '{"a":' + value + "}"),
    "list": ("tags", lambda value: "[" + value + "]"),
    "actions": (
        "actions",
        lambda value: '[{"name":"a","increase":' + value + ',"createdAt":"2020-01-02T03:04:05Z"}]',
    ),
    "number": ("score", str),
    "points": ("points", str),
    "date": ("birthday", str),
    "date-time": ("createdAt", str),
    "text": ("firstName", str),
}
"""A column of each kind, and how a hostile value is put in its cell."""


@pytest.fixture(scope="module", params=BOTH_DATABASES)
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiClient]:
    """One app a database for the module: each test imports into a list of its own account."""
    with module_app(
        request, tmp_path_factory, "hostile", raise_app_exceptions=False,
        membership_sweep_seconds=0,
    ) as client:  # fmt: skip
        yield client


@pytest.fixture
def tenant(api: ApiClient) -> Tenant:
    return make_tenant(api)


def _list(tenant: Tenant) -> str:
    list_id: str = tenant.new_list()["id"]
    for key, kind in (("tags", "string[]"), ("score", "number"), ("birthday", "date")):
        tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json={"key": key, "type": kind})
    return list_id


def _file(column: str, cells: list[str]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["email", column])
    writer.writerows([f"c{n}@example.com", cell] for n, cell in enumerate(cells, 1))
    return out.getvalue().encode()


def _post(tenant: Tenant, list_id: str, body: bytes, **params: Any) -> Any:
    query = {"listId": list_id, **params}
    return tenant.call("POST", "/v4/contacts/import", params=query, content=body, headers=CSV)


def _stored(tenant: Tenant, list_id: str) -> int:
    with tenant.client.app.state.db.reading() as session:
        count: int = session.scalar(select(func.count()).where(Contact.listId == list_id))
    return count


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry run", "import"])
def test_a_cell_nested_5000_deep_after_1500_rows_is_its_row_refused(
    tenant: Tenant, dry_run: bool
) -> None:
    list_id = _list(tenant)
    cells = [""] * 1500 + [COLUMNS["json"][1](HOSTILE["deep arrays"])]
    response = _post(tenant, list_id, _file("data", cells), dryRun=str(dry_run).lower())
    assert response.status_code == 200, response.text[:300]
    answer = response.json()["data"]
    if dry_run:
        assert (answer["valid"], answer["invalid"]) == (1500, 1)
        assert [(p["row"], p["column"]) for p in answer["problems"]] == [(1501, "data")]
        assert _stored(tenant, list_id) == 0
    else:
        assert (answer["created"], answer["invalid"]) == (1500, 1)
        [refused] = answer["results"]
        assert (refused["row"], refused["errors"][0]["column"]) == (1501, "data")
        assert "nested" in refused["errors"][0]["detail"]
        assert _stored(tenant, list_id) == 1500


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry run", "import"])
@pytest.mark.parametrize("kind", list(COLUMNS))
def test_each_hostile_cell_is_refused_as_its_row_in_each_kind_of_column(
    tenant: Tenant, kind: str, dry_run: bool
) -> None:
    list_id = _list(tenant)
    column, cell_of = COLUMNS[kind]
    cells: list[str] = []
    for value in HOSTILE.values():
        cells += [cell_of(value), ""]  # a good row after each hostile one
    response = _post(tenant, list_id, _file(column, cells), dryRun=str(dry_run).lower())
    assert response.status_code == 200, response.text[:300]
    answer = response.json()["data"]
    refused = (
        {problem["row"] for problem in answer["problems"]}
        if dry_run
        else {result["row"] for result in answer["results"]}
    )
    hostile_rows = set(range(1, len(cells) + 1, 2))
    assert refused <= hostile_rows  # every good row read
    if kind != "text":  # text takes some of them as the text they are
        assert refused == hostile_rows
    stored = _stored(tenant, list_id)
    assert stored == (0 if dry_run else len(cells) - len(refused))
    if not dry_run and kind == "text":
        _assert_text_kept(tenant, list_id, cells, refused)


def _assert_text_kept(tenant: Tenant, list_id: str, cells: list[str], refused: set[int]) -> None:
    query = {"listId": list_id, "limit": 100}
    contacts = tenant.ok("GET", "/v4/contacts", params=query)["contacts"]
    names = {contact["email"]: contact.get("firstName") for contact in contacts}
    for row in set(range(1, len(cells) + 1, 2)) - refused:
        assert names[f"c{row}@example.com"] == cells[row - 1]


def test_bytes_that_are_not_utf8_after_1500_rows_write_nothing(tenant: Tenant) -> None:
    list_id = _list(tenant)
    body = _file("firstName", ["Ada"] * 1500) + b"c0@example.com,\xed\xa0\x80\n"
    response = _post(tenant, list_id, body)
    assert response.status_code == 400 and "UTF-8" in response.text, response.text[:300]
    assert _stored(tenant, list_id) == 0


class _Broken(Exception):
    """A fault of the service itself, met after the first thousand rows are written."""


@pytest.mark.parametrize("accept", ["application/json", "application/x-ndjson"])
def test_an_error_after_rows_are_written_reports_them(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch, accept: str
) -> None:
    plain = csv_rows._json_values

    def faulty(record: Any) -> dict[str, Any]:
        if record.get("email") == "c1200@example.com":
            raise _Broken("a fault")
        return plain(record)

    monkeypatch.setattr(csv_rows, "_json_values", faulty)
    list_id = _list(tenant)
    headers = {**CSV, "Accept": accept}
    query = {"listId": list_id}
    body = _file("firstName", ["Ada"] * 1500)
    response = tenant.call(
        "POST", "/v4/contacts/import", params=query, content=body, headers=headers
    )
    last = json.loads(response.text.splitlines()[-1])
    if accept == "application/json":
        assert response.status_code == 500, response.text[:300]
    assert last["error"] == 500
    assert (last["progress"]["read"], last["progress"]["created"]) == (1000, 1000)
    assert _stored(tenant, list_id) == 1000
