"""Membership history read a page at a time: `ix_events_audience_contact` replaces
`ix_events_audience_time`.

The members of an audience at an instant are, per contact, its last entry or exit up to that
instant. Read on (audience, instant), every page aggregated the whole audience's events before
keeping its few members; read on (audience, contact, position), the database walks the events
in the page's order (contact ids) and stops at the page's last member, and a contact's later
events are one range of the same index. One index replaces the other: a write appending events
maintains as many as before.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_events_audience_contact", "events", ["audience_id", "contact_id", "position"]
    )
    op.drop_index("ix_events_audience_time", table_name="events")


def downgrade() -> None:
    op.create_index("ix_events_audience_time", "events", ["audience_id", "occurred_at"])
    op.drop_index("ix_events_audience_contact", table_name="events")
