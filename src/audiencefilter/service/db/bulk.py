"""Many rows inserted through the driver's `executemany`, with the columns' own conversions.

A Core `insert(...)` of many rows compiles once, but SQLAlchemy still walks every parameter of
every row in Python (defaults, type processors, the parameter dictionary); for the thousands of
membership rows and events a bulk import writes, that walk cost more than the database did.
Here the statement is compiled once per table and set of columns, each column's bind processor
is taken from its type once (JSON encoding, SQLite's date-time text), and the rows go to the
driver as tuples (or dictionaries, for drivers that name their parameters). Every column a row
needs is given by the caller: no Python-side default runs. On PostgreSQL the rows go by `COPY`
instead: psycopg's executemany runs one statement per row, and a thousand contacts took 180 ms
that way against 45 ms copied. On SQLite the rows go as one `INSERT ... VALUES (...), (...)` of
as many rows as its limit of parameters allows: `executemany` runs the statement once per row,
and a table with triggers (`contacts`: `list_sizes`, `list_points`) makes every statement write
a statement journal of the pages it touches, so a row alone wrote some 60 KB of it (measured:
3.3 GB for 50,000 contacts against 0.6 GB without the triggers).

`RowMaker` builds such rows for a mapped class (its defaults filled in, as the ORM would at a
flush): a bulk import writes its new contacts with it, without an ORM object each.

`update_by_id` is the same for rows that change: on PostgreSQL one `UPDATE ... FROM` per set of
columns changed, the rows sent as one JSON array that the server reads as rows of the table's
own type (`json_populate_recordset`, each value parsed by its column's type), where the ORM's
update by primary key ran one statement per row (an upsert of a thousand contacts: 140 ms of
the server's time and 12 % of the service's, for two columns).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import cache, lru_cache
from itertools import chain, groupby
from operator import itemgetter
from typing import Any

from sqlalchemy import Table, insert, inspect, update
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

CHUNK = 1000


def insert_rows(session: Session, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Inserts `rows` (every one with the same keys: column names) into `table`."""
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    columns = list(rows[0])
    prepared = _prepared(table, dialect, columns)
    values_of = prepared.values_of
    if dialect.name == "postgresql":
        _copy_rows(session, table, columns, (values_of(row) for row in rows))
        return
    position, order = prepared.position, prepared.order
    together = _rows_per_statement(connection, prepared, len(columns))
    for start in range(0, len(rows), CHUNK):
        chunk = [values_of(row) for row in rows[start : start + CHUNK]]
        if together > 1:
            _insert_together(connection, prepared, chunk, together)
            continue
        if prepared.positional:
            params: Any = [tuple(values[i] for i in position) for values in chunk]
        else:
            params = [dict(zip(order, values, strict=True)) for values in chunk]
        connection.exec_driver_sql(prepared.sql, params)


MULTI_ROW = True
"""Whether SQLite takes the rows as multi-row inserts (False: one `executemany` per chunk, the
plain path; `tests/service/test_bulk_rows.py` compares the two)."""


