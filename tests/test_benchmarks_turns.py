"""The turn statements benchmark runs end to end at a tiny size (its shape, never its timings)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from benchmarks import turn_statements  # noqa: E402


def test_the_turn_statements_benchmark_prints_its_statements(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert turn_statements.main(["--contacts", "30", "--audiences", "4", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "60 rows updated" in out and "every statement:" in out
    assert "UPDATE contacts" in out and "INSERT INTO events" in out


@pytest.mark.postgres
def test_on_postgresql_it_prints_the_server_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--contacts", "30", "--audiences", "4", "--runs", "1", "--postgres"]
    assert turn_statements.main(argv) == 0
    out = capsys.readouterr().out
    assert "PostgreSQL's CPU a row" in out and 'UPDATE "contacts" AS t' in out
