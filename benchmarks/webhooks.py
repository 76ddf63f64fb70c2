"""Webhook delivery throughput to a receiver on 127.0.0.1, with one and two worker processes.

    python -m benchmarks.webhooks [--events N] [--contacts N] [--no-postgres]

For each database (SQLite file, PostgreSQL): a fresh database, one list and one webhook
endpoint (written straight through the service's models), N `contact.updated` events appended
to the outbox over `--contacts` contacts, then `python -m audiencefilter.service worker`
processes (1, then 2, each on a fresh endpoint over the same events) deliver them to a threaded
`http.server` receiver in this process. The figure is events delivered per second, from the
workers' start to the last event received (process start-up included, about half a second).
Ordering per contact is kept, so with few contacts the rate is bound by round trips per
contact. The receiver shares the machine's cores with the workers and the database.
This is a measurement script, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from audiencefilter.service.db import migrate
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import Account, List, Webhook, new_id
from audiencefilter.service.domain import events
from audiencefilter.service.domain.webhooks import signing
from audiencefilter.service.settings import Settings
from drills.receiver import Receiver
from drills.service import workers

URL_VARIABLE = "AUDIENCEFILTER_BENCH_PG_URL"
TIMEOUT = 600.0


def prepare(database_url: str, count: int, contacts: int) -> str:
    """A list with `count` events in its outbox; its id."""
    database = Database.from_settings(Settings(database_url=database_url))
    migrate.upgrade(database.engine)
    try:
        with database.transaction() as session:
            account = Account(name=new_id("bench"))
            session.add(account)
            session.flush()
            lst = List(accountId=account.id, name="bench", url=new_id("bench"))
            session.add(lst)
            session.flush()
            list_id = lst.id
        for start in range(0, count, 1000):
            batch = [
                events.NewEvent(events.CONTACT_UPDATED, f"con_bench{index % contacts}")
                for index in range(start, min(count, start + 1000))
            ]
            with database.transaction() as session:
                events.append(session, list_id, batch)
    finally:
        database.dispose()
    return list_id


def add_endpoint(database_url: str, list_id: str, url: str) -> None:
    """An endpoint that reads the list's outbox from its start."""
    database = Database.from_settings(Settings(database_url=database_url))
    try:
        with database.transaction() as session:
            session.add(
                Webhook(
                    listId=list_id,
                    url=url,
                    eventTypes=[events.CONTACT_UPDATED],
                    secret=signing.new_secret(),
                    status="enabled",
                    failureCount=0,
                    position=0,
                )
            )
    finally:
        database.dispose()


# The settings of the measured workers: the receiver is local, and they poll often.
WORKER_SETTINGS = {"WEBHOOK_ALLOWED_NETWORKS": '["127.0.0.1/32"]', "WEBHOOK_POLL_SECONDS": "0.05"}


def measure(database_url: str, list_id: str, count: int, worker_count: int) -> tuple[float, int]:
    """(events per second, duplicates) for `worker_count` workers on a fresh endpoint."""
    receiver = Receiver()
    try:
        add_endpoint(database_url, list_id, receiver.url)
        started = time.monotonic()
        with workers(database_url, worker_count, WORKER_SETTINGS):
            receiver.wait_for(lambda got: len(got) >= count, TIMEOUT)
            seconds = time.monotonic() - started
            time.sleep(0.5)
        got = receiver.snapshot()
    finally:
        receiver.close()
    ids = [item.id for item in got]
    return count / seconds, len(ids) - len(set(ids))


def run(name: str, database_url: str, count: int, contacts: int) -> None:
    list_id = prepare(database_url, count, contacts)
    for worker_count in (1, 2):
        per_second, duplicates = measure(database_url, list_id, count, worker_count)
        print(
            f"| {name} | {worker_count} | {count:,} | {contacts:,} | {per_second:,.0f} | "
            f"{duplicates} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--contacts", type=int, default=1000)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    print("| Database | Workers | Events | Contacts | Events/s | Duplicates |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        run("SQLite", f"sqlite:///{Path(folder) / 'hooks.db'}", args.events, args.contacts)
    if args.no_postgres:
        return
    from tests.servers import ServerMissing, create_pg_database, start_postgres

    admin = os.environ.get(URL_VARIABLE)
    server = None
    if admin is None:
        try:
            server = start_postgres()
        except ServerMissing as exc:
            print(f"PostgreSQL skipped: {exc}")
            return
        admin = server.url
    try:
        run("PostgreSQL", create_pg_database(admin), args.events, args.contacts)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
