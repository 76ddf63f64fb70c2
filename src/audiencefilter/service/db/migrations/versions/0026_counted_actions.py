"""`event_heads.acted`: how many actions of a list's contacts were created or deleted.

An audience's snapshot (`membership/snapshot.py`) reads what its filter reads that no event
reports, each contact's points and the ids of its actions, and reads it again under the list's
lock to find the contacts an action changed meanwhile: over 200,000 contacts on PostgreSQL each
reading took 54 ms, and the second found nothing unless an action had landed. Each action's
write now counts itself on its list's counter row, and the store reads the points and the action
ids again only when the count moved. `audience_builds.acted` keeps the count a background
build's snapshot read (null for builds started before: the readings are compared, as before).

Revision ID: 0026_counted_actions
Revises: 0025_points_folded_together
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026_counted_actions"
down_revision: str | Sequence[str] | None = "0025_points_folded_together"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Not in a batch, as in 0022: a batch would copy `event_heads` and break the trigger on
    # `events` that writes it (migration 0018).
    op.add_column(
        "event_heads", sa.Column("acted", sa.BigInteger(), nullable=False, server_default="0")
    )
    op.add_column("audience_builds", sa.Column("acted", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("audience_builds", "acted")
    op.drop_column("event_heads", "acted")
