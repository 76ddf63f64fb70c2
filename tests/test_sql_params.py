"""`to_sql_params`: as many placeholders as parameters, in step, on every dialect.

Each condition is written once per use of its SQL: a piece holding placeholders (an
aggregate's subquery, a column's month-day) that appears twice in the text must have its
parameters appended twice. Placeholders are counted outside literals and quoted identifiers,
and the statement is run with its parameters on the in-process engines (SQLite, DuckDB) over
the conformance suites' records.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.backends.sql.dialects import DIALECTS
from tests.sql_engines import COLUMNS, Database, duckdb_database, sqlite_database

HERE = Path(__file__).parent / "conformance"
NOW = datetime(2026, 3, 15, 12, tzinfo=UTC)
DIALECT_NAMES = sorted({d.name for d in DIALECTS.values()})

EXTRA: list[dict[str, Any]] = [
    {
        "actions": {
            "where": {"name": "share"},
            "max": {"createdAt": {"within": {"last": 30, "unit": "day"}}},
        }
    },
    {
        "actions": {
            "where": {"name": "share"},
            "min": {"createdAt": {"anniversary": {"next": 30, "unit": "day"}}},
        }
    },
    {
        "actions": {
            "where": {"name": {"in": ["share", "open"]}},
            "max": {"createdAt": {"anniversary": {"this": "day", "timeZone": "UTC"}}},
        }
    },
    {"actions": {"where": {"name": "open"}, "count": {"in": [1, 2.5, 3]}}},
    {"actions": {"where": {"name": "open"}, "sum": {"increase": {"notIn": [1, 2.5]}}}},
]
"""Aggregates whose test writes the subquery more than once."""


def _cases() -> list[Any]:
    params = []
    for path in sorted(HERE.glob("*.json")):
        suite = json.loads(path.read_text(encoding="utf-8"))
        for index, case in enumerate(suite["cases"]):
            if "matches" not in case or "where_json" in case:
                continue
            schema = suite.get("schema")
            name = f"{path.stem}:{case.get('name', index)}"
            params.append(pytest.param(suite["given"], case["where"], schema, id=name))
    for index, where in enumerate(EXTRA):
        given = json.loads((HERE / "relations.json").read_text(encoding="utf-8"))["given"]
        params.append(pytest.param(given, where, None, id=f"aggregate-twice:{index}"))
    return params


_LITERAL = re.compile(r"E'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`")


def placeholders(sql: str, placeholder: str) -> int:
    """The placeholders of `sql` outside string literals and quoted identifiers."""
    return _LITERAL.sub("", sql).count(placeholder)


def _written(where: Any, schema: Any, dialect: str) -> tuple[str, list[Any]] | None:
    flt = af.parse(where, af.Schema.from_mapping(schema) if schema else af.CONTACT)
    try:
        return flt.to_sql_params(dialect, COLUMNS, now=NOW)
    except (af.FilterError, ValueError):
        return None  # refused on this dialect, as the conformance suites check


CASES = _cases()


@pytest.mark.parametrize(("given", "where", "schema"), CASES)
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_placeholders_match_parameters(given: Any, where: Any, schema: Any, dialect: str) -> None:
    written = _written(where, schema, dialect)
    if written is None:
        return
    sql, params = written
    if dialect == "clickhouse":  # named markers `{p0:String}`: each once, in order
        indexes = [int(i) for i in _NAMED.findall(_LITERAL.sub("", sql))]
        assert indexes == list(range(len(params))), sql
        return
    assert placeholders(sql, DIALECTS[dialect].placeholder) == len(params), sql


_NAMED = re.compile(r"\{p(\d+):[^{}]+\}")


def _run(database: Database, given: Any, where: Any, schema: Any) -> None:
    flt = af.parse(where, af.Schema.from_mapping(schema) if schema else af.CONTACT)
    table = database.table_for(given, flt.schema)
    tables = database.tables_of(table)
    try:
        sql, params = flt.to_sql_params(
            database.dialect, COLUMNS, now=NOW, table=table.name, tables=tables
        )
    except (af.FilterError, ValueError):
        return
    expected = {r["id"] for r in given if flt.matches(r, now=NOW)}
    assert database.ids(database.query(table, sql), params) == expected, sql


@pytest.mark.parametrize(("given", "where", "schema"), CASES)
@pytest.mark.parametrize("opener", [sqlite_database, duckdb_database], ids=["sqlite", "duckdb"])
def test_statement_runs_with_its_parameters(
    given: Any, where: Any, schema: Any, opener: Any
) -> None:
    _run(opener(), given, where, schema)
