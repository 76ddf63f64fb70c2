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
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TypeVar

from sqlalchemy import JSON, ColumnElement, String, bindparam, func, select
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


def dialect_of(session: Session) -> str:
    return session.get_bind().dialect.name


def per_dialect(build: Callable[[str], T]) -> Callable[[str], T]:
    """`build(dialect)`, computed once per dialect name."""
    return cache(build)
