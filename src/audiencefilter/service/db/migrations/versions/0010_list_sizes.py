"""Each list's number of contacts, kept by the database itself.

A page of a whole list answers `pagination.total`; counting it was most of the page's time at
a million contacts. The count lives in `list_sizes`, one row per list, and triggers keep it:
every insert, delete (cascades from a deleted list included) and move of a contact, however it
is written, so no code path of the service (or a bulk load beside it) can forget it.

On PostgreSQL the contacts' trigger is a deferred constraint trigger: it runs at commit, so a
long transaction takes the list's counter row for the moment of its commit only, not for its
whole length, and contacts written concurrently into one list wait for each other that long at
most. SQLite writes one transaction at a time and needs no such care.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE_TRIGGERS = (
    """CREATE TRIGGER list_sizes_list_added AFTER INSERT ON lists BEGIN
        INSERT INTO list_sizes (list_id, contacts) VALUES (NEW.id, 0);
    END""",
    """CREATE TRIGGER list_sizes_contact_added AFTER INSERT ON contacts BEGIN
        UPDATE list_sizes SET contacts = contacts + 1 WHERE list_id = NEW.list_id;
    END""",
    """CREATE TRIGGER list_sizes_contact_removed AFTER DELETE ON contacts BEGIN
        UPDATE list_sizes SET contacts = contacts - 1 WHERE list_id = OLD.list_id;
    END""",
    """CREATE TRIGGER list_sizes_contact_moved AFTER UPDATE OF list_id ON contacts
    WHEN OLD.list_id IS NOT NEW.list_id BEGIN
        UPDATE list_sizes SET contacts = contacts - 1 WHERE list_id = OLD.list_id;
        UPDATE list_sizes SET contacts = contacts + 1 WHERE list_id = NEW.list_id;
    END""",
)

_POSTGRES_TRIGGERS = (
    """CREATE FUNCTION list_sizes_list_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO list_sizes (list_id, contacts) VALUES (NEW.id, 0);
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER list_sizes_list_added AFTER INSERT ON lists
    FOR EACH ROW EXECUTE FUNCTION list_sizes_list_added()""",
    """CREATE FUNCTION list_sizes_contact_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE list_sizes SET contacts = contacts - 1 WHERE list_id = OLD.list_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            UPDATE list_sizes SET contacts = contacts + 1 WHERE list_id = NEW.list_id;
        END IF;
        RETURN NULL;
    END $$""",
    """CREATE CONSTRAINT TRIGGER list_sizes_contact_added AFTER INSERT OR DELETE ON contacts
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION list_sizes_contact_changed()""",
    """CREATE CONSTRAINT TRIGGER list_sizes_contact_moved AFTER UPDATE OF list_id ON contacts
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.list_id IS DISTINCT FROM NEW.list_id)
    EXECUTE FUNCTION list_sizes_contact_changed()""",
)

_POSTGRES_DROPS = (
    "DROP TRIGGER list_sizes_contact_moved ON contacts",
    "DROP TRIGGER list_sizes_contact_added ON contacts",
    "DROP FUNCTION list_sizes_contact_changed()",
    "DROP TRIGGER list_sizes_list_added ON lists",
    "DROP FUNCTION list_sizes_list_added()",
)

_SQLITE_DROPS = tuple(
    f"DROP TRIGGER {name}"
    for name in (
        "list_sizes_contact_moved",
        "list_sizes_contact_removed",
        "list_sizes_contact_added",
        "list_sizes_list_added",
    )
)


def upgrade() -> None:
    op.create_table(
        "list_sizes",
        sa.Column(
            "list_id",
            sa.String(32),
            sa.ForeignKey("lists.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("contacts", sa.BigInteger(), nullable=False),
    )
    op.execute(
        "INSERT INTO list_sizes (list_id, contacts) SELECT lists.id,"
        " (SELECT count(*) FROM contacts WHERE contacts.list_id = lists.id) FROM lists"
    )
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_TRIGGERS if postgres else _SQLITE_TRIGGERS:
        op.execute(statement)


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_DROPS if postgres else _SQLITE_DROPS:
        op.execute(statement)
    op.drop_table("list_sizes")
