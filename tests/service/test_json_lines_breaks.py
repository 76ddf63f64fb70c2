"""JSON Lines end at `\\n` only, on every surface that reads or writes them.

Python's `str.splitlines` ends a line at ten characters (and `\\r\\n`), and three of them
(U+0085, U+2028, U+2029) may stand raw inside a JSON string: a reader that split with it would
cut a valid row in two, report both halves invalid and store the rest, losing the row. The
others are control characters, which a JSON writer escapes: raw inside a string they make that
one row invalid, and only that one, the rows after it keeping their line numbers.

Each character, inside a JSON string of the second of four lines, on each surface: the
service's import (`/v4/contacts/import`, on SQLite and PostgreSQL), its body guard (a problem
on a later line is reported at that line's number), its export read back by its import, and the
command line's contact reader (`audiencefilter eval`). Lines ending in `\\r\\n` read as lines.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.cli import EXIT_BAD_ROWS, EXIT_OK, main
from audiencefilter.service import create_app

from .audience_helpers import smart
from .conftest import ApiClient, Tenant, make_tenant, settings_on

LINES = {"Content-Type": "application/x-ndjson"}
# Every character `str.splitlines` ends a line at, found by asking it, not from a list.
BREAKS = [
    chr(code) for code in range(sys.maxunicode + 1) if len(f"a{chr(code)}b".splitlines()) == 2
]
assert len(BREAKS) == 10, BREAKS  # \n \v \f \r \x1c \x1d \x1e \x85 \u2028 \u2029
INSIDE = [c for c in BREAKS if c != "\n"]  # \n itself is where a line ends
RAW_IN_JSON = [c for c in INSIDE if ord(c) >= 0x20]  # JSON lets these stand unescaped


def _note(character: str) -> str:
    return f"before{character}after"


def _rows(character: str) -> list[dict[str, Any]]:
    return [
        {"email": f"row{number}.{ord(character):x}@example.com",
         "data": {"note": _note(character) if number == 2 else "plain"}}
        for number in range(1, 5)
    ]  # fmt: skip


def _body(character: str, *, raw: bool, ending: str = "\n") -> bytes:
    """Four rows, one a line, the second's note holding `character`: as a JSON writer puts it
    (`raw=False`: control characters escaped, the others as they are), or raw whatever it is."""
    lines = [json.dumps(row, ensure_ascii=False) for row in _rows(character)]
    if raw:
        lines[1] = lines[1].replace(json.dumps(_note(character))[1:-1], _note(character))
        assert character in lines[1]
    return (ending.join(lines) + ending).encode()


def _name(character: str) -> str:
    return f"U+{ord(character):04X}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def tenant(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tenant]:
    api = ApiClient(
        create_app(settings_on(request, tmp_path / "lines.db", membership_sweep_seconds=0))
    )
    yield make_tenant(api)
    api.close()


def _import(tenant: Tenant, list_id: str, body: bytes) -> Any:
    response = tenant.call(
        "POST", "/v4/contacts/import", params={"listId": list_id}, content=body, headers=LINES
    )
    assert response.status_code == 200, response.text
    return response.json()["data"]


def _notes(tenant: Tenant, results: list[dict[str, Any]]) -> list[str]:
    found = []
    for result in results:
        contact = tenant.ok("GET", f"/v4/contacts/{result['id']}")["contact"]
        found.append(contact["data"]["note"])
    return found


def test_the_import_reads_each_line_break_inside_a_string_as_part_of_its_row(
    tenant: Tenant,
) -> None:
    """As a JSON writer puts it, every character keeps the four rows whole, the note intact."""
    failed = []
    for character in INSIDE:
        list_id = tenant.new_list()["id"]
        data = _import(tenant, list_id, _body(character, raw=False))
        rows = [(r["row"], r["status"]) for r in data["results"]]
        notes = _notes(tenant, data["results"]) if data["created"] == 4 else []
        if rows != [(n, "created") for n in range(1, 5)] or notes[1:2] != [_note(character)]:
            failed.append((_name(character), rows, notes))
    assert not failed, failed


def test_a_raw_control_character_makes_its_row_invalid_and_no_other(tenant: Tenant) -> None:
    """Raw, a control character is no JSON: row 2 is invalid, rows 1, 3 and 4 are stored."""
    failed = []
    for character in INSIDE:
        list_id = tenant.new_list()["id"]
        data = _import(tenant, list_id, _body(character, raw=True))
        rows = [(r["row"], r["status"]) for r in data["results"]]
        wanted = [(1, "created"), (2, "created" if character in RAW_IN_JSON else "invalid"),
                  (3, "created"), (4, "created")]  # fmt: skip
        if rows != wanted:
            failed.append((_name(character), rows))
    assert not failed, failed


def test_crlf_line_endings_read_as_lines(tenant: Tenant) -> None:
    list_id = tenant.new_list()["id"]
    data = _import(tenant, list_id, _body("\u2028", raw=False, ending="\r\n"))
    assert [(r["row"], r["status"]) for r in data["results"]] == [
        (n, "created") for n in range(1, 5)
    ]


def test_the_body_guard_numbers_lines_past_a_line_break_inside_a_string(tenant: Tenant) -> None:
    """A lone surrogate escape on line 4 is reported at line 4, whatever line 2 holds."""
    failed = []
    for character in INSIDE:
        list_id = tenant.new_list()["id"]
        body = _body(character, raw=True).replace(b'"plain"}}\n', b'"\\ud800"}}\n')
        assert body.count(b"\\ud800") == 3
        body = body.replace(b'"\\ud800"}}\n', b'"plain"}}\n', 2)
        response = tenant.call(
            "POST", "/v4/contacts/import", params={"listId": list_id}, content=body, headers=LINES
        )
        pointers = [e["pointer"] for e in response.json().get("errors", [])]
        if response.status_code != 400 or pointers != ["/body/line 4/data/note"]:
            failed.append((_name(character), response.status_code, pointers))
    assert not failed, failed


def test_an_export_reads_back_whole_through_the_import(tenant: Tenant) -> None:
    """The export writes JSON Lines with these characters in strings (the three JSON allows
    raw, as they are); the import of that export stores every contact with its note."""
    source = tenant.new_list()["id"]
    rows = [{"email": f"export.{ord(c):x}@example.com", "data": {"note": _note(c)}} for c in INSIDE]
    body = b"".join(json.dumps(row, ensure_ascii=False).encode() + b"\n" for row in rows)
    assert _import(tenant, source, body)["created"] == len(INSIDE)
    everyone = smart(tenant, source, {"email": {"contains": "@"}})["id"]
    exported = tenant.call("GET", f"/v4/audiences/{everyone}/export", params={"format": "jsonl"})
    assert exported.status_code == 200, exported.text
    assert exported.content.count(b"\n") == len(INSIDE)
    back = [
        {"email": r["email"], "data": r["data"]}
        for r in map(json.loads, exported.content.split(b"\n")[:-1])
    ]
    target = tenant.new_list()["id"]
    data = _import(
        tenant, target, b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in back)
    )
    assert data["created"] == len(INSIDE), data
    again = tenant.call("GET", f"/v4/audiences/{everyone}/export", params={"format": "jsonl"})
    other = tenant.new_list()["id"]  # the rows name their list: read into another, as its own
    moved = again.content.replace(source.encode(), other.encode())
    reimported = _import(tenant, other, moved)
    assert reimported["created"] == len(INSIDE), reimported["results"][:1]
    assert sorted(_notes(tenant, reimported["results"])) == sorted(_note(c) for c in INSIDE)


# The command line's contact reader ------------------------------------------------------------

FILTER = '{"email": {"contains": "@example.com"}}'


def _eval(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    status = main(["eval", FILTER, str(path)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("character", INSIDE, ids=_name)
@pytest.mark.parametrize("raw", [False, True], ids=["written", "raw"])
@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_the_command_line_reads_each_line_break_inside_a_string_as_part_of_its_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, character: str, raw: bool, ending: str
) -> None:
    path = tmp_path / "contacts.jsonl"
    rows = [{"id": f"c{n}", **row} for n, row in enumerate(_rows(character), 1)]
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    if raw:
        lines[1] = lines[1].replace(json.dumps(_note(character))[1:-1], _note(character))
    path.write_bytes((ending.join(lines) + ending).encode())
    status, out, err = _eval(capsys, path)
    if raw and character not in RAW_IN_JSON:
        assert (status, out) == (EXIT_BAD_ROWS, "c1\nc3\nc4\n"), err
        assert err.startswith(f"{path}: line 2: invalid JSON"), err
        assert err.splitlines()[-1] == "3 of 4 contacts match (75.00%); 1 bad row skipped"
    else:
        assert (status, out, err) == (
            EXIT_OK,
            "c1\nc2\nc3\nc4\n",
            "4 of 4 contacts match (100.00%)\n",
        )
