"""The PATCH-by-layer benchmark runs end to end at a tiny size on PostgreSQL: both sides write
what the filters decide (no contact's stored memberships differ from its filters'), every layer
and statement is counted, and the table renders. Timings are never asserted."""

from __future__ import annotations

import os

import pytest

from benchmarks import pgserver, rate_layers
from benchmarks.rate_spans import SQL

TINY = ["--contacts", "200", "--audiences", "8", "--updates", "6", "--rounds", "1"]


@pytest.mark.postgres
def test_the_layers_of_a_patch_are_measured_beside_the_hand_written_endpoint() -> None:
    figures = rate_layers.run(rate_layers.parse(TINY))
    if figures is None:
        pytest.skip("no PostgreSQL server")
    assert figures.wrong == 0
    assert figures.updates == 6 and figures.spanned == 6
    assert figures.thread["ours"] > 0 and figures.thread["hand"] > 0
    own = figures.spans.own
    assert {"the key", "rate limiter", "routing, FastAPI's handler", SQL} <= set(own)
    assert any("UPDATE contacts" in statement for statement in figures.spans.statements)
    rendered = rate_layers.render(figures, (os.getloadavg(), os.getloadavg()))
    assert "| this thread (calls in place) |" in rendered and "ours by layer" in rendered
    # counted, not timed: the service's PATCH does more calls than the hand-written endpoint
    assert figures.calls["ours"] > figures.calls["hand"] > 100
    assert "| Python calls an update, this thread (cProfile) |" in rendered


@pytest.mark.postgres
def test_the_statements_of_a_patch_are_counted_on_the_server() -> None:
    """`--statements`: each side's statements from `pg_stat_statements` of a throw-away server
    started with it; ours runs the contacts' `UPDATE`, and its counters' triggers nested."""
    if os.environ.get(pgserver.URL_VARIABLE):
        pytest.skip("a server of one's own may lack pg_stat_statements")
    figures = rate_layers.run(rate_layers.parse([*TINY, "--statements"]))
    if figures is None:
        pytest.skip("no PostgreSQL server")
    ours, hand = figures.statements["ours"], figures.statements["hand"]
    assert any(c.toplevel and c.query.startswith("UPDATE contacts") for c in ours)
    assert any(not c.toplevel and "list_points" in c.query for c in ours)
    assert all(c.calls > 0 and c.execute_ms >= 0 and c.plan_ms >= 0 for c in ours + hand)
    assert sum(c.calls for c in ours if c.toplevel) > sum(c.calls for c in hand if c.toplevel)
    rendered = rate_layers.render(figures, (os.getloadavg(), os.getloadavg()))
    assert "PostgreSQL, ours:" in rendered and "PostgreSQL, hand:" in rendered
