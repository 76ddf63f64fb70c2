"""A statement's contacts counted together: the list's counters no longer quadratic on PostgreSQL.

PostgreSQL keeps each version of a row a transaction updates until the transaction ends, and
every later update of the row in that transaction walks the versions before it. The counters
of migrations 0010 (`list_sizes`) and 0016 (`list_points`) were updated once a contact added or
removed: a load of n contacts in one transaction beside the service cost some n²/2 version
walks at its commit (20,000 contacts: 7 s; 200,000: not done after 13 minutes).

On PostgreSQL the contacts' inserts and deletes are now counted a statement at a time: a
statement trigger reads the statement's rows (its transition table) and appends one change a
list (`list_size_changes`) and one a list and points value (`list_points_changes`); each change
is then added to its counter by a constraint trigger on the change's row, which deletes the
change. The counters are updated once a statement, not once a contact, and the moment they are
taken stays what 0010 and 0016 chose: the size's change is added at the commit (a long
transaction holds the list's counter row for its commit only), the histogram's at the end of
the statement, or at the commit for an import turn sharing the list's lock (`list_lock.share`
defers `list_points_changes_added` as it deferred the contacts' own trigger). A change of a
contact's points or list is one row's update and keeps its row trigger: an update touching
no such column then costs nothing, where a statement trigger would read every updated row.

SQLite updates a row in place and keeps its row triggers; its change tables stay empty.

Revision ID: 0023_counter_changes
Revises: 0022_unannounced_writes
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023_counter_changes"
down_revision: str | Sequence[str] | None = "0022_unannounced_writes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CHANGES = (
    # The statement's contacts, one change a list (a size) and a list and points value.
    """CREATE FUNCTION counter_changes_appended() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO list_size_changes (list_id, contacts)
                SELECT list_id, count(*) FROM added GROUP BY list_id;
            INSERT INTO list_points_changes (list_id, points, contacts)
                SELECT list_id, points, count(*) FROM added GROUP BY list_id, points;
        ELSE
            INSERT INTO list_size_changes (list_id, contacts)
                SELECT list_id, -count(*) FROM removed GROUP BY list_id;
            INSERT INTO list_points_changes (list_id, points, contacts)
                SELECT list_id, points, -count(*) FROM removed GROUP BY list_id, points;
        END IF;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER counter_changes_contacts_added AFTER INSERT ON contacts
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT
    EXECUTE FUNCTION counter_changes_appended()""",
    """CREATE TRIGGER counter_changes_contacts_removed AFTER DELETE ON contacts
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT
    EXECUTE FUNCTION counter_changes_appended()""",
    # A size's change, added at the commit as 0010's row trigger was.
    """CREATE FUNCTION list_size_changes_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE list_sizes SET contacts = contacts + NEW.contacts WHERE list_id = NEW.list_id;
        DELETE FROM list_size_changes WHERE id = NEW.id;
        RETURN NULL;
    END $$""",
    """CREATE CONSTRAINT TRIGGER list_size_changes_added AFTER INSERT ON list_size_changes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION list_size_changes_added()""",
    # A histogram's change, at the end of the statement unless deferred; the list's size row is
    # locked first, as 0016's function does, so one list's writers take its rows in one order.
    """CREATE FUNCTION list_points_changes_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM 1 FROM list_sizes WHERE list_id = NEW.list_id FOR UPDATE;
        IF NEW.contacts > 0 THEN
            INSERT INTO list_points (list_id, points, contacts)
                VALUES (NEW.list_id, NEW.points, NEW.contacts)
                ON CONFLICT (list_id, points)
                DO UPDATE SET contacts = list_points.contacts + NEW.contacts;
        ELSE
            UPDATE list_points SET contacts = contacts + NEW.contacts
                WHERE list_id = NEW.list_id AND points = NEW.points;
            DELETE FROM list_points
                WHERE list_id = NEW.list_id AND points = NEW.points AND contacts = 0;
        END IF;
        DELETE FROM list_points_changes WHERE id = NEW.id;
        RETURN NULL;
    END $$""",
    """CREATE CONSTRAINT TRIGGER list_points_changes_added AFTER INSERT ON list_points_changes
    DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW EXECUTE FUNCTION list_points_changes_added()""",
)

# The contacts' row triggers the statement triggers replace (migrations 0010 and 0016); their
# functions stay, for the moves of a contact's points or list.
_ROW_TRIGGERS = (
    """CREATE CONSTRAINT TRIGGER list_sizes_contact_added AFTER INSERT OR DELETE ON contacts
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION list_sizes_contact_changed()""",
    """CREATE CONSTRAINT TRIGGER list_points_contact_added AFTER INSERT OR DELETE ON contacts
    DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW EXECUTE FUNCTION list_points_contact_changed()""",
)

_CHANGES_DROPS = (
    "DROP TRIGGER list_points_changes_added ON list_points_changes",
    "DROP FUNCTION list_points_changes_added()",
    "DROP TRIGGER list_size_changes_added ON list_size_changes",
    "DROP FUNCTION list_size_changes_added()",
    "DROP TRIGGER counter_changes_contacts_removed ON contacts",
    "DROP TRIGGER counter_changes_contacts_added ON contacts",
    "DROP FUNCTION counter_changes_appended()",
)

_ROW_DROPS = (
    "DROP TRIGGER list_points_contact_added ON contacts",
    "DROP TRIGGER list_sizes_contact_added ON contacts",
)


def upgrade() -> None:
    op.create_table(
        "list_size_changes",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=True), primary_key=True),
        sa.Column("list_id", sa.String(32), nullable=False),
        sa.Column("contacts", sa.BigInteger(), nullable=False),
    )
    op.create_table(
        "list_points_changes",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=True), primary_key=True),
        sa.Column("list_id", sa.String(32), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("contacts", sa.BigInteger(), nullable=False),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    for statement in _ROW_DROPS + _CHANGES:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _CHANGES_DROPS + _ROW_TRIGGERS:
            op.execute(statement)
    op.drop_table("list_points_changes")
    op.drop_table("list_size_changes")
