"""SQLite helpers: the functions the SQL back-ends write for SQLite, and the contact table's
column types as they expect them.

- `lower()` folding case like Python's `str.lower()`: SQLite's built-in `lower()` folds ASCII
  only, so without it `mode: "insensitive"` on SQLite ignores case for A-Z alone (`ÉLODIE`
  does not match `élodie`). Python's `str.lower` is registered under the same name (an
  application function replaces the built-in one), marked deterministic so that SQLite may use
  it in expression indexes.
- `audiencefilter_month_day(value, zone)`: the local month-day of a stored date-time in an
  IANA zone, for anniversaries outside UTC.

`register_sqlite_functions` (exported as `af.register_sqlite_functions`) registers both;
`register_unicode_lower` is its former name, kept for one release.

SQLite has no date-time type: the back-ends compare date-times as the text SQLAlchemy's
`DateTime` stores (`2024-05-01 12:00:00.000000`, UTC). Text in another form (ISO 8601 with
`T` or `Z`, an offset) sorts differently and gives wrong members without any error;
`sqlite_datetime_column` declares a column that refuses such text on insert.
"""

from __future__ import annotations

import sqlite3
import warnings
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import CheckConstraint, Column, DateTime, event
from sqlalchemy.engine import Engine
from sqlalchemy.types import TypeDecorator

from ...language.anniversary import local_month_day
from .dialects.sqlite import MONTH_DAY_FUNCTION

DATETIME_PATTERN = "[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9]*"
"""A GLOB every date-time text the SQL back-ends compare correctly matches: SQLAlchemy's
storage format, a space between date and time, no `T`, no zone."""


def unicode_lower(value: Any) -> Any:
    """Python's `str.lower` for text; NULL, numbers and blobs pass through unchanged."""
    return value.lower() if isinstance(value, str) else value


def register_sqlite_functions(target: sqlite3.Connection | Engine | Any) -> None:
    """Register `lower()` and the anniversaries' month-day on a SQLite connection or engine.

    `target` is a `sqlite3` connection (registered at once), or a SQLAlchemy engine on SQLite,
    or an async engine (its `sync_engine`): registered on every new DBAPI connection through a
    `connect` event, so call it before the engine opens connections (or dispose of the pool
    after). Raises `TypeError` for anything else.
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


def register_unicode_lower(target: sqlite3.Connection | Engine | Any) -> None:
    """Deprecated: `af.register_sqlite_functions`, which registers the same functions."""
    warnings.warn(
        "register_unicode_lower is deprecated; use audiencefilter.register_sqlite_functions",
        DeprecationWarning,
        stacklevel=2,
    )
    register_sqlite_functions(target)


class UtcDateTime(TypeDecorator[datetime]):
    """SQLAlchemy's `DateTime` storing every aware value as UTC: on SQLite its text keeps a
    value's wall time and drops the offset, so `12:00+02:00` would be stored as 12:00 UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True
    keeps_bound_literals = True
    """Read by the column gate (`column_shapes.converts`): the conversion changes no literal
    the SQL back-ends bind, which are UTC already."""

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is not None:
            return value.astimezone(UTC)
        return value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return value.replace(tzinfo=UTC) if value is not None else None


def sqlite_datetime_column(name: str, *, key: str | None = None) -> Column[datetime]:
    """A date-time column for SQLite as the SQL back-ends read it: UTC text in SQLAlchemy's
    storage format (`UtcDateTime`), with a CHECK that refuses text in any other form (`T`, `Z`,
    an offset), which would otherwise compare wrongly without an error."""
    quoted = '"' + name.replace('"', '""') + '"'
    check = CheckConstraint(f"{quoted} IS NULL OR {quoted} GLOB '{DATETIME_PATTERN}'")
    return Column(name, UtcDateTime(), check, key=key or name)


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
