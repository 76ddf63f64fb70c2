"""Alembic: upgrade, downgrade and upgrade again, with no drift between models and migrations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect

from audiencefilter.service.db import migrate
from audiencefilter.service.db.engine import make_engine
from audiencefilter.service.db.models import Base

from .conftest import sqlite_settings, url_settings

TABLES = {
    "accounts",
    "api_keys",
    "lists",
    "contacts",
    "actions",
    "audiences",
    "audience_members",
    "idempotency_keys",
    "memberships",
    "overlap_noted",
    "event_heads",
    "events",
    "webhooks",
    "webhook_deliveries",
    "webhook_attempts",
    "audience_due",
    "membership_due",
    "audience_builds",
    "audience_build_members",
    "list_sizes",
    "list_points",
    "list_point_bands",
    "list_size_changes",
    "list_points_changes",
    "audience_versions",
    "audience_overlaps",
    "suppressions",
    "suppression_keys",
    "alembic_version",
}


def _drift(engine: Engine) -> list[Any]:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))


def _round_trip(engine: Engine) -> None:
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
    assert set(inspect(engine).get_table_names()) == TABLES
    assert _drift(engine) == []
    migrate.downgrade(engine, "base")
    assert set(inspect(engine).get_table_names()) == {"alembic_version"}
    assert migrate.current_revision(engine) is None
    migrate.upgrade(engine)
    assert set(inspect(engine).get_table_names()) == TABLES
    assert _drift(engine) == []
    migrate.upgrade(engine)  # a second upgrade is a no-op
    assert migrate.current_revision(engine) == migrate.head_revision()


def test_a_database_at_head_starts_without_reading_the_scripts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A start at head asks the database its revision and stops: Alembic's upgrade, which
    loads every revision script to learn that nothing is to do, is not run."""
    engine = make_engine(sqlite_settings(tmp_path / "m.db"))
    upgrades: list[str] = []
    original = migrate.command.upgrade

    def counted(config: Any, revision: str) -> None:
        upgrades.append(revision)
        original(config, revision)

    monkeypatch.setattr(migrate.command, "upgrade", counted)
    try:
        migrate.upgrade(engine)  # a fresh database: migrated
        assert upgrades == ["head"]
        migrate.upgrade(engine)  # at head: left alone
        assert upgrades == ["head"]
        migrate.downgrade(engine, "-1")
        migrate.upgrade(engine)  # one revision behind: migrated again
        assert upgrades == ["head", "head"]
        assert migrate.current_revision(engine) == migrate.head_revision()
    finally:
        engine.dispose()


def test_migrations_round_trip_without_drift_on_sqlite(tmp_path: Path) -> None:
    engine = make_engine(sqlite_settings(tmp_path / "m.db"))
    try:
        _round_trip(engine)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_migrations_round_trip_without_drift_on_postgres(pg_database: Callable[[], str]) -> None:
    engine = make_engine(url_settings(pg_database()))
    try:
        _round_trip(engine)
    finally:
        engine.dispose()


def test_models_expose_filter_fields_under_their_interface_names() -> None:
    from audiencefilter.service.db.models import Contact

    columns = {
        "email": "VARCHAR",
        "firstName": "VARCHAR",
        "lastName": "VARCHAR",
        "phoneNumber": "VARCHAR",
        "points": "BIGINT",
        "referrals": "BIGINT",
        "isVerified": "BOOLEAN",
        "unsubscribed": "BOOLEAN",
        "company": "VARCHAR",
        "country": "VARCHAR",
        "city": "VARCHAR",
        "createdAt": "DATETIME",
        "name": "VARCHAR",
        "website": "VARCHAR",
        "address": "VARCHAR",
        "isGDPR": "BOOLEAN",
        "socialOne": "VARCHAR",
        "socialTwo": "VARCHAR",
        "data": "JSON",
    }
    mapper = inspect(Contact)
    for attribute, type_name in columns.items():
        column = mapper.columns[attribute]
        assert str(column.type).startswith(type_name), attribute
    assert mapper.columns["createdAt"].type.timezone is True
