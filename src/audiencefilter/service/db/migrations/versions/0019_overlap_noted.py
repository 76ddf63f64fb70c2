"""`overlap_noted`: the contacts whose pairs in `audience_overlaps` are counted later.

A single contact's write counted every pair of its audiences at once: 5,050 upserts for a
contact moving across 100 audiences, most of the write's time. It now notes the contact and the
audiences it was in before (once until the list's pairs are settled), and the pairs move by
the difference when the list settles (`domain/membership/overlaps.py`). The table starts empty:
every pair is counted at the upgrade.

Revision ID: 0019_overlap_noted
Revises: 0018_event_heads_raised
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_overlap_noted"
down_revision: str | Sequence[str] | None = "0018_event_heads_raised"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "overlap_noted",
        sa.Column("list_id", sa.String(32), nullable=False),
        sa.Column("contact_id", sa.String(32), nullable=False),
        sa.Column("audiences", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("list_id", "contact_id", name="pk_overlap_noted"),
    )


def downgrade() -> None:
    """The pairs counted again from `memberships` (the noted contacts' moves are not in them
    yet), then the table dropped."""
    op.execute("DELETE FROM audience_overlaps")
    op.execute(_RECOUNT)
    op.drop_table("overlap_noted")


_RECOUNT = """
INSERT INTO audience_overlaps (audience_a, audience_b, list_id, contacts)
SELECT one.audience_id, other.audience_id, audiences.list_id, COUNT(*)
FROM memberships AS one
JOIN memberships AS other ON other.contact_id = one.contact_id
JOIN audiences ON audiences.id = one.audience_id
WHERE one.audience_id <= other.audience_id
GROUP BY one.audience_id, other.audience_id, audiences.list_id
"""
