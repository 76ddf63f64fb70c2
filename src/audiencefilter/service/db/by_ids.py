"""A statement over a list of ids, in two forms: `column = :name` for one id, and an expanding
`column IN (:name)` for several.

A write refreshes the memberships of the one contact it wrote, through statements that select
by a list of contact ids (up to a chunk of an import). SQLAlchemy renders an expanding `IN`
into the statement's text on every execution, for the number of ids at hand; for one id,
`= :name` is compiled once and run as it is. The statement that judges a contact's audiences
over actions holds one subquery per audience, so that rendering cost about a third of running
it on SQLite. Both forms are built once, by the caller's own builder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from sqlalchemy import ColumnElement, bindparam
from sqlalchemy.orm import QueryableAttribute

S = TypeVar("S")


class ByIds(Generic[S]):
    """`build(condition)` for the condition on one id and on several (the parameter `name`)."""

    def __init__(
        self,
        build: Callable[[ColumnElement[bool]], S],
        column: ColumnElement[str] | QueryableAttribute[str],
        name: str,
    ) -> None:
        self.name = name
        self.one = build(column == bindparam(name))
        self.many = build(column.in_(bindparam(name, expanding=True)))

    def bound(
        self, ids: Sequence[str], values: Mapping[str, Any] | None = None
    ) -> tuple[S, dict[str, Any]]:
        """The form for these ids, and its parameters: `values` with the ids added."""
        parameters = dict(values or {})
        if len(ids) == 1:
            parameters[self.name] = ids[0]
            return self.one, parameters
        parameters[self.name] = list(ids)
        return self.many, parameters
