"""The engines the conformance and differential suites run every filter on.

An engine answers one question: which record ids does this filter select from these records,
relative date-times taken at `now` (None: the engine's own clock)?
The in-memory engines live here; SQL engines register themselves in `ENGINES` from
`tests/sql_engines.py` when that module exists. Each engine is a pytest parameter, so a failure
names the engine that disagreed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

import audiencefilter as af
from tests.engine_kinds import Engine, Records, Select

__all__ = ["ENGINES", "Engine", "Records", "Select", "engine_params", "selector"]


def _compiled(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
    # A long-lived predicate on a clock: the way a service holds one.
    predicate = af.compile(flt, clock=None if now is None else lambda: now)
    return {r["id"] for r in records if predicate(r)}


def _explained(flt: af.Filter, records: Records, now: datetime | None = None) -> set[str]:
    # A second, independent in-memory evaluation (three-valued visitor) once explain exists.
    return {r["id"] for r in records if flt.explain(r, now=now).matched}


ENGINES: list[Engine] = [Engine("memory", _compiled)]

try:
    import audiencefilter.explain  # noqa: F401
except ImportError:
    pass
else:
    ENGINES.append(Engine("explain", _explained))


def _optional(error: ModuleNotFoundError) -> None:
    """A missing third-party package leaves its engines out; a test module that fails to
    import is an error, never a silently shorter list of engines."""
    if (error.name or "").split(".")[0] in {"tests", "audiencefilter"}:
        raise error


try:
    from tests.sql_engines import SQL_ENGINES
except ModuleNotFoundError as error:
    _optional(error)
else:
    ENGINES.extend(SQL_ENGINES)

try:
    from tests.orm_engines import ORM_ENGINES
except ModuleNotFoundError as error:
    _optional(error)
else:
    ENGINES.extend(ORM_ENGINES)

try:
    from tests.columnar_engines import COLUMNAR_ENGINES
except ModuleNotFoundError as error:
    _optional(error)
else:
    ENGINES.extend(COLUMNAR_ENGINES)

try:
    from tests.pandas_engines import PANDAS_ENGINES
except ModuleNotFoundError as error:
    _optional(error)
else:
    ENGINES.extend(PANDAS_ENGINES)


try:
    from tests.django_engines import DJANGO_ENGINES
except ModuleNotFoundError as error:
    _optional(error)
else:
    ENGINES.extend(DJANGO_ENGINES)


def engine_params() -> list[Any]:
    return [pytest.param(e, id=e.name, marks=e.marks) for e in ENGINES]


def selector(engine: Engine, request: pytest.FixtureRequest) -> Select:
    """The engine's select function, `(filter, records, now)`, with its fixture (a database,
    say) bound."""
    if engine.fixture is None:
        return engine.select
    resource = request.getfixturevalue(engine.fixture)
    return lambda flt, records, now: engine.select(resource, flt, records, now)
