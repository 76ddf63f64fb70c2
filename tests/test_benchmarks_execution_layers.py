"""The execution-layers benchmark runs end to end at a tiny size on the service's SQLite
engine: every kind of pass is timed beside the driver's, the engine's events are put back
after the measure without them, and the table renders. Timings are never asserted."""

from __future__ import annotations

from benchmarks import execution_layers


def test_each_pass_is_timed_beside_the_drivers_and_the_events_come_back() -> None:
    passes = execution_layers.measure(number=20, rounds=1)
    ways = [p.way for p in passes]
    assert ways == [
        "Connection.execute",
        "Session.execute",
        "Database.transaction",
        "engine.begin",
        "Database.read_row",
        "Database.transaction, events off",
        "Database.read_row, events off",
    ]
    assert all(p.micros > 0 and p.driver > 0 for p in passes)
    assert "| a write transaction | engine.begin |" in execution_layers.markdown(passes)


def test_the_engine_keeps_its_events_after_the_measure() -> None:
    with execution_layers.service_database() as database:
        execution_layers.transaction_passes(database, 5, 1)
        assert database.engine._has_events  # the service's `begin` hook still runs
        with database.transaction() as session:  # and a write still begins immediately
            session.execute(execution_layers.TRIVIAL)
            raw = session.connection().connection.dbapi_connection
            assert raw is not None and raw.in_transaction
