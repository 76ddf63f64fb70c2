"""SQLite helpers: a `lower()` that folds case like Python's `str.lower()`, and the local
month-day of a date-time in a time zone, for anniversaries (`audiencefilter_month_day`).

SQLite's built-in `lower()` folds ASCII only, so without this helper `mode: "insensitive"`
and `contains` on SQLite ignore case for A-Z alone: `ÉLODIE` does not match `élodie`. The
helper registers Python's `str.lower` under the same name (an application function replaces
the built-in one), marked deterministic so that SQLite may use it in expression indexes.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from ...language.anniversary import local_month_day
from .dialects.sqlite import MONTH_DAY_FUNCTION


def unicode_lower(value: Any) -> Any:
    """Python's `str.lower` for text; NULL, numbers and blobs pass through unchanged."""
    return value.lower() if isinstance(value, str) else value


def register_unicode_lower(target: sqlite3.Connection | Engine | Any) -> None:
    """Make `lower()` fold case exactly like the in-memory back-end on SQLite.

    Args:
        target: A `sqlite3` connection (registered at once), or a SQLAlchemy engine on SQLite,
            or an async engine (its `sync_engine`): registered on every new DBAPI connection
            through a `connect` event, so call it before the engine opens connections (or
            dispose of the pool after).

    Raises:
        TypeError: the target is none of these.
    """
    if isinstance(target, sqlite3.Connection):
        _register(target)
        return
    engine = getattr(target, "sync_engine", target)
    if not isinstance(engine, Engine):
        raise TypeError(f"expected a sqlite3 connection or a SQLAlchemy engine, not {target!r}")
    if engine.dialect.name != "sqlite":
        raise TypeError(f"expected an engine on SQLite, not on {engine.dialect.name}")
    event.listen(engine, "connect", _on_connect)


def _register(connection: Any) -> None:
    connection.create_function("lower", 1, unicode_lower, deterministic=True)
    connection.create_function(MONTH_DAY_FUNCTION, 2, month_day, deterministic=True)


def month_day(value: Any, zone: Any) -> int | None:
    """`month * 100 + day` of a stored date-time (UTC text, as SQLAlchemy's `DateTime` writes
    it) in the IANA `zone`: the anniversaries of a zone other than UTC on SQLite."""
    if not isinstance(value, str) or not isinstance(zone, str):
        return None
    instant = datetime.fromisoformat(value)
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return local_month_day(instant, zone)


def _on_connect(dbapi_connection: Any, _record: Any) -> None:
    # A sqlite3 connection, or SQLAlchemy's adapter of an async driver, which has the same method.
    _register(dbapi_connection)
