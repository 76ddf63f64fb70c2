"""Per-filter costs of the library's own steps: parse, compile, and each translation.

These are what a service pays per request before any record is touched. Each step that is not
available in this installation (a back-end still missing, polars not installed) is reported
as such instead of being skipped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import audiencefilter as af
from audiencefilter.backends.memory.compiler import compile_node

from .data import FIELDS
from .filters import BenchFilter
from .timing import per_call

STEPS = ("parse", "compile", "to_sql", "to_sqlalchemy", "parse_text", "to_polars")
DESCRIPTIONS = {
    "parse": "`parse(json_text)`: JSON text to a validated AST",
    "compile": "`compile()`: the AST to a Python predicate (uncached)",
    "to_sql": '`to_sql("postgresql")`: SQL text with inlined literals',
    "to_sqlalchemy": "`to_sqlalchemy(table)`: a SQLAlchemy expression (not compiled to text)",
    "parse_text": "`parse_text(text)`: the readable text syntax to the AST",
    "to_polars": "`to_polars()`: a polars expression",
}


@dataclass
class MicroResults:
    seconds: dict[str, dict[str, float]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


def _steps() -> tuple[
    dict[str, Callable[[BenchFilter, af.Filter], Callable[[], Any]]], dict[str, str]
]:
    steps: dict[str, Callable[[BenchFilter, af.Filter], Callable[[], Any]]] = {
        "parse": lambda bench, flt: _parse_step(bench.json),
        "compile": lambda bench, flt: lambda: compile_node(flt.lowered, flt.schema),
    }
    missing: dict[str, str] = {}
    try:
        from audiencefilter.backends.sql.text import to_sql

        steps["to_sql"] = lambda bench, flt: lambda: to_sql(flt.lowered, flt.schema, "postgresql")
    except ImportError as exc:
        missing["to_sql"] = f"not available ({exc})"
    try:
        from audiencefilter.backends.sql.sqlalchemy import to_sqlalchemy

        table = _contacts_table()
        steps["to_sqlalchemy"] = lambda bench, flt: (
            lambda: to_sqlalchemy(flt.lowered, flt.schema, table)
        )
    except ImportError as exc:
        missing["to_sqlalchemy"] = f"not available ({exc})"
    parse_text = getattr(af, "parse_text", None)
    if parse_text is not None:
        steps["parse_text"] = lambda bench, flt: _text_step(parse_text, flt)
    else:
        missing["parse_text"] = "not available (no audiencefilter.parse_text)"
    try:
        import audiencefilter.backends.frames.polars  # noqa: F401 - fails without the columnar extra

        steps["to_polars"] = lambda bench, flt: lambda: flt.to_polars()
    except ImportError as exc:
        missing["to_polars"] = f"not available ({exc})"
    return steps, missing


def _parse_step(text: str) -> Callable[[], Any]:
    return lambda: af.parse(text)


def _text_step(parse_text: Callable[[str], af.Filter], flt: af.Filter) -> Callable[[], Any]:
    text = flt.to_text()
    return lambda: parse_text(text)


def _contacts_table() -> Any:
    from sqlalchemy import JSON, BigInteger, Boolean, Column, DateTime, MetaData, String, Table

    kinds = {
        "string": String(255),
        "number": BigInteger(),
        "boolean": Boolean(),
        "datetime": DateTime(timezone=True),
        "json": JSON(),
    }
    columns = [Column(name, kinds[af.CONTACT[name].type.value]) for name in FIELDS]
    return Table("contacts", MetaData(), Column("id", BigInteger, primary_key=True), *columns)


def measure(benches: Sequence[BenchFilter], *, samples: int, sample_seconds: float) -> MicroResults:
    """Median seconds per call of each step on each filter."""
    steps, missing = _steps()
    results = MicroResults(missing=missing)
    for name in STEPS:
        if name not in steps:
            continue
        row: dict[str, float] = {}
        for bench in benches:
            flt = af.parse(bench.json)
            call = steps[name](bench, flt)
            row[bench.name] = per_call(call, samples=samples, sample_seconds=sample_seconds)
        results.seconds[name] = row
    return results
