"""A streamed read (`db/queries.stream_rows`, an export's pages through a server-side cursor)
streams itself alone: the session's later reads stay buffered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from audiencefilter.service.db import migrate
from audiencefilter.service.db.engine import Database, make_engine
from audiencefilter.service.db.models import Contact
from audiencefilter.service.db.queries import stream_rows

from .conftest import BOTH_DATABASES, settings_on


@pytest.fixture(params=BOTH_DATABASES)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    engine = make_engine(settings_on(request, tmp_path / "stream.db"))
    migrate.upgrade(engine)
    yield Database(engine)
    engine.dispose()


def test_a_streamed_read_leaves_the_sessions_other_reads_buffered(database: Database) -> None:
    """Its options were set on the session's connection, which SQLAlchemy changes in place:
    every read after it in the session went through a server-side cursor as well."""
    statement = select(Contact.id, Contact.createdAt.label("createdAt"))
    with database.reading() as session:
        assert [part for part in stream_rows(session, statement, 10)] == []
        options = session.connection().get_execution_options()
        assert "stream_results" not in options and "yield_per" not in options
