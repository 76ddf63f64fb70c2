"""The contacts of a list in id order: `ix_contacts_list_sample` on (list_id, id).

A contact's id is 80 random bits drawn when it is created, independent of anything a filter
reads, so the contacts of a list with the smallest ids are a uniform random sample of it, kept
with the list as contacts come and go. `POST /v4/audiences/estimate` evaluates a filter on that
sample: this index reads it as one range, where the other indexes of `contacts` would sort the
whole list to find it.

Revision ID: 0016
Revises: 0013
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_contacts_list_sample", "contacts", ["list_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_contacts_list_sample", table_name="contacts")
