"""The drills harness without servers: the summary table, the wrk report reader, how missing
tools and broken drills become rows. The drills themselves run with `make drills`."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from audiencefilter import FilterError, parse
from drills import abuse, runner, wrk
from drills.common import FAST, Context, Missing, Row, exception_names, row
from drills.fuzzing import MAX_LEN, mutate

WRK_REPORT = """\
Running 30s test @ http://127.0.0.1:41234/v4/contacts?listId=lst_0123&limit=100
  2 threads and 20 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   152.10ms   40.22ms 512.00ms   71.02%
    Req/Sec    65.80     14.91   101.00     68.50%
  Latency Distribution
     50%  148.00ms
     75%  170.31ms
     90%  199.12ms
     99%    1.02s
  3921 requests in 30.04s, 61.27MB read
  Socket errors: connect 0, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:    130.53
Transfer/sec:      2.04MB
"""

CLEAN_REPORT = """\
Running 5s test @ http://127.0.0.1:41234/health/live
  2 threads and 20 connections
  Latency Distribution
     50%  850.00us
     75%    1.10ms
     90%    1.50ms
     99%    3.20ms
  52000 requests in 5.00s, 7.00MB read
Requests/sec:  10400.00
Transfer/sec:      1.40MB
"""


def test_wrk_report_with_errors_and_non_2xx() -> None:
    result = wrk.parse(WRK_REPORT)
    assert result.requests == 3921
    assert result.seconds == pytest.approx(30.04)
    assert result.errors == 5
    assert result.non_2xx == 7
    assert result.requests_per_second == pytest.approx(130.53)
    assert result.latency_ms == {50: 148.0, 75: 170.31, 90: 199.12, 99: 1020.0}
    assert not result.clean
    assert "p99 1020.0 ms" in result.figures()


def test_wrk_report_without_error_lines_is_clean() -> None:
    result = wrk.parse(CLEAN_REPORT)
    assert (result.errors, result.non_2xx) == (0, 0)
    assert result.latency_ms[50] == pytest.approx(0.85)
    assert result.clean


def test_wrk_report_needs_the_latency_distribution() -> None:
    without = "\n".join(line for line in CLEAN_REPORT.splitlines() if "%" not in line)
    with pytest.raises(wrk.WrkOutputError, match="--latency"):
        wrk.parse(without)
    with pytest.raises(wrk.WrkOutputError):
        wrk.parse("unable to connect to 127.0.0.1:1 Connection refused")


def test_table_has_every_row_and_escapes_pipes() -> None:
    rows = [
        Row("crash-sqlite", "pass", "lost 0", 12.4),
        Row("pg-outage", "fail", "500 x3 | 503 x40", 30.0),
        Row("load-contacts", "skip", "wrk is not installed", 0.1),
    ]
    table = runner.render(rows, "Drills (full)")
    lines = table.splitlines()
    assert lines[0] == "Drills (full)"
    assert "| Drill | Result | Seconds | Figures |" in lines
    assert "| crash-sqlite | pass | 12 | lost 0 |" in lines
    assert "| pg-outage | **FAIL** | 30 | 500 x3 \\| 503 x40 |" in lines
    assert "| load-contacts | skipped | 0 | wrk is not installed |" in lines
    assert lines[-1] == "1 passed, 1 failed, 1 skipped."


def _context(tmp_path: Path) -> Context:
    return Context(sizes=FAST, workdir=tmp_path, fast=True)


def _missing(_ctx: Context) -> Row:
    raise Missing("wrk is not installed (Debian package `wrk`)")


def _broken(_ctx: Context) -> Row:
    raise RuntimeError("the service did not answer\nlong log")


def test_missing_tool_skips_on_a_workstation_and_fails_in_ci(tmp_path: Path) -> None:
    skipped = runner.run_one("load-contacts", _missing, _context(tmp_path), required=False)
    assert skipped.outcome == "skip" and "wrk" in skipped.figures
    failed = runner.run_one("load-contacts", _missing, _context(tmp_path), required=True)
    assert failed.outcome == "fail" and "required in CI" in failed.figures


def test_a_drill_that_raises_is_a_failed_row(tmp_path: Path) -> None:
    result = runner.run_one("mixed", _broken, _context(tmp_path), required=False)
    assert (result.name, result.outcome) == ("mixed", "fail")
    assert result.figures == "RuntimeError: the service did not answer"
    assert runner.run_one("ok", lambda _: row("ok", True, "fine"), _context(tmp_path), False).passed


def test_ci_requires_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    from drills.common import servers_required

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("AUDIENCEFILTER_REQUIRE_SERVERS", raising=False)
    assert not servers_required()
    monkeypatch.setenv("CI", "true")
    assert servers_required()


def test_every_drill_is_listed_and_fast_leaves_out_only_what_make_test_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert runner.main(["--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(runner.DRILLS)
    assert set(runner.NOT_FAST) <= set(runner.DRILLS)


def test_exception_names_from_a_server_log() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 1, in f\n'
        "sqlalchemy.exc.TimeoutError: QueuePool limit of size 10 overflow 20 reached\n"
        "psycopg.OperationalError: connection failed\n"
        "sqlalchemy.exc.TimeoutError: QueuePool limit of size 10 overflow 20 reached\n"
    )
    assert exception_names(log) == ("sqlalchemy.exc.TimeoutError x2, psycopg.OperationalError x1")
    assert exception_names("all quiet") == "none"


def test_mutations_are_bounded_and_reproducible() -> None:
    corpus = [b'{"points": {"gte": 5}}', b'country in ["FR"]']
    rng, twin = random.Random(3), random.Random(3)
    first = [mutate(rng, corpus[0], corpus) for _ in range(50)]
    assert first == [mutate(twin, corpus[0], corpus) for _ in range(50)]
    assert len(set(first)) > 10
    assert all(len(mutate(random.Random(n), b"x" * 4000, corpus)) <= MAX_LEN for n in range(20))


def test_abuse_drill_measures_its_process_group_and_sends_what_it_claims() -> None:
    assert abuse.group_rss_mb(os.getpgrp()) > 1
    shapes = dict(abuse.oversized_filters(fast=False))
    assert set(shapes) == {
        "OR of 1,000",
        "OR of 5,000",
        "in of 10,000",
        "in of 5,000",
        "nesting 40 deep",
    }
    assert len(shapes["OR of 5,000"]["OR"]) == 5_000
    with pytest.raises(FilterError):  # past the library's nesting limit
        parse(shapes["nesting 40 deep"])
    lengths = {len(abuse.large_filter(i)["points"]["in"]) for i in range(50)}
    assert len(lengths) == 50  # every preview a new statement shape


def test_fast_floods_judge_correctness_and_print_latencies() -> None:
    """`--fast` runs in CI: B's slowest write is a figure there, a verdict in the full drill."""
    from drills import floods

    slow = floods.MAX_WRITE_SECONDS + 1
    assert floods.judged("chain", True, failed=False, writes=3, worst=slow)
    assert floods.judged("windows", True, failed=False, writes=0, worst=0.0)
    assert not floods.judged("chain", True, failed=True, writes=3, worst=0.0)
    assert not floods.judged("imports", True, failed=True, writes=3, worst=0.0)
    assert not floods.judged("chain", False, failed=False, writes=3, worst=slow)
    assert not floods.judged("windows", False, failed=False, writes=0, worst=0.0)
    assert not floods.judged("imports", False, failed=False, writes=3, worst=slow)  # in turns now
    assert floods.judged("imports", True, failed=False, writes=3, worst=slow)
    assert floods.judged("chain", False, failed=False, writes=3, worst=0.0)
    # The webhooks flood: every delivery of B arrives in both modes; its bound, full only.
    late = floods.MAX_DELIVERY_SECONDS + 1
    assert not floods.judged("webhooks", True, failed=False, writes=3, worst=0.0, lost=1)
    assert floods.judged("webhooks", True, failed=False, writes=3, worst=0.0, worst_delivery=late)
    assert not floods.judged("webhooks", False, failed=False, writes=3, worst=0.0,
                             worst_delivery=late)  # fmt: skip
    assert not floods.judged("chain", True, failed=False, writes=3, worst=0.0, lost=2)
