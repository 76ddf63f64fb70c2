"""What an engine of the test suites is, apart from the list of engines (tests/engines.py).

The SQL and frame engine modules build `Engine`s and `tests/engines.py` gathers them: both
import this module, never each other in a circle, so importing `tests.sql_engines` first can
never leave `tests.engines` half-built with the SQL engines silently missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import audiencefilter as af

Records = Sequence[dict[str, Any]]
Select = Callable[[af.Filter, Records, datetime | None], set[str]]


@dataclass(frozen=True)
class Engine:
    """A named way of selecting ids; `fixture` names a pytest fixture it needs, if any."""

    name: str
    select: Callable[..., set[str]]
    fixture: str | None = None
    marks: tuple[Any, ...] = ()
