"""What a public key's sign-up may set in each list.

`lists.public_fields` (a JSON array) names the contact fields a sign-up with a public key may
set besides its email; `lists.public_fields_policy` says what becomes of any other field:
`refuse` (a 403 naming it) or `ignore` (dropped). Existing lists get the defaults, the names
only and `refuse`: a sign-up form that sent `data` must now be allowed to.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAMES_ONLY = '["firstName", "lastName", "name"]'


def upgrade() -> None:
    with op.batch_alter_table("lists") as batch:
        batch.add_column(
            sa.Column("public_fields", sa.JSON(), nullable=False, server_default=NAMES_ONLY)
        )
        batch.add_column(
            sa.Column(
                "public_fields_policy", sa.String(16), nullable=False, server_default="refuse"
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("lists") as batch:
        batch.drop_column("public_fields_policy")
        batch.drop_column("public_fields")
