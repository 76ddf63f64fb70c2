"""`Filter`: a validated AST bound to its schema, and the one object users hold.

Every output is a one-line method that imports its back-end lazily, so importing the library
costs no SQLAlchemy compiler or grammar until a caller asks for SQL or text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from .fields import CONTACT, Schema
from .nodes import Node, fields_used

if TYPE_CHECKING:
    from sqlalchemy import ColumnElement

    from .explain import Explanation

R = TypeVar("R", bound=Mapping[str, Any])

Record = Mapping[str, Any]
Predicate = Callable[[Record], bool]


@dataclass(frozen=True)
class Filter:
    """A smart-audience filter: an AST (`root`) and the schema it was validated against.

    Two filters are equal when their ASTs and schemas are, whatever JSON spelling they came from.
    """

    root: Node
    schema: Schema = CONTACT

    @cached_property
    def predicate(self) -> Predicate:
        """The compiled in-memory predicate, built once per filter."""
        from .backends.memory import compile_node

        return compile_node(self.root, self.schema)

    def matches(self, record: Record) -> bool:
        """Whether `record` belongs to the audience: the whole filter is TRUE for it.

        A missing key is null; a comparison with null is UNKNOWN, and UNKNOWN is not TRUE.
        """
        return self.predicate(record)

    def select(self, records: Iterable[R]) -> Iterator[R]:
        """The records that match, lazily, in their order."""
        return filter(self.predicate, records)

    @property
    def fields(self) -> frozenset[str]:
        """The field names the filter reads."""
        return fields_used(self.root)

    def to_dict(self) -> dict[str, Any]:
        """The canonical where clause as plain JSON-ready data."""
        from .dump import to_dict

        return to_dict(self.root)

    def to_json(self, *, indent: int | None = None) -> str:
        """The canonical where clause as JSON text; `parse(f.to_json()) == f`."""
        from .dump import to_json

        return to_json(self.root, indent=indent)

    def to_sqlalchemy(self, target: Any) -> ColumnElement[bool]:
        """A SQLAlchemy boolean expression over `target`: a Table, ORM class or name->column map."""
        from .backends.sqlalchemy import to_sqlalchemy

        return to_sqlalchemy(self, target)

    def to_sql(self, dialect: str = "postgresql", columns: Mapping[str, str] | None = None) -> str:
        """A SQL condition for `dialect` with every literal inlined and safely quoted."""
        from .backends.sql import to_sql

        return to_sql(self, dialect, columns)

    def to_sql_params(
        self, dialect: str = "postgresql", columns: Mapping[str, str] | None = None
    ) -> tuple[str, list[Any]]:
        """A SQL condition with placeholders, and its parameters in order."""
        from .backends.sql import to_sql_params

        return to_sql_params(self, dialect, columns)

    def to_text(self) -> str:
        """The filter in the readable text syntax; `parse_text(f.to_text()) == f`."""
        from .text import to_text

        return to_text(self.root)

    def explain(self, record: Record) -> Explanation:
        """Why `record` is in or out: each condition's TRUE/FALSE/UNKNOWN and the value seen."""
        from .explain import explain

        return explain(self, record)

    def simplify(self) -> Filter:
        """An equivalent filter (same members for every record), no larger than this one."""
        from .simplify import simplify

        return Filter(simplify(self.root, self.schema), self.schema)

    def is_unsatisfiable(self) -> bool:
        """True when no record can ever match, e.g. `points > 10 AND points < 5` (sound, not
        complete: False means no contradiction was found)."""
        from .simplify import is_unsatisfiable

        return is_unsatisfiable(self.root, self.schema)

    def __str__(self) -> str:
        return self.to_json()
