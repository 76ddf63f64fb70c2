"""Stored audience membership and the events outbox.

`memberships` holds the current members of every audience (manual ones copied from
`audience_members`, smart ones as their filters select them), kept exact by every write;
`events` is each list's outbox of `audience.entered`, `audience.left` and lifecycle events,
numbered per list in commit order, with `event_heads` the per-list counter whose row lock gives
that order. The upgrade fills `memberships` from the existing audiences (smart filters evaluated
at the moment of the migration by the filter library) and emits no events for them.

The fill is this revision's own: the tables as they are at this revision, described here, and
only the filter library's public API (`audiencefilter.parse`, `Filter.to_sqlalchemy`), so that
later changes to the service's code cannot change what this migration does.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

import audiencefilter as af

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    _memberships()
    _event_heads()
    _events()
    _fill()


def _memberships() -> None:
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


def _event_heads() -> None:
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


def _events() -> None:
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


_CONTACTS = sa.table(
    "contacts",
    sa.column("id", sa.String()),
    sa.column("list_id", sa.String()),
    sa.column("email", sa.String()),
    sa.column("first_name", sa.String()),
    sa.column("last_name", sa.String()),
    sa.column("company", sa.String()),
    sa.column("country", sa.String()),
    sa.column("city", sa.String()),
    sa.column("points", sa.BigInteger()),
    sa.column("referrals", sa.BigInteger()),
    sa.column("is_verified", sa.Boolean()),
    sa.column("unsubscribed", sa.Boolean()),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("data", sa.JSON()),
)
_FIELDS = {
    "email": "email",
    "firstName": "first_name",
    "lastName": "last_name",
    "company": "company",
    "country": "country",
    "city": "city",
    "points": "points",
    "referrals": "referrals",
    "isVerified": "is_verified",
    "unsubscribed": "unsubscribed",
    "createdAt": "created_at",
    "data": "data",
}
"""The contact fields filters name, and their columns at this revision."""
_ACTIONS = sa.table(
    "actions",
    sa.column("sub_id", sa.String()),
    sa.column("name", sa.String()),
    sa.column("increase", sa.BigInteger()),
    sa.column("created_at", sa.DateTime(timezone=True)),
)
_MEMBERSHIPS = sa.table(
    "memberships",
    sa.column("audience_id", sa.String()),
    sa.column("contact_id", sa.String()),
    sa.column("entered_at", sa.DateTime(timezone=True)),
)


def _fill() -> None:
    """Heads for the existing lists; the current members of the existing audiences."""
    bind = op.get_bind()
    bind.execute(sa.text("INSERT INTO event_heads (list_id, position) SELECT id, 0 FROM lists"))
    at = datetime.now(UTC)
    audiences = bind.execute(sa.text("SELECT id, mode, filters, list_id FROM audiences")).all()
    for audience_id, mode, filters, list_id in audiences:
        wanted = _wanted(mode, filters, list_id, audience_id, at)
        if wanted is not None:
            rows = sa.select(sa.literal(audience_id), wanted.c.id, sa.literal(at, _AT))
            bind.execute(
                sa.insert(_MEMBERSHIPS).from_select(
                    ["audience_id", "contact_id", "entered_at"], rows
                )
            )


_AT = sa.DateTime(timezone=True)


def _wanted(
    mode: str, filters: str | None, list_id: str, audience_id: str, at: datetime
) -> sa.Subquery | None:
    """The ids of the audience's members (None: nobody): manual members as stored, a smart
    filter's contacts as the library selects them at `at`."""
    if mode == "manual":
        members = sa.text("SELECT contact_id AS id FROM audience_members WHERE audience_id = :a")
        return members.bindparams(a=audience_id).columns(sa.column("id")).subquery()
    if not filters:
        return None
    flt = af.parse(filters)
    columns = {field: _CONTACTS.c[column] for field, column in _FIELDS.items()}
    condition = flt.to_sqlalchemy(columns, now=at, relations={"actions": _ACTIONS})
    chosen = sa.select(_CONTACTS.c.id).where(_CONTACTS.c.list_id == list_id, condition)
    return chosen.subquery()


def downgrade() -> None:
    op.drop_table("events")
    op.drop_table("event_heads")
    op.drop_index("ix_memberships_contact", table_name="memberships")
    op.drop_table("memberships")
