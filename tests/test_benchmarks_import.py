"""The import benchmark runs end to end at a tiny size (its shape, never its timings)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from benchmarks import service_import  # noqa: E402


def test_the_import_benchmark_prints_its_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert service_import.main(["--contacts", "20", "--audiences", "6", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "import of 1,000 contacts" in out and out.count("x (≤") == 1
