"""The command line on the newer constructs: behaviour filters, list fields, `--now`, formats.

Each test here failed before its fix: `eval` and `explain` crashed with `KeyError: 'actions'`
on behaviour filters and `KeyError: <FieldType.STRING_LIST>` on list fields of `--schema`,
`eval` had no `--now`, a CSV file read as JSON Lines was "0 of N" with status 3, and
`eval ... | head` printed "Broken pipe".
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.cli import EXIT_INVALID, EXIT_OK, build_parser, main

CONTACTS: list[dict[str, Any]] = [
    {
        "id": "c1",
        "points": 10,
        "actions": [
            {"id": 1, "name": "share", "increase": 1, "createdAt": "2026-11-01T00:00:00Z"},
            {"id": 2, "name": "share", "increase": 2, "createdAt": "2026-11-10T00:00:00Z"},
        ],
    },
    {"id": "c2", "points": 20, "actions": []},
    {
        "id": "c3",
        "points": 30,
        "actions": [{"id": 3, "name": "visit", "increase": 5, "createdAt": "2026-10-01T00:00Z"}],
    },
]
NOW = "2026-11-20T00:00:00Z"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def contacts(tmp_path: Path) -> Path:
    path = tmp_path / "contacts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in CONTACTS), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "flt",
    [
        'actions some (name = "share")',
        'count(actions where name = "share") >= 2',
        "sum(actions.increase) >= 3",
        'actions none (name = "share")',
        'actions some (name = "share" and createdAt >= 15 days ago)',
    ],
)
def test_eval_runs_behaviour_filters_like_the_library(
    capsys: pytest.CaptureFixture[str], contacts: Path, flt: str
) -> None:
    status, out, _ = run(capsys, "eval", flt, str(contacts), "--now", NOW)
    expected = af.parse_text(flt).select(CONTACTS, now=_now())
    assert status == EXIT_OK
    assert out.split() == [row["id"] for row in expected]


def _now() -> datetime:
    return datetime.fromisoformat(NOW)


def test_eval_now_moves_relative_dates(capsys: pytest.CaptureFixture[str], contacts: Path) -> None:
    flt = "actions some (createdAt >= 15 days ago)"
    _, early, _ = run(capsys, "eval", flt, str(contacts), "--now", "2026-11-05T00:00:00Z")
    _, late, _ = run(capsys, "eval", flt, str(contacts), "--now", "2027-01-01T00:00:00Z")
    assert early.split() == ["c1"]
    assert late.split() == []


def test_explain_shows_a_behaviour_filter(capsys: pytest.CaptureFixture[str]) -> None:
    record = json.dumps(CONTACTS[0])
    status, out, _ = run(capsys, "explain", 'actions some (name = "share")', "--record", record)
    assert status == EXIT_OK
    assert out.rstrip().endswith("the record is in the audience")


@pytest.fixture
def list_schema(tmp_path: Path) -> Path:
    path = tmp_path / "schema.json"
    path.write_text('{"tags": "string[]", "scores": "number[]", "points": "number"}')
    return path


def test_list_fields_of_a_schema_in_eval_explain_and_csv(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, list_schema: Path
) -> None:
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text('{"id": 1, "tags": ["a", "b"]}\n{"id": 2, "tags": []}\n')
    csv = tmp_path / "c.csv"
    csv.write_text('id,tags\n1,"[""a""]"\n2,[]\n')
    for path in (jsonl, csv):
        status, out, _ = run(
            capsys, "eval", "--schema", str(list_schema), 'tags has "a"', str(path)
        )
        assert (status, out) == (EXIT_OK, "1\n")
    status, out, _ = run(
        capsys,
        "explain",
        "--schema",
        str(list_schema),
        'tags has "a"',
        "--record",
        '{"tags": ["a"]}',
    )
    assert status == EXIT_OK and "in the audience" in out


def test_a_wrong_typed_list_item_is_a_bad_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, list_schema: Path
) -> None:
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text('{"id": 1, "tags": ["a", 3]}\n')
    status, _, err = run(capsys, "eval", "--schema", str(list_schema), 'tags has "a"', str(jsonl))
    assert status == 3
    assert 'field "tags": expected a list of strings' in err


def test_csv_read_as_json_lines_is_refused_with_the_right_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    csv = tmp_path / "c.csv"
    csv.write_text("id,points\n1,5\n")
    status, _, err = run(capsys, "eval", "points > 1", str(csv), "--format", "jsonl")
    assert status == EXIT_INVALID
    assert "--format csv" in err


def test_schema_help_lists_every_field_type() -> None:
    text = build_parser()._subparsers._group_actions[0].choices["eval"].format_help()  # type: ignore[union-attr]
    flat = " ".join(text.split())
    for kind in af.FieldType:
        assert kind.value in flat


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps({"id": i, "points": i}) + "\n" for i in range(60_000)))
    for extra in ([], ["-o", "-"]):
        command = [sys.executable, "-m", "audiencefilter.cli", "eval", "points > 1", str(path)]
        shell = " ".join(f"'{part}'" for part in command + extra) + " | head -1"
        done = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, timeout=120)
        assert "Broken pipe" not in done.stderr
        assert done.stdout.strip()
