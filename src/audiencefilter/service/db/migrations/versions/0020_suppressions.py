"""`suppressions` and `suppression_keys`: the e-mails of erased people a list no longer takes.

An erasure used to leave nothing that stopped the next import of the master file from making
the person again. Each list now keeps a keyed hash of every e-mail it erased
(`domain/suppression.py`); the tables start empty, as no erasure before them was recorded.

Revision ID: 0020_suppressions
Revises: 0019_overlap_noted
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_suppressions"
down_revision: str | Sequence[str] | None = "0019_overlap_noted"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "suppression_keys",
        sa.Column("list_id", sa.String(32), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(
            ["list_id"],
            ["lists.id"],
            name="fk_suppression_keys_list_id_lists",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("list_id", name="pk_suppression_keys"),
    )
    op.create_table(
        "suppressions",
        sa.Column("list_id", sa.String(32), nullable=False),
        sa.Column("email_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["list_id"], ["lists.id"], name="fk_suppressions_list_id_lists", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("list_id", "email_hash", name="pk_suppressions"),
    )


def downgrade() -> None:
    op.drop_table("suppressions")
    op.drop_table("suppression_keys")
