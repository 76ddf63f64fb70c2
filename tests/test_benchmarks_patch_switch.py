"""The switch benchmark runs end to end at a tiny size on PostgreSQL: every kind of figure is
taken each way in every round, the table renders, and the switch is left as shipped. Timings
are never asserted."""

from __future__ import annotations

import pytest

from audiencefilter.service.domain.membership import store
from benchmarks import patch_switch

TINY = ["--contacts", "200", "--audiences", "8", "--updates", "4", "--rounds", "2"]


@pytest.mark.postgres
def test_a_patch_is_measured_with_the_switch_on_and_off() -> None:
    shipped = store.CARRY_IN_EVENTS
    figures = patch_switch.run(patch_switch.parse(TINY))
    if figures is None:
        pytest.skip("no PostgreSQL server")
    assert store.CARRY_IN_EVENTS is shipped
    assert figures.updates == 8
    for kind in patch_switch.KINDS:
        for on in (True, False):
            assert len(figures.rounds[(kind, on)]) == 2
            assert figures.median(kind, on) > 0
    rendered = patch_switch.render(figures, patch_switch.DEFAULT_SWITCH, (0.0, 0.0, 0.0))
    assert "| thread, in place |" in rendered and "off - on" in rendered
    assert "| event loop's thread, with the hops |" in rendered


def test_a_switch_must_be_a_modules_boolean() -> None:
    with pytest.raises(SystemExit, match="not a module's boolean"):
        patch_switch._switch("audiencefilter.service.domain.membership.store:NOT_THERE")
