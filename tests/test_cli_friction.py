"""What a first user of the command line runs into: `data` filters, dialect names, wrong-typed
records, relative dates written into SQL, and a file read in the wrong format."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from audiencefilter.backends.sql.dialects import DIALECTS
from audiencefilter.cli import EXIT_BAD_ROWS, EXIT_INVALID, EXIT_OK, main

CONTACTS = [
    {"id": "c1", "email": "ann@gmail.com", "points": 150, "data": {"plan": "pro", "seats": 12}},
    {"id": "c2", "email": "bob@acme.com", "points": 50, "data": {"plan": "free"}},
    {"id": "c3", "email": "cy@acme.com", "points": 10, "data": None},
    {"id": "c4", "email": "dee@acme.com", "points": 10, "data": ["not", "an", "object"]},
    {"id": "c5", "email": "eve@acme.com", "points": 10},
]
DATA_FILTERS = {
    "json": '{"data": {"path": ["plan"], "equals": "pro"}}',
    "text": 'data.plan = "pro"',
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("syntax", sorted(DATA_FILTERS))
@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_eval_runs_filters_that_read_data(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, syntax: str, fmt: str
) -> None:
    path = tmp_path / f"contacts.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in CONTACTS), encoding="utf-8")
    else:
        path.write_text(json.dumps(CONTACTS), encoding="utf-8")
    status, out, err = run(capsys, "eval", DATA_FILTERS[syntax], str(path))
    assert (status, out) == (EXIT_OK, "c1\n")
    assert err == "1 of 5 contacts match (20.00%)\n"


def test_eval_reads_data_paths_with_numbers_and_no_data_at_all(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in CONTACTS), encoding="utf-8")
    status, out, _ = run(capsys, "eval", "data.seats >= 10 or points >= 50", str(path))
    assert (status, out) == (EXIT_OK, "c1\nc2\n")


def test_eval_over_csv_with_a_data_filter(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.csv"
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "points"])
        writer.writerow(["c1", "150"])
    status, out, err = run(capsys, "eval", 'data.plan = "pro" or points > 100', str(path))
    assert (status, out, err) == (EXIT_OK, "c1\n", "1 of 1 contacts match (100.00%)\n")


@pytest.mark.parametrize("alias", ["postgres", "mariadb"])
def test_sql_takes_every_dialect_name_the_library_takes(
    capsys: pytest.CaptureFixture[str], alias: str
) -> None:
    assert alias in DIALECTS
    canonical = DIALECTS[alias].name
    assert run(capsys, "sql", "--dialect", alias, "points >= 100") == run(
        capsys, "sql", "--dialect", canonical, "points >= 100"
    )


def test_explain_names_a_wrong_typed_value_in_plain_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "explain", "points >= 100", "--record", '{"points": "150"}')
    assert (status, out) == (EXIT_INVALID, "")
    assert err == 'the record cannot be evaluated: field "points": expected a number, found "150"\n'
    assert "supported between" not in err


def test_explain_of_a_data_path(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "explain", 'data.plan = "pro"', "--record", '{"data": {"plan": "pro"}}'
    )
    assert status == EXIT_OK and out.endswith("the record is in the audience\n")


def test_sql_with_a_relative_date_says_which_instant_it_wrote(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "sql", "--dialect", "sqlite", "createdAt > 3 days ago")
    assert status == EXIT_OK
    written = datetime.now(UTC)
    assert err.startswith("note: relative dates are written as the instants they are now;")
    assert "pass --now" in err and "3 days ago = " in err
    instant = datetime.fromisoformat(err.rsplit("= ", 1)[1].strip())
    assert instant.strftime("%Y-%m-%d %H:%M:%S") in out
    assert abs((written - instant).total_seconds() - 3 * 86400) < 60


def test_sql_now_fixes_the_instant(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(
        capsys,
        "sql",
        "--dialect",
        "sqlite",
        "--now",
        "2025-01-31T09:00:00Z",
        "createdAt > 3 days ago",
    )
    assert status == EXIT_OK
    assert out == "\"createdAt\" > '2025-01-28 09:00:00.000000'\n"
    assert err == (
        "note: relative dates are written as the instants they are at --now: "
        "3 days ago = 2025-01-28T09:00:00Z\n"
    )
    again = run(
        capsys,
        "sql",
        "--dialect",
        "sqlite",
        "--now",
        "2025-01-31T09:00:00Z",
        "createdAt > 3 days ago",
    )
    assert again[1] == out


def test_sql_of_an_absolute_filter_writes_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "sql", "createdAt > 2025-01-01")
    assert (status, err) == (EXIT_OK, "")


def test_a_bad_now_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["sql", "--now", "yesterday", "createdAt > 3 days ago"])
    assert exited.value.code == 2
    assert "expected an ISO 8601 date-time" in capsys.readouterr().err


def test_explain_takes_now(capsys: pytest.CaptureFixture[str]) -> None:
    record = '{"createdAt": "2025-01-30T00:00:00Z"}'
    inside = run(
        capsys,
        "explain",
        "createdAt > 3 days ago",
        "--record",
        record,
        "--now",
        "2025-01-31T00:00:00Z",
    )
    outside = run(
        capsys,
        "explain",
        "createdAt > 3 days ago",
        "--record",
        record,
        "--now",
        "2025-03-01T00:00:00Z",
    )
    assert inside[1].endswith("the record is in the audience\n")
    assert outside[1].endswith("the record is not in the audience\n")


def test_a_json_file_read_as_csv_is_an_error_not_zero_contacts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.json"
    path.write_text(json.dumps(CONTACTS), encoding="utf-8")
    status, out, err = run(capsys, "eval", "--format", "csv", "points > 1", str(path))
    assert (status, out) == (EXIT_INVALID, "")
    assert "0 of 0" not in err
    assert "this is JSON, not CSV" in err and "--format json" in err


def test_json_lines_read_as_a_json_array_suggests_jsonl(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.json"
    path.write_text("".join(json.dumps(row) + "\n" for row in CONTACTS), encoding="utf-8")
    status, _, err = run(capsys, "eval", "points > 1", str(path))
    assert status == EXIT_INVALID
    assert "use --format jsonl" in err


def test_json_lines_read_as_csv_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in CONTACTS), encoding="utf-8")
    status, _, err = run(capsys, "eval", "--format", "csv", "points > 1", str(path))
    assert status == EXIT_INVALID and "--format jsonl" in err


def test_wrong_typed_rows_still_counted_beside_data(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = [*CONTACTS, {"id": "c6", "points": "many", "data": {"plan": "pro"}}]
    path = tmp_path / "contacts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    status, out, err = run(capsys, "eval", 'data.plan = "pro" and points > 1', str(path))
    assert (status, out) == (EXIT_BAD_ROWS, "c1\n")
    assert 'line 6: field "points": expected a number, found "many"' in err


def test_csv_data_cells_are_json_documents(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.csv"
    path.write_text('id,data\nc1,"{""plan"": ""pro""}"\nc2,\nc3,nope\n', encoding="utf-8")
    status, out, err = run(capsys, "eval", 'data.plan = "pro"', str(path))
    assert (status, out) == (EXIT_BAD_ROWS, "c1\n")
    assert err.splitlines() == [
        f'{path}: row 3 (line 4): field "data": expected a JSON document, found "nope"',
        "1 of 3 contacts match (33.33%); 1 bad row skipped",
    ]
