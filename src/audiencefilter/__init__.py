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
from .fields import CONTACT, Field, FieldType, Op, Schema
from .filter import Filter, Predicate
from .limits import DEFAULT_LIMITS, Limits
from .nodes import FALSE, TRUE, And, Comparison, Const, IsNull, Node, Not, Or
from .parse import parse

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

__all__ = [
    "CONTACT",
    "DEFAULT_LIMITS",
    "FALSE",
    "TRUE",
    "And",
    "Comparison",
    "Const",
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
    "Predicate",
    "RecordError",
    "Schema",
    "compile",
    "parse",
    "select",
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
