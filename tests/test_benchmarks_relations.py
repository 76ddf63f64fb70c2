"""The relations benchmark runs end to end on a tiny size: every engine and its hand-written
equivalent select the same contacts (the harness checks each pair), and every engine selects
as many as the others. No timing is asserted."""

from __future__ import annotations

import pytest

pytest.importorskip("polars")
pytest.importorskip("duckdb")

from benchmarks import relations  # noqa: E402


def test_every_engine_runs_both_segments_and_agrees() -> None:
    rows = relations.run(contacts=300, actions=3_000, repeats=1, use_postgres=False)
    engines = {"compiled memory", "polars", "SQLite", "DuckDB"}
    assert {(r.engine, r.segment) for r in rows} == {
        (engine, segment) for engine in engines for segment in relations.FILTERS
    }
    for segment in relations.FILTERS:
        counts = {r.engine: r.selected for r in rows if r.segment == segment}
        assert len(set(counts.values())) == 1, (segment, counts)
        assert 0 < next(iter(counts.values())) < 300, segment
    assert "| hand / ours |" in relations.table(rows)
