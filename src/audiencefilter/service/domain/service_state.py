"""The service's states, read from the database when the metrics are scraped.

Queues and lags are facts of the database, not of one process: any process's scrape shows the
same background builds, instants due and deliveries due, whichever process (a server, a
`worker` or a `sweep` command) does the work. They are read at scrape time in one short read
transaction, so they are never stale and cost nothing between scrapes. The connection pool is
this process's own, read from the engine without a query (and before the query, so the scrape's
own connection is not counted).

When the database cannot be read, the scrape still answers: `audiencefilter_state_up` is 0 and
the states are left out, so an alert on them does not fire on numbers that were never read.

Labels hold account ids (opaque) only: no list, audience or contact id, no name.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ... import as_utc
from ..db.engine import Database
from ..db.models import Audience, AudienceBuild, List, WebhookDelivery
from ..ground import clock
from ..ground.metrics import NAMESPACE
from ..settings import Settings
from .membership import due
from .webhooks.dispatch import PENDING

logger = logging.getLogger("audiencefilter.service")


def _gauge(name: str, documentation: str, labels: list[str] | None = None) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{NAMESPACE}_{name}", documentation, labels=labels)


def _age(now: datetime, since: datetime | None) -> float:
    """Seconds from `since` to `now`, 0 when `since` is none or still to come."""
    return 0.0 if since is None else max(0.0, (now - as_utc(since)).total_seconds())


class StateCollector(Collector):
    """Build queue per account, scheduler lag, webhook backlog and pool use, at each scrape."""

    def __init__(self, database: Database, settings: Settings) -> None:
        self.database = database
        self.pool_limit = settings.db_pool_size + settings.db_max_overflow

    def describe(self) -> Iterator[Metric]:
        """The metrics' names, without reading anything: the registry asks when the collector
        is added, before the database is migrated or reachable."""
        return iter(())

    def collect(self) -> Iterator[Metric]:
        yield from self._pool()
        up = _gauge("state_up", "1 when the database states below could be read at this scrape.")
        try:
            with self.database.reading() as session:
                states = list(self._states(session, clock.now()))
        except Exception:  # an outage must not fail the scrape that would show it
            logger.exception("the metrics could not read the database")
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from states

    def _pool(self) -> Iterator[Metric]:
        pool = self.database.engine.pool
        in_use = _gauge(
            "db_pool_connections_in_use", "Database connections this process has lent out now."
        )
        in_use.add_metric([], float(getattr(pool, "checkedout", lambda: 0)()))
        idle = _gauge("db_pool_connections_idle", "Open database connections waiting in the pool.")
        idle.add_metric([], float(getattr(pool, "checkedin", lambda: 0)()))
        limit = _gauge(
            "db_pool_connections_limit",
            "The most connections the pool lends at once (DB_POOL_SIZE + DB_MAX_OVERFLOW).",
        )
        limit.add_metric([], float(self.pool_limit))
        yield from (in_use, idle, limit)

    def _states(self, session: Session, now: datetime) -> Iterator[Metric]:
        yield from self._builds(session, now)
        lag = _gauge(
            "membership_scheduler_lag_seconds",
            "How long ago the earliest membership instant due passed without being brought up "
            "to the clock (0: nothing overdue).",
        )
        lag.add_metric([], _age(now, due.earliest(session)))
        yield lag
        yield from self._deliveries(session, now)

    def _builds(self, session: Session, now: datetime) -> Iterator[Metric]:
        statement = (
            select(List.accountId, func.count(), func.min(AudienceBuild.startedAt))
            .select_from(AudienceBuild)
            .join(Audience, Audience.id == AudienceBuild.audienceId)
            .join(List, List.id == Audience.listId)
            .group_by(List.accountId)
        )
        depth = _gauge(
            "audience_builds",
            "Smart audiences of the account being built in the background.",
            ["account"],
        )
        age = _gauge(
            "audience_build_oldest_age_seconds",
            "Age of the account's oldest background build still running.",
            ["account"],
        )
        for account_id, count, oldest in session.execute(statement):
            depth.add_metric([account_id], float(count))
            age.add_metric([account_id], _age(now, oldest))
        yield from (depth, age)

    def _deliveries(self, session: Session, now: datetime) -> Iterator[Metric]:
        count, oldest = session.execute(
            select(func.count(), func.min(WebhookDelivery.nextAttemptAt)).where(
                WebhookDelivery.status == PENDING, WebhookDelivery.nextAttemptAt <= now
            )
        ).one()
        pending = _gauge("webhook_deliveries_due", "Webhook deliveries whose attempt is due now.")
        pending.add_metric([], float(count))
        lag = _gauge(
            "webhook_delivery_lag_seconds",
            "How long the oldest delivery due has waited past its attempt's time.",
        )
        lag.add_metric([], _age(now, oldest))
        yield from (pending, lag)
