"""`worker`: deliver webhooks in a process of its own, until SIGINT or SIGTERM.

Any number of these may run beside the service processes (whose own worker threads may be
turned off with `AUDIENCEFILTER_WEBHOOK_WORKER=false`): claims are made safe in the database.
On a signal the worker finishes the attempts under way and exits; one killed outright leaves
leases that expire, and its deliveries are sent again by another worker.
"""

from __future__ import annotations

import logging
import signal
import sys
from types import FrameType

from ..db.engine import Database
from ..domain.webhooks.worker import WebhookWorker
from ..settings import Settings


def run_worker(settings: Settings, database: Database) -> None:
    worker = WebhookWorker(database, settings)

    def finish(_signum: int, _frame: FrameType | None) -> None:
        worker.stop_soon()

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    print("webhook worker started", file=sys.stderr, flush=True)
    try:
        worker.run_forever()
    finally:
        worker.stop()
        database.dispose()
