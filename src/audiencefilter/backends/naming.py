"""How a field's name becomes the name of the column or attribute that stores it.

Services name their storage their own way (`created_at` for the field `createdAt`), on every
back-end that reads storage it did not build: SQLAlchemy targets (`sql/attributes.py`), Django
models, polars, pandas and Spark frames (`frames/columns.py`). They all try the same names in
the same order, so a filter that finds its columns on one finds them on another:

1. `columns[name]`: a name spelled out is the only one tried;
2. the field's own name;
3. a declared column (a relation's `Relation.columns`, where there is one);
4. the naming convention: `"snake_case"` (the default), any `str -> str` callable, or None.

The convention only stands in for a name that is not there, so it never changes which column
a field already finds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Naming = str | Callable[[str], str] | None

DEFAULT_NAMING = "snake_case"
"""The convention every back-end tries when none is given."""

_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """`createdAt` -> `created_at`, `userID` -> `user_id`, `HTTPCode` -> `http_code`."""
    return _WORD_BREAK.sub("_", name).lower()


NAMINGS: dict[str, Callable[[str], str]] = {"snake_case": snake_case}
"""The naming conventions known by name."""


def naming_function(naming: Naming) -> Callable[[str], str] | None:
    """The callable of a naming convention given by name or as a callable.

    Raises:
        ValueError: an unknown convention name.
    """
    if naming is None or callable(naming):
        return naming
    if naming not in NAMINGS:
        raise ValueError(f"unknown naming {naming!r}; expected one of {sorted(NAMINGS)}")
    return NAMINGS[naming]


def names_to_try(
    columns: Mapping[str, Any],
    key: str,
    name: str,
    convention: Callable[[str], str] | None,
    declared: str | None = None,
) -> list[str]:
    """The names to try for the field `name` (`key`: its dotted path), in the order above."""
    explicit = columns.get(key)
    if isinstance(explicit, str):  # spelled out: no other name may stand in for it
        return [explicit]
    tried: list[str] = []
    for candidate in (name, declared, convention(name) if convention is not None else None):
        if candidate is not None and candidate not in tried:
            tried.append(candidate)
    return tried
