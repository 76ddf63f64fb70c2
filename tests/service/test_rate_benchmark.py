"""The PostgreSQL rate benchmark runs end to end at a tiny size: its correctness checks hold (no
membership event missing from the feed or unexplained, of single writes and of batched imports
alike, every build equal to `Filter.matches` over the list's contacts, each change answered for
every row), with four writers at once in each part. Timings are never asserted."""

from __future__ import annotations

import pytest

from benchmarks import service_rate

TINY = ["--contacts", "60", "--small", "30", "--seconds", "2", "--clients", "4"]
TINY += ["--workers", "1", "--audiences", "6", "--touched", "3,20", "--repeats", "1"]
TINY += ["--batch-seconds", "2", "--batch-clients", "4", "--batch-rows", "8"]


@pytest.mark.postgres
def test_the_rate_benchmark_checks_its_events_and_builds() -> None:
    args = service_rate.parse(TINY)
    result = service_rate.run(args)
    if result is None:
        pytest.skip("no PostgreSQL server")
    sustained = result.sustained
    assert sustained is not None and sustained.writes > 0 and sustained.errors == 0
    assert sustained.lags.expected > 0
    assert sustained.lags.missing == 0 and sustained.lags.unexpected == 0
    batched = result.batched
    assert batched is not None and batched.updates > 0 and batched.errors == 0
    assert batched.lags.expected > 0
    assert batched.lags.missing == 0 and batched.lags.unexpected == 0
    assert [figures.contacts for figures in result.lists] == [60, 30]
    assert all(figures.build.exact and figures.build.members > 0 for figures in result.lists)
    assert [sorted(figures.changes) for figures in result.lists] == [[3, 20], [3, 20]]
    rendered = service_rate.render(result, args)
    assert "event lag after ack" in rendered and "event lag after answer" in rendered
