"""The cost model benchmark runs end to end at a tiny size (its shape, never its timings)."""

from __future__ import annotations

import pytest

from benchmarks import cost_model


def test_the_cost_model_benchmark_prints_every_filter_and_the_worst(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cost_model.main(["--contacts", "40", "--rows", "3", "--runs", "1"])
    out = capsys.readouterr().out
    for name in cost_model.FILTERS:
        assert f"\n{name} " in out, name
    assert "worst factor: memory " in out and "cost() per call: median" in out


def test_the_fitted_constant_halves_the_spread_of_the_ratios() -> None:
    """The constant sits at the geometric middle: the worst factor is the same either way."""
    measures = [
        cost_model.Measure("a", 2.0, 2.0, 1.0, 1.0),  # 0.5 us per unit
        cost_model.Measure("b", 2.0, 2.0, 16.0, 16.0),  # 8 us per unit
    ]
    scale = cost_model.fitted(measures, cost_model.on_memory)
    assert scale == pytest.approx(2.0)
    assert cost_model.worst(measures, cost_model.on_memory, scale) == pytest.approx(4.0)
