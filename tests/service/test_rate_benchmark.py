"""The PostgreSQL rate benchmark runs end to end at a tiny size: its correctness checks hold (no
membership event missing from the feed or unexplained, of single writes and of batched imports
alike, every build equal to `Filter.matches` over the list's contacts, each change answered for
every row), with four writers at once in each part. Timings are never asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import service_rate
from benchmarks.rate_setup import logged_errors

TINY = ["--contacts", "60", "--small", "30", "--seconds", "2", "--clients", "4"]
TINY += ["--workers", "1", "--audiences", "6", "--touched", "3,20", "--repeats", "1"]
TINY += ["--batch-seconds", "2", "--batch-clients", "4", "--batch-rows", "8"]


@pytest.mark.postgres
def test_the_rate_benchmark_checks_its_events_and_builds() -> None:
    args = service_rate.parse(TINY)
    result = service_rate.run(args)
    if result is None:
        pytest.skip("no PostgreSQL server")
    assert result.errors_logged == []  # what a request failed for: a 503's cause is logged
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


def test_the_services_errors_are_read_from_its_log(tmp_path: Path) -> None:
    log = tmp_path / "service.log"
    assert logged_errors(log) == []  # no log yet
    log.write_text(
        "2026-11-26T17:30:08.334Z INFO uvicorn.error: Application startup complete.\n"
        "2026-11-26T17:30:12.694Z ERROR audiencefilter.service: database unavailable on POST"
        " /v4/contacts/import: deadlock detected request_id=a59f\n",
        encoding="utf-8",
    )
    assert [line.split(": ", 1)[1] for line in logged_errors(log)] == [
        "database unavailable on POST /v4/contacts/import: deadlock detected request_id=a59f"
    ]
