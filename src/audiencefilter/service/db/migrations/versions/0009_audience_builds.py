"""Audiences built in the background: the running build of each, and what it selected so far.

A smart audience created or changed on a list larger than `audience_build_background_above`
answers at once in the `building` state; `audience_builds` holds its progress and what its
snapshot read when it started, `audience_build_members` the contacts its chunks selected
(no foreign key to `contacts`: a contact deleted meanwhile is judged again at the end).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _audience() -> sa.Column[str]:
    return sa.Column(
        "audience_id",
        sa.String(32),
        sa.ForeignKey("audiences.id", ondelete="CASCADE"),
        primary_key=True,
    )


def upgrade() -> None:
    op.create_table(
        "audience_builds",
        _audience(),
        sa.Column("token", sa.String(32), nullable=False),
        sa.Column("filters", sa.Text(), nullable=False),
        sa.Column("cause", sa.String(64), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("points", sa.Text(), nullable=True),
        sa.Column("actions", sa.Text(), nullable=True),
        sa.Column("cursor", sa.String(32), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "audience_build_members",
        _audience(),
        sa.Column("contact_id", sa.String(32), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("audience_build_members")
    op.drop_table("audience_builds")
