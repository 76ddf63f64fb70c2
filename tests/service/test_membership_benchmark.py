"""The membership benchmark runs end to end at a tiny size (its shape, never its timings)."""

from __future__ import annotations

import pytest

from benchmarks import service_actions, service_membership, service_residual


def test_the_membership_benchmark_prints_both_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    assert service_membership.main(["--contacts", "30", "--audiences", "6", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "contacts page of 100" in out and "update, moving" in out
    assert out.count("x (≤") == 3


def test_the_actions_benchmark_prints_its_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert service_actions.main(["--contacts", "30", "--audiences", "6", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "create an action, wall clock" in out and "create an action, process CPU" in out
    assert out.count("x (≤") == 2


def test_the_residual_benchmark_prints_its_shares(capsys: pytest.CaptureFixture[str]) -> None:
    assert service_residual.main(["--contacts", "30", "--audiences", "6", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "create an action, CPU" in out and "update a contact, CPU" in out
    assert "needing no query:" in out and "of those over actions" in out
