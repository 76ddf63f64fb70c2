"""`audiencefilter eval` over JSON Lines, JSON arrays and CSV: streaming, bad rows, outputs."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter import CONTACT
from audiencefilter.cli import EXIT_BAD_ROWS, EXIT_INVALID, EXIT_OK, EXIT_USAGE, main
from audiencefilter.cli import contacts as contacts_module
from audiencefilter.cli.contacts import InputError, read_rows

FILTER = '{"points": {"gte": 100}, "email": {"contains": "gmail"}}'
CONTACTS: list[dict[str, Any]] = [
    {"id": "c1", "email": "ann@gmail.com", "points": 150, "createdAt": "2025-01-02T00:00:00Z"},
    {"id": "c2", "email": "bob@acme.com", "points": 500},
    {"id": "c3", "email": "cy@GMAIL.com", "points": 100, "country": "FR"},
    {"id": "c4", "email": None, "points": 900},
    {"id": "c5", "email": "dee@gmail.com", "points": 99},
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write_jsonl(path: Path, rows: list[Any], broken: dict[int, str] | None = None) -> Path:
    lines = [json.dumps(row) for row in rows]
    for index, text in (broken or {}).items():
        lines.insert(index, text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_prints_matching_ids_and_a_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "contacts.jsonl", CONTACTS)
    status, out, err = run(capsys, "eval", FILTER, str(path))
    assert (status, out) == (EXIT_OK, "c1\nc3\n")
    assert err == "2 of 5 contacts match (40.00%)\n"


def test_text_syntax_filter_and_count_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "contacts.jsonl", CONTACTS)
    status, out, _ = run(
        capsys, "eval", "--count", 'points >= 100 and email contains "gmail"', str(path)
    )
    assert (status, out) == (EXIT_OK, "2\n")


def test_a_broken_jsonl_line_is_reported_counted_and_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_jsonl(
        tmp_path / "contacts.jsonl",
        CONTACTS,
        broken={1: '{"id": "x", "points": ', 3: "[1, 2]", 4: ""},
    )
    status, out, err = run(capsys, "eval", FILTER, str(path))
    assert status == EXIT_BAD_ROWS
    assert out == "c1\nc3\n"
    assert err.splitlines() == [
        f"{path}: line 2: invalid JSON (Expecting value at column 23)",
        f"{path}: line 4: expected a JSON object, found list",
        "2 of 7 contacts match (28.57%); 2 bad rows skipped",
    ]


def test_wrongly_typed_values_are_bad_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = [
        *CONTACTS,
        {"id": "w1", "email": "a@gmail.com", "points": "150"},
        {"id": "w2", "email": "a@gmail.com", "points": True},
        {"id": "w3", "email": 7, "points": 150},
    ]
    path = write_jsonl(tmp_path / "contacts.jsonl", rows)
    status, out, err = run(capsys, "eval", FILTER, str(path))
    assert status == EXIT_BAD_ROWS and out == "c1\nc3\n"
    assert f'{path}: line 6: field "points": expected a number, found "150"' in err
    assert f'{path}: line 7: field "points": expected a number, found true' in err
    assert f'{path}: line 8: field "email": expected a string, found 7' in err
    assert err.endswith("2 of 8 contacts match (25.00%); 3 bad rows skipped\n")


def test_a_bad_date_is_a_bad_row_even_where_it_does_not_decide(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = [
        {"id": "d1", "points": 1, "createdAt": "yesterday"},
        {"id": "d2", "points": 500, "createdAt": "2025-03-01"},
    ]
    path = write_jsonl(tmp_path / "contacts.jsonl", rows)
    status, out, err = run(capsys, "eval", "points > 100 and createdAt > 2025-01-01", str(path))
    assert (status, out) == (EXIT_BAD_ROWS, "d2\n")
    assert 'line 1: field "createdAt": expected an ISO 8601 date-time, found "yesterday"' in err


def test_bad_rows_shown_are_bounded_but_all_counted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("{oops}\n" * 30, encoding="utf-8")
    status, _, err = run(capsys, "eval", "--bad-rows-shown", "3", FILTER, str(path))
    lines = err.splitlines()
    assert status == EXIT_BAD_ROWS and len(lines) == 5
    assert lines[3] == f"{path}: more bad rows: counted, not shown"
    assert lines[4] == "0 of 30 contacts match (0.00%); 30 bad rows skipped"


def test_json_array_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "contacts.json"
    path.write_text(json.dumps(CONTACTS, indent=2), encoding="utf-8")
    status, out, err = run(capsys, "eval", FILTER, str(path))
    assert (status, out) == (EXIT_OK, "c1\nc3\n")
    assert err == "2 of 5 contacts match (40.00%)\n"


def test_json_array_is_read_incrementally_across_chunk_boundaries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(contacts_module, "_CHUNK", 7)  # cut through strings and numbers
    rows = [*CONTACTS, {"id": "big", "points": 2**70, "email": "é😀" * 20}, "not an object"]
    data = json.dumps(rows, ensure_ascii=False).encode()
    read = list(read_rows(io.BytesIO(data), "json", CONTACT))
    assert [r.record for r in read[:-1]] == rows[:-1]
    assert read[-1].record is None and read[-1].where == "element 7"


def test_json_array_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contacts_module, "_CHUNK", 5)
    rows = list(read_rows(io.BytesIO(b'[{"id": 1}, {"id": tru}, {"id": 3}]'), "json", CONTACT))
    assert rows[0].record == {"id": 1}
    assert rows[1].record is None and rows[1].where == "element 2"
    assert "invalid JSON" in (rows[1].error or "") and len(rows) == 2
    rows = list(read_rows(io.BytesIO(b'[{"id": 1} {"id": 2}]'), "json", CONTACT))
    assert rows[1].where == "after element 1" and "expected , or ]" in (rows[1].error or "")
    assert list(read_rows(io.BytesIO(b" [ ] "), "json", CONTACT)) == []
    with pytest.raises(InputError, match="JSON array"):
        list(read_rows(io.BytesIO(b'{"id": 1}'), "json", CONTACT))
    with pytest.raises(InputError, match="after the end"):
        list(read_rows(io.BytesIO(b"[] []"), "json", CONTACT))


def test_a_file_that_is_not_an_array_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.json"
    path.write_text('{"id": 1}', encoding="utf-8")
    status, _, err = run(capsys, "eval", FILTER, str(path))
    assert status == EXIT_INVALID and "expected a JSON array" in err


CSV = '''\
id,email,points,isVerified,createdAt,company,note
c1,ann@gmail.com,150,true,2025-01-02,"Acme, Inc.","says ""hi"", twice"
c2,bob@gmail.com,99,0,2025-01-02T10:00:00+02:00,,plain
c3,"cy@gmail.com",100,1,,"Quote ""Co""","multi
line"
c4,dee@gmail.com,lots,true,2025-01-02,,x
c5,eve@gmail.com,12345678901234567890123,FALSE,2025-01-02,,x
c6,fay@gmail.com,100,maybe,2025-01-02,,x
c7,gus@gmail.com,100,true,tomorrow,,x
c8,too,few
'''


def test_csv_with_quoted_commas_and_conversions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.csv"
    path.write_text(CSV, encoding="utf-8")
    out_path = tmp_path / "matches.jsonl"
    status, out, err = run(
        capsys,
        "eval",
        "--output",
        str(out_path),
        'points >= 100 and email contains "gmail"',
        str(path),
    )
    assert status == EXIT_BAD_ROWS and out == ""
    matches = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    assert [m["id"] for m in matches] == ["c1", "c3", "c5"]
    assert matches[0] == {
        "id": "c1",
        "email": "ann@gmail.com",
        "points": 150,
        "isVerified": True,
        "createdAt": "2025-01-02T00:00:00Z",
        "company": "Acme, Inc.",
        "note": 'says "hi", twice',
    }
    assert matches[1]["company"] == 'Quote "Co"' and matches[1]["createdAt"] is None
    assert matches[1]["note"] == "multi\nline" and matches[1]["isVerified"] is True
    assert matches[2]["points"] == 12345678901234567890123  # exact, still an int
    assert err.splitlines() == [
        f'{path}: row 4 (line 6): field "points": expected a number, found "lots"',
        f'{path}: row 6 (line 8): field "isVerified": expected true, false, 1 or 0, found "maybe"',
        f'{path}: row 7 (line 9): field "createdAt": expected an ISO 8601 date-time, '
        'found "tomorrow"',
        f"{path}: row 8 (line 10): expected 7 cells as in the header, found 3",
        "3 of 8 contacts match (37.50%); 4 bad rows skipped",
    ]


def test_output_to_stdout_and_format_override(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "contacts.data", CONTACTS)
    status, out, _ = run(capsys, "eval", "--format", "jsonl", "-o", "-", FILTER, str(path))
    assert status == EXIT_OK
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["c1", "c3"]


def test_contacts_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = "\n".join(json.dumps(row) for row in CONTACTS).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert run(capsys, "eval", FILTER, "-")[:2] == (EXIT_OK, "c1\nc3\n")


def test_filter_and_contacts_cannot_both_be_stdin(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "eval", "-", "-")
    assert status == EXIT_USAGE and "both come from stdin" in err


def test_ids_fall_back_to_the_row(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"points": 5}, {"points": 500, "uid": "u2"}])
    assert run(capsys, "eval", "points > 1", str(path))[1] == "line 1\nline 2\n"
    assert run(capsys, "eval", "--id-field", "uid", "points > 100", str(path))[1] == "u2\n"


def test_missing_file_and_invalid_filter(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _, err = run(capsys, "eval", FILTER, str(tmp_path / "none.jsonl"))
    assert status == EXIT_USAGE and "cannot read" in err
    status, _, err = run(capsys, "eval", "points >", str(tmp_path / "none.jsonl"))
    assert status == EXIT_INVALID and "found the end of the filter" in err


def test_progress_bar_when_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("rich")
    path = write_jsonl(tmp_path / "contacts.jsonl", CONTACTS * 3000)
    status, out, err = run(capsys, "eval", "--progress", "always", "--count", FILTER, str(path))
    assert (status, out) == (EXIT_OK, "6000\n")
    assert err.endswith("6000 of 15000 contacts match (40.00%)\n")
    # `always` draws on a pipe too (captured stderr is no terminal).
    assert "reading contacts" in err


def test_piped_output_has_no_progress_or_colour(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "contacts.jsonl", CONTACTS * 3000)
    _, _, err = run(capsys, "eval", "--count", FILTER, str(path))
    assert err == "6000 of 15000 contacts match (40.00%)\n"


@pytest.mark.parametrize(
    ("declared", "where", "held", "selected"),
    [
        ("number", {"notIn": None}, "ß", True),
        ("number", {"gt": 1}, "ß", False),
        ("string", {"equals": "1"}, 1, False),
        ("boolean", {"not": None}, [1], True),
        ("string[]", {"has": "a"}, "a", False),
        ("date", {"gt": "2020-01-01"}, 5, False),
    ],
)
def test_a_field_declared_inside_json_holds_any_json_value(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    declared: str,
    where: dict[str, Any],
    held: Any,
    selected: bool,
) -> None:
    """Another JSON type inside `data` is an answer (docs/semantics-json.md), not a bad row: `eval`
    selects what `matches` selects and skips nothing (found by the generated space, cli-eval)."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"data": "json", "v": [declared, ["data", "v"]]}))
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "x", "data": {"v": held}}) + "\n")
    code, out, err = run(
        capsys, "eval", "--schema", str(schema), json.dumps({"v": where}), str(rows)
    )
    assert code == EXIT_OK, err
    assert ("x" in out.split()) is selected, out


LONG_INTEGERS = [
    2**63 - 1,
    2**63,  # beyond signed 64 bits, within unsigned: orjson keeps it
    2**64 - 1,
    2**64,  # orjson read this and the next as rounded floats
    -(2**63),
    -(2**63) - 1,
    -9999999999999999999,  # 19 digits, below signed 64 bits
    99999999999999991611393,  # one above the double 1e23
    -(10**30) - 1,
]


@pytest.mark.parametrize("value", LONG_INTEGERS, ids=str)
@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_integers_beyond_64_bits_are_read_exactly_in_every_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: int, fmt: str
) -> None:
    """A JSON integer is exact however long: `eval` selects what `matches` selects on the
    records as the standard library reads them. The JSON Lines reader took integers beyond 64
    bits from a fast decoder that rounds them to a double without a word (found by the
    generated space, cli-eval: `j_number not lte 1e23` against 99999999999999991611393)."""
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps({"points": "number", "data": "json", "v": ["number", ["data", "v"]]})
    )
    records = [
        {"id": "top", "points": value, "data": {}},
        {"id": "inside", "points": 0, "data": {"v": value}},
        {"id": "listed", "points": 0, "data": {"w": [value], "note": f"{value}"}},
    ]
    if fmt == "csv":
        lines = ["id,points,data"] + [
            f'{r["id"]},{r["points"]},"{json.dumps(r["data"]).replace(chr(34), chr(34) * 2)}"'
            for r in records
        ]
        text = "\n".join(lines) + "\n"
    elif fmt == "json":
        text = json.dumps(records)
    else:
        text = "".join(json.dumps(r) + "\n" for r in records)
    rows = tmp_path / f"rows.{fmt}"
    rows.write_text(text, encoding="utf-8")
    flt_schema = af.Schema.of("cli", points="number", data="json").with_fields(
        v=("number", ("data", "v"))
    )
    for literal in (float(value), value - 1, value, value + 1):
        for where in (
            {"points": {"gt": literal}},
            {"points": {"not": {"lte": literal}}},
            {"v": {"equals": literal}},
            {"v": {"gte": literal}},
            {"data": {"path": ["w"], "array_contains": [literal]}},
        ):
            code, out, err = run(
                capsys,
                "eval",
                "--schema",
                str(schema),
                "--replace-schema",
                json.dumps(where),
                str(rows),
            )
            assert code == EXIT_OK, err
            flt = af.parse(where, flt_schema)
            expected = [r["id"] for r in json.loads(json.dumps(records)) if flt.matches(r)]
            assert out.split() == expected, (where, out)
