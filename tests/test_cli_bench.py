"""`audiencefilter bench`: the synthetic contacts, equal answers on real engines, the reports,
the differences report and the errors. Nothing here asserts a timing."""

from __future__ import annotations

import json
import sqlite3
import statistics
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.cli import EXIT_BAD_ROWS, EXIT_INVALID, EXIT_OK, EXIT_USAGE, main
from audiencefilter.cli.bench_data import Contacts, normalize
from audiencefilter.cli.bench_results import EngineRun, Timing, describe_differences, differences
from audiencefilter.cli.synthetic import END, synthetic_contacts

FILTERS = [
    'points >= 100 and email contains "gmail"',
    '{"actions": {"some": {"name": "share"}}}',
    'data.plan = "pro"',
    '{"OR": [{"country": {"in": ["FR", "DE"]}}, {"isVerified": false}], "city": {"not": null}}',
    "count(actions where createdAt >= 2025-06-01T00:00:00Z) >= 2",
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_synthetic_contacts_are_deterministic() -> None:
    assert list(synthetic_contacts(300, seed=4)) == list(synthetic_contacts(300, seed=4))
    assert list(synthetic_contacts(300, seed=4)) != list(synthetic_contacts(300, seed=5))
    # A shorter run is a prefix of a longer one: synthetic:N grows without reshuffling.
    assert list(synthetic_contacts(100, seed=4)) == list(synthetic_contacts(300, seed=4))[:100]


def test_synthetic_contacts_look_like_a_real_list() -> None:
    contacts = list(synthetic_contacts(5000))
    for name in ("company", "country", "city", "points", "isVerified"):
        nulls = sum(c[name] is None for c in contacts)
        assert 0 < nulls < len(contacts) / 5, name
    countries = Counter(c["country"] for c in contacts if c["country"] is not None)
    ranked = [count for _, count in countries.most_common()]
    assert ranked[0] > 5 * ranked[9]  # skewed: a few countries dominate
    points = [c["points"] for c in contacts if c["points"] is not None]
    assert max(points) > 20 * statistics.median(points)  # long-tailed
    created = [c["createdAt"] for c in contacts]
    assert max(created) < END and max(created) - min(created) > timedelta(days=2 * 365)
    assert 0 < sum(c["data"] is None for c in contacts) < len(contacts) / 4
    plans = Counter(c["data"]["plan"] for c in contacts if c["data"])
    assert set(plans) == {"free", "pro", "team", "enterprise"}
    assert any(c["data"]["tags"] for c in contacts if c["data"])
    actions = [len(c["actions"]) for c in contacts]
    assert actions.count(0) > 0 and max(actions) >= 20  # some none, a few many
    assert all(a["createdAt"] >= c["createdAt"] for c in contacts for a in c["actions"])
    assert {a["name"] for c in contacts for a in c["actions"]} >= {"login", "share", "purchase"}


def _matches(document: dict[str, Any]) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for result in document["results"]:
        found.setdefault(result["filter"], set()).add(result["matches"])
    return found


def test_four_engines_agree_and_write_json_and_a_plot(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_json, out_png = tmp_path / "bench.json", tmp_path / "bench.png"
    status, out, err = run(
        capsys, "bench", *FILTERS, "--contacts", "synthetic:2000",
        "--engines", "memory,polars,duckdb,sqlite", "--repeat", "2",
        "--json", str(out_json), "--plot", str(out_png), "--now", "2026-01-01T00:00:00Z",
    )  # fmt: skip
    assert (status, err) == (EXIT_OK, "")
    document = json.loads(out_json.read_text("utf-8"))
    assert [e["name"] for e in document["engines"]] == ["memory", "polars", "duckdb", "sqlite"]
    assert document["contacts"] == {"source": "synthetic:2000", "rows": 2000, "bad_rows": 0}
    assert document["differences"] == []
    matches = _matches(document)
    assert list(matches) == ["F1", "F2", "F3", "F4", "F5"]
    assert all(len(counts) == 1 for counts in matches.values()), matches  # equal everywhere
    assert all(0 < next(iter(counts)) < 2000 for counts in matches.values())
    assert all(len(r["seconds"]) == 2 and r["rows_per_second"] > 0 for r in document["results"])
    assert len(document["machine"]["load_average"]) == 3
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "engine  filter" in out and "sqlite  F5" in out


def test_filters_from_a_file_one_per_line_or_a_json_array(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = tmp_path / "filters.txt"
    lines.write_text('# segments\npoints >= 100\n\ncountry = "FR"\n', "utf-8")
    array = tmp_path / "filters.json"
    array.write_text(json.dumps([{"points": {"lt": 10}}, 'city starts with "San"']), "utf-8")
    status, out, _ = run(
        capsys, "bench", f"@{lines}", f"@{array}", "--contacts", "synthetic:200",
        "--engines", "memory,sqlite", "--repeat", "1",
    )  # fmt: skip
    assert status == EXIT_OK
    assert out.splitlines()[:4] == [
        "F1  points >= 100",
        'F2  country = "FR"',
        'F3  {"points": {"lt": 10}}',
        'F4  city starts with "San"',
    ]


def test_a_differing_engine_is_reported_with_the_first_ids() -> None:
    contacts = Contacts("test", [{"id": f"c{n}"} for n in range(30)] + [{}])
    reference = EngineRun("memory", timings=[Timing("memory", "F1", [0.1], {0, 1, 2})])
    same = EngineRun("duckdb", timings=[Timing("duckdb", "F1", [0.1], {0, 1, 2})])
    other = EngineRun("polars", timings=[Timing("polars", "F1", [0.1], {1, 2, 30, *range(5, 20)})])
    skipped = EngineRun("spark", skipped="needs a Java runtime")
    found = differences([reference, same, skipped, other])
    assert [(d.engine, d.reference, d.label) for d in found] == [("polars", "memory", "F1")]
    assert found[0].missing == [0]
    (line,) = describe_differences(found, contacts)
    assert line == (
        "answers differ: F1 on polars, against memory: also matches 16 (c5, c6, c7, c8, c9, "
        "c10, c11, c12, c13, c14 and 6 more); misses 1 (c0)"
    )
    assert contacts.label(30) == "#30"  # a contact without an id is named by its place


def test_contacts_from_a_sqlite_database_and_a_parquet_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import polars as pl

    rows = [
        ("c1", "ann@gmail.com", 150, 1, "2025-01-02 00:00:00", '{"plan": "pro"}'),
        ("c2", "bob@acme.com", 50, 0, "2025-03-02 10:00:00", None),
        ("c3", "cy@GMAIL.com", 300, None, None, '{"plan": "free"}'),
    ]
    database = tmp_path / "contacts.db"
    with sqlite3.connect(database) as connection:
        connection.execute(
            'CREATE TABLE contacts (id TEXT, email TEXT, points INTEGER, "isVerified" BOOLEAN, '
            '"createdAt" TEXT, data TEXT)'
        )
        connection.executemany("INSERT INTO contacts VALUES (?, ?, ?, ?, ?, ?)", rows)
    names = ["id", "email", "points", "isVerified", "createdAt", "data"]
    parquet = tmp_path / "contacts.parquet"
    pl.DataFrame(rows, schema=names, orient="row").write_parquet(parquet)
    for source in (f"sqlite:///{database}", str(parquet)):
        status, out, err = run(
            capsys, "bench", 'points >= 100 and email contains "gmail"', 'data.plan = "pro"',
            "--contacts", source, "--engines", "memory,polars,sqlite", "--repeat", "1",
        )  # fmt: skip
        assert (status, err) == (EXIT_OK, ""), source
        assert out.count("       2\n") == 3 and out.count("       1\n") == 3, out


def test_bad_rows_are_reported_counted_and_left_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.jsonl"
    good = {"id": "c1", "points": 150, "createdAt": "2025-01-02T00:00:00Z"}
    path.write_text(
        "\n".join([json.dumps(good), "{broken", json.dumps({"id": "c2", "points": "lots"})]) + "\n",
        "utf-8",
    )
    status, out, err = run(
        capsys, "bench", "points >= 100", "--contacts", str(path), "--engines", "memory,sqlite"
    )
    assert status == EXIT_BAD_ROWS
    assert f"{path}: line 2: invalid JSON" in err
    assert f'{path}: line 3: field "points": expected number, found "lots"' in err
    assert "\n1 contact from" in out


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["--engines", "memory,oracle"], EXIT_USAGE, "unknown engine 'oracle'; choose from"),
        (["--engines", "postgresql"], EXIT_USAGE, "the postgresql engine needs --postgresql URL"),
        (["--contacts", "synthetic:lots"], EXIT_USAGE, "expected synthetic:N with N a number"),
        (["--contacts", "missing.jsonl"], EXIT_USAGE, "cannot read missing.jsonl"),
        (["--contacts", "sqlite:///nowhere/x.db"], EXIT_USAGE, "cannot read the contacts table"),
    ],
)
def test_bad_command_lines_say_what_to_change(
    capsys: pytest.CaptureFixture[str], argv: list[str], status: int, message: str
) -> None:
    base = ["bench", "points > 1", "--contacts", "synthetic:10", "--repeat", "1"]
    code, _, err = run(capsys, *base, *argv)
    assert code == status
    assert f"audiencefilter bench: error: {message}" in err


