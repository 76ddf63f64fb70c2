"""Issue 36: the turns of a changed filter cost a few statements each, whatever their size.

Patching the root of a chain of 100 audiences over 2,000 contacts took 145 s in turns where one
transaction took 19.6 s. Each turn deleted the memberships of its contacts one statement per
contact (each keyed and compiled anew), and read every event since the snapshot, its own
turns' included. Now a turn deletes its pairs in one statement and reads only the events
appended since the turn before (`snapshot.Written`). This test counts the
statements of each turn (`db/write_meter.py`); nothing is timed. SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from audiencefilter.service.db.write_meter import WriteMeter
from audiencefilter.service.domain.use_cases import membership_turns

from .conftest import ApiClient, make_tenant, settings_on
from .test_write_turns import _chain, _members

STATEMENTS_PER_TURN = 9  # the pairs kept on write: one upsert a turn (membership/overlaps.py)
"""Writing statements a turn of the chain may run: the root's rows and its events, the
readers' rows and their events, the outbox head twice; none per contact (16 before)."""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "chain.db", membership_sweep_seconds=0))


def test_a_turn_of_a_chain_runs_a_few_statements_whatever_its_contacts(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chain of 12 over 40 contacts, 10 contacts a turn (120 pairs): every turn's writing
    statements stay a handful, not one per contact (10 deletions a turn before), and the
    members are exact."""
    monkeypatch.setattr(membership_turns, "PAIRS_PER_TURN", 120)
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    for index in range(40):
        tenant.new_contact(list_id, f"c{index}@chain.test", points=index)
    chain = _chain(tenant, list_id, 11, "points >= 0")
    with WriteMeter(api.app.state.db.engine) as meter:
        tenant.ok("PATCH", f"/v4/audiences/{chain[0]}", json={"filtersText": "points < 0"})
    turns = [record for record in meter.records if record.committed and record.rows >= 120]
    assert len(turns) == 4, meter.records
    assert max(record.statements for record in turns) <= STATEMENTS_PER_TURN, turns
    for audience_id in chain:
        assert _members(tenant, audience_id) == set()
