"""`db/bulk.insert_rows` stores what a Core insert of the same rows stores, on SQLite and
PostgreSQL: date-times, JSON payloads, nulls and text, through the columns' own conversions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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


def _inserts(database: Database, multi_row: bool, monkeypatch: pytest.MonkeyPatch) -> int:
    """The rows inserted as `_check` does, with SQLite's multi-row insert on or off; how many
    times SQLite ran an insert into `events` (`executemany` runs it once per row)."""
    monkeypatch.setattr(bulk, "MULTI_ROW", multi_row)
    ran: list[str] = []
    with database.transaction() as session:
        raw: Any = session.connection().connection.dbapi_connection
        raw.set_trace_callback(ran.append)
        try:
            account = Account(name=new_id("bulk"))
            session.add(account)
            session.flush()
            lst = List(accountId=account.id, url=new_id("u"), name="L")
            session.add(lst)
            session.flush()
            bulk.insert_rows(session, EVENTS, _rows(lst.id, 1))
        finally:
            raw.set_trace_callback(None)
    return sum(1 for sql in ran if sql.startswith("INSERT INTO events"))


def test_sqlite_takes_many_rows_a_statement_and_stores_what_one_a_row_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The accelerator (`bulk.MULTI_ROW`): 2,500 events in 3 statements instead of 2,500, and
    the lists hold the same rows as with the switch off."""
    engine = make_engine(sqlite_settings(tmp_path / "multi.db"))
    try:
        upgrade(engine)
        with engine.begin() as connection:  # SQLite's trace shows the insert again for each
            connection.exec_driver_sql("DROP TRIGGER event_heads_raised")  # row a trigger sees
        database = Database(engine)
        assert _inserts(database, True, monkeypatch) == 3
        assert _inserts(database, False, monkeypatch) == 2500
        with database.reading() as session:
            lists = session.scalars(select(List.id).order_by(List.createdAt, List.id)).all()
        together, alone = (_stored(database, list_id) for list_id in lists[-2:])
        assert len(together) == 2500
        assert together == alone
    finally:
        engine.dispose()


def _plain_row(maker: bulk.RowMaker, values: dict[str, Any]) -> dict[str, Any]:
    """The rule `RowMaker.row` keeps, column by column: the value given, else the column's
    default (made anew when it is a function), else None."""
    given = {maker.names[key]: value for key, value in values.items()}
    row: dict[str, Any] = {}
    for name, default in maker.defaults:
        if name in given:
            row[name] = given[name]
        elif default is None:
            row[name] = None
        else:
            row[name] = default.arg if default.is_scalar else default.arg(None)
    return row


@given(st.data())
@settings(max_examples=60, derandomize=True)
def test_a_row_maker_row_is_the_plain_rule_column_by_column(data: st.DataObject) -> None:
    from audiencefilter.service.db.models import Action, Contact

    maker = bulk.RowMaker(data.draw(st.sampled_from([Contact, Action, Event])))
    names = sorted(maker.names)
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True))
    values = {name: data.draw(st.sampled_from([None, 0, "x", True])) for name in chosen}
    made = {name for name, default in maker.defaults if default is not None}
    made -= {name for name, default in maker.defaults if default is not None and default.is_scalar}
    row, plain = maker.row(values), _plain_row(maker, values)
    assert list(row) == list(plain) == [column.name for column in maker.table.c]
    for name in row:
        if name in made and name not in {maker.names[key] for key in values}:
            assert row[name] is not None and type(row[name]) is type(plain[name])
        else:
            assert row[name] == plain[name] and type(row[name]) is type(plain[name])
