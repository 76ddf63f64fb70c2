"""Wide differential checks: every back-end must give memory's answer, on inputs at the edges.

`Engines` holds the four SQL databases of the session (`tests/sql_engines.py`): one long-lived
SQLAlchemy Engine each, created with SQLAlchemy's defaults, so the compiled-statement cache is
on and every property runs its filters through the same cache, one after another. `agree`
loads records once per database and asks each filter three ways (`to_sqlalchemy`, `to_sql`,
`to_sql_params`), then through polars, and fails naming the engine, the filter, its SQL and the
records. An exception raised by an engine (an `OverflowError` in a SQL writer, a database error)
is a disagreement too.

Two engine limits are documented rather than bugs, and the harness applies them instead of
looking away:
- MySQL/MariaDB and DuckDB hold JSON numbers as doubles (docs/semantics.md, "Numbers"). On
  them the expected answer of a filter over `data` paths is memory's on records whose numbers
  are rounded to doubles, compared exactly with the literals; records holding a number beyond
  every double are not asked of them.
- PostgreSQL text and jsonb cannot hold NUL: records holding NUL are not stored there.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.language.nodes import walk
from audiencefilter.testing.strategies import NOW
from tests.sql_engines import DATABASES, WAYS, Database, open_database

DIALECTS = tuple(DATABASES)
DOUBLE_JSON_NUMBERS = frozenset({"mysql", "duckdb"})
"""Databases whose JSON numbers compare as doubles (docs/backends-sql-rules.md)."""


@dataclass
class Engines:
    """The databases this session could open, by dialect; `missing` says why others are not."""

    databases: dict[str, Database] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)

    @classmethod
    def open(cls, request: pytest.FixtureRequest) -> Engines:
        engines = cls()
        for name in DIALECTS:
            try:
                engines.databases[name] = open_database(name, request)
            except pytest.skip.Exception as skipped:
                engines.missing[name] = str(skipped)
        return engines

    def require(self, *names: str) -> None:
        """Skip the test unless every database in `names` is here: a property whose
        disagreement lives on one engine proves nothing without it."""
        absent = [f"{name}: {self.missing[name]}" for name in names if name in self.missing]
        if absent:
            pytest.skip("; ".join(absent))


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, default=repr)


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_holds_nul(v) for v in value)
    return False


def storable(dialect: str, records: Sequence[dict[str, Any]]) -> bool:
    """Whether `dialect` can hold the records as they are (PostgreSQL holds no NUL)."""
    return dialect != "postgresql" or not any(_holds_nul(r) for r in records)


class BeyondDoubles(Exception):
    """A number no double can hold: not asked of engines that read JSON numbers as doubles."""


def doubled(value: Any) -> Any:
    """`value` with every JSON number (not booleans) rounded to the nearest double."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:
            raise BeyondDoubles from None
    if isinstance(value, dict):
        return {k: doubled(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [doubled(v) for v in value]
    return value


def as_jsonb(value: Any) -> Any:
    """`value` with every JSON number as PostgreSQL reads it back from jsonb, which keeps no
    exponent: a float Python writes with one (10^16 and up) that is an integer within 64 bits
    is that integer there (docs/semantics.md, "Numbers")."""
    if isinstance(value, float) and math.isfinite(value) and abs(value) >= 1e16:
        decimal = int(Decimal(repr(value)))
        return decimal if -(2**63) <= decimal < 2**63 else value
    if isinstance(value, dict):
        return {k: as_jsonb(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_jsonb(v) for v in value]
    return value


def _doubled_records(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "data": doubled(r["data"])} if "data" in r else r for r in records]


def refuses(dialect: str, flt: af.Filter, now: datetime = NOW) -> bool:
    """Whether `dialect` must refuse `flt` (docs/backends-sql-rules.md): MySQL/MariaDB and
    DuckDB a case-insensitive literal holding a sigma, SQLite a literal holding NUL at a data
    path or in a list field's test, every engine an equality at a data path with an integer
    it cannot keep (beyond 2^53 where JSON numbers are doubles, beyond 64 bits on SQLite and
    PostgreSQL) that no double holds, MySQL/MariaDB an anniversary of a date-time in a zone
    other than UTC, having no time zone tables on a default server (a date's anniversary
    needs no zone)."""
    if dialect in ("mysql", "duckdb") and _holds_folded_sigma(flt, now):
        return True
    if dialect == "sqlite" and _holds_nul_read_as_json(flt, now):
        return True
    bound = JSON_EXACT_INTEGERS.get(dialect)
    if bound is not None and _holds_a_lost_integer(flt, now, bound):
        return True
    if dialect != "mysql":
        return False
    return any(
        isinstance(node, af.Comparison)
        and node.op is af.Op.ANNIVERSARY
        and getattr(node.value, "zone", "UTC") != "UTC"
        and flt.schema[node.field].type is not af.FieldType.DATE
        for node in walk(flt.lowered_at(now))
    )


def _holds_folded_sigma(flt: af.Filter, now: datetime) -> bool:
    """Whether a case-insensitive test of `flt` has a literal holding a sigma, which MySQL and
    DuckDB refuse (their `lower()` has no final sigma, docs/backends-sql-rules.md)."""
    for node in walk(flt.lowered_at(now)):
        if isinstance(node, af.Comparison | af.ListTest) and node.insensitive:
            values = node.value if isinstance(node.value, tuple) else (node.value,)
            if any(isinstance(v, str) and set(v) & set("\u03a3\u03c3\u03c2") for v in values):
                return True
    return False


JSON_EXACT_INTEGERS = {
    **{name: 2**63 for name in ("sqlite", "postgresql")},
    **{name: 2**53 for name in ("mysql", "duckdb", "spark", "clickhouse")},
}
"""The integers each engine keeps exactly in JSON: within 64 bits on SQLite and PostgreSQL,
within 2^53 on the engines reading every JSON number as a double."""
_EQUALITIES = frozenset({"equals", "in", "notIn", "has", "hasSome", "hasEvery"})


def _holds_a_lost_integer(flt: af.Filter, now: datetime, bound: int) -> bool:
    """Whether an equality at a data path has an integer literal beyond `bound` that no double
    holds, which the engine refuses: the one stored number equal to it is read as another
    (docs/backends-sql-rules.md, "Custom data (JSON fields)")."""
    for node in walk(flt.lowered_at(now)):
        if isinstance(node, af.Comparison | af.ListTest) and node.path:
            if node.op.value not in _EQUALITIES:
                continue
            values = node.value if isinstance(node.value, tuple) else (node.value,)
            if any(_lost(v, bound) for v in values):
                return True
    return False


def _lost(value: object, bound: int) -> bool:
    if not isinstance(value, int) or isinstance(value, bool) or -bound <= value < bound:
        return False
    try:
        return int(float(value)) != value
    except OverflowError:
        return True


def _holds_nul_read_as_json(flt: af.Filter, now: datetime) -> bool:
    """Whether a test at a data path, or of a list field (a JSON array on SQLite), has a string
    literal holding NUL, which SQLite refuses (its JSON functions end a string at NUL,
    docs/backends-sql-rules.md)."""
    for node in walk(flt.lowered_at(now)):
        if isinstance(node, af.ListTest) or (isinstance(node, af.Comparison) and node.path):
            values = node.value if isinstance(node.value, tuple) else (node.value,)
            if any(isinstance(v, str) and "\x00" in v for v in values):
                return True
    return False


def memory_ids(flt: af.Filter, records: Sequence[dict[str, Any]], now: datetime = NOW) -> set[str]:
    return {r["id"] for r in records if flt.matches(r, now=now)}


def _sql(flt: af.Filter, dialect: str) -> str:
    try:
        return flt.to_sql(dialect, now=NOW)
    except Exception as exc:  # the failure message must not hide the disagreement itself
        return f"(to_sql raised {type(exc).__name__}: {exc})"


def agree(
    engines: Engines,
    wheres: Iterable[dict[str, Any]],
    records: Sequence[dict[str, Any]],
    *,
    dialects: Iterable[str] = DIALECTS,
    schema: af.Schema = af.CONTACT,
    polars: bool = True,
    now: datetime = NOW,
) -> None:
    """Every filter of `wheres`, in order, selects the same ids from `records` on every engine
    as in memory. Each database's table is filled once, then asked every filter three ways."""
    wheres = list(wheres)
    filters = [af.parse(where, schema) for where in wheres]
    expected = [memory_ids(flt, records, now) for flt in filters]
    shown = f"records {_show(list(records))}"
    for dialect in dialects:
        database = engines.databases.get(dialect)
        if database is None or not storable(dialect, records):
            continue
        table = database.scratch(schema)
        database.fill(table, records, replace=True, schema=schema)
        for flt, wanted in zip(filters, expected, strict=True):
            if dialect in DOUBLE_JSON_NUMBERS:
                try:
                    wanted = memory_ids(flt, _doubled_records(records), now)
                except BeyondDoubles:
                    continue
            elif dialect == "postgresql":
                stored = [{**r, "data": as_jsonb(r["data"])} if "data" in r else r for r in records]
                wanted = memory_ids(flt, stored, now)
            refused = refuses(dialect, flt, now)
            if refused and refuses(dialect, flt.simplify(), now):
                for way in WAYS:
                    with pytest.raises(af.FilterError):
                        database.way(way)(flt, table, now)
                continue
            if refused:
                # The refused condition is absorbed (`OR` beside `{}`): SQLAlchemy folds it
                # away and answers, the text refuses it; either is the closed world's.
                for way in WAYS:
                    try:
                        found_absorbed = database.way(way)(flt, table, now)
                    except af.FilterError:
                        continue
                    assert found_absorbed == wanted, (way, dialect, flt.to_json(), shown)
                continue
            for way in WAYS:
                try:
                    found: set[str] | str = database.way(way)(flt, table, now)
                except Exception as exc:
                    found = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                assert found == wanted, (
                    f"{way} on {dialect} selects {found}, memory {wanted}\n"
                    f"filter {flt.to_json()}\n{dialect} SQL: {_sql(flt, dialect)}\n{shown}"
                )
    if polars:
        for flt, wanted in zip(filters, expected, strict=True):
            found = polars_ids(flt, records, now)
            assert found == wanted, (
                f"polars selects {found}, memory {wanted}\nfilter {flt.to_json()}\n{shown}"
            )


def polars_ids(
    flt: af.Filter, records: Sequence[dict[str, Any]], now: datetime = NOW
) -> set[str] | str:
    """The ids polars selects from a frame built with `frame_for`, eagerly and on the streaming
    engine (an error, or two different answers, as text)."""
    try:
        import polars as pl

        from audiencefilter.backends.frames.polars import frame_for
    except ImportError:  # pragma: no cover - the columnar extra is not installed
        return memory_ids(flt, records, now)
    try:
        frame = frame_for(list(records), flt.schema).with_columns(
            id=pl.Series([r["id"] for r in records], dtype=pl.String)
        )
        eager = set(flt.select_frame(frame, now=now)["id"].to_list())
        lazy = flt.select_frame(frame.lazy(), now=now).collect(engine="streaming")
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    streamed = set(lazy["id"].to_list())
    return eager if streamed == eager else f"eager {eager}, streaming {streamed}"


def finite_double(value: int | float) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False
