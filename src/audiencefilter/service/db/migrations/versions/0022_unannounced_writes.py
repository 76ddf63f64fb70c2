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
    with op.batch_alter_table("event_heads") as batch:
        batch.add_column(
            sa.Column("unannounced", sa.BigInteger(), nullable=False, server_default="0")
        )
    with op.batch_alter_table("audience_builds") as batch:
        batch.add_column(sa.Column("unannounced", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audience_builds") as batch:
        batch.drop_column("unannounced")
    with op.batch_alter_table("event_heads") as batch:
        batch.drop_column("unannounced")
