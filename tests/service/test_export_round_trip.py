"""A CSV export read back by the CSV import is the contacts it was written from.

The export writes a text cell that opens like a formula (`=`, `+`, `-`, `@`, a tab, a carriage
return) with an apostrophe in front, and the import used to keep it: names, custom values and
e-mails (`=x@example.com` is an address) changed, and an export imported again with
`mode=upsert` made a second contact of each such e-mail. Any contacts, their text drawn from
those starts and the apostrophe itself (`'=x` must come back as `'=x`), exported then imported
again are all `unchanged`, and imported into another list are the same contacts.

A decimal is exported as it was given: `1000.00` imported (in CSV or in JSON) used to be stored
as its float and exported as `1000.0`; each number cell is now the text the import read, and a
filter still compares it as a number.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.service import create_app
from audiencefilter.service.db.models import new_referral_code
from audiencefilter.service.domain import csv_guard
from audiencefilter.service.ground.json import dumps, stored

from .conftest import ApiClient, Tenant, make_tenant, settings_on

CSV = {"Content-Type": "text/csv"}
STARTS = "=+-@'"
ONE_LINE = st.text(alphabet=f"{STARTS}a ", min_size=1, max_size=6)
PARAGRAPH = st.text(alphabet=f"{STARTS}a \t\r\n", min_size=1, max_size=6)
LOCAL_PART = st.text(alphabet=f"{STARTS.replace('@', '')}a.", min_size=1, max_size=5)
WRITTEN = st.builds(
    lambda whole, fraction, zeros: af.WrittenNumber(f"{whole}.{fraction}{'0' * zeros}"),
    st.integers(-(10**6), 10**6),
    st.integers(0, 99),
    st.integers(0, 3),
)
"""Decimals as a file writes them, trailing zeros included (`1000.00`, `12.50`)."""
NUMBER = st.integers(-(10**6), 10**6) | st.sampled_from([-0.5, 1000.25, 3.0]) | WRITTEN
FIELDS = (("note", "string"), ("score", "number"), ("tags", "string[]"))


@st.composite
def contacts(draw: st.DrawFn) -> list[dict[str, Any]]:
    locals_ = draw(st.lists(LOCAL_PART, min_size=1, max_size=5, unique_by=str.lower))
    return [
        {
            "email": f"{local}@example.com",
            "firstName": draw(ONE_LINE),
            "address": draw(PARAGRAPH),
            "data": {
                "note": draw(PARAGRAPH),
                "score": draw(NUMBER),
                "tags": draw(st.lists(ONE_LINE, max_size=2)),
            },
        }
        for local in locals_
    ]


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiClient]:
    path = tmp_path_factory.mktemp("round") / "round.db"
    client = ApiClient(create_app(settings_on(request, path, membership_sweep_seconds=0)))
    yield client
    client.close()


@pytest.fixture(scope="module")
def tenant(api: ApiClient) -> Tenant:
    return make_tenant(api)


def _list(tenant: Tenant) -> str:
    list_id: str = tenant.new_list()["id"]
    for key, kind in FIELDS:
        tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json={"key": key, "type": kind})
    return list_id


def _csv_import(tenant: Tenant, list_id: str, body: bytes, **params: str) -> Any:
    query = {"listId": list_id, **params}
    response = tenant.call("POST", "/v4/contacts/import", params=query, content=body, headers=CSV)
    assert response.status_code == 200, response.text[:500]
    return response.json()["data"]


def _stored(tenant: Tenant, list_id: str) -> dict[str, tuple[Any, ...]]:
    query = {"listId": list_id, "limit": 100}
    found = tenant.ok("GET", "/v4/contacts", params=query)["contacts"]
    return {
        contact["email"]: (contact["firstName"], contact["address"], contact["data"])
        for contact in found
    }


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=contacts(), bom=st.booleans())
def test_an_export_imported_again_is_the_same_contacts(
    tenant: Tenant, rows: list[dict[str, Any]], bom: bool
) -> None:
    list_id = _list(tenant)
    query = {"listId": list_id}
    made = tenant.ok("POST", "/v4/contacts/import", params=query, content=dumps(rows))
    assert made["created"] == len(rows), made
    body = {"name": "All", "listId": list_id, "filtersText": "points >= 0"}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    query = {"format": "csv", **({"bom": "true"} if bom else {})}
    export = tenant.call("GET", f"/v4/audiences/{audience['id']}/export", params=query)
    assert export.status_code == 200 and export.content.startswith(b"\xef\xbb\xbf") == bom
    written = {row["email"]: _written(row["data"]["score"]) for row in rows}
    assert _cells(export.content, "score") == written
    again = _csv_import(tenant, list_id, export.content, mode="upsert")
    assert (again["unchanged"], again["created"], again["updated"]) == (len(rows), 0, 0), again
    elsewhere = _list(tenant)
    moved = _csv_import(tenant, elsewhere, export.content, mapping='{"listId": null}')
    assert moved["created"] == len(rows), moved
    assert _stored(tenant, elsewhere) == _stored(tenant, list_id)
    expected = {row["email"]: (row["firstName"], row["address"], row["data"]) for row in rows}
    assert _stored(tenant, elsewhere) == expected


def _json(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)


def _written(number: Any) -> str:
    """A number as the import was given it: its text, or its JSON."""
    return number.text if isinstance(number, af.WrittenNumber) else json.dumps(number)


def _cells(export: bytes, column: str) -> dict[str, str]:
    """`{email: cell}` of one column of a CSV export."""
    rows = csv.DictReader(io.StringIO(export.decode("utf-8-sig"), newline=""))
    return {csv_guard.unguarded(row["email"]): row[column] for row in rows}


def test_decimals_are_exported_as_imported(tenant: Tenant) -> None:
    """`1000.00` imported from CSV is exported `1000.00` (it was `1000.0`), `12.5` as `12.5`, `7`
    as `7`; points, an integer, as `1000`; and filters compare the values as numbers."""
    list_id = _list(tenant)
    lines = ["email,score,points", "a@example.com,1000.00,1000.00", "b@example.com,12.5,7"]
    lines += ["c@example.com,7,1"]
    body = {"name": "Big", "listId": list_id, "filtersText": "score > 999.99 or score = 12.50"}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    made = _csv_import(tenant, list_id, "\r\n".join(lines).encode())  # judged as it writes
    assert made["created"] == 3, made
    export = tenant.call("GET", f"/v4/audiences/{audience['id']}/export", params={"format": "csv"})
    assert _cells(export.content, "score") == {"a@example.com": "1000.00", "b@example.com": "12.5"}
    assert _cells(export.content, "points") == {"a@example.com": "1000", "b@example.com": "7"}
    lines_export = tenant.call("GET", f"/v4/audiences/{audience['id']}/export")
    assert b'"score": 1000.00' in lines_export.content, lines_export.text
    everyone = {"name": "All", "listId": list_id, "filtersText": "points >= 0"}
    whole = tenant.ok("POST", "/v4/audiences", 201, json=everyone)["audience"]
    again = tenant.call("GET", f"/v4/audiences/{whole['id']}/export", params={"format": "csv"})
    assert _cells(again.content, "score")["c@example.com"] == "7"


def _holds_a_written_number(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_a_written_number(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_a_written_number(item) for item in value)
    return isinstance(value, af.WrittenNumber)


@given(st.recursive(st.none() | st.integers() | st.floats() | st.text() | WRITTEN, _json))
def test_a_stored_json_is_the_standard_text_but_for_its_decimals_as_written(value: Any) -> None:
    """`stored` (the engine's JSON serializer) writes what `json.dumps` writes, each written
    decimal as its text: read back, the same numbers."""
    text = stored(value)
    assert json.dumps(json.loads(text)) == json.dumps(value)
    if not _holds_a_written_number(value):
        assert text == json.dumps(value)  # the standard library's very text
    written = json.loads(text, parse_float=af.WrittenNumber)
    assert stored(written) == text
    assert (
        stored({"a": af.WrittenNumber("1000.00"), "b": ["é"]}) == '{"a": 1000.00, "b": ["\\u00e9"]}'
    )
    huge = {"a": [2**70, {"b": af.WrittenNumber("1.50")}], 3: "c"}  # orjson refuses either
    assert stored(huge) == '{"a": [1180591620717411303424, {"b": 1.50}], "3": "c"}'


@given(st.text())
def test_the_guard_is_undone_exactly_and_no_guarded_cell_opens_a_formula(text: str) -> None:
    cell = csv_guard.guarded(text)
    assert csv_guard.unguarded(cell) == text
    assert not cell.startswith(csv_guard.FORMULA_STARTS)


@pytest.mark.parametrize(
    ("text", "cell"),
    [("=x", "'=x"), ("'=x", "''=x"), ("''", "'''"), ("'Tis", "'Tis"), ("'", "'"), ("a=", "a=")],
)
def test_the_guard_of_a_few_texts(text: str, cell: str) -> None:
    assert (csv_guard.guarded(text), csv_guard.unguarded(cell)) == (cell, text)


def test_referral_codes_never_open_a_formula() -> None:
    codes = [new_referral_code() for _ in range(20_000)]
    assert not [code for code in codes if code.startswith(csv_guard.FORMULA_STARTS)]
    assert len(set(codes)) == len(codes) and {len(code) for code in codes} == {12}


def test_bom_is_for_csv_only(tenant: Tenant) -> None:
    list_id = _list(tenant)
    body = {"name": "All", "listId": list_id, "filtersText": "points >= 0"}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]
    query = {"format": "jsonl", "bom": "true"}
    response = tenant.call("GET", f"/v4/audiences/{audience['id']}/export", params=query)
    assert response.status_code == 400 and "bom" in response.text, response.text
