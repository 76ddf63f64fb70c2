"""A bulk load beside the service keeps the list's counters in a statement's worth of work.

PostgreSQL keeps every version of a row a transaction updates until it ends, and an update of
that row walks the versions before it. The counters (`list_sizes`, `list_points`) were updated
once a contact added or removed, so a load of n contacts in one transaction cost n²/2 version
walks at its commit (20,000 contacts: 7 s; 200,000: never finished in 13 minutes). Migration
0023 counts a statement's contacts together, once a list (and points value) a statement, so the
counter rows are updated as many times as there are statements.

Each test loads contacts in one transaction, a few statements of many rows, and reads from
PostgreSQL's own statistics of that transaction how many times the counter rows were updated,
then checks the counters against a count of the contacts after the commit, and that nothing of
the load is left pending. Before migration 0023: 2,000 updates of `list_sizes` for 2,000
contacts; after: one a statement.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import Connection, Engine, create_engine, text

pytestmark = pytest.mark.postgres

_ACCOUNT = """INSERT INTO accounts (id, name, plan, created_at)
 VALUES ('acc_load', 'a', 'free', now())"""
_LIST = """INSERT INTO lists (id, account_id, url, name, mode, branding, referrals, start_from,
 columns, created_at, updated_at, allowed_origins, public_fields, public_fields_policy,
 custom_fields, audiences_stamp, time_zone)
 VALUES (:id, 'acc_load', :url, :id, 'waitlist', false, false, 0, '[]', now(),
 now(), '[]', '[]', 'listed', '[]', 's', 'UTC')"""
_CONTACTS = """INSERT INTO contacts (id, list_id, email, email_key, points, referrals,
 is_verified, unsubscribed, is_gdpr, data, referral_code, created_at)
 SELECT :list || '-' || g, :list, 'c' || g || '@example.com', 'c' || g || '@example.com',
 g % :values, 0, false, false, false, '{}', :list || '-r' || g, now()
 FROM generate_series(CAST(:first AS integer), CAST(:last AS integer)) AS g"""
_UPDATED = """SELECT relname, n_tup_upd FROM pg_stat_xact_user_tables
 WHERE relname IN ('list_sizes', 'list_points')"""


@pytest.fixture
def engine(pg_migrated_database: Callable[[], str]) -> Iterator[Engine]:
    url = pg_migrated_database()
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text(_ACCOUNT))
    try:
        yield engine
    finally:
        engine.dispose()


def _list(list_id: str) -> dict[str, str]:
    return {"id": list_id, "url": f"https://example.com/{list_id}"}


def _load(connection: Connection, list_id: str, first: int, last: int, values: int) -> None:
    parameters = {"list": list_id, "first": first, "last": last, "values": values}
    connection.execute(text(_CONTACTS), parameters)


def _updated(connection: Connection) -> dict[str, int]:
    """How many rows of each counter the server counts updated and not yet reported: this
    transaction's, with the deferred work run, and a former one's for up to a second
    (PostgreSQL reports a backend's counts to the statistics when idle), so `_updates` takes a
    difference."""
    connection.execute(text("SET CONSTRAINTS ALL IMMEDIATE"))
    return {name: int(count) for name, count in connection.execute(text(_UPDATED))}


@contextmanager
def _updates(connection: Connection) -> Iterator[dict[str, int]]:
    """How many rows of each counter the statements inside update."""
    before = _updated(connection)
    counts: dict[str, int] = {}
    yield counts
    after = _updated(connection)
    counts.update({name: after[name] - before.get(name, 0) for name in after})


def _kept(engine: Engine, list_id: str) -> tuple[int, dict[int, int]]:
    with engine.connect() as connection:
        size = connection.execute(
            text("SELECT contacts FROM list_sizes WHERE list_id = :id"), {"id": list_id}
        ).scalar_one()
        points = dict(
            connection.execute(
                text("SELECT points, contacts FROM list_points WHERE list_id = :id"),
                {"id": list_id},
            ).all()
        )
    return int(size), points


def _counted(engine: Engine, list_id: str) -> tuple[int, dict[int, int]]:
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT points, count(*) FROM contacts WHERE list_id = :id GROUP BY points"),
            {"id": list_id},
        ).all()
    points = {int(value): int(count) for value, count in rows}
    return sum(points.values()), points


def _pending(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(
            connection.execute(
                text(
                    "SELECT (SELECT count(*) FROM list_size_changes)"
                    " + (SELECT count(*) FROM list_points_changes)"
                )
            ).scalar_one()
        )


def test_a_load_updates_the_counters_once_a_statement(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(text(_LIST), _list("lst_load"))
    with engine.begin() as connection, _updates(connection) as updated:
        _load(connection, "lst_load", 0, 999, values=3)
        _load(connection, "lst_load", 1000, 1999, values=3)
    # Two statements: the size twice; each of 3 points values twice (the first statement
    # inserts the histogram's rows, the second adds to them).
    assert updated == {"list_sizes": 2, "list_points": 3}
    assert (
        _kept(engine, "lst_load")
        == _counted(engine, "lst_load")
        == (2000, {0: 667, 1: 667, 2: 666})
    )
    assert _pending(engine) == 0


def test_a_deletion_updates_the_counters_once_a_statement(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(text(_LIST), _list("lst_gone"))
        _load(connection, "lst_gone", 0, 2999, values=5)
    with engine.begin() as connection, _updates(connection) as updated:
        connection.execute(text("DELETE FROM contacts WHERE list_id = 'lst_gone' AND points < 2"))
        connection.execute(text("DELETE FROM contacts WHERE list_id = 'lst_gone' AND points = 4"))
    # The size twice; points 0, 1 and 4 each once, down to 0 and then deleted.
    assert updated == {"list_sizes": 2, "list_points": 3}
    assert _kept(engine, "lst_gone") == _counted(engine, "lst_gone") == (1200, {2: 600, 3: 600})
    assert _pending(engine) == 0


def test_a_statement_over_two_lists_counts_each(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(text(_LIST), _list("lst_a"))
        connection.execute(text(_LIST), _list("lst_b"))
        _load(connection, "lst_a", 0, 99, values=2)
        _load(connection, "lst_b", 0, 49, values=2)
    with engine.begin() as connection:
        connection.execute(
            text(
                "DELETE FROM contacts WHERE (list_id = 'lst_a' AND points = 0) OR list_id = 'lst_b'"
            )
        )
        connection.execute(text("DELETE FROM lists WHERE id = 'lst_b'"))
    assert _kept(engine, "lst_a") == _counted(engine, "lst_a") == (50, {1: 50})
    with engine.connect() as connection:
        rest = connection.execute(
            text("SELECT count(*) FROM list_points WHERE list_id = 'lst_b'")
        ).scalar_one()
    assert rest == 0
    assert _pending(engine) == 0


_BAND_WRITES = """SELECT n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_xact_user_tables
 WHERE relname = 'list_point_bands'"""


def _band_writes(connection: Connection) -> int:
    connection.execute(text("SET CONSTRAINTS ALL IMMEDIATE"))
    return int(connection.execute(text(_BAND_WRITES)).scalar_one())


def _bands(engine: Engine, list_id: str) -> dict[int, int]:
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT band, contacts FROM list_point_bands WHERE list_id = :id"),
            {"id": list_id},
        ).all()
    return {int(band): int(count) for band, count in rows}


def test_a_statements_points_are_folded_a_band_at_a_time(engine: Engine) -> None:
    """Migration 0025: a statement's histogram changes are added together, each band of the
    bands' table written once, where they were added a points value at a time and each value
    wrote its band (1,000 writes of 16 bands here before, at most 32 after)."""
    with engine.begin() as connection:
        connection.execute(text(_LIST), _list("lst_bands"))
    with engine.begin() as connection:
        before = _band_writes(connection)
        _load(connection, "lst_bands", 0, 2999, values=1000)
        loaded = _band_writes(connection) - before
        connection.execute(
            text("DELETE FROM contacts WHERE list_id = 'lst_bands' AND points >= 900")
        )
        removed = _band_writes(connection) - before - loaded
    size, points = _counted(engine, "lst_bands")
    assert _kept(engine, "lst_bands") == (size, points) == (2700, dict.fromkeys(range(900), 3))
    assert _bands(engine, "lst_bands") == {band: 192 for band in range(14)} | {14: 12}
    assert loaded <= 32, loaded  # 16 bands of 64 values, 1,000 values: 16 inserts
    assert removed <= 8, removed  # values 900-999: 2 bands updated, 1 emptied and deleted
    assert _pending(engine) == 0
