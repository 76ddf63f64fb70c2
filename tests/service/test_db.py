"""SQLite tuning on every connection, and the health probes."""

from __future__ import annotations

from collections.abc import Callable

from anyio import to_thread
from sqlalchemy import text

from .conftest import ApiClient


def test_sqlite_connections_are_tuned(client: ApiClient) -> None:
    engine = client.app.state.db.engine
    with engine.connect() as connection:
        pragma = {
            name: connection.execute(text(f"PRAGMA {name}")).scalar()
            for name in (
                "journal_mode",
                "synchronous",
                "foreign_keys",
                "busy_timeout",
                "wal_autocheckpoint",
            )
        }
        # SQLite's own lower() folds ASCII only; the service installs Python's
        folded = connection.execute(text("SELECT lower('ÀÉÎ İ')")).scalar()
    assert pragma == {
        "journal_mode": "wal",
        "synchronous": 2,  # FULL
        "foreign_keys": 1,
        "busy_timeout": 15000,
        "wal_autocheckpoint": 10_000,  # a leaf written by several turns copied back once
    }
    assert folded == "àéî i̇"


def test_health_probes_need_no_key(client: ApiClient) -> None:
    live = client.get("/health/live")
    ready = client.get("/health/ready")
    assert (live.status_code, live.json()) == (200, {"data": {"status": "ok"}})
    assert (ready.status_code, ready.json()) == (200, {"data": {"status": "ok"}})


def test_request_threads_bound_the_handler_thread_pool(
    app_factory: Callable[..., ApiClient],
) -> None:
    async def tokens() -> float:
        return to_thread.current_default_thread_limiter().total_tokens

    assert app_factory(request_threads=2).run(tokens) == 2
    assert app_factory().run(tokens) == 40  # AnyIO's default, untouched
