"""What an engine of the test suites is, apart from the list of engines (tests/engines.py).

The SQL and frame engine modules build `Engine`s and `tests/engines.py` gathers them: both
import this module, never each other in a circle, so importing `tests.sql_engines` first can
never leave `tests.engines` half-built with the SQL engines silently missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import audiencefilter as af

Records = Sequence[dict[str, Any]]
Select = Callable[[af.Filter, Records, datetime | None], set[str]]
T = TypeVar("T")


@dataclass(frozen=True)
class Engine:
    """A named way of selecting ids; `fixture` names a pytest fixture it needs, if any."""

    name: str
    select: Callable[..., set[str]]
    fixture: str | None = None
    marks: tuple[Any, ...] = ()


_built: dict[str, tuple[Records, af.Schema, Any]] = {}


def built_once(kind: str, records: Records, schema: af.Schema, build: Callable[[], T]) -> T:
    """What `build()` makes of `records` (the same list object) read with `schema`, made once
    while the same records are asked again.

    The conformance suite asks every case of a file, on each engine, of the same `given` list:
    a frame or a table built from it serves them all, and building one costs more than most
    filters' selection. One entry per `kind`, so the fresh records of a differential run never
    pile up.
    """
    held = _built.get(kind)
    if held is None or held[0] is not records or held[1] != schema:
        held = _built[kind] = (records, schema, build())
    value: T = held[2]
    return value
