"""The kept-overlap benchmark runs end to end at a tiny size on SQLite: the overlap is measured
both ways for 3, 10 and 50 audiences (the harness asserts both answer the same matrix), the
contact update with and without the pairs kept, and the report renders. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from benchmarks import overlap_kept, overlap_settle  # noqa: E402


def test_the_overlap_is_measured_both_ways_and_the_update_with_and_without(
    tmp_path: Path,
) -> None:
    result = overlap_kept.run("SQLite", f"sqlite:///{tmp_path / 'o.db'}", 400, 1)
    assert [count for count, _, _ in result.overlap] == [3, 10, 50]
    labels = [label for label, *_ in result.update]
    assert labels == [
        "across 100 audiences, not kept",
        "across 100 audiences, kept",
        "across 1 audience, not kept",
        "across 1 audience, kept",
    ]
    upserts = [row[3] for row in result.update]
    assert upserts == [0, 1, 0, 1]  # one upsert a write that moved something, none without
    assert "| 50 |" in overlap_kept.render(result)


def test_the_settling_is_timed_both_ways_for_every_case(tmp_path: Path) -> None:
    """`benchmarks.overlap_settle` at a tiny size: each case timed moved-only and whole (the
    harness asserts both ways sum alike), the table rendered. No timing is asserted."""
    result = overlap_settle.run("SQLite", f"sqlite:///{tmp_path / 's.db'}", 4, 1)
    assert [(stayed, moved) for stayed, moved, *_ in result.rows] == list(overlap_settle.CASES)
    assert all(moved_ms > 0 and all_ms > 0 for *_, moved_ms, all_ms in result.rows)
    assert "| 33 | 33 |" in overlap_settle.render(result)
