"""Initial schema: accounts, keys, lists, contacts, actions, audiences and manual memberships.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    _accounts()
    _api_keys()
    _lists()
    _audiences()
    _contacts()
    _actions()
    _audience_members()


def _accounts() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("plan", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
        sa.UniqueConstraint("name", name=op.f("uq_accounts_name")),
    )


def _api_keys() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=32), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_api_keys_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("digest", name=op.f("uq_api_keys_digest")),
    )
    op.create_index(op.f("ix_api_keys_account_id"), "api_keys", ["account_id"], unique=False)


def _lists() -> None:
    op.create_table(
        "lists",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("url", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("mode", sa.String(length=32), nullable=False),
        sa.Column("color", sa.String(length=7), nullable=True),
        sa.Column("title", sa.String(length=255), nullable=True),
        sa.Column("description", sa.String(length=2000), nullable=True),
        sa.Column("social_description", sa.String(length=2000), nullable=True),
        sa.Column("branding", sa.Boolean(), nullable=False),
        sa.Column("referrals", sa.Boolean(), nullable=False),
        sa.Column("start_from", sa.Integer(), nullable=False),
        sa.Column("sender_name", sa.String(length=255), nullable=True),
        sa.Column("reply_to", sa.String(length=255), nullable=True),
        sa.Column("sender", sa.String(length=255), nullable=True),
        sa.Column("legal", sa.Text(), nullable=True),
        sa.Column("domain_id", sa.String(length=64), nullable=True),
        sa.Column("default_page_id", sa.String(length=64), nullable=True),
        sa.Column("referral_page_id", sa.String(length=64), nullable=True),
        sa.Column("success_page_id", sa.String(length=64), nullable=True),
        sa.Column("list_settings_id", sa.String(length=64), nullable=True),
        sa.Column("whitelist_email_id", sa.String(length=64), nullable=True),
        sa.Column("template_id", sa.String(length=64), nullable=True),
        sa.Column("theme_id", sa.String(length=64), nullable=True),
        sa.Column("icon", sa.String(length=2048), nullable=True),
        sa.Column("favicon", sa.String(length=2048), nullable=True),
        sa.Column("og_image", sa.String(length=2048), nullable=True),
        sa.Column("columns", sa.JSON(), nullable=False),
        sa.Column("custom_head_code", sa.Text(), nullable=True),
        sa.Column("custom_body_code", sa.Text(), nullable=True),
        sa.Column("analytics_a", sa.String(length=255), nullable=True),
        sa.Column("analytics_b", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_lists_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lists")),
        sa.UniqueConstraint("url", name=op.f("uq_lists_url")),
    )
    op.create_index(op.f("ix_lists_account_id"), "lists", ["account_id"], unique=False)


def _audiences() -> None:
    op.create_table(
        "audiences",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("list_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("filters", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["list_id"], ["lists.id"], name=op.f("fk_audiences_list_id_lists"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audiences")),
    )
    op.create_index(op.f("ix_audiences_list_id"), "audiences", ["list_id"], unique=False)


def _contacts() -> None:
    op.create_table(
        "contacts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("list_id", sa.String(length=32), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("email_key", sa.String(length=254), nullable=False),
        sa.Column("first_name", sa.String(length=255), nullable=True),
        sa.Column("last_name", sa.String(length=255), nullable=True),
        sa.Column("phone_number", sa.String(length=64), nullable=True),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("company", sa.String(length=255), nullable=True),
        sa.Column("country", sa.String(length=255), nullable=True),
        sa.Column("city", sa.String(length=255), nullable=True),
        sa.Column("address", sa.String(length=2000), nullable=True),
        sa.Column("website", sa.String(length=2048), nullable=True),
        sa.Column("social_one", sa.String(length=255), nullable=True),
        sa.Column("social_two", sa.String(length=255), nullable=True),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("referrals", sa.BigInteger(), nullable=False),
        sa.Column("is_verified", sa.Boolean(), nullable=False),
        sa.Column("unsubscribed", sa.Boolean(), nullable=False),
        sa.Column("is_gdpr", sa.Boolean(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("referral_code", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["list_id"], ["lists.id"], name=op.f("fk_contacts_list_id_lists"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_contacts")),
        sa.UniqueConstraint("list_id", "email_key", name=op.f("uq_contacts_list_id_email_key")),
        sa.UniqueConstraint("referral_code", name=op.f("uq_contacts_referral_code")),
    )
    op.create_index(
        "ix_contacts_list_rank", "contacts", ["list_id", "points", "created_at"], unique=False
    )


def _actions() -> None:
    op.create_table(
        "actions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("sub_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("increase", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["sub_id"], ["contacts.id"], name=op.f("fk_actions_sub_id_contacts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_actions")),
    )
    op.create_index(op.f("ix_actions_sub_id"), "actions", ["sub_id"], unique=False)


def _audience_members() -> None:
    op.create_table(
        "audience_members",
        sa.Column("audience_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["audience_id"],
            ["audiences.id"],
            name=op.f("fk_audience_members_audience_id_audiences"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_audience_members_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("audience_id", "contact_id", name=op.f("pk_audience_members")),
    )
    op.create_index(
        op.f("ix_audience_members_contact_id"), "audience_members", ["contact_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_audience_members_contact_id"), table_name="audience_members")
    op.drop_table("audience_members")
    op.drop_index(op.f("ix_actions_sub_id"), table_name="actions")
    op.drop_table("actions")
    op.drop_index("ix_contacts_list_rank", table_name="contacts")
    op.drop_table("contacts")
    op.drop_index(op.f("ix_audiences_list_id"), table_name="audiences")
    op.drop_table("audiences")
    op.drop_index(op.f("ix_lists_account_id"), table_name="lists")
    op.drop_table("lists")
    op.drop_index(op.f("ix_api_keys_account_id"), table_name="api_keys")
    op.drop_table("api_keys")
    op.drop_table("accounts")
