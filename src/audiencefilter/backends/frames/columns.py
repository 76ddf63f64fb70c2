"""Which column of a frame holds each field the filter reads, found before the query is built.

A frame comes from the user's own code (`pd.read_csv`, a Parquet file, a Spark table), named
the user's way: `created_at` for the field `createdAt`. The names are tried in the order every
back-end tries them (`backends/naming.py`: `columns=`, the field's name, the naming convention,
snake_case by default). A field found under none is a `FrameError` when the expression is
built, naming the field, the names tried, the closest column and the `columns=` line to write,
where otherwise polars, pandas or Spark would each fail their own way when the query runs.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import FrameError
from ...language.fields import Schema
from ...language.nodes import Node, fields_used
from ..naming import Naming, names_to_try, naming_function, snake_case


def stored_names(node: Node, schema: Schema) -> frozenset[str]:
    """The fields whose columns the lowered filter reads: its fields', its relations', and the
    JSON field holding a field declared inside one."""
    declared = {f.name: f for f in schema.fields}
    found = set()
    for name in fields_used(node):
        field = declared.get(name)
        found.add(field.source[0] if field is not None and field.source else name)
    return frozenset(found)


def column_names(frame: Any) -> list[str] | None:
    """The column names of a polars (eager or lazy), pandas, pyarrow or Spark frame; None for
    another kind of frame, whose own errors then name a missing column."""
    if type(frame).__module__.startswith("polars."):
        return list(frame.collect_schema().names())  # a LazyFrame's without running it
    names = getattr(frame, "column_names", None)  # pyarrow
    if names is None:
        names = getattr(frame, "columns", None)
    if names is None:
        return None
    return [name for name in names if isinstance(name, str)]


def frame_columns(
    node: Node,
    schema: Schema,
    frame: Any,
    columns: Mapping[str, str] | None = None,
    naming: Naming = "snake_case",
) -> dict[str, str]:
    """`columns`, completed with the column found for each other field the filter reads.

    Raises:
        FrameError: a field the filter reads has no column under any name tried.
        ValueError: an unknown naming convention.
    """
    convention = naming_function(naming)
    given = dict(columns or {})
    names = column_names(frame)
    if names is None:
        return given
    available = set(names)
    found = dict(given)
    for name in sorted(stored_names(node, schema)):
        tried = names_to_try(given, name, name, convention)
        column = next((candidate for candidate in tried if candidate in available), None)
        if column is None:
            raise FrameError(_missing(name, tried, names, convention is None))
        if column != name:
            found[name] = column
    return found


def _missing(name: str, tried: Sequence[str], names: Sequence[str], no_convention: bool) -> str:
    message = f"the frame has no column for field {name!r} (tried {list(tried)})"
    close = difflib.get_close_matches(snake_case(name), names) or difflib.get_close_matches(
        name, names
    )
    if close:
        message += f"; did you mean {close[0]!r}? Pass columns={{{name!r}: {close[0]!r}}}"
    else:
        message += f"; it has {sorted(names)[:20]}; pass columns={{{name!r}: <column>}}"
    if no_convention and snake_case(name) != name and snake_case(name) in names:
        message += f', or naming="snake_case" to find {snake_case(name)!r}'
    return message
