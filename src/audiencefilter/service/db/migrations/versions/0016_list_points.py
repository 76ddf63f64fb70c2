"""Each list's points histogram, kept by the database itself: `list_points`.

A contact's position counts the contacts ranked before it (more points; as many, signed up
earlier). Counted over an index of `contacts` that costs the contact's rank: half a million
entries for a contact in the middle of a list of a million. The histogram holds one row per
list and points value with its number of contacts, so the count of contacts with more points is
a sum over the distinct points values above (a few hundred rows), and only the contacts with
exactly as many points are counted on the index.

Triggers keep it on every insert, delete (cascades from a deleted list included) and update of
a contact's points or list, however it is written. A row whose count reaches 0 is deleted, so
the table holds only the points values a list's contacts have.

On SQLite the update's trigger runs before the row changes: an `UPDATE ... RETURNING` then reads
the histogram and the contacts both as the write left them (an AFTER trigger runs after the
RETURNING, which would read the histogram before the write and the row after it). On PostgreSQL
the RETURNING reads both as they were before the statement (its snapshot).

On PostgreSQL the triggers are constraint triggers, `DEFERRABLE INITIALLY IMMEDIATE`: positions
are read in the transaction that writes (the answer of a create, a turn of updates), so the
histogram must follow each statement; those writers hold the list's exclusive lock, and the
counter rows add no wait of their own. Import turns sharing the list's lock (`list_lock.share`)
defer them to their commit, as `list_sizes` (0010) is, so they take the rows at their end only,
after the list's event counter that orders them. Two such turns may hold rows of different
points values (an import without events takes no counter), and commits taking them in different
orders could deadlock: the function first locks the list's `list_sizes` row, so the commits of
one list's writers take its histogram rows one writer after the other, never crosswise.

Revision ID: 0016_list_points
Revises: 0015
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_list_points"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ADD = """INSERT INTO list_points (list_id, points, contacts) VALUES ({0}.list_id, {0}.points, 1)
        ON CONFLICT (list_id, points) DO UPDATE SET contacts = list_points.contacts + 1;"""
_REMOVE = """UPDATE list_points SET contacts = contacts - 1
        WHERE list_id = {0}.list_id AND points = {0}.points;
        DELETE FROM list_points
        WHERE list_id = {0}.list_id AND points = {0}.points AND contacts = 0;"""

_SQLITE_TRIGGERS = (
    f"""CREATE TRIGGER list_points_contact_added AFTER INSERT ON contacts BEGIN
        {_ADD.format("NEW")}
    END""",
    f"""CREATE TRIGGER list_points_contact_removed AFTER DELETE ON contacts BEGIN
        {_REMOVE.format("OLD")}
    END""",
    f"""CREATE TRIGGER list_points_contact_moved BEFORE UPDATE OF points, list_id ON contacts
    WHEN OLD.points IS NOT NEW.points OR OLD.list_id IS NOT NEW.list_id BEGIN
        {_REMOVE.format("OLD")}
        {_ADD.format("NEW")}
    END""",
)

_POSTGRES_TRIGGERS = (
    f"""CREATE FUNCTION list_points_contact_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        owner text;
    BEGIN
        IF TG_OP = 'DELETE' THEN owner := OLD.list_id; ELSE owner := NEW.list_id; END IF;
        PERFORM 1 FROM list_sizes WHERE list_id = owner FOR UPDATE;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            {_REMOVE.format("OLD")}
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            {_ADD.format("NEW")}
        END IF;
        RETURN NULL;
    END $$""",
    """CREATE CONSTRAINT TRIGGER list_points_contact_added AFTER INSERT OR DELETE ON contacts
    DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW EXECUTE FUNCTION list_points_contact_changed()""",
    """CREATE CONSTRAINT TRIGGER list_points_contact_moved
    AFTER UPDATE OF points, list_id ON contacts DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW
    WHEN (OLD.points IS DISTINCT FROM NEW.points OR OLD.list_id IS DISTINCT FROM NEW.list_id)
    EXECUTE FUNCTION list_points_contact_changed()""",
)

_POSTGRES_DROPS = (
    "DROP TRIGGER list_points_contact_moved ON contacts",
    "DROP TRIGGER list_points_contact_added ON contacts",
    "DROP FUNCTION list_points_contact_changed()",
)

_SQLITE_DROPS = tuple(
    f"DROP TRIGGER {name}"
    for name in (
        "list_points_contact_moved",
        "list_points_contact_removed",
        "list_points_contact_added",
    )
)


def upgrade() -> None:
    list_id = sa.ForeignKey("lists.id", ondelete="CASCADE")
    op.create_table(
        "list_points",
        sa.Column("list_id", sa.String(32), list_id, primary_key=True),
        sa.Column("points", sa.BigInteger(), primary_key=True),
        sa.Column("contacts", sa.BigInteger(), nullable=False),
    )
    op.execute(
        "INSERT INTO list_points (list_id, points, contacts)"
        " SELECT list_id, points, count(*) FROM contacts GROUP BY list_id, points"
    )
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_TRIGGERS if postgres else _SQLITE_TRIGGERS:
        op.execute(statement)


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_DROPS if postgres else _SQLITE_DROPS:
        op.execute(statement)
    op.drop_table("list_points")
