"""The million-contacts benchmark runs end to end at a tiny size on SQLite: every step is
measured on both sides, the service's audience and the hand-written one hold the same members
(the harness asserts it), and the report renders. No timing is asserted."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from benchmarks import million  # noqa: E402


def test_every_step_is_measured_on_both_sides(tmp_path: Path) -> None:
    result = million.run("SQLite", f"sqlite:///{tmp_path / 'm.db'}", 300, 1, with_profile=True)
    steps = [m.what for m in result.measures]
    assert steps == [
        "bulk import",
        "audience over the list",
        "contacts page of 100",
        "one contact update",
        "event feed, 1,000 events",
        "audience export (CSV)",
    ]
    assert all(m.ours > 0 and m.hand > 0 for m in result.measures)
    assert "members" in result.measures[1].note
    # The profile's lines are ranked by time, so which callee makes the top lines depends on
    # the machine's load; the profiled call itself holds every callee's time and always does.
    assert "highest ratio:" in result.profile and "create_audience_in_thread" in result.profile
    table = million.render(result)
    assert "| bulk import |" in table and "300 contacts per list" in table


def test_the_update_among_many_audiences_moves_the_same_memberships_on_both_sides(
    tmp_path: Path,
) -> None:
    """With `--audiences`, the update is measured in a list of that many smart audiences; the
    harness asserts both lists end with the same memberships for the contacts it moved."""
    result = million.run("SQLite", f"sqlite:///{tmp_path / 'm.db'}", 300, 2, False, audiences=6)
    update = next(m for m in result.measures if m.what.startswith("one contact update"))
    assert update.what == "one contact update, 6 audiences"
    assert update.ours > 0 and update.hand > 0


def test_the_reads_are_measured_after_both_lists_are_loaded_by_hand(tmp_path: Path) -> None:
    """`--only reads`: every step but the import, the service's list loaded as the hand's."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    result = million.run("SQLite", url, 300, 2, False, only="reads", audiences=3)
    assert [m.what for m in result.measures] == [
        "audience over the list",
        "contacts page of 100",
        "one contact update, 3 audiences",
        "event feed, 1,000 events",
        "audience export (CSV)",
    ]
    assert all(m.ours > 0 and m.hand > 0 for m in result.measures)


def test_the_extra_audiences_thresholds_lie_between_the_two_points_of_an_update() -> None:
    from benchmarks import million_update

    for count in (1, 2, 99):
        found = million_update.thresholds(count)
        assert len(found) == count
        assert all(million_update.LOW < t <= million_update.HIGH for t in found)


def test_the_update_is_shown_by_layer_beside_the_hand_written_cpu(tmp_path: Path) -> None:
    from benchmarks import update_layers

    layers = update_layers.measure(f"sqlite:///{tmp_path / 'l.db'}", "SQLite", 300, 6)
    assert layers.ours_ms > 0 and layers.hand_ms > 0
    assert {"the key", "lock, owner's check", "commit"} <= set(layers.spans.own)
    assert any("UPDATE contacts" in statement for statement in layers.spans.statements)
    rendered = update_layers.render(layers)
    assert "| ours by layer | ms an update |" in rendered and "hand-written" in rendered


def test_the_update_cpu_without_the_driver_path_off_side(tmp_path: Path) -> None:
    from benchmarks import update_layers

    found = update_layers.cpu(f"sqlite:///{tmp_path / 'c.db'}", "SQLite", 300, 4, 1, False)
    assert found.ours > 0 and found.hand > 0 and math.isnan(found.ours_off)
    rendered = update_layers.render_cpu(found)
    assert "| ours |" in rendered and "driver path off" not in rendered
