"""audiencefilter: smart-audience filters with one set of semantics and many back-ends.

>>> import audiencefilter as af
>>> f = af.parse('{"points": {"gte": 100}, "country": {"in": ["FR", "DE"]}}')
>>> f.matches({"points": 150, "country": "FR"})
True
>>> f.matches({"points": 150, "country": None})
False
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .backends.memory import RecordError
from .errors import FilterError, Issue
from .excerpt import render_error
from .fields import CONTACT, Field, FieldType, Op, Schema
from .filter import Filter, Predicate
from .limits import DEFAULT_LIMITS, Limits
from .nodes import FALSE, TRUE, And, Comparison, Const, IsNull, Node, Not, Or
from .parse import parse
from .schema_json import json_schema

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from .explain import Explanation, Outcome
    from .text import parse_text, to_text

__all__ = [
    "CONTACT",
    "DEFAULT_LIMITS",
    "FALSE",
    "TRUE",
    "And",
    "Comparison",
    "Const",
    "Explanation",
    "Field",
    "FieldType",
    "Filter",
    "FilterError",
    "Issue",
    "IsNull",
    "Limits",
    "Node",
    "Not",
    "Op",
    "Or",
    "Outcome",
    "Predicate",
    "RecordError",
    "Schema",
    "compile",
    "json_schema",
    "parse",
    "parse_text",
    "render_error",
    "select",
    "to_text",
]

__version__ = "0.1.0"


def compile(flt: Filter) -> Predicate:  # noqa: A001 - the library's verb, as in re.compile
    """The filter's in-memory predicate, built once: `record -> bool`.

    Use it in hot loops; `Filter.matches` calls the same function.
    """
    return flt.predicate


def select(flt: Filter, records: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The records that belong to the audience, lazily and in order."""
    return flt.select(records)


_LAZY = {"parse_text": "text", "to_text": "text", "Explanation": "explain", "Outcome": "explain"}


def __getattr__(name: str) -> Any:
    """The text syntax and explanations, imported on first use: they need lark."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
