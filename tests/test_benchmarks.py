"""The benchmark harness runs end to end on tiny sizes and compares the competitors' answers.

No timing is asserted: only that every engine ran, that the differences it reports are the
real ones (JSON Logic has no case folding; MongoDB's `$nin` and JSON Logic's `!` admit nulls),
and that the report and chart are written with the hand-written introduction kept.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mongoquery")
pytest.importorskip("json_logic")
pytest.importorskip("matplotlib")
pytest.importorskip("polars")
pytest.importorskip("duckdb")

import audiencefilter as af  # noqa: E402
from benchmarks import run as bench_run  # noqa: E402
from benchmarks.data import generate  # noqa: E402
from benchmarks.filters import MAIN  # noqa: E402
from benchmarks.report import MARKER, write_chart, write_markdown  # noqa: E402
from benchmarks.results import Results  # noqa: E402

ARGS = ["--quick", "--sizes", "400", "--repeats", "1", "--budget", "0.05", "--no-postgres"]
ARGS += ["--filters", "F1,F2,F5,F6,S2"]


@pytest.fixture(scope="module")
def results() -> Results:
    return bench_run.run(bench_run._arguments(ARGS))


def test_every_engine_ran_every_filter_it_translates(results: Results) -> None:
    expected = {
        "audiencefilter compile()", "hand-written lambda", "mongoquery", "json-logic",
        "audiencefilter to_polars()", "polars hand-written expression",
        "DuckDB to_sql()", "DuckDB hand-written SQL", "SQLite to_sql()",
    }  # fmt: skip
    assert expected <= set(results.engines)
    for engine in expected:
        ran = {m.filter for m in results.measures if m.engine == engine}
        assert {"F1", "F2", "F5", "F6"} <= ran, engine
    ours_only = {m.engine for m in results.measures if m.filter == "S2"}
    assert "hand-written lambda" not in ours_only and "audiencefilter compile()" in ours_only


def test_differences_are_counted_and_explained(results: Results) -> None:
    def measure(engine: str, name: str) -> object:
        found = results.get(engine, name, 400)
        assert found is not None and found.differs is not None
        return found

    for engine in ("hand-written lambda", "audiencefilter to_polars()", "DuckDB to_sql()",
                   "DuckDB hand-written SQL", "SQLite to_sql()"):  # fmt: skip
        for name in ("F1", "F2", "F5", "F6"):
            assert measure(engine, name).differs == 0, (engine, name)  # type: ignore[attr-defined]
    case = measure("json-logic", "F2")
    assert case.differs > 0 and "capitals" in case.diff_note  # type: ignore[attr-defined]
    for engine in ("mongoquery", "json-logic"):
        nulls = measure(engine, "F6")
        assert nulls.differs > 0 and "extra: country null" in nulls.diff_note  # type: ignore[attr-defined]


def test_matches_agree_with_a_direct_count(results: Results) -> None:
    rows = generate(400).rows
    for bench in MAIN:
        found = results.get("audiencefilter compile()", bench.name, 400)
        if found is not None:
            assert found.matches == sum(af.parse(bench.json).matches(r) for r in rows)


def test_report_keeps_the_introduction_and_writes_a_chart(results: Results, tmp_path: Path) -> None:
    document = tmp_path / "performance.md"
    document.write_text("# Intro by hand\n\nWords.\n\n" + MARKER + "\n\nstale tables\n")
    write_markdown(results, document)
    text = document.read_text()
    assert text.startswith("# Intro by hand\n\nWords.\n")
    assert "stale tables" not in text and text.count(MARKER) == 1
    for heading in ("Records per second at 400 contacts", "Speed targets", "differ from ours",
                    "Cost per call", "`audiencefilter eval` memory"):  # fmt: skip
        assert heading in text
    assert "| parse | F5 | ≤ 25 µs |" in text
    chart = tmp_path / "performance.png"
    write_chart(results, chart)
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_memory_is_measured(results: Results) -> None:
    assert results.cli is not None and results.cli.ok, results.cli
    assert results.cli.peak_mib > 0
    direct = results.get("audiencefilter compile()", "F5", 400)
    assert direct is not None and results.cli.output == str(direct.matches)


def test_main_writes_both_files(tmp_path: Path) -> None:
    document, chart = tmp_path / "p.md", tmp_path / "p.png"
    args = ["--quick", "--sizes", "200", "--no-postgres", "--no-cli", "--no-micro"]
    args += ["--filters", "F1", "--engines", "audiencefilter compile(),hand-written lambda"]
    assert bench_run.main([*args, "--markdown", str(document), "--chart", str(chart)]) == 0
    assert "hand-written lambda" in document.read_text() and chart.exists()


def test_speed_gates_measure_every_promise_as_a_ratio() -> None:
    from benchmarks import gates

    rows = gates.measure(300, sample_seconds=0.001, rounds=1)
    assert [row.what for row in rows] == [
        *(f"compile F{i} vs lambda" for i in range(1, 6)),
        "parse F5 vs json.loads",
        "to_sql F5 vs json.loads",
        "matches(now=) vs compiled, anniversary",
    ]
    assert all(row.ours > 0 and row.theirs > 0 for row in rows)
    assert "| parse F5 vs json.loads |" in gates.markdown(rows)
    assert "| matches(now=) vs compiled, anniversary |" in gates.markdown(rows)


def test_the_floor_of_f1_times_each_step_and_checks_they_agree() -> None:
    import collections

    from benchmarks import gates_floor

    measured = gates_floor.measure(300, rounds=1, sample_seconds=0.001)
    assert [step.name for step in measured][:2] == ["lambda", "+ value kept"]
    assert measured[0].ratio == 1.0 and all(step.seconds > 0 for step in measured)
    assert "| compiled predicate |" in gates_floor.markdown(measured)
    # The steps that test the value refuse a wrong type, as the predicate does.
    with pytest.raises(TypeError):
        gates_floor.tested({"isVerified": "yes"})
    # The read the predicate does not use: a sparse record raises, a defaultdict one grows.
    with pytest.raises(KeyError):
        gates_floor.by_subscript({})
    record: collections.defaultdict[str, object] = collections.defaultdict(lambda: None)
    assert gates_floor.tested(record) is False and "isVerified" not in record
    gates_floor.by_subscript(record)
    assert "isVerified" in record


def test_construct_gates_compare_each_family_with_hand_written_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from benchmarks import gates_constructs

    monkeypatch.delenv("AUDIENCEFILTER_BENCH_PG_URL", raising=False)
    gates = gates_constructs.measure(300, rounds=1)  # each pair must give the same answer
    families = {gate.family for gate in gates}
    assert families == {"lists", "aggregates", "windows", "anniversaries", "contains", "long IN"}
    assert "| lists | polars: hasSome of 3 tags |" in gates_constructs.markdown(gates)
    whats = {gate.what for gate in gates if gate.family == "windows"}
    assert whats == {f"{engine}: none in 60 days" for engine in ("memory", "polars", "DuckDB")}


def test_the_judging_benchmark_runs_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    """Its shape only: both ways print a median and a spread (no timing is asserted)."""
    from benchmarks import judging

    assert judging.main(["--filters", "20", "--rows", "12"]) == 0
    printed = capsys.readouterr().out
    assert "each predicate  median" in printed
    assert "one FilterSet   median" in printed
