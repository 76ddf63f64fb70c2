"""The instants at which time alone moves membership: per audience and per contact.

`audience_due` holds, per smart audience with relative date-times, the next calendar boundary
of its filter (or the instant its contacts' instants are to be worked out); `membership_due`,
per audience and contact, the next instant at which that contact's answer changes with the
clock. They replace the periodic sweep of every such audience. Existing smart audiences get
an `audience_due` row at the epoch, so the scheduler works out their instants at its first turn.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audience_due",
        sa.Column(
            "audience_id",
            sa.String(32),
            sa.ForeignKey("audiences.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_audience_due_due_at", "audience_due", ["due_at"])
    op.create_table(
        "membership_due",
        sa.Column(
            "audience_id",
            sa.String(32),
            sa.ForeignKey("audiences.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "contact_id",
            sa.String(32),
            sa.ForeignKey("contacts.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_membership_due_due_at", "membership_due", ["due_at"])
    due = sa.table(
        "audience_due", sa.column("audience_id"), sa.column("due_at", sa.DateTime(timezone=True))
    )
    audiences = sa.table("audiences", sa.column("id"), sa.column("mode"))
    epoch = sa.literal(datetime(1970, 1, 1, tzinfo=UTC), sa.DateTime(timezone=True))
    smart = sa.select(audiences.c.id, epoch).where(audiences.c.mode == "smart")
    op.execute(due.insert().from_select(["audience_id", "due_at"], smart))


def downgrade() -> None:
    op.drop_table("membership_due")
    op.drop_table("audience_due")
