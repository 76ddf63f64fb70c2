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

from .csv_cells import CellError, CsvError, CsvRow, CsvRows, WrittenNumber, csv_cell, read_csv
from .csv_format import CsvFormat, FormatEvidence
from .errors import FilterError, FrameError, Issue, RecordError
from .excerpt import render_error
from .filter import Filter, Predicate, from_format, parse, parse_text
from .filter_clock import FilterClock
from .language.anniversary import MonthDays
from .language.contact import CONTACT
from .language.cost import Cost
from .language.fields import Field, FieldType, Op, Schema
from .language.instants import as_utc
from .language.limits import DEFAULT_LIMITS, Limits
from .language.nodes import (
    FALSE,
    TRUE,
    Aggregated,
    And,
    Blank,
    Comparison,
    Const,
    FieldComparison,
    IsNull,
    ListTest,
    Node,
    Not,
    Or,
    Quantified,
    UnhandledNodeError,
)
from .language.relations import Aggregate, Quantifier, Relation
from .language.relative import Ago, Clock, system_clock
from .language.value_checks import value_problem
from .language.values import parse_date, parse_datetime
from .language.visitor import Visitor
from .language.zones import zone_names
from .where.json_schema import json_schema

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping
    from datetime import datetime

    from pyspark.sql import SparkSession

    from .algebra import Comparison as AudienceComparison
    from .algebra import Verdict, compare
    from .backends.filter_set.many import FilterSet
    from .backends.naming import snake_case
    from .explain import Explanation, Outcome
    from .formats import format_names
    from .pydantic_field import FilterField, FilterQuery, FilterValidation
    from .text import to_text
    from .where.write import json_value

__all__ = [
    "AudienceComparison",
    "CONTACT",
    "Ago",
    "Aggregate",
    "Aggregated",
    "Clock",
    "DEFAULT_LIMITS",
    "FALSE",
    "TRUE",
    "And",
    "Comparison",
    "Const",
    "Cost",
    "Explanation",
    "Field",
    "FieldComparison",
    "FieldType",
    "Filter",
    "FilterClock",
    "FrameError",
    "FilterError",
    "FormatEvidence",
    "FilterField",
    "FilterQuery",
    "FilterValidation",
    "FilterSet",
    "Issue",
    "IsNull",
    "Blank",
    "CellError",
    "CsvError",
    "CsvFormat",
    "CsvRow",
    "CsvRows",
    "Limits",
    "ListTest",
    "MonthDays",
    "Node",
    "Not",
    "Op",
    "Or",
    "Outcome",
    "Predicate",
    "Quantified",
    "Quantifier",
    "RecordError",
    "Relation",
    "Schema",
    "UnhandledNodeError",
    "Verdict",
    "Visitor",
    "WrittenNumber",
    "as_utc",
    "compare",
    "compile",
    "csv_cell",
    "format_names",
    "from_format",
    "json_schema",
    "json_value",
    "parse",
    "parse_date",
    "parse_datetime",
    "parse_text",
    "read_csv",
    "register_sqlite_functions",
    "render_error",
    "select",
    "snake_case",
    "spark_session",
    "sql_dialects",
    "system_clock",
    "to_text",
    "value_problem",
    "zone_names",
]

__version__ = "0.1.0"


def compile(flt: Filter, *, clock: Clock | None = None) -> Predicate:  # noqa: A001 - as re.compile
    """The filter's in-memory predicate, built once: `record -> bool`.

    Use it in hot loops; `Filter.matches` calls the same function. A filter with relative
    date-times reads `clock` (default: the system clock) on every call, so the predicate never
    goes stale; for an absolute filter the clock is never read.
    """
    return flt.predicate if clock is None else flt.clock.predicate_at(clock)


def select(
    flt: Filter, records: Iterable[Mapping[str, Any]], *, now: datetime | None = None
) -> Iterator[Mapping[str, Any]]:
    """The records that belong to the audience, lazily and in order (relative date-times taken
    at `now`, default the clock when called)."""
    return flt.select(records, now=now)


def register_sqlite_functions(target: Any) -> None:
    """Give SQLite what the SQL back-ends write for it: a `lower()` folding case as Python
    does, and the local month-day of anniversaries outside UTC.

    `target` is a `sqlite3` connection (registered at once) or a SQLAlchemy engine on SQLite,
    sync or async (registered on each new connection: call it before the engine connects).
    See docs/backends.md, "SQLite functions".
    """
    from .backends.sql.sqlite_functions import register_sqlite_functions as register

    register(target)


def sql_dialects() -> tuple[str, ...]:
    """Every dialect name `Filter.to_sql`, `to_sql_params` and `to_sqlalchemy` take, aliases
    (`postgres`, `mariadb`) included, sorted: a command line's or a form's choices, kept equal
    to the writer's own list rather than copied."""
    from .backends.sql.dialects import DIALECTS

    return tuple(sorted(DIALECTS))


def spark_session(
    cores: int = 2, app_name: str = "audiencefilter", config: Mapping[str, str] | None = None
) -> SparkSession:
    """A local Spark (`local[cores]`, a `pyspark.sql.SparkSession`) pinned as the answers need:
    127.0.0.1, UI off, UTC session time, en-US JVM locale, and any further settings in
    `config` (such as `spark.driver.memory`). Returns the active session when there is one.
    Needs the `spark` extra; see docs/backends-spark.md.

    Raises:
        RuntimeError: no Java runtime is installed.
    """
    from .backends.frames.spark import local_session

    return local_session(cores, app_name, config)


_LAZY = {
    "Verdict": "algebra",
    "compare": "algebra",
    "FilterSet": "backends.filter_set.many",
    "to_text": "text",
    "Explanation": "explain",
    "Outcome": "explain",
    "snake_case": "backends.naming",
    "format_names": "formats",
    "json_value": "where.write",
    "FilterField": "pydantic_field",
    "FilterQuery": "pydantic_field",
    "FilterValidation": "pydantic_field",
}


def __getattr__(name: str) -> Any:
    """The text syntax and explanations, imported on first use (they need lark), and
    `FilterSet`, which compiles with the in-memory back-end."""
    if name == "testing":  # `af.testing.examples(f)` without importing the module first
        import importlib

        return importlib.import_module(".testing", __name__)
    if name == "AudienceComparison":
        from .algebra import Comparison

        return Comparison
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
