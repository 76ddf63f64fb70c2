"""The rows every contact write moves, `memberships` and `events`, lighter: no foreign keys,
and events keyed by their list and position rather than by their random id.

A contact update that moves it in or out of audiences writes a membership row and an event for
each audience it moves. Their foreign keys (a membership's audience and contact, an event's
list) made PostgreSQL check and lock the referenced row for every one of them, and the lock of
an audience's or a list's row taken by several concurrent writers is a shared row lock
(a multixact): on the served benchmark that was about a seventh of PostgreSQL's CPU a contact
update. What the keys guarded is kept by the code, in the one order every writer keeps: the
list's lock (`domain/events.py`) is held by whoever deletes a contact, an audience or a list,
and by every writer of its memberships and events, so no row can be written for something
being deleted; deleting a contact or an audience first removes its memberships (the members
leave, with their events), and deleting a list removes its memberships and events
(`domain/use_cases/lists.remove`). `tests/service/test_deletions_leave_nothing.py` checks
every deletion on both engines.

An event's `id` (80 random bits) was its primary key: a random key lands each insert on any
page of a large index, and that index alone took about a fifth of PostgreSQL's CPU a contact
update on the served benchmark (0.98 -> 0.77 ms without it). The list and the position were
already unique together, and are what the feed reads by: they are the key now, and the id has
no index. Nothing reads an event by its id; its uniqueness is that of 80 random bits (about
one chance in 2.4 million of any two alike among a billion events).

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_DROPPED = (
    ("memberships", "fk_memberships_audience_id_audiences", "audiences", "audience_id"),
    ("memberships", "fk_memberships_contact_id_contacts", "contacts", "contact_id"),
    ("events", "fk_events_list_id_lists", "lists", "list_id"),
)


def upgrade() -> None:
    for table, name, _, _ in _DROPPED:
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(name, type_="foreignkey")
    with op.batch_alter_table("events") as batch:
        batch.drop_constraint("uq_events_list_id_position", type_="unique")
        batch.drop_constraint("pk_events", type_="primary")
        batch.create_primary_key("pk_events", ["list_id", "position"])


def downgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.drop_constraint("pk_events", type_="primary")
        batch.create_primary_key("pk_events", ["id"])
        batch.create_unique_constraint("uq_events_list_id_position", ["list_id", "position"])
    for table, name, referred, column in _DROPPED:
        with op.batch_alter_table(table) as batch:
            batch.create_foreign_key(name, referred, [column], ["id"], ondelete="CASCADE")
