"""What differs between the SQL engines in the service's own statements: the one home of the
service's per-dialect branches (the filter library has its own, behind `Filter.to_sqlalchemy`).

Every function takes the dialect's name (`dialect_of(session)`) and answers the same meaning on
each engine: PostgreSQL and SQLite, the two the service runs on, get a statement of their own
where it pays, and any other engine a portable one (or None, where the caller has a portable
way that needs no SQL at all).

`column IN (the ids of a page)` with all the ids in one bound parameter.

A page holds up to 20,000 contacts, and the statements that rank them and find their manual
memberships select by their ids. An expanding `IN (:id_1, ..., :id_20000)` costs more to bind than
the query costs to run, and approaches SQLite's limit of 32,766 parameters. Both databases the
service runs on can unpack one array parameter into a set to join with instead: PostgreSQL with
`IN (SELECT unnest(:ids))` (a text array) and SQLite with `IN (SELECT value FROM json_each(:ids))`
(a JSON array). On PostgreSQL, `= ANY(:ids)` would be shorter but is a linear search per row
once the statement runs as a prepared generic plan (psycopg prepares a statement from its fifth
run): 20,000 ids times 100,000 ranked rows. Other databases get the expanding `IN`.

Statements are built once per dialect and cached; the caller passes the ids as `ids`.

`unpacked` is the same parameter as a table, each id with its place in the list (1, 2, ...):
what an `INSERT ... SELECT` of thousands of rows reads instead of one parameter set per row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, TypeVar
from typing import cast as typed

from sqlalchemy import (
    JSON,
    BigInteger,
    ColumnElement,
    DateTime,
    Integer,
    Select,
    String,
    Subquery,
    Table,
    Text,
    bindparam,
    cast,
    false,
    func,
    literal,
    literal_column,
    select,
    text,
    type_coerce,
)
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import QueryableAttribute, Session
from sqlalchemy.sql.elements import BindParameter, TextClause

from .prepared_cache import planned_once

IDS = "ids"
T = TypeVar("T")
STORES = ("sqlite", "postgresql")
"""The databases the service stores in, by dialect name: what a statement built once per
dialect ahead of its first use is built for."""


def ids_in(
    column: ColumnElement[str] | QueryableAttribute[str], dialect: str
) -> ColumnElement[bool]:
    """The condition `column IN :ids` for `dialect`, with `ids` one parameter where possible."""
    if dialect == "postgresql":
        return column.in_(
            select(func.unnest(bindparam(IDS, type_=ARRAY(String)))).scalar_subquery()
        )
    if dialect == "sqlite":
        values = func.json_each(bindparam(IDS, type_=JSON)).table_valued("value")
        return column.in_(select(values.c.value).scalar_subquery())
    return column.in_(bindparam(IDS, expanding=True))


def each_id(dialect: str) -> ColumnElement[str] | None:
    """The `ids` parameter as rows, one an id (the column of `unnest` on PostgreSQL, of
    `json_each` on SQLite), to select from: a statement then runs once for each id, where
    `ids_in` leaves the join to the planner; None on an engine without one."""
    if dialect == "postgresql":
        return (
            func.unnest(bindparam(IDS, type_=ARRAY(String)))
            .table_valued("id")
            .render_derived()
            .c.id
        )
    if dialect == "sqlite":
        return func.json_each(bindparam(IDS, type_=JSON)).table_valued("value").c.value
    return None


def streams_exports(dialect: str) -> bool:
    """Whether an export reads its rows through one server-side cursor (PostgreSQL), rather
    than batch after batch, each in a short transaction of its own (keyset paging).

    A cursor holds its read transaction open while the client reads: on PostgreSQL that blocks
    no writer (MVCC) and makes the export one snapshot, and it saves the 67 statements of a
    67,000-member export, each a new transaction and plan on the server. On SQLite a read
    transaction open for the length of a slow download would hold back the write-ahead log's
    checkpoints, so it keeps the short transactions."""
    return dialect == "postgresql"


def advisory_lock(dialect: str, *, shared: bool) -> Select[Any] | None:
    """The statement that takes a transaction-scoped lock on a name (`:lock_name`, a list's
    id) in a kind of lock (`:lock_kind`, a number), shared with other shared holders or alone;
    None where the database has none (SQLite, whose writers take turns on the whole database
    anyway). Its key is `lock_key`'s, as is the lock a statement takes as it reads
    (`lock_column`)."""
    if dialect != "postgresql":
        return None
    return _SHARED_LOCK if shared else _EXCLUSIVE_LOCK


def lock_column(
    dialect: str, name: ColumnElement[str] | QueryableAttribute[str], kind: int
) -> ColumnElement[Any] | None:
    """The exclusive lock of `advisory_lock` on the name a statement reads (`name`, a column),
    taken as that statement returns its row: the lock and the read that finds what to lock in
    one round trip. The read's snapshot is the statement's own, taken before the lock is
    waited for, as a read before a lock statement would be. None where `advisory_lock` is."""
    if dialect != "postgresql":
        return None
    return func.pg_advisory_xact_lock(lock_key(name, literal(kind, BigInteger)))


def lock_key(
    name: ColumnElement[str] | QueryableAttribute[str], kind: ColumnElement[int]
) -> ColumnElement[int]:
    """The advisory lock's 64-bit key of a name in a kind of lock: PostgreSQL's own hash of
    the text, seeded by the kind, computed by the server, so a statement can lock what it reads
    (two names sharing a key only wait for each other)."""
    return func.hashtextextended(name, kind)


def _lock(function: str) -> Select[Any]:
    name = bindparam(LOCK_NAME, type_=String)
    kind = bindparam(LOCK_KIND, type_=BigInteger)
    return planned_once(select(getattr(func, function)(lock_key(name, kind))))


def deferred_points(dialect: str) -> TextClause | None:
    """The statement that defers the points histogram's triggers (migrations 0016, 0023) to the
    transaction's commit, for a writer sharing its list's lock; None where they run in the
    write itself (SQLite, whose writers take turns anyway)."""
    return _DEFER_POINTS if dialect == "postgresql" else None


def list_statistics(dialect: str) -> TextClause | None:
    """The statement that refreshes the planner's statistics of the contacts' lists
    (`list_statistics`); None where the planner needs none to pick a list's unique index."""
    return _ANALYZE_LISTS if dialect == "postgresql" else None


