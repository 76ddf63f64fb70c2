"""The waitlist rank index covers the rank: (list_id, points, created_at, id).

Positions are ranked by points, sign-up time and id within a list. With the id in the index,
ranking a span of a list (and counting the contacts ahead of a page) reads the index alone,
never the table; without it every ranked contact costs a table lookup for its id.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_contacts_list_rank"


def upgrade() -> None:
    op.drop_index(INDEX, table_name="contacts")
    op.create_index(INDEX, "contacts", ["list_id", "points", "created_at", "id"], unique=False)


def downgrade() -> None:
    op.drop_index(INDEX, table_name="contacts")
    op.create_index(INDEX, "contacts", ["list_id", "points", "created_at"], unique=False)
