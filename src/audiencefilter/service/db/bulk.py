"""Many rows inserted through the driver's `executemany`, with the columns' own conversions.

A Core `insert(...)` of many rows compiles once, but SQLAlchemy still walks every parameter of
every row in Python (defaults, type processors, the parameter dictionary); for the thousands of
membership rows and events a bulk import writes, that walk cost more than the database did.
Here the statement is compiled once per table and set of columns, each column's bind processor
is taken from its type once (JSON encoding, SQLite's date-time text), and the rows go to the
driver as tuples (or dictionaries, for drivers that name their parameters). Every column a row
needs is given by the caller: no Python-side default runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.orm import Session

CHUNK = 1000


def insert_rows(session: Session, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Inserts `rows` (every one with the same keys: column names) into `table`."""
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    columns = list(rows[0])
    compiled = insert(table).compile(dialect=dialect, column_keys=columns)
    processors = [
        table.c[name].type.dialect_impl(dialect).bind_processor(dialect) for name in columns
    ]
    order = list(compiled.positiontup or ()) if compiled.positional else columns
    # With positional parameters the statement's order decides; named ones take the keys.
    position = [columns.index(_column_of(compiled, bind)) for bind in order]
    convert = _converter(processors)
    sql = str(compiled)
    for start in range(0, len(rows), CHUNK):
        chunk = [convert([row[name] for name in columns]) for row in rows[start : start + CHUNK]]
        if compiled.positional:
            params: Any = [tuple(values[i] for i in position) for values in chunk]
        else:
            params = [dict(zip(order, values, strict=True)) for values in chunk]
        connection.exec_driver_sql(sql, params)


def _column_of(compiled: Any, bind_name: str) -> str:
    return str(compiled.binds[bind_name].key)


def _converter(
    processors: Sequence[Callable[[Any], Any] | None],
) -> Callable[[list[Any]], list[Any]]:
    def convert(values: list[Any]) -> list[Any]:
        for index, process in enumerate(processors):
            if process is not None:
                values[index] = process(values[index])
        return values

    return convert