_ANALYZE_LISTS = text("ANALYZE contacts (list_id)")
_DEFER_POINTS = text(
    "SET CONSTRAINTS list_points_changes_added, list_points_contact_moved DEFERRED"
)
LOCK_NAME = "lock_name"
LOCK_KIND = "lock_kind"
_SHARED_LOCK = _lock("pg_advisory_xact_lock_shared")
_EXCLUSIVE_LOCK = _lock("pg_advisory_xact_lock")


def unpacks(dialect: str) -> bool:
    """Whether `unpacked` knows this database."""
    return dialect in ("postgresql", "sqlite")


def writes_in_with(dialect: str) -> bool:
    """Whether a statement may carry other writes in its `WITH` (PostgreSQL's data-modifying
    CTEs): two writes of one transaction then cost one round trip."""
    return dialect == "postgresql"


def heads_follow_events(dialect: str) -> bool:
    """Whether the database raises a list's event counter itself when an event is inserted
    past it (SQLite: migration 0018's trigger on `events`), so an insert may number its own
    rows from the counter and no advance runs before it. PostgreSQL keeps no such trigger: its
    writers advance the counter first, its row lock ordering their commits."""
    return dialect == "sqlite"


def unpacked(dialect: str, ids: Sequence[str]) -> Subquery:
    """`ids` as a table of `value` (an id) and `ordinal` (its place, from 1), from one
    parameter: `unnest(string_to_array(...)) WITH ORDINALITY` on PostgreSQL (`_joined`),
    `json_each` on SQLite (whose `key` counts from 0)."""
    if dialect == "postgresql":
        joined = bindparam(None, _joined(list(ids)), type_=String)
        values = func.string_to_array(joined, literal(_SEPARATOR, String))
        table = func.unnest(values).table_valued("value", with_ordinality="ordinal")
        table = table.render_derived()
        return select(table.c.value, table.c.ordinal).subquery()
    table = func.json_each(bindparam(None, list(ids), type_=JSON)).table_valued("key", "value")
    return select(table.c.value, (table.c.key + 1).label("ordinal")).subquery()


def unpacked_named(dialect: str, key: str) -> Subquery:
    """`unpacked` without the ordinal, its ids supplied at execution as the parameter `key`
    (`unpacked_parameter`), so a statement over it is built once per dialect. On SQLite each
    id is a value of `json_each` itself, with no `json_extract` per row to pay in a join."""
    if dialect == "postgresql":
        values = func.string_to_array(bindparam(key, type_=String), literal(_SEPARATOR, String))
        table = func.unnest(values).table_valued("value").render_derived()
        return select(table.c.value).subquery()
    table = func.json_each(bindparam(key, type_=JSON)).table_valued("value")
    return select(table.c.value).subquery()


