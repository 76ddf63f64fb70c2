"""`event_heads.unannounced`: how many writes of a list's contacts appended no event.

An audience's members are evaluated before its write (`membership/snapshot.py`), and the store
under the list's lock judges again the contacts that may have changed since: those with an event
after the snapshot's position. An import without events (`events=false`) changes contacts and
their memberships and appends none, so a snapshot taken before it and stored after it kept the
contacts as it saw them (`tests/service/test_derived_counts.py`). Each such import turn now
counts itself on its list's counter row, and the store compares the count with the snapshot's:
when it moved, every contact is judged again. `audience_builds.unannounced` keeps the count a
background build's snapshot read (null for builds started before: not compared).

Revision ID: 0022_unannounced_writes
Revises: 0021_key_labels
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022_unannounced_writes"
down_revision: str | Sequence[str] | None = "0021_key_labels"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Not in a batch: SQLite adds and drops a column in place, where a batch would copy the
    # table and break the trigger on `events` that writes it (migration 0018).
    op.add_column(
        "event_heads",
        sa.Column("unannounced", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.add_column("audience_builds", sa.Column("unannounced", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("audience_builds", "unannounced")
    op.drop_column("event_heads", "unannounced")
