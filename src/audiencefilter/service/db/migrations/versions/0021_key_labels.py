"""`api_keys.label`: what a key is for, so an audience's history names who changed it.

A version recorded the key that made it by id alone (`key_...`), which tells a marketer
nothing. Keys made before keep no label (null), and show their id as before.

Revision ID: 0021_key_labels
Revises: 0020_suppressions
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_key_labels"
down_revision: str | Sequence[str] | None = "0020_suppressions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("label", sa.String(100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("label")