def unpacked_parameter(dialect: str, ids: Sequence[str]) -> Any:
    """The value of `unpacked_named`'s parameter holding `ids`."""
    return _joined(list(ids)) if dialect == "postgresql" else list(ids)


def unpacked_rows(dialect: str, names: Sequence[str], rows: Sequence[Sequence[str]]) -> Subquery:
    """`rows` (each a text per name) as a table of those columns and `ordinal` (from 1), from
    one parameter per column on PostgreSQL (`unnest(string_to_array(a, ...), ...) WITH
    ORDINALITY`, each column's texts sent joined by `_SEPARATOR`) or one JSON array of arrays
    on SQLite (`json_each`, each column by `json_extract`)."""
    values = rows_parameters(dialect, names, rows, "")
    return _rows_table(dialect, names, lambda key, type_: bindparam(None, values[key], type_))


def unpacked_rows_named(dialect: str, names: Sequence[str], key: str) -> Subquery:
    """`unpacked_rows` whose rows are supplied at execution (`rows_parameters(..., key)`), so
    a statement over it can be built, keyed and compiled once per dialect."""
    keys = dict(zip(_row_keys(dialect, names, ""), _row_keys(dialect, names, key), strict=True))
    return _rows_table(dialect, names, lambda name, type_: bindparam(keys[name], type_=type_))


def rows_parameters(
    dialect: str, names: Sequence[str], rows: Sequence[Sequence[str | None]], key: str
) -> dict[str, Any]:
    """The parameters of `unpacked_rows_named(dialect, names, key)` holding `rows`, whose
    cells are texts or None (NULL: on SQLite a JSON null, on PostgreSQL `_NULL`, which the
    table reads back as NULL)."""
    keys = _row_keys(dialect, names, key)
    if dialect == "postgresql":
        return {k: _column([row[i] for row in rows]) for i, k in enumerate(keys)}
    return {keys[0]: rows}


def _column(cells: list[str | None]) -> str:
    """A column of `rows_parameters` on PostgreSQL: a NULL as `_NULL`, which no text may hold
    (counted once in the joined text, not tested cell by cell: a call a cell was a tenth of a
    PATCH's calls in our code)."""
    joined = _joined([_NULL if cell is None else cell for cell in cells])
    if joined.count(_NULL) != cells.count(None):
        raise ValueError("rows_parameters takes texts without a record separator")
    return joined


_SEPARATOR = "\x1f"  # ASCII's unit separator: in no id, event type or number
_NULL = "\x1e"  # ASCII's record separator, a NULL cell of `rows_parameters` on PostgreSQL


def _joined(texts: list[str]) -> str:
    """One column of `rows_parameters` on PostgreSQL: its texts as one text, split again by the
    server (`string_to_array`). Sent as a text array, psycopg escaped it element by element in
    Python, which cost a write judging a thousand contacts more than the statements it fed."""
    joined = _SEPARATOR.join(texts)
    if joined.count(_SEPARATOR) != max(len(texts) - 1, 0) or (texts and not all(texts)):
        raise ValueError("rows_parameters takes non-empty texts without a unit separator")
    return joined


def _row_keys(dialect: str, names: Sequence[str], key: str) -> list[str]:
    """The parameters' names: one per column on PostgreSQL, one in all on SQLite."""
    if dialect == "postgresql":
        return [f"{key}_{name}" for name in names]
    return [f"{key}_rows"]


def _rows_table(
    dialect: str, names: Sequence[str], parameter: Callable[[str, Any], BindParameter[Any]]
) -> Subquery:
    """The table of `unpacked_rows`, its parameters made by `parameter(name, type)`."""
    keys = _row_keys(dialect, names, "")
    if dialect == "postgresql":
        separator = literal(_SEPARATOR, String)
        columns = [func.string_to_array(parameter(k, String), separator) for k in keys]
        table = func.unnest(*columns).table_valued(*names, with_ordinality="ordinal")
        table = table.render_derived()
        cells = [func.nullif(table.c[name], literal(_NULL, String)).label(name) for name in names]
        return select(*cells, table.c.ordinal).subquery()
    each = func.json_each(parameter(keys[0], JSON)).table_valued("key", "value")
    picked = [
        func.json_extract(each.c.value, f"$[{index}]", type_=String).label(name)
        for index, name in enumerate(names)
    ]
    return select(*picked, (each.c.key + 1).label("ordinal")).subquery()


