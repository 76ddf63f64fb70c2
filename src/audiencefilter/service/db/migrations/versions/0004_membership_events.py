"""Stored audience membership and the events outbox.

`memberships` holds the current members of every audience (manual ones copied from
`audience_members`, smart ones as their filters select them), kept exact by every write;
`events` is each list's outbox of `audience.entered`, `audience.left` and lifecycle events,
numbered per list in commit order, with `event_heads` the per-list counter whose row lock gives
that order. The upgrade fills `memberships` from the existing audiences (smart filters evaluated
at the moment of the migration by the filter library) and emits no events for them.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memberships",
        sa.Column("audience_id", sa.String(32), nullable=False),
        sa.Column("contact_id", sa.String(32), nullable=False),
        sa.Column("entered_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["audience_id"],
            ["audiences.id"],
            name=op.f("fk_memberships_audience_id_audiences"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_memberships_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("audience_id", "contact_id", name=op.f("pk_memberships")),
    )
    op.create_index(
        "ix_memberships_contact", "memberships", ["contact_id", "audience_id"], unique=False
    )
    op.create_table(
        "event_heads",
        sa.Column("list_id", sa.String(32), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["list_id"],
            ["lists.id"],
            name=op.f("fk_event_heads_list_id_lists"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("list_id", name=op.f("pk_event_heads")),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("list_id", sa.String(32), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("contact_id", sa.String(32), nullable=True),
        sa.Column("audience_id", sa.String(32), nullable=True),
        sa.Column("cause", sa.String(64), nullable=True),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["list_id"], ["lists.id"], name=op.f("fk_events_list_id_lists"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
        sa.UniqueConstraint("list_id", "position", name=op.f("uq_events_list_id_position")),
    )
    _fill()


def _fill() -> None:
    """Heads for the existing lists; the current members of the existing audiences."""
    from audiencefilter.service.domain.membership_store import rebuild_all

    bind = op.get_bind()
    bind.execute(sa.text("INSERT INTO event_heads (list_id, position) SELECT id, 0 FROM lists"))
    rebuild_all(bind)


def downgrade() -> None:
    op.drop_table("events")
    op.drop_table("event_heads")
    op.drop_index("ix_memberships_contact", table_name="memberships")
    op.drop_table("memberships")
