"""The gaps benchmark runs end to end on a tiny size: each of ours and its hand-written
equivalent give the same answer (the harness checks each pair). No timing is asserted."""

from __future__ import annotations

import pytest

pytest.importorskip("polars")

from benchmarks import gaps  # noqa: E402


def test_every_gap_runs_and_ours_agrees_with_the_hand_code() -> None:
    found = gaps.measure(size=500, rounds=1)
    names = [gap.what for gap in found]
    assert len(names) == len(set(names)) == 15
    assert all(gap.ours > 0 and gap.hand > 0 for gap in found)
    assert "| ours ÷ hand |" in gaps.markdown(found)