def picked_text(dialect: str, name: str, index: ColumnElement[str]) -> ColumnElement[str]:
    """The text at `index` (a column of decimal texts counting from 0) of the texts bound once
    as the parameter `name` (`texts_parameter`): rows that repeat a few long texts (an event's
    payload) bind each text once and an index per row. Sent per row in a text array, each
    payload's quotes were escaped one by one in Python.

    On PostgreSQL the texts are split once per statement, by a subquery the plan runs before
    the rows (an init plan), and each row indexes the array. Bound as one JSON array and
    picked with `->>`, PostgreSQL parsed the whole array again for every row (`json` keeps
    text): half of the insert of a turn's events (486 events of 100 payloads: 15 ms, 8 ms
    split once)."""
    if dialect == "postgresql":
        split = func.string_to_array(bindparam(name, type_=Text), literal(_SEPARATOR, String))
        texts = type_coerce(select(split).scalar_subquery(), ARRAY(Text))
        return typed(ColumnElement[str], texts[cast(index, Integer) + 1])
    path = literal("$[") + index + literal("]")
    return func.json_extract(bindparam(name, type_=String), path, type_=String)


def texts_parameter(dialect: str, texts: Sequence[str]) -> str:
    """The value of `picked_text`'s parameter: on PostgreSQL the texts joined by the unit
    separator (JSON texts never hold it unescaped; a text that does is refused), elsewhere the
    texts as one JSON array."""
    if dialect == "postgresql":
        return _joined(list(texts))
    return json.dumps(list(texts))


def dialect_of(session: Session) -> str:
    return session.get_bind().dialect.name


def bytewise(dialect: str, column: ColumnElement[str]) -> ColumnElement[str]:
    """`column` compared by its characters' codes, as Python compares texts: `COLLATE "C"` on
    PostgreSQL, whose databases sort by a language's collation otherwise (which skips `_` at
    first); SQLite's default (`BINARY`) compares so already."""
    return column.collate("C") if dialect == "postgresql" else column


def per_dialect(build: Callable[[str], T]) -> Callable[[str], T]:
    """`build(dialect)`, computed once per dialect name."""
    return cache(build)


def joined_text(text: ColumnElement[str] | QueryableAttribute[str], dialect: str) -> Any:
    """The aggregate joining `text` of the grouped rows with commas: `string_agg` on
    PostgreSQL, `group_concat` elsewhere (SQLite, MariaDB)."""
    if dialect == "postgresql":
        return func.string_agg(text, literal_column("','"))
    return func.group_concat(text)  # a comma by default, on SQLite and MariaDB alike


def json_id_array(ids: ColumnElement[str], dialect: str) -> ColumnElement[Any] | None:
    """The aggregate of `ids` as the text of one JSON array, built by the database and decoded
    by Python at once (`json_group_array`, `json_agg`); None on an engine without one: the
    caller fetches the rows."""
    if dialect == "sqlite":
        return func.json_group_array(ids)
    if dialect == "postgresql":
        return cast(func.json_agg(ids), Text)
    return None


def instant_from_text(text: ColumnElement[str], dialect: str) -> ColumnElement[Any]:
    """A date-time sent as text in the form the column's own type writes (`unpacked_rows`):
    SQLite stores that text, PostgreSQL casts it to `timestamptz`."""
    return text if dialect == "sqlite" else cast(text, DateTime(timezone=True))


def past_middle(
    dialect: str, instant: ColumnElement[Any], first: ColumnElement[Any], last: ColumnElement[Any]
) -> ColumnElement[bool]:
    """Whether `instant` lies nearer `last` than `first` (NULL when any is): intervals on
    PostgreSQL, Julian days on SQLite, which stores date-times as text; never elsewhere."""
    if dialect == "postgresql":
        return (instant - first) > (last - instant)
    if dialect == "sqlite":
        day = func.julianday
        return 2 * day(instant) > day(first) + day(last)
    return false()


def json_from_text(text: ColumnElement[str], dialect: str) -> ColumnElement[Any]:
    """JSON text encoded in Python, stored as it is: SQLite keeps JSON as text, PostgreSQL
    casts it to its JSON type."""
    return text if dialect == "sqlite" else cast(text, JSON)


