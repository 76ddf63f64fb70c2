"""Webhooks: endpoints of a list, their deliveries and the attempts of each delivery.

`webhooks.position` is how far an endpoint has read its list's outbox (`events.position`);
deliveries are made from the events after it. No existing row changes.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(32)
MOMENT = sa.DateTime(timezone=True)


def upgrade() -> None:
    _webhooks()
    _webhook_deliveries()
    _webhook_attempts()


def _webhooks() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", ID, nullable=False),
        sa.Column("list_id", ID, nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("description", sa.String(2000), nullable=True),
        sa.Column("event_types", sa.JSON(), nullable=False),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("previous_secret", sa.String(128), nullable=True),
        sa.Column("previous_secret_until", MOMENT, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("disabled_reason", sa.String(2000), nullable=True),
        sa.Column("disabled_at", MOMENT, nullable=True),
        sa.Column("failure_count", sa.Integer(), nullable=False),
        sa.Column("failing_since", MOMENT, nullable=True),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.Column("updated_at", MOMENT, nullable=False),
        sa.ForeignKeyConstraint(
            ["list_id"], ["lists.id"], name=op.f("fk_webhooks_list_id_lists"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhooks")),
    )
    op.create_index(op.f("ix_webhooks_list_id"), "webhooks", ["list_id"], unique=False)


def _webhook_deliveries() -> None:
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", ID, nullable=False),
        sa.Column("webhook_id", ID, nullable=False),
        sa.Column("event_id", ID, nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("event_position", sa.BigInteger(), nullable=False),
        sa.Column("order_key", ID, nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", MOMENT, nullable=False),
        sa.Column("lease_token", sa.String(32), nullable=True),
        sa.Column("lease_until", MOMENT, nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(2000), nullable=True),
        sa.Column("delivered_at", MOMENT, nullable=True),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhooks.id"],
            name=op.f("fk_webhook_deliveries_webhook_id_webhooks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
        sa.UniqueConstraint(
            "webhook_id", "event_id", name=op.f("uq_webhook_deliveries_webhook_id_event_id")
        ),
    )
    op.create_index(
        "ix_webhook_deliveries_due", "webhook_deliveries", ["status", "next_attempt_at"]
    )
    op.create_index(
        "ix_webhook_deliveries_order",
        "webhook_deliveries",
        ["webhook_id", "order_key", "event_position"],
    )


def _webhook_attempts() -> None:
    op.create_table(
        "webhook_attempts",
        sa.Column("id", ID, nullable=False),
        sa.Column("delivery_id", ID, nullable=False),
        sa.Column("attempted_at", MOMENT, nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("error", sa.String(2000), nullable=True),
        sa.Column("success", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_deliveries.id"],
            name=op.f("fk_webhook_attempts_delivery_id_webhook_deliveries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
    )
    op.create_index(
        op.f("ix_webhook_attempts_delivery_id"), "webhook_attempts", ["delivery_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_webhook_attempts_delivery_id"), table_name="webhook_attempts")
    op.drop_table("webhook_attempts")
    op.drop_index("ix_webhook_deliveries_order", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_due", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index(op.f("ix_webhooks_list_id"), table_name="webhooks")
    op.drop_table("webhooks")
