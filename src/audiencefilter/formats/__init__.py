"""Other products' filter formats, read into our tree and written from it.

Each format is one module beside `where/` and `text/` (readers and writers of a syntax, not
back-ends): `read(source, schema) -> Node` builds the tree through the shared condition
builder (`language/conditions.py`) and raises `FilterError` for a rule with no faithful
meaning here; `write(node, schema) -> object` gives the format's form of a tree and raises
`FilterError` for a node that has none. A write-only format (plain English) has no `read`.

The registry names the modules, imported by name on first use, so that a format costs
nothing until it is asked for and the facade knows no format module.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Protocol, cast

from ..errors import FilterError, Issue
from ..language.fields import Schema
from ..language.nodes import Node

FORMATS: Mapping[str, str] = {
    "jsonlogic": "jsonlogic",
    "mongodb": "mongodb",
    "react-querybuilder": "react_querybuilder",
    "sql": "sql_where",
    "cel": "cel.reader",
    "english": "english",
}
"""Each format's name (as the API and the command line take it) and its module here."""


def format_names(*, readable: bool = False) -> tuple[str, ...]:
    """The other products' formats `Filter.to_format` writes, in a stable order (with
    `readable`, only those `from_format` reads: plain English is written, never read), for a
    command line's or a form's choices. `json` and `text`, our own syntaxes, are not listed.
    """
    return tuple(name for name in FORMATS if not readable or name != "english")


class Reader(Protocol):
    def __call__(self, source: object, schema: Schema) -> Node: ...


class Writer(Protocol):
    def __call__(self, node: Node, schema: Schema) -> object: ...


def read_format(source: object, name: str, schema: Schema) -> Node:
    """`source`, written in the format `name`, as our tree.

    Raises:
        FilterError: an unknown format, a write-only one, or a rule it cannot read faithfully.
    """
    reader = getattr(_module(name), "read", None)
    if reader is None:
        readable = ", ".join(format_names(readable=True))
        raise _error(f'the format "{name}" is written, never read', f"read one of {readable}")
    return cast(Reader, reader)(source, schema)


def write_format(node: Node, name: str, schema: Schema) -> object:
    """Our tree in the format `name`.

    Raises:
        FilterError: an unknown format, or a node the format has no faithful form for.
    """
    writer = cast(Writer, getattr(_module(name), "write"))  # noqa: B009 - a module by name
    return writer(node, schema)


def _module(name: str) -> object:
    """The module of the format `name`, imported on first use."""
    module = FORMATS.get(name)
    if module is None:
        known = ", ".join(f'"{n}"' for n in FORMATS)
        raise _error(f'unknown format "{name}"', f"the formats are {known}, json and text")
    return importlib.import_module(f"{__name__}.{module}")


def _error(message: str, suggestion: str) -> FilterError:
    return FilterError([Issue(path="", message=message, suggestion=suggestion)])
