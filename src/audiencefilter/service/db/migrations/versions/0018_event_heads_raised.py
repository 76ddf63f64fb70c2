"""SQLite: a list's event counter (`event_heads`) raised by the database as events are inserted.

A list's events are numbered by its counter (`domain/list_lock.py`): a writer advanced it by
the number of events it appends, then inserted them, two statements. On SQLite every write
transaction holds the database's lock, so nothing can come between a read of the counter and an
insert: a single write's events number themselves in their insert, one past the counter
(`list_lock.NEXT_POSITION`), and this trigger raises the counter to each event inserted past
it, creating the row for a list without one. Inserts after an advance (the bulk paths) are
never past it: for their rows the trigger reads the counter and does nothing. A counter is
only ever raised, never lowered.

PostgreSQL keeps its writers' advance before the insert (the counter's row lock orders their
commits): nothing changes there.

Revision ID: 0018_event_heads_raised
Revises: 0017_audience_overlaps
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0018_event_heads_raised"
down_revision: str | Sequence[str] | None = "0017_audience_overlaps"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE_TRIGGER = """CREATE TRIGGER event_heads_raised AFTER INSERT ON events
    WHEN NEW.position > coalesce(
        (SELECT position FROM event_heads WHERE list_id = NEW.list_id), 0)
    BEGIN
        INSERT INTO event_heads (list_id, position) VALUES (NEW.list_id, NEW.position)
        ON CONFLICT (list_id) DO UPDATE SET position = excluded.position;
    END"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(_SQLITE_TRIGGER)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER event_heads_raised")