def test_an_invalid_filter_is_named_and_located(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(
        capsys, "bench", "points > 1", "pionts > 2", "--contacts", "synthetic:10"
    )
    assert (status, out) == (EXIT_INVALID, "")
    assert err.startswith('F2: error at line 1, column 1: unknown field "pionts"')


def test_a_file_in_another_format_stops_with_status_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "contacts.jsonl"
    path.write_text("id,points\nc1,5\n", "utf-8")
    status, _, err = run(capsys, "bench", "points > 1", "--contacts", str(path))
    assert status == EXIT_INVALID
    assert "use --format csv" in err


def test_normalize_puts_values_in_one_form() -> None:
    record = normalize(
        {"points": 5, "createdAt": "2025-01-02T01:00:00+01:00", "isVerified": 1, "extra": "x"}
    )
    assert record["createdAt"].isoformat() == "2025-01-02T00:00:00+00:00"
    assert record["isVerified"] is True and record["extra"] == "x" and record["actions"] == []
    with pytest.raises(ValueError, match='field "createdAt": expected datetime'):
        normalize({"createdAt": "yesterday"})


@pytest.mark.postgres
def test_postgresql_agrees_with_memory(
    capsys: pytest.CaptureFixture[str], pg_url: str, tmp_path: Path
) -> None:
    out_json = tmp_path / "bench.json"
    status, _, err = run(
        capsys, "bench", *FILTERS, "--contacts", "synthetic:500", "--engines", "memory,postgresql",
        "--postgresql", pg_url, "--repeat", "1", "--json", str(out_json),
    )  # fmt: skip
    assert (status, err) == (EXIT_OK, "")
    matches = _matches(json.loads(out_json.read_text("utf-8")))
    assert all(len(counts) == 1 for counts in matches.values()), matches
