"""Alembic environment: runs migrations on the engine handed over by `migrate.alembic_config`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine

from audiencefilter.service.db.models import Base


def run_migrations_online() -> None:
    engine = context.config.attributes["engine"]
    assert isinstance(engine, Engine)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=Base.metadata,
            compare_type=True,
            # SQLite cannot ALTER most things; batch mode rebuilds tables when a revision needs it.
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


run_migrations_online()
