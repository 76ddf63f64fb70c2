"""A list's time zone, and every version of each audience.

`lists.time_zone` is the IANA zone a list's calendar rules are read in when they name none
(`birthday anniversary within this week`); existing lists keep what they had, UTC.

`audience_versions` keeps what each change of an audience's name, mode or filter made of it,
numbered from 1 per audience, with the API key that made it and when: a history nobody had to
ask for. Each existing audience gets its version 1, dated when it was last changed: what it
was before is not known.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BACKFILL = (
    "INSERT INTO audience_versions (audience_id, number, name, mode, filters, fields, "
    "key_id, restored_from, created_at) "
    "SELECT id, 1, name, mode, filters, fields, NULL, NULL, updated_at FROM audiences"
)


def upgrade() -> None:
    # Added and dropped in place, not by a batch: on SQLite a batch copies `lists` to a new
    # table, and the copy would lose the triggers of migration 0010 that count its contacts.
    op.add_column(
        "lists", sa.Column("time_zone", sa.String(64), nullable=False, server_default="UTC")
    )
    op.create_table(
        "audience_versions",
        sa.Column(
            "audience_id",
            sa.String(32),
            sa.ForeignKey("audiences.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("number", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("filters", sa.Text(), nullable=True),
        sa.Column("fields", sa.Text(), nullable=True),
        sa.Column("key_id", sa.String(32), nullable=True),
        sa.Column("restored_from", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.execute(BACKFILL)


def downgrade() -> None:
    op.drop_table("audience_versions")
    op.drop_column("lists", "time_zone")
