"""The command line over the exports people have: CSV with an `actions` column, a `--schema`
that adds an export's columns to the contact's, and `bench` on synthetic contacts dated from
`--now`, with the filters' text on its plot. Nothing here asserts a timing."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import matplotlib
import pytest

import audiencefilter as af
from audiencefilter.cli import EXIT_BAD_ROWS, EXIT_INVALID, EXIT_OK, bench_engines, main
from audiencefilter.cli.bench import _failure
from audiencefilter.cli.synthetic import SPAN_DAYS, synthetic_contacts

ROOT = Path(__file__).parent.parent


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _actions(*names: str) -> str:
    rows = [
        {"id": f"a{n}", "name": name, "createdAt": f"2026-01-0{n}T00:00:00Z"}
        for n, name in enumerate(names, 1)
    ]
    return json.dumps(rows).replace('"', '""')


CSV = (
    "id,email,plan,actions\n"
    f'c1,ann@x.io,pro,"{_actions("share", "share", "login")}"\n'
    f'c2,bob@x.io,free,"{_actions("share")}"\n'
    "c3,cy@x.io,pro,\n"
    'c4,dee@x.io,pro,"{""name"": ""share""}"\n'
    'c5,eve@x.io,pro,"[""share""]"\n'
)


@pytest.fixture
def export(tmp_path: Path) -> tuple[Path, Path]:
    contacts = tmp_path / "export.csv"
    contacts.write_text(CSV, encoding="utf-8")
    schema = tmp_path / "schema.json"
    schema.write_text('{"plan": "string"}', encoding="utf-8")
    return contacts, schema


def test_a_csv_actions_cell_holds_the_rows_as_json(
    capsys: pytest.CaptureFixture[str], export: tuple[Path, Path]
) -> None:
    contacts, _ = export
    status, out, err = run(
        capsys, "eval", 'count(actions where name = "share") >= 1', str(contacts)
    )
    assert (status, out) == (EXIT_BAD_ROWS, "c1\nc2\n")
    assert err.splitlines()[:2] == [
        f'{contacts}: row 4 (line 5): field "actions": expected a JSON array of objects, '
        'found "{"name": "share"}"',
        f'{contacts}: row 5 (line 6): field "actions": expected a JSON array of objects, '
        'found "["share"]"',
    ]


def test_a_schema_file_extends_the_contact_and_keeps_actions(
    capsys: pytest.CaptureFixture[str], export: tuple[Path, Path]
) -> None:
    contacts, schema = export
    where = 'plan = "pro" and email ends with "x.io" and count(actions where name = "share") >= 2'
    status, out, _ = run(capsys, "eval", "--schema", str(schema), where, str(contacts))
    assert (status, out) == (EXIT_BAD_ROWS, "c1\n")


def test_a_schema_file_replaces_the_contact_when_asked(
    capsys: pytest.CaptureFixture[str], export: tuple[Path, Path]
) -> None:
    contacts, schema = export
    argv = ("eval", "--schema", str(schema), "--replace-schema")
    assert run(capsys, *argv, 'plan = "pro"', str(contacts))[:2] == (EXIT_OK, "c1\nc3\nc4\nc5\n")
    status, _, err = run(capsys, *argv, "count(actions) > 1", str(contacts))
    assert status == EXIT_INVALID and "actions" in err


def test_the_cli_docs_list_every_field_type() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    paragraph = text[text.index("`--schema schema.json`") :].split("\n\n")[0]
    listed = set(re.findall(r"`([a-z]+(?:\[\])?)`", paragraph))
    assert {kind.value for kind in af.FieldType} <= listed


def test_bench_names_pyarrow_when_duckdb_cannot_read_frames(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = bench_engines.importlib.util.find_spec

    def find_spec(name: str) -> object:
        return None if name == "pyarrow" else real(name)

    monkeypatch.setattr(bench_engines.importlib.util, "find_spec", find_spec)
    assert bench_engines.unavailable("duckdb") == "needs pyarrow (pip install pyarrow)"
    assert bench_engines.unavailable("sqlite") is None


def test_a_package_missing_at_run_time_is_named() -> None:
    missing = ModuleNotFoundError("No module named 'pyarrow.lib'", name="pyarrow.lib")
    assert _failure(missing) == "needs pyarrow (pip install pyarrow)"
    assert _failure(RuntimeError("boom")) == "failed: RuntimeError: boom"


def test_synthetic_contacts_are_dated_back_from_the_instant_given() -> None:
    end = datetime(2031, 3, 4, tzinfo=UTC)
    contacts = list(synthetic_contacts(500, seed=1, end=end))
    created = [c["createdAt"] for c in contacts]
    assert max(created) < end and min(created) >= end - timedelta(days=SPAN_DAYS)
    assert all(a["createdAt"] < end for c in contacts for a in c["actions"])
    assert list(synthetic_contacts(50, seed=1, end=end)) == contacts[:50]


RECENT = "count(actions where createdAt >= 30 days ago) >= 1"


def test_bench_synthetic_dates_follow_now_and_an_empty_audience_is_flagged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_json, out_svg = tmp_path / "bench.json", tmp_path / "bench.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text stays text in the SVG
        status, _, err = run(
            capsys, "bench", RECENT, 'email = "nobody@nowhere"', "--contacts", "synthetic:400",
            "--engines", "memory,sqlite", "--repeat", "1", "--now", "2031-06-01T00:00:00Z",
            "--json", str(out_json), "--plot", str(out_svg),
        )  # fmt: skip
    assert status == EXIT_OK
    matches = {r["filter"]: r["matches"] for r in json.loads(out_json.read_text())["results"]}
    assert matches["F1"] > 0  # recent actions exist at --now, years after 2026
    assert matches["F2"] == 0
    assert err.splitlines() == [
        "note: F2 matched none of the 400 contacts (at --now 2031-06-01T00:00:00+00:00): "
        'email = "nobody@nowhere"'
    ]
    drawn = out_svg.read_text(encoding="utf-8")
    assert "F1: count(actions where createdAt &gt;= 30 days ago) &gt;= 1" in drawn
    assert 'F2: email = "nobody@nowhere"' in drawn
