"""SQL dialects as data: one module per engine, each overriding only what differs from `base`.

`get_dialect` finds a dialect by name or alias (`mariadb` is `mysql`, `postgres` is
`postgresql`); `DIALECTS` maps every name to its one instance.
"""

from __future__ import annotations

from .base import (
    INT64_MAX,
    INT64_MIN,
    LIKE_ESCAPE,
    Dialect,
    Number,
    Shape,
    glob_pattern,
    integral,
    like_pattern,
    text_bound,
    utc_text,
)
from .clickhouse import ClickHouse
from .duckdb import DuckDB
from .mysql import MySQL
from .postgresql import PostgreSQL
from .spark import SparkSQL
from .sqlite import SQLite

__all__ = [
    "DIALECTS",
    "INT64_MAX",
    "INT64_MIN",
    "LIKE_ESCAPE",
    "ClickHouse",
    "Dialect",
    "DuckDB",
    "MySQL",
    "Number",
    "PostgreSQL",
    "SQLite",
    "SparkSQL",
    "Shape",
    "get_dialect",
    "glob_pattern",
    "integral",
    "like_pattern",
    "text_bound",
    "utc_text",
]

DIALECTS: dict[str, Dialect] = {}
for _dialect in (PostgreSQL(), SQLite(), MySQL(), DuckDB(), SparkSQL(), ClickHouse()):
    for _name in (_dialect.name, *_dialect.aliases):
        DIALECTS[_name] = _dialect


def get_dialect(name: str) -> Dialect:
    """The dialect called `name` (`postgresql`, `sqlite`, `mysql`, `duckdb`, `spark`,
    `clickhouse`, or an alias).

    Raises:
        ValueError: no such dialect.
    """
    try:
        return DIALECTS[name]
    except KeyError:
        known = ", ".join(sorted(DIALECTS))
        raise ValueError(f"unknown SQL dialect {name!r}; expected one of {known}") from None
