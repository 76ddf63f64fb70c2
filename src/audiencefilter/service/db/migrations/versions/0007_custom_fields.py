"""Custom fields of a list, the ones each audience's filter reads, and a stamp of its audiences.

`lists.custom_fields` (a JSON array of `{"key", "type", "label"}`) declares typed fields kept in
each contact's `data`; `audiences.fields` holds, beside the stored filter, the declarations of
the custom fields that filter reads, so a stored filter is read back with the schema it was
written for. Existing lists declare none and existing audiences read none.
`lists.audiences_stamp` changes with the list's audiences: what a process prepared of them is
keyed by it.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("lists") as batch:
        batch.add_column(sa.Column("custom_fields", sa.JSON(), nullable=False, server_default="[]"))
        batch.add_column(
            sa.Column("audiences_stamp", sa.String(32), nullable=False, server_default="")
        )
    with op.batch_alter_table("audiences") as batch:
        batch.add_column(sa.Column("fields", sa.Text(), nullable=True))
    # One stamp for the audiences lists hold now; every later change draws a random one.
    op.execute("UPDATE lists SET audiences_stamp = 'revision-0007'")


def downgrade() -> None:
    with op.batch_alter_table("audiences") as batch:
        batch.drop_column("fields")
    with op.batch_alter_table("lists") as batch:
        batch.drop_column("audiences_stamp")
        batch.drop_column("custom_fields")
