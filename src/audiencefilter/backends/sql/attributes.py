"""The column or attribute of a SQLAlchemy target for each field, and the fix when none is.

Services name their models their own way: `Subscriber.created_at` for the field `createdAt`,
a relationship `actions` whose foreign key is `sub_id`, a `hybrid_property` for a field that
is computed. `Attributes` finds each field's attribute in that order:

1. `columns[name]`: an attribute (or column key or name) spelled out, or a column expression
   itself; a related field is keyed by its relation path (`"actions.createdAt"`). A name
   given here is the only one tried;
2. the field's own name;
3. the relation's declared column (`Relation.columns`, for related fields);
4. the naming convention (`naming="snake_case"`, the default, or any `str -> str` callable).

The order and the conventions are `backends/naming.py`'s, shared with Django and frames.

A field found nowhere is an error that names the target, the names tried, the closest
attribute (`difflib`) and the line to write (`columns={...}` or `naming="snake_case"`).
Relations resolve the same way (the relationship named like the relation, or by the
convention). The module knows nothing of the builder: it only finds column expressions.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.expression import FromClause

from ..naming import names_to_try, snake_case

Lookup = Callable[[str], ColumnElement[Any]]


@dataclass(frozen=True)
class Attributes:
    """How field names become attribute names: explicit `columns`, then the convention."""

    columns: Mapping[str, Any] = field(default_factory=dict)
    naming: Callable[[str], str] | None = None

    def names(self, key: str, name: str, declared: str | None = None) -> list[str]:
        """The attribute names to try for `name` (`key`: its dotted path), in order."""
        return names_to_try(self.columns, key, name, self.naming, declared)

    def lookup(
        self, target: Any, path: str = "", declared: Mapping[str, str] | None = None
    ) -> Lookup:
        """The column expression of each field of `target` (a mapping, FROM clause, ORM class
        or `aliased()` entity) reached through the relations `path` (`"actions."`)."""

        def find(name: str) -> ColumnElement[Any]:
            key = path + name
            explicit = self.columns.get(key)
            if explicit is not None and not isinstance(explicit, str):
                return _element(explicit, target, key)
            tried = self.names(key, name, (declared or {}).get(name))
            for candidate in tried:
                found = _get(target, candidate)
                if found is not None:
                    return _element(found, target, candidate)
            raise ValueError(self.missing(target, key, name, tried, "column for field"))

        return find

    def relationship(self, target: Any, path: str, name: str) -> Any:
        """The ORM relationship property of the relation `name` on `target`, or None; one
        given in `columns` as the attribute itself (`{"actions": Person.events}`) is taken."""
        explicit = self.columns.get(path + name)
        prop = getattr(explicit, "property", None)
        if not isinstance(explicit, str) and getattr(prop, "mapper", None) is not None:
            return prop
        for candidate in self.names(path + name, name):
            prop = getattr(getattr(target, candidate, None), "property", None)
            if getattr(prop, "mapper", None) is not None:
                return prop
        return None

    def missing(self, target: Any, key: str, name: str, tried: list[str], what: str) -> str:
        """The message for a field (or relation) of `target` found under none of `tried`."""
        available = available_names(target)
        close = difflib.get_close_matches(self.naming(name) if self.naming else name, available)
        close = close or difflib.get_close_matches(name, available)
        message = f"{describe(target)} has no {what} {key!r} (tried {tried})"
        if close:
            message += f"; did you mean {close[0]!r}? Pass columns={{{key!r}: {close[0]!r}}}"
        elif available:
            message += f"; it has {sorted(available)}; pass columns={{{key!r}: <attribute>}}"
        if self.naming is None and snake_case(name) != name:
            message += f', or naming="snake_case" to find {snake_case(name)!r}'
        return message


def describe(target: Any) -> str:
    """A short name of a target for messages: `Subscriber`, `table contacts`, `a mapping`."""
    if isinstance(target, Mapping):
        return "the column mapping"
    if isinstance(target, FromClause):
        return f"table {getattr(target, 'name', target)!s}"
    return getattr(target, "__name__", None) or repr(target)


def available_names(target: Any) -> list[str]:
    """The names a target offers: mapping keys, column keys and names, ORM attributes."""
    if isinstance(target, Mapping):
        return [str(k) for k in target]
    if isinstance(target, FromClause):
        return _unique([*target.c.keys(), *(c.name for c in target.c)])
    info = inspect(target, raiseerr=False)
    mapper = getattr(info, "mapper", None)
    if mapper is None:
        return []
    return [k for k in mapper.all_orm_descriptors.keys() if not k.startswith("_")]


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _get(target: Any, name: str) -> Any:
    """The attribute `name` of a target, or None: a mapping's key, a FROM clause's column by
    key or else by name (a table built from a model keys columns by attribute), an ORM
    class's attribute (column, `column_property`, hybrid)."""
    if isinstance(target, Mapping):
        return target.get(name)
    if isinstance(target, FromClause):
        if name in target.c:
            return target.c[name]
        return next((c for c in target.c if c.name == name), None)
    return getattr(target, name, None)


def _element(found: Any, target: Any, name: str) -> ColumnElement[Any]:
    """`found` as a column expression; a Python `property`, method or relationship is an
    error that says what to write instead."""
    clause = getattr(found, "__clause_element__", None)
    element = clause() if clause is not None else found
    if getattr(getattr(found, "property", None), "mapper", None) is not None:
        raise ValueError(f"{describe(target)}.{name} is a relationship, not a column")
    if not isinstance(element, ColumnElement):
        raise ValueError(
            f"{describe(target)}.{name} is {type(found).__name__}, not a column expression; "
            "make it a column, a column_property or a hybrid_property with a class-level "
            "expression"
        )
    return element
