"""`db/bulk.insert_rows` stores what a Core insert of the same rows stores, on SQLite and
PostgreSQL: date-times, JSON payloads, nulls and text, through the columns' own conversions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from sqlalchemy import Table, insert, select

from audiencefilter.service.db import bulk
from audiencefilter.service.db.engine import Database, make_engine
from audiencefilter.service.db.migrate import upgrade
from audiencefilter.service.db.models import Account, Event, List, new_id

from .conftest import sqlite_settings, url_settings

EVENTS = cast(Table, Event.__table__)


def _rows(list_id: str, first: int) -> list[dict[str, Any]]:
    at = datetime(2026, 11, 23, 8, 30, 15, 123456, tzinfo=UTC)
    return [
        {
            "id": new_id("evt"),
            "list_id": list_id,
            "position": first + n,
            "type": "audience.entered",
            "contact_id": None if n % 3 == 0 else f"con_{n}",
            "audience_id": f"aud_{n % 2}",
            "cause": None if n % 2 else "contact.updated",
            "occurred_at": at + timedelta(seconds=n),
            "payload": {"audience": {"name": "Ünïcode ✓", "n": n}, "none": None},
        }
        for n in range(2500)  # more than one chunk
    ]


def _stored(database: Database, list_id: str) -> list[tuple[Any, ...]]:
    with database.reading() as session:
        statement = (
            select(Event.type, Event.contactId, Event.audienceId, Event.cause, Event.occurredAt)
            .add_columns(Event.payload)
            .where(Event.listId == list_id)
            .order_by(Event.position)
        )
        return [tuple(row) for row in session.execute(statement)]


def _check(database: Database) -> None:
    with database.transaction() as session:
        account = Account(name=new_id("bulk"))
        session.add(account)
        session.flush()
        lists = [List(accountId=account.id, url=new_id("u"), name="L") for _ in range(2)]
        session.add_all(lists)
        session.flush()
        ids = [lst.id for lst in lists]
        bulk.insert_rows(session, EVENTS, _rows(ids[0], 1))
        session.connection().execute(insert(EVENTS), _rows(ids[1], 1))
    ours, core = _stored(database, ids[0]), _stored(database, ids[1])
    assert len(ours) == 2500
    assert ours == core


def test_bulk_rows_are_stored_as_a_core_insert_stores_them_on_sqlite(tmp_path: Path) -> None:
    engine = make_engine(sqlite_settings(tmp_path / "bulk.db"))
    try:
        upgrade(engine)
        _check(Database(engine))
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_bulk_rows_are_stored_as_a_core_insert_stores_them_on_postgres(
    pg_database: Callable[[], str],
) -> None:
    engine = make_engine(url_settings(pg_database()))
    try:
        upgrade(engine)
        _check(Database(engine))
    finally:
        engine.dispose()
