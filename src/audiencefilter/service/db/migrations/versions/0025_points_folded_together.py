"""A statement's histogram changes folded together on PostgreSQL, not one points value at a time.

Migration 0023 appends one change a list and points value for each statement of contacts
(`list_points_changes`), and a constraint trigger on each change added it to `list_points`: an
upsert, a lock of the list's size row and a delete for every value, then, through the triggers
of 0024, an upsert of its band. An import writes 500 contacts a statement, some 230 values a
statement at 20,000 contacts: 9,069 values folded one by one were 457 ms of the server's
1.1 s for the whole import (`pg_stat_statements`), 50 µs a value.

The trigger stays a constraint trigger on each change (so a statement's changes are still added
at its end, or at the commit of an import turn sharing the list's lock, which defers it), but
its first firing for a list adds every change of the list the transaction has not yet added, in
a few set-based statements: the values gained upserted into `list_points` in the order of the
values, the values lost updated (never inserted: a list being deleted has lost its rows to the
cascade already), the emptied values deleted, then the bands likewise in `list_point_bands`; the
later firings find their change gone and return. The bands' row trigger of 0024 stands aside
while the fold writes them itself (`audiencefilter.points_folding`, a setting local to the
transaction, set only for the fold's own statements); a contact's move of its points or list
still goes through it. The changes of other transactions are never visible
here: each transaction adds and deletes its own before it commits.

`list_points_changes` gains an index on `list_id`: the fold deletes a list's changes by it.
SQLite keeps its row triggers (its change tables stay empty).

Revision ID: 0025_points_folded_together
Revises: 0024_list_point_bands
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0025_points_folded_together"
down_revision: str | Sequence[str] | None = "0024_list_point_bands"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FOLD = """CREATE OR REPLACE FUNCTION list_points_changes_added() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    folded_values bigint[];
    folded_counts bigint[];
BEGIN
    PERFORM 1 FROM list_points_changes WHERE id = NEW.id;
    IF NOT FOUND THEN
        RETURN NULL;  -- added by the fold of an earlier change of its list
    END IF;
    PERFORM 1 FROM list_sizes WHERE list_id = NEW.list_id FOR UPDATE;
    WITH folded AS (
        DELETE FROM list_points_changes WHERE list_id = NEW.list_id
        RETURNING points, contacts
    ), summed AS (
        SELECT points, sum(contacts)::bigint AS contacts FROM folded GROUP BY points
    )
    SELECT array_agg(points ORDER BY points), array_agg(contacts ORDER BY points)
        INTO folded_values, folded_counts
        FROM summed WHERE contacts <> 0;
    IF folded_values IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('audiencefilter.points_folding', 'on', true);
    -- Values gained are upserted; values lost are updated, never inserted (the list may be
    -- going, its rows deleted by the cascade that removes its contacts).
    INSERT INTO list_points (list_id, points, contacts)
        SELECT NEW.list_id, value, count
        FROM unnest(folded_values, folded_counts) AS f(value, count) WHERE count > 0
        ON CONFLICT (list_id, points)
        DO UPDATE SET contacts = list_points.contacts + EXCLUDED.contacts;
    UPDATE list_points SET contacts = list_points.contacts + f.count
        FROM unnest(folded_values, folded_counts) AS f(value, count)
        WHERE f.count < 0 AND list_points.list_id = NEW.list_id AND list_points.points = f.value;
    DELETE FROM list_points
        WHERE list_id = NEW.list_id AND points = ANY(folded_values) AND contacts = 0;
    WITH bands AS (
        SELECT value >> 6 AS band, sum(count)::bigint AS count
        FROM unnest(folded_values, folded_counts) AS f(value, count)
        GROUP BY value >> 6
    ), gained AS (
        INSERT INTO list_point_bands (list_id, band, contacts)
            SELECT NEW.list_id, band, count FROM bands WHERE count > 0 ORDER BY band
            ON CONFLICT (list_id, band)
            DO UPDATE SET contacts = list_point_bands.contacts + EXCLUDED.contacts
    )
    UPDATE list_point_bands SET contacts = list_point_bands.contacts + bands.count
        FROM bands
        WHERE bands.count < 0 AND list_point_bands.list_id = NEW.list_id
        AND list_point_bands.band = bands.band;
    DELETE FROM list_point_bands
        WHERE list_id = NEW.list_id AND contacts = 0
        AND band IN (SELECT value >> 6 FROM unnest(folded_values) AS f(value));
    PERFORM set_config('audiencefilter.points_folding', 'off', true);
    RETURN NULL;
END $$"""

_FOLDING = """    IF current_setting('audiencefilter.points_folding', true) = 'on' THEN
        RETURN NULL;  -- the fold of list_points_changes writes the bands itself
    END IF;
"""
"""The bands' trigger's first lines from this revision on: it stands aside during a fold."""

_BANDS_FUNCTION = """CREATE OR REPLACE FUNCTION list_point_bands_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
{folding}    IF TG_OP = 'INSERT' THEN
        INSERT INTO list_point_bands (list_id, band, contacts)
            VALUES (NEW.list_id, NEW.points >> 6, NEW.contacts)
            ON CONFLICT (list_id, band)
            DO UPDATE SET contacts = list_point_bands.contacts + NEW.contacts;
    ELSIF TG_OP = 'UPDATE' THEN
        UPDATE list_point_bands SET contacts = contacts + NEW.contacts - OLD.contacts
            WHERE list_id = NEW.list_id AND band = NEW.points >> 6;
        DELETE FROM list_point_bands
            WHERE list_id = NEW.list_id AND band = NEW.points >> 6 AND contacts = 0;
    ELSE
        UPDATE list_point_bands SET contacts = contacts - OLD.contacts
            WHERE list_id = OLD.list_id AND band = OLD.points >> 6;
        DELETE FROM list_point_bands
            WHERE list_id = OLD.list_id AND band = OLD.points >> 6 AND contacts = 0;
    END IF;
    RETURN NULL;
END $$"""
_BANDS = _BANDS_FUNCTION.format(folding=_FOLDING)
_BANDS_BEFORE = _BANDS_FUNCTION.format(folding="")  # 0024's, for the downgrade

# 0023's fold as it was, for the downgrade.
_FOLD_BEFORE = """CREATE OR REPLACE FUNCTION list_points_changes_added() RETURNS trigger
LANGUAGE plpgsql AS $$
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
END $$"""


def upgrade() -> None:
    op.create_index("ix_list_points_changes_list", "list_points_changes", ["list_id"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_BANDS)
        op.execute(_FOLD)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_FOLD_BEFORE)
        op.execute(_BANDS_BEFORE)
    op.drop_index("ix_list_points_changes_list", "list_points_changes")