def random_id(prefix: str, dialect: str) -> ColumnElement[str]:
    """`prefix` and 20 random hex digits, drawn by the database: SQLite's `randomblob`, or on
    PostgreSQL the random bytes of two version 4 UUIDs (bytes 0-5 and 10-13, none of the
    version or variant bits)."""
    if dialect == "sqlite":
        return literal(prefix) + func.lower(func.hex(func.randomblob(10)))
    random = [func.encode(func.uuid_send(func.gen_random_uuid()), "hex") for _ in range(2)]
    return literal(prefix) + func.substr(random[0], 1, 12) + func.substr(random[1], 21, 8)


@cache
def adding_upsert(dialect: str, table: Table, keys: tuple[str, ...], added: str) -> Any:
    """`INSERT INTO table` that, where a row's `keys` exist already, adds its `added` column to
    the stored one instead: `ON CONFLICT (keys) DO UPDATE SET added = added + excluded.added`
    on PostgreSQL and SQLite, `ON DUPLICATE KEY UPDATE` on MariaDB. Built once per dialect and
    table, executed with the rows as parameter sets: the driver's executemany (SQLite's in C,
    psycopg's pipelined), where a statement of the rows' `VALUES` cost SQLAlchemy 1.5 s to
    compile for the 5,050 pairs of a contact moving across 100 audiences."""
    if dialect in ("mysql", "mariadb"):
        found = mysql.insert(table)
        return found.on_duplicate_key_update({added: table.c[added] + found.inserted[added]})
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return _adding(insert(table), table, keys, added)


def adding_upsert_from(
    dialect: str, table: Table, keys: tuple[str, ...], added: str, names: Sequence[str], rows: Any
) -> Any:
    """`adding_upsert` of the rows a `SELECT` gives (`rows`, its columns `names`), as one
    statement, where the database has `ON CONFLICT` (PostgreSQL, SQLite): what a
    data-modifying `WITH` carries on PostgreSQL (`writes_in_with`), a statement of its own on
    SQLite; None elsewhere (MariaDB). The rows' keys must be distinct (a row may not be updated
    twice by one statement)."""
    if dialect not in ("postgresql", "sqlite"):
        return None
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return _adding(insert(table).from_select(list(names), rows), table, keys, added)


def inserting_unless_present(dialect: str, table: Table, keys: tuple[str, ...]) -> Any:
    """`INSERT INTO table` that leaves a row whose `keys` exist already as it is: `ON CONFLICT
    (keys) DO NOTHING` on PostgreSQL and SQLite, `INSERT IGNORE` on MariaDB."""
    if dialect in ("mysql", "mariadb"):
        return mysql.insert(table).prefix_with("IGNORE")
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return insert(table).on_conflict_do_nothing(index_elements=[table.c[key] for key in keys])


def packed_ids(dialect: str, ids: Sequence[str]) -> str:
    """The ids as one text to keep in a column, which `unpacked_column` reads back: joined by
    the separator of `unpacked_parameter` on PostgreSQL, a JSON array on SQLite."""
    if dialect == "postgresql":
        return _joined(list(ids))
    return json.dumps(list(ids))


def packed_aggregate(dialect: str, ids: Any) -> Any:
    """The aggregate packing the grouped rows' `ids` as `packed_ids` packs a list, for
    `unpacked_column` to read back: `string_agg` by the separator on PostgreSQL,
    `json_group_array` on SQLite."""
    if dialect == "postgresql":
        return func.string_agg(ids, literal(_SEPARATOR, String))
    return func.json_group_array(ids)


def unpacked_column(dialect: str, column: Any, name: str) -> Any:
    """The ids a column packs (`packed_ids`) as a table of one column, `value`, named `name`, to
    join after the column's own table (a function in `FROM` may read the tables before it:
    `unnest(string_to_array(...))` on PostgreSQL, `json_each` on SQLite)."""
    if dialect == "postgresql":
        values = func.string_to_array(column, literal(_SEPARATOR, String))
        return func.unnest(values).table_valued("value").render_derived(name=name)
    return func.json_each(column).table_valued("value").alias(name)


def _adding(statement: Any, table: Table, keys: tuple[str, ...], added: str) -> Any:
    return statement.on_conflict_do_update(
        index_elements=[table.c[key] for key in keys],
        set_={added: table.c[added] + statement.excluded[added]},
    )
