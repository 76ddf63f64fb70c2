"""Membership history and experiments: what a members listing at an instant and a member's
group need.

`audiences.experiment` holds an audience's experiment (canonical JSON, or null); each
membership row keeps the member's draw (`group_name`, `holdout`), made when it entered; and
`ix_events_audience_time` lets the listing at an instant read one audience's
`audience.entered` / `audience.left` events up to it without walking the list's feed. Rows
stored before this revision have no draw: their audiences have no experiment.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("audiences", sa.Column("experiment", sa.Text(), nullable=True))
    op.add_column("memberships", sa.Column("group_name", sa.String(64), nullable=True))
    op.add_column(
        "memberships",
        sa.Column("holdout", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_events_audience_time", "events", ["audience_id", "occurred_at"])


def downgrade() -> None:
    op.drop_index("ix_events_audience_time", table_name="events")
    with op.batch_alter_table("memberships") as batch:
        batch.drop_column("holdout")
        batch.drop_column("group_name")
    with op.batch_alter_table("audiences") as batch:
        batch.drop_column("experiment")
