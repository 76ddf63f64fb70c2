"""A turn of the webhook loop gives each thread a run of one account's deliveries.

The isolation drill found another account's deliveries two to six times slower once large work
was written in turns and SQLite's writers queued in arrival order (docs/drills.md, *The
isolation drill*). Measured: the account writing contacts (B) made more events per second than
the loop sent, because a turn sent at most B's share of threads (2 deliveries) while the silent
account held its own, and a turn's writes (record, fan-out, claim) each queued in the fair gate
behind the other account's turns and B's own writes. B's backlog grew for as long as the other
account worked. Now each thread a turn gives an account carries a run of up to `RUN`
deliveries, sent one after another while they succeed.

These tests count deliveries per turn and what is left in the database, never durations; waits
only guard against a hang.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from audiencefilter.service import create_app
from audiencefilter.service.db.models import WebhookDelivery
from audiencefilter.service.db.write_meter import WriteMeter
from audiencefilter.service.domain.webhooks import worker as worker_module

from .conftest import ApiClient, make_tenant, sqlite_settings
from .test_webhooks import LOCAL, new_hook, worker_of
from .webhook_receivers import HANG_GUARD, Arrivals, Healthy, Silent, until

SHARE = 2


@pytest.fixture
def receivers() -> Iterator[tuple[Arrivals, Silent, Healthy]]:
    arrivals = Arrivals()
    silent, healthy = Silent(arrivals), Healthy(arrivals)
    yield arrivals, silent, healthy
    silent.close()
    healthy.close()


def _app(tmp_path: Path, concurrency: int) -> ApiClient:
    settings = sqlite_settings(
        tmp_path / "rounds.db",
        webhook_allowed_networks=LOCAL,
        webhook_worker=False,
        membership_sweep_seconds=0,
        webhook_concurrency=concurrency,
        webhook_account_share=SHARE,
        webhook_timeout_seconds=HANG_GUARD * 2,
        webhook_lease_seconds=3600,
    )
    return ApiClient(create_app(settings))


def _account_with(api: ApiClient, url: str, contacts: int) -> None:
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    new_hook(tenant, list_id, url, eventTypes=["contact.created"])
    for index in range(contacts):
        tenant.new_contact(list_id, f"c{index}@{url.split(':')[2].split('/')[0]}.test")


def test_a_contested_accounts_backlog_goes_out_in_one_turn(
    tmp_path: Path, receivers: tuple[Arrivals, Silent, Healthy]
) -> None:
    """A silent account holds what the turns give it; the other account has 20 deliveries
    due. One turn of the loop sends all 20 on the account's two threads (before: 2, its share
    of threads, so the account's deliveries went out no faster than the turns came), in the
    same write transactions as before: the fan-out and the claim."""
    arrivals, silent, healthy = receivers
    api = _app(tmp_path, concurrency=8)
    try:
        _account_with(api, silent.url, 12)
        worker = worker_of(api)
        held = worker.dispatch_free()
        until(lambda: len(arrivals.of("silent")) == held, "the silent requests")
        _account_with(api, healthy.url, 20)
        with WriteMeter(api.app.state.db.engine) as meter:
            started = worker.dispatch_free()
        assert len(meter.records) == 2, meter.records
        assert started == SHARE
        until(lambda: worker.turns.in_flight().keys() == {_silent(worker)}, "the runs' end")
        assert len(arrivals.of("healthy")) == 20
        assert len(arrivals.of("silent")) == held
    finally:
        silent.close()
        api.close()


def _silent(worker: worker_module.WebhookWorker) -> str:
    (account,) = [a for a, n in worker.turns.in_flight().items() if n == 6]
    return account


def test_a_run_stops_at_its_first_failure_and_gives_back_the_rest(tmp_path: Path) -> None:
    """A receiver that refuses the connection: the run of five stops after its first attempt;
    the four never attempted are due again at once, their attempts unchanged, and the next turn
    claims them (a silent or failing receiver holds a thread for one attempt, as before)."""
    api = _app(tmp_path, concurrency=1)
    try:
        _account_with(api, "http://127.0.0.1:9/refused", 5)
        worker = worker_of(api)
        assert worker.dispatch_free() == 1
        until(lambda: worker.turns.free() == 1, "the run's end")
        worker.record_ended()
        with api.app.state.db.reading() as session:
            rows = list(session.scalars(select(WebhookDelivery)))
        assert sorted(row.attempts for row in rows) == [0, 0, 0, 0, 1]
        assert all(row.leaseToken is None for row in rows)
        assert worker.dispatch_free() == 1  # the four, as one run
    finally:
        api.close()


def test_an_attempt_that_raises_keeps_its_lease_and_the_run_gives_back_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug inside an attempt (not a network failure, which is an outcome) ends the run: the
    delivery it was sending keeps its lease, to be tried again when the lease runs out (it may
    have been sent), and the others of the run are due again at once."""
    api = _app(tmp_path, concurrency=1)
    try:
        _account_with(api, "http://127.0.0.1:9/raises", 3)
        worker = worker_of(api)

        def broken(*_: object) -> None:
            raise RuntimeError("a bug in the attempt")

        monkeypatch.setattr(worker, "_send", broken)
        assert worker.dispatch_free() == 1
        until(lambda: worker.turns.free() == 1, "the run's end")
        worker.record_ended()
        with api.app.state.db.reading() as session:
            rows = list(session.scalars(select(WebhookDelivery)))
        assert sorted(row.leaseToken is not None for row in rows) == [False, False, True]
        assert all(row.attempts == 0 for row in rows)
    finally:
        api.close()