def _rows_per_statement(connection: Any, prepared: _Prepared, width: int) -> int:
    """Rows one statement takes: on SQLite as many as its limit of parameters allows (1 for
    the other dialects, or when the switch is off)."""
    if not MULTI_ROW or prepared.dialect.name != "sqlite" or not prepared.positional:
        return 1
    raw: Any = connection.connection.dbapi_connection
    limit = int(raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
    return max(1, min(CHUNK, limit // max(1, width)))


def _insert_together(
    connection: Any, prepared: _Prepared, chunk: list[list[Any]], together: int
) -> None:
    """The chunk's rows, `together` per statement: one `VALUES` tuple each, in order (joined
    at C speed when the statement takes the columns in the rows' order, as it does on SQLite:
    a generator over every value cost a bulk import more than its look-ups of existing emails)."""
    position, in_order = prepared.position, prepared.in_order
    for start in range(0, len(chunk), together):
        part = chunk[start : start + together]
        if in_order:
            params = tuple(chain.from_iterable(part))
        else:
            params = tuple(values[i] for values in part for i in position)
        connection.exec_driver_sql(_multi_row_sql(prepared.sql, len(part)), params)


@lru_cache(maxsize=16)
def _multi_row_sql(sql: str, rows: int) -> str:
    """A compiled single-row insert (`... VALUES (?, ?)`) made to insert `rows` rows."""
    head, _, values = sql.rpartition(" VALUES ")
    return f"{head} VALUES {', '.join([values] * rows)}"


@dataclass(frozen=True)
class _Prepared:
    """A table's insert for one set of columns on one dialect, compiled, with its converter."""

    table: Table
    dialect: Dialect
    sql: str
    positional: bool
    order: list[str]
    position: list[int]
    in_order: bool  # the statement takes the columns in the rows' order (`position` is 0, 1...)
    values_of: Callable[[Mapping[str, Any]], list[Any]]
    """A row's values in the order of the columns, each through its column's conversion."""


_PREPARED: dict[tuple[int, int, tuple[str, ...]], _Prepared] = {}
_PREPARED_KEPT = 256


def _prepared(table: Table, dialect: Dialect, columns: list[str]) -> _Prepared:
    """The compiled insert, kept per table, dialect and columns (identity: the kept objects
    are compared, so a reused id cannot mislead): a write that inserts a few rows pays for no
    compilation."""
    key = (id(table), id(dialect), tuple(columns))
    found = _PREPARED.get(key)
    if found is not None and found.table is table and found.dialect is dialect:
        return found
    compiled = insert(table).compile(dialect=dialect, column_keys=columns)
    processors = [
        table.c[name].type.dialect_impl(dialect).bind_processor(dialect) for name in columns
    ]
    order = list(compiled.positiontup or ()) if compiled.positional else columns
    # With positional parameters the statement's order decides; named ones take the keys.
    position = [columns.index(_column_of(compiled, bind)) for bind in order]
    in_order = position == list(range(len(position)))
    values_of = _values_of(columns, processors)
    prepared = _Prepared(
        table, dialect, str(compiled), compiled.positional, order, position, in_order, values_of
    )
    if len(_PREPARED) >= _PREPARED_KEPT:
        _PREPARED.clear()  # tables or engines come and go (tests): start again
    _PREPARED[key] = prepared
    return prepared


def _copy_rows(
    session: Session, table: Table, columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """PostgreSQL: `COPY ... FROM STDIN` in the session's transaction (psycopg's executemany
    runs one statement per row: several times slower for a thousand contacts). A constraint
    it breaks is raised as SQLAlchemy's `IntegrityError`, as an insert's would be."""
    connection = session.connection()
    quote = connection.dialect.identifier_preparer
    names = ", ".join(quote.quote(name) for name in columns)
    sql = f"COPY {quote.format_table(table)} ({names}) FROM STDIN"
    raw: Any = connection.connection.dbapi_connection
    try:
        with raw.cursor() as cursor, cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row(row)
    except connection.dialect.loaded_dbapi.IntegrityError as exc:
        raise IntegrityError(sql, None, exc) from exc


class RowMaker:
    """Rows of a mapped class's table as `insert_rows` takes them, without an ORM object each
    (building and flushing one cost a bulk import most of its time): the values given by
    attribute name, every other column its Python-side default, or None."""

    def __init__(self, mapped: type[Any]) -> None:
        mapper = inspect(mapped)
        self.mapped = mapped
        self.table: Table = mapper.local_table
        self.names = {attr.key: attr.columns[0].name for attr in mapper.column_attrs}
        self.defaults = [(column.name, column.default) for column in self.table.c]
        # A row copies the constant defaults (None where a column has none), in the table's
        # order, and calls a made default only for a column it was not given.
        self._constant = {
            name: default.arg if default is not None and default.is_scalar else None
            for name, default in self.defaults
        }
        self._made = [
            (name, default.arg)
            for name, default in self.defaults
            if default is not None and not default.is_scalar
        ]

    def row(self, values: Mapping[str, Any]) -> dict[str, Any]:
        names = self.names
        given = {names[key]: value for key, value in values.items()}
        row = self._constant.copy()
        row.update(given)
        for name, make in self._made:
            if name not in given:
                row[name] = make(None)
        return row


def update_by_id(session: Session, maker: RowMaker, changes: Sequence[Mapping[str, Any]]) -> None:
    """Writes each change (`id` and the new values, by attribute name) to its row; changes
    with the same attributes are written together, so the caller sorts them by their keys."""
    if not changes:
        return
    connection = session.connection()
    if connection.dialect.name != "postgresql":
        session.execute(update(maker.mapped), list(changes))
        return
    encode = getattr(connection.dialect, "_json_serializer", None) or json.dumps
    for keys, alike in groupby(changes, key=lambda change: tuple(sorted(change))):
        rows = [{maker.names[key]: _plain(value) for key, value in row.items()} for row in alike]
        columns = tuple(maker.names[key] for key in keys if key != "id")
        statement = _update_from_json(maker.table, connection.dialect, columns)
        connection.exec_driver_sql(statement, (encode(rows),))


@cache
def _update_from_json(table: Table, dialect: Dialect, columns: tuple[str, ...]) -> str:
    """PostgreSQL: the update of `columns` from a JSON array of rows of `table`, by `id`, every
    name quoted by the dialect."""
    quote = dialect.identifier_preparer.quote_identifier
    name = quote(table.name)
    assignments = ", ".join(f"{quote(column)} = r.{quote(column)}" for column in columns)
    return (
        f"UPDATE {name} AS t SET {assignments} "
        f"FROM json_populate_recordset(NULL::{name}, %s::json) AS r WHERE t.id = r.id"
    )


def _plain(value: Any) -> Any:
    """A value as JSON carries it to PostgreSQL's input of its column: instants as ISO text."""
    return value.isoformat() if isinstance(value, date) else value


def _column_of(compiled: Any, bind_name: str) -> str:
    return str(compiled.binds[bind_name].key)


def _values_of(
    columns: Sequence[str], processors: Sequence[Callable[[Any], Any] | None]
) -> Callable[[Mapping[str, Any]], list[Any]]:
    """A row's values in the order of `columns`, through their processors: the values picked
    by one `itemgetter`, and only the columns with a processor visited again (a contact has
    23 columns and 5 processors)."""
    active = [(index, process) for index, process in enumerate(processors) if process is not None]
    pick = itemgetter(*columns)
    single = len(columns) == 1

    def values_of(row: Mapping[str, Any]) -> list[Any]:
        values = [pick(row)] if single else list(pick(row))
        for index, process in active:
            values[index] = process(values[index])
        return values

    return values_of
