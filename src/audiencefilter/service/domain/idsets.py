"""`column IN (the ids of a page)` with all the ids in one bound parameter.

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

from collections.abc import Callable, Sequence
from functools import cache
from typing import TypeVar

from sqlalchemy import JSON, ColumnElement, String, Subquery, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import QueryableAttribute, Session

IDS = "ids"
T = TypeVar("T")


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


def unpacks(dialect: str) -> bool:
    """Whether `unpacked` knows this database."""
    return dialect in ("postgresql", "sqlite")


def unpacked(dialect: str, ids: Sequence[str]) -> Subquery:
    """`ids` as a table of `value` (an id) and `ordinal` (its place, from 1), from one
    parameter: `unnest(...) WITH ORDINALITY` on PostgreSQL, `json_each` on SQLite (whose `key`
    counts from 0)."""
    if dialect == "postgresql":
        values = bindparam(None, list(ids), type_=ARRAY(String))
        table = func.unnest(values).table_valued("value", with_ordinality="ordinal")
        table = table.render_derived()
        return select(table.c.value, table.c.ordinal).subquery()
    table = func.json_each(bindparam(None, list(ids), type_=JSON)).table_valued("key", "value")
    return select(table.c.value, (table.c.key + 1).label("ordinal")).subquery()


def unpacked_rows(dialect: str, names: Sequence[str], rows: Sequence[Sequence[str]]) -> Subquery:
    """`rows` (each a text per name) as a table of those columns and `ordinal` (from 1), from
    one parameter per column on PostgreSQL (`unnest(a, b, ...) WITH ORDINALITY`) or one JSON
    array of arrays on SQLite (`json_each`, each column by `json_extract`)."""
    if dialect == "postgresql":
        columns = [bindparam(None, [row[i] for row in rows], type_=ARRAY(String)) for i in
                   range(len(names))]  # fmt: skip
        table = func.unnest(*columns).table_valued(*names, with_ordinality="ordinal")
        table = table.render_derived()
        return select(*(table.c[name] for name in names), table.c.ordinal).subquery()
    each = func.json_each(bindparam(None, rows, type_=JSON)).table_valued("key", "value")
    picked = [
        func.json_extract(each.c.value, f"$[{index}]", type_=String).label(name)
        for index, name in enumerate(names)
    ]
    return select(*picked, (each.c.key + 1).label("ordinal")).subquery()


def dialect_of(session: Session) -> str:
    return session.get_bind().dialect.name


def per_dialect(build: Callable[[str], T]) -> Callable[[str], T]:
    """`build(dialect)`, computed once per dialect name."""
    return cache(build)
