"""Schema migrations with Alembic, driven from Python: no `alembic.ini` is needed.

The migration scripts ship inside the package (`migrations/`), so an installed wheel can upgrade
its own database. An open connection is handed to `env.py` through `Config.attributes`; the
embedded SQLite database runs `upgrade head` at start, PostgreSQL through the `migrate` command.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

SCRIPT_LOCATION = Path(__file__).with_name("migrations")


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate to `revision`. A database already at head is left alone without loading the
    scripts: Alembic reads and compiles every revision module to find out, about 30 ms of each
    start (and of each application a test builds)."""
    if revision == "head" and current_revision(engine) == head_revision():
        return
    command.upgrade(alembic_config(engine), revision)


def downgrade(engine: Engine, revision: str) -> None:
    command.downgrade(alembic_config(engine), revision)


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


@cache
def head_revision() -> str | None:
    """The scripts' head, read once a process: they ship in the package and do not change."""
    return ScriptDirectory(str(SCRIPT_LOCATION)).get_current_head()


def new_revision(engine: Engine, message: str) -> None:
    """Write a new revision script from the difference between the models and the database."""
    command.revision(alembic_config(engine), message=message, autogenerate=True)
