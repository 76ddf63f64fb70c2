"""Every surface of the library, asked a whole batch of filters over a whole batch of records at
once, and compared with the oracle (`tests/oracle.py`).

A surface answers each filter of a batch with the ids it selects (or, for `explain`, each
record's TRUE/FALSE/UNKNOWN), a refusal (`FilterError`) or a crash (any other exception).
Engines are asked in bulk: one table (or frame) per batch, and every filter of the batch in one
query, each as a column `CASE WHEN <filter> THEN 1 ELSE 0 END` (one Spark job, one statement
per way of writing SQL); a query that fails is asked again filter by filter, so the failure is
pinned on its filter.

Documented limits are applied, never looked away from: MySQL/MariaDB, DuckDB, ClickHouse and
Spark compare JSON numbers as doubles (their expected answer is the oracle's on records whose JSON
numbers are rounded to doubles, the literals kept exact),
PostgreSQL holds no NUL (records holding one are not stored there), and the refusals that
docs/ promise (`DOCUMENTED_REFUSALS`) are checked to be refusals, not answers.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
from collections.abc import Callable, Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

import audiencefilter as af
from audiencefilter.backends.filter_set import graph_fast as memory_graph_fast
from audiencefilter.testing.space import JSON_COLUMN, OWNER, RELATED, Batch, json_encoded
from tests.oracle import Truth, truth
from tests.wide_engines import BeyondDoubles, doubled

Records = Sequence[dict[str, Any]]


@dataclass(frozen=True)
class Answer:
    """What a surface said of one filter: the ids selected, or each record's truth."""

    selected: frozenset[str] | None = None
    truths: dict[str, Truth] | None = None


@dataclass(frozen=True)
class Refusal:
    message: str


@dataclass(frozen=True)
class Crash:
    message: str


Outcome = Answer | Refusal | Crash | None  # None: the surface does not take this filter


def crash(exc: BaseException) -> Crash:
    text = str(exc).strip().splitlines()
    return Crash(f"{type(exc).__name__}: {text[0][:300] if text else ''}")


def attempt(ask: Callable[[], Outcome]) -> Outcome:
    """`ask()`, a `FilterError` as a refusal and any other exception as a crash."""
    try:
        return ask()
    except af.FilterError as exc:
        return Refusal(str(exc).replace("\n", " ")[:400])
    except Exception as exc:  # noqa: BLE001 - every other exception is a disagreement
        return crash(exc)


def selected(records: Records, keep: Callable[[dict[str, Any]], bool]) -> Answer:
    return Answer(selected=frozenset(r["id"] for r in records if keep(r)))


# ---- expectations ----------------------------------------------------------------------------


def expected_truths(batch: Batch, where: dict[str, Any], records: Records) -> dict[str, Truth]:
    return {r["id"]: truth(where, r, batch.schema, batch.now) for r in records}


def doubled_record(record: dict[str, Any], schema: af.Schema) -> dict[str, Any]:
    """`record` as an engine that reads JSON numbers as doubles holds it: its `data` and its
    number lists (JSON text on MySQL/MariaDB and ClickHouse, `DOUBLE[]` on DuckDB, doubles on
    Spark: docs/backends-sql-rules.md, Lists), in it and in its related rows."""
    lists = {f.name for f in schema.fields if f.type is af.FieldType.NUMBER_LIST and not f.source}
    out = {k: doubled(v) if k == "data" or k in lists else v for k, v in record.items()}
    for relation in schema.relations:
        rows = record.get(relation.name)
        if isinstance(rows, list):
            out[relation.name] = [doubled_record(row, relation.schema) for row in rows]
        elif isinstance(rows, dict):
            out[relation.name] = doubled_record(rows, relation.schema)
    return out


# ---- surfaces --------------------------------------------------------------------------------


@dataclass
class Surface:
    """One way of asking the library. `run(batch, filters, records)` answers each filter;
    `fixture` names a pytest fixture it needs; `doubles` applies the JSON-numbers-as-doubles
    limit; `stores(record)` says which records it can hold."""

    name: str
    run: Callable[..., list[Outcome]]
    fixture: str | None = None
    doubles: bool = False
    stores: Callable[[dict[str, Any]], bool] = lambda record: True
    marks: tuple[str, ...] = ()
    three_valued: bool = False
    records: int | None = None
    """How many of a batch's records it is asked about (None: all)."""
    stride: int = 1
    """In CI, every how many conditions of the sweep it is asked (building a PySpark column
    or a pandas frame's expression, or calling the command line, costs tens of milliseconds a
    filter); the deep run asks every one."""
    offset: int = 0
    """Where its stride starts: surfaces of one family start at different conditions, so that
    together they still meet every condition of the sweep in CI."""


def each(ask: Callable[[af.Filter, Records, datetime], Outcome]) -> Callable[..., list[Outcome]]:
    """A surface asked filter by filter."""

    def run(batch: Batch, filters: list[af.Filter], records: Records) -> list[Outcome]:
        return [attempt(lambda flt=flt: ask(flt, records, batch.now)) for flt in filters]

    return run


def _matches(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    return selected(records, lambda r: flt.matches(r, now=now))


def _compiled(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    predicate = af.compile(flt, clock=lambda: now)
    return selected(records, predicate)


def _select(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    return Answer(selected=frozenset(r["id"] for r in af.select(flt, records, now=now)))


def _simplified(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    simpler = flt.simplify()
    answer = selected(records, lambda r: simpler.matches(r, now=now))
    if flt.is_unsatisfiable() and answer.selected:
        return Crash(f"is_unsatisfiable() yet the filter selects {sorted(answer.selected)}")
    return answer


def _resolved(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    resolved = af.parse(flt.clock.resolve(now).to_json(), flt.schema)
    return selected(records, lambda r: resolved.matches(r, now=now))


def _explained(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    outcomes = {"TRUE": True, "FALSE": False, "UNKNOWN": None}
    truths = {r["id"]: outcomes[flt.explain(r, now=now).outcome.value] for r in records}
    return Answer(truths=truths)


def _json_trip(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    again = af.parse(flt.to_json(), flt.schema)
    if again != flt:
        return Crash(f"parse(to_json()) is another filter: {again.to_json()}")
    return selected(records, lambda r: again.matches(r, now=now))


def _text_trip(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    text = flt.to_text()
    again = af.parse_text(text, flt.schema)
    if again != flt:
        return Crash(f"parse_text(to_text()) is another filter: {text!r} -> {again.to_json()}")
    return selected(records, lambda r: again.matches(r, now=now))


def _filter_set(batch: Batch, filters: list[af.Filter], records: Records) -> list[Outcome]:
    """All the batch's filters in one `FilterSet`, judged together on each record."""
    try:
        chosen: list[set[str]] = [set() for _ in filters]
        group = af.FilterSet(filters)
        for record in records:
            for position in group.matching(record, now=batch.now):
                chosen[position].add(record["id"])
    except Exception:  # noqa: BLE001 - the set failed as a whole: ask each filter alone
        return [attempt(lambda flt=flt: _one_set(flt, records, batch.now)) for flt in filters]
    return [Answer(selected=frozenset(ids)) for ids in chosen]


def _tracked(fast: bool) -> Callable[[Batch, list[af.Filter], Records], list[Outcome]]:
    """One record tracked through the batch's records as its successive states
    (`FilterSet.track`): each update re-judges only what the change moved, by the numpy climb
    or the plain one, and must leave the record where the set judges it whole."""

    def ask(batch: Batch, filters: list[af.Filter], records: Records) -> list[Outcome]:
        switch = memory_graph_fast.ENABLED
        memory_graph_fast.ENABLED = fast and memory_graph_fast.np is not None
        try:
            chosen: list[set[str]] = [set() for _ in filters]
            tracked = af.FilterSet(filters).track(records[0], now=batch.now) if records else None
            for record in records:
                assert tracked is not None
                tracked.update(record)
                for position in tracked.matching:
                    chosen[position].add(record["id"])
        except Exception:  # noqa: BLE001 - as `_filter_set`: each filter alone says why
            return [attempt(lambda flt=flt: _one_set(flt, records, batch.now)) for flt in filters]
        finally:
            memory_graph_fast.ENABLED = switch
        return [Answer(selected=frozenset(ids)) for ids in chosen]

    return ask


def _one_set(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    group = af.FilterSet([flt])
    return selected(records, lambda r: bool(group.matching(r, now=now)))


def _format_trip(name: str) -> Callable[[af.Filter, Records, datetime], Outcome]:
    def ask(flt: af.Filter, records: Records, now: datetime) -> Outcome:
        written = flt.to_format(name)
        if name == "english":
            return None if isinstance(written, str) else Crash(f"english wrote {written!r}")
        again = af.from_format(written, name, flt.schema)
        return selected(records, lambda r: again.matches(r, now=now))

    return ask


def _exact_doubles(record: dict[str, Any]) -> bool:
    from audiencefilter.testing.space import SPACE
    from tests.cel_reference import exact_doubles

    return exact_doubles(record, SPACE)


def _reference(name: str) -> Callable[[af.Filter, Records, datetime], Outcome]:
    def ask(flt: af.Filter, records: Records, now: datetime) -> Outcome:
        from tests.interop_reference import REFERENCES

        if flt.clock.is_relative:
            return None  # a format's rule holds no clock: relative values are refused
        written = flt.to_format(name)
        rows = [json_encoded(r) for r in records]
        judge = REFERENCES[name]
        return Answer(selected=frozenset(r["id"] for r in rows if judge(written, r, flt.schema)))

    return ask


RESIDUAL_LEVELS = ("fields", "data", "rows", "owner")
"""What a caller may know of a record alone, level by level: its columns but `data`, the JSON
column (with the fields declared inside it), the to-many relation's rows, the to-one row."""


def known_at(level: str, schema: af.Schema, record: dict[str, Any]) -> dict[str, Any]:
    """The values of `record` a caller knows at `level` (null where the record holds none)."""
    if level == "fields":
        names = [f.name for f in schema.fields if f.name != JSON_COLUMN and not f.source]
    else:
        names = [{"data": JSON_COLUMN, "rows": RELATED, "owner": OWNER}[level]]
    return {name: record.get(name) for name in names}


def _residual(flt: af.Filter, records: Records, now: datetime) -> Outcome:
    """Each record judged by the residual left once one level of it is known, the level
    turning from record to record: the residual must select as the filter does."""
    kept: dict[af.Filter, af.Filter] = {}  # equal residuals compiled once

    def keep(index: int, record: dict[str, Any]) -> bool:
        level = RESIDUAL_LEVELS[index % len(RESIDUAL_LEVELS)]
        left = flt.residual(known_at(level, flt.schema, record), now=now)
        return kept.setdefault(left, left).matches(record, now=now)

    return Answer(selected=frozenset(r["id"] for i, r in enumerate(records) if keep(i, r)))


MEMORY_SURFACES = [
    Surface("matches", each(_matches)),
    Surface("residual", each(_residual), stride=2),
    # in CI, surfaces of one path share the sweep: compile and select (the compiled
    # predicate), simplify and resolve (a rewritten filter), the JSON and the text round trips
    Surface("compile", each(_compiled), stride=2),
    Surface("select", each(_select), stride=2, offset=1),
    Surface("filterset", _filter_set),
    # the two climbs of one tracked record share the sweep between them in CI
    Surface("filterset-track", _tracked(fast=True), stride=2),
    Surface("filterset-track-plain", _tracked(fast=False), stride=2, offset=1),
    Surface("simplify", each(_simplified), stride=2),
    Surface("resolve", each(_resolved), stride=2, offset=1),
    Surface("explain", each(_explained), three_valued=True),
    Surface("json-trip", each(_json_trip), stride=2),
    Surface("text-trip", each(_text_trip), stride=2, offset=1),
]
FORMAT_SURFACES = [
    *(Surface(f"format-{name}", each(_format_trip(name))) for name in ("jsonlogic", "mongodb")),
    Surface("format-react-querybuilder", each(_format_trip("react-querybuilder"))),
    Surface("format-sql", each(_format_trip("sql"))),
    Surface("format-english", each(_format_trip("english"))),
    Surface("format-cel", each(_format_trip("cel"))),
    Surface("reference-jsonlogic", each(_reference("jsonlogic")), stride=2),
    Surface("reference-mongodb", each(_reference("mongodb"))),
    # CEL binds a number as a double (docs/interop.md, CEL): records holding an integer no
    # double holds are left out, as PostgreSQL leaves out records holding NUL.
    Surface("reference-cel", each(_reference("cel")), stores=_exact_doubles, stride=2, offset=1),
]


# ---- the command line ------------------------------------------------------------------------


def _cli(*argv: str) -> tuple[int, str, str]:
    from audiencefilter.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def cli_schema(schema: af.Schema) -> dict[str, Any] | None:
    """The schema as `--schema` takes it; None when it cannot say it (relations, a zone)."""
    if schema.time_zone != "UTC":
        return None
    return {
        f.name: [f.type.value, list(f.source)] if f.source else f.type.value for f in schema.fields
    }


def _cli_status(status: int, err: str) -> Outcome | None:
    if status == 1:
        return Refusal(err.strip().replace("\n", " ")[:400])
    if status not in (0, 3):
        return Crash(f"exit status {status}: {err.strip()[:300]}")
    return None


def _cli_files(batch: Batch, records: Records, folder: Path) -> tuple[Path, Path] | None:
    mapping = cli_schema(batch.schema)
    if mapping is None:
        return None
    schema = folder / "schema.json"
    schema.write_text(json.dumps(mapping), encoding="utf-8")
    contacts = folder / "contacts.jsonl"
    lines = [json.dumps(json_encoded(r), ensure_ascii=False) + "\n" for r in records]
    contacts.write_text("".join(lines), encoding="utf-8")
    return schema, contacts


def _cli_eval(batch: Batch, filters: list[af.Filter], records: Records) -> list[Outcome]:
    with tempfile.TemporaryDirectory() as folder:
        files = _cli_files(batch, records, Path(folder))
        if files is None:
            return [None] * len(filters)
        schema, contacts = files
        return [_cli_eval_one(flt, batch, schema, contacts) for flt in filters]


def _cli_eval_one(flt: af.Filter, batch: Batch, schema: Path, contacts: Path) -> Outcome:
    if flt.schema.relations and _reads_relations(flt):
        return None
    now = batch.now.isoformat()
    status, out, err = _cli(
        "eval",
        flt.to_json(),
        str(contacts),
        "--schema",
        str(schema),
        "--replace-schema",
        "--now",
        now,
    )
    problem = _cli_status(status, err)
    return problem or Answer(selected=frozenset(out.split()))


def _reads_relations(flt: af.Filter) -> bool:
    names = {r.name for r in flt.schema.relations}
    return bool(names & _keys(flt.to_dict()))


def _keys(where: Any) -> set[str]:
    if isinstance(where, list):
        return set().union(*(_keys(item) for item in where)) if where else set()
    if not isinstance(where, dict):
        return set()
    return set(where) | set().union(*(_keys(v) for v in where.values()))


CLI_EXPLAINED = 3
"""Records of a batch the command line's `explain` is asked about (one process call each)."""


def _cli_explain(batch: Batch, filters: list[af.Filter], records: Records) -> list[Outcome]:
    mapping = cli_schema(batch.schema)
    if mapping is None:
        return [None] * len(filters)
    with tempfile.TemporaryDirectory() as folder:
        schema = Path(folder) / "schema.json"
        schema.write_text(json.dumps(mapping), encoding="utf-8")
        return [_cli_explain_one(flt, batch, schema, records) for flt in filters]


def _cli_explain_one(flt: af.Filter, batch: Batch, schema: Path, records: Records) -> Outcome:
    if _reads_relations(flt):
        return None
    chosen = set()
    for record in records:
        status, out, err = _cli(
            "explain",
            flt.to_json(),
            "--schema",
            str(schema),
            "--replace-schema",
            "--record",
            json.dumps(json_encoded(record)),
            "--now",
            batch.now.isoformat(),
        )
        problem = _cli_status(status, err)
        if problem is not None:
            return problem
        if out.rstrip().endswith("the record is in the audience"):
            chosen.add(record["id"])
    return Answer(selected=frozenset(chosen))


CLI_SURFACES = [
    Surface("cli-eval", _cli_eval, stride=4),
    Surface("cli-explain", _cli_explain, records=CLI_EXPLAINED, stride=4, offset=2),
]


# ---- polars ----------------------------------------------------------------------------------


def _polars(raw: bool) -> Callable[..., list[Outcome]]:
    def run(batch: Batch, filters: list[af.Filter], records: Records) -> list[Outcome]:
        try:
            frame = _frame(batch.schema, records, raw)
        except af.FrameError as exc:  # the records refused as a frame, naming why: every filter
            return [Refusal(str(exc).replace("\n", " ")[:400])] * len(filters)
        except Exception as exc:  # noqa: BLE001 - a frame that cannot be built fails every filter
            return [crash(exc)] * len(filters)
        return [attempt(lambda flt=flt: _frame_ids(flt, frame, batch.now)) for flt in filters]

    return run


def _frame(schema: af.Schema, records: Records, raw: bool) -> Any:
    import polars as pl

    from audiencefilter.backends.frames.polars import frame_for

    frame = frame_for(list(records), schema).with_columns(
        id=pl.Series([r["id"] for r in records], dtype=pl.String)
    )
    if raw:  # the JSON column as the objects themselves, as a frame of Python dicts holds them
        documents = [r.get("data") for r in records]
        frame = frame.with_columns(data=pl.Series(documents, dtype=pl.Object))
    return frame


def _frame_ids(flt: af.Filter, frame: Any, now: datetime) -> Outcome:
    return Answer(selected=frozenset(flt.select_frame(frame, now=now)["id"].to_list()))


POLARS_SURFACES = [
    Surface("polars-json", _polars(False), stride=2),
    Surface("polars-raw", _polars(True), stride=2, offset=1),
]


# ---- pandas (through narwhals) -----------------------------------------------------------------


def _pandas(backend: Literal["numpy", "pyarrow"], raw: bool) -> Callable[..., list[Outcome]]:
    """A pandas frame of NumPy or pyarrow dtypes; `raw`: the JSON column as the decoded
    documents in an object column, as a frame of Python dicts holds them."""

    def run(batch: Batch, filters: list[af.Filter], records: Records) -> list[Outcome]:
        try:
            frame = _pandas_frame(batch.schema, records, backend, raw)
        except af.FrameError as exc:  # the records refused as a frame, naming why: every filter
            return [Refusal(str(exc).replace("\n", " ")[:400])] * len(filters)
        except Exception as exc:  # noqa: BLE001 - a frame that cannot be built fails every filter
            return [crash(exc)] * len(filters)
        return [attempt(lambda flt=flt: _frame_ids(flt, frame, batch.now)) for flt in filters]

    return run


def _pandas_frame(
    schema: af.Schema, records: Records, backend: Literal["numpy", "pyarrow"], raw: bool
) -> Any:
    import pandas as pd

    from audiencefilter.backends.frames.narwhals import pandas_frame_for

    frame = pandas_frame_for(list(records), schema, dtype_backend=backend)
    frame["id"] = pd.Series([r["id"] for r in records], dtype=object)
    if raw:
        frame["data"] = pd.Series([r.get("data") for r in records], dtype=object)
    return frame


PANDAS_SURFACES = [
    Surface("pandas-numpy", _pandas("numpy", False), stride=3),
    Surface("pandas-numpy-raw", _pandas("numpy", True), stride=3, offset=1),
    Surface("pandas-pyarrow", _pandas("pyarrow", False), stride=3, offset=2),
]


# ---- Spark ---------------------------------------------------------------------------------------


STATEMENT_COLUMNS = 50
"""Filters asked in one statement or Spark job: SQLAlchemy compiles, and Spark analyses, a
select of hundreds of conditions in time that grows faster than their number."""


def _spark(sql: bool) -> Callable[..., list[Outcome]]:
    def run(spark: Any, batch: Batch, filters: list[af.Filter], records: Records) -> list[Outcome]:
        from audiencefilter.backends.frames.spark import frame_for

        try:
            frame = frame_for(spark, list(records), batch.schema)
        except Exception as exc:  # noqa: BLE001
            return [crash(exc)] * len(filters)
        if sql:
            frame.createOrReplaceTempView("space_contacts")
        columns: dict[int, Any] = {}
        outcomes: list[Outcome] = [None] * len(filters)
        for i, flt in enumerate(filters):
            built = attempt(lambda flt=flt: _spark_column(spark, flt, batch.now, sql))
            if isinstance(built, Answer):
                columns[i] = built.truths
            else:
                outcomes[i] = built
        keys = list(columns)
        for start in range(0, len(keys), STATEMENT_COLUMNS):
            part = {i: columns[i] for i in keys[start : start + STATEMENT_COLUMNS]}
            _spark_collect(spark, frame, part, outcomes, sql)
        return outcomes

    return run


def _spark_column(spark: Any, flt: af.Filter, now: datetime, sql: bool) -> Outcome:
    from pyspark.sql import functions as F  # noqa: N812

    if sql:
        condition = flt.to_sql("spark", now=now, table="space_contacts")
        return Answer(truths=F.expr(f"CASE WHEN {condition} THEN 1 ELSE 0 END"))  # type: ignore[arg-type]
    column = flt.to_pyspark(now=now, session=spark)
    return Answer(truths=F.when(column, 1).otherwise(0))  # type: ignore[arg-type]


def _spark_collect(
    spark: Any, frame: Any, columns: dict[int, Any], outcomes: list[Outcome], sql: bool
) -> list[Outcome]:
    if not columns:
        return outcomes
    try:
        rows = frame.select("id", *(c.alias(f"f{i}") for i, c in columns.items())).collect()
    except Exception as exc:  # noqa: BLE001 - halves, down to the filter that fails
        if len(columns) == 1:
            (i,) = columns
            outcomes[i] = crash(exc)
            return outcomes
        keys = list(columns)
        for part in (keys[: len(keys) // 2], keys[len(keys) // 2 :]):
            _spark_collect(spark, frame, {i: columns[i] for i in part}, outcomes, sql)
        return outcomes
    for i in columns:
        outcomes[i] = Answer(selected=frozenset(r["id"] for r in rows if r[f"f{i}"] == 1))
    return outcomes


SPARK_SURFACES = [
    Surface("pyspark", _spark(False), fixture="spark", marks=("spark",), stride=4, doubles=True),
    Surface("spark-sql", _spark(True), fixture="spark", marks=("spark",), doubles=True),
]


# ---- SQL databases -------------------------------------------------------------------------------


@dataclass
class SpaceTables:
    """The contacts table of one schema on one database, with a table per relation."""

    contacts: Any
    related: dict[str, Any] = field(default_factory=dict)


def _tables(database: Any, schema: af.Schema) -> SpaceTables:
    import hashlib

    key = "sp_" + hashlib.sha256(repr(schema).encode()).hexdigest()[:10]
    cached = database.tables.get(key)
    if cached is None:
        contacts = database.new_table(key, schema)
        related = {r.name: _related_table(database, key, r) for r in schema.relations}
        database.tables[key] = cached = SpaceTables(contacts, related)
    assert isinstance(cached, SpaceTables)
    return cached


def _related_table(database: Any, key: str, relation: af.Relation) -> Any:
    from sqlalchemy import Column, Integer, String, Table, inspect

    from tests.sql_engines import _column_type

    columns = [Column("row_key", Integer, primary_key=True, autoincrement=False)]
    columns.append(Column(relation.foreign_key, String(64)))
    for f in relation.schema.fields:
        columns.append(Column(f.name, _column_type(f.type, database.engine), key=f.name))
    table = Table(f"{key}_{relation.name}", database.metadata, *columns)
    with database.engine.begin() as connection:
        if inspect(connection).has_table(table.name):
            table.drop(connection)
        table.create(connection)
    return table


def _fill(database: Any, tables: SpaceTables, schema: af.Schema, records: Records) -> None:
    from sqlalchemy import delete

    from tests.sql_engines import _row

    native = database.dialect in ("postgresql", "duckdb")
    database.fill(tables.contacts, records, replace=True, schema=schema)
    with database.engine.begin() as connection:
        for relation in schema.relations:
            table = tables.related[relation.name]
            connection.execute(delete(table))
            rows = []
            for record in records:
                held = record.get(relation.name)
                for row in [held] if isinstance(held, dict) else held or ():
                    values = _row(row, relation.schema, native)
                    values.update(row_key=len(rows), **{relation.foreign_key: record["id"]})
                    rows.append(values)
            if rows:
                connection.execute(table.insert(), rows)


def _sql_surface(dialect: str, way: str) -> Callable[..., list[Outcome]]:
    def run(
        database: Any, batch: Batch, filters: list[af.Filter], records: Records
    ) -> list[Outcome]:
        try:
            tables = _tables(database, batch.schema)
            _fill(database, tables, batch.schema, records)
        except Exception as exc:  # noqa: BLE001 - records a database cannot hold
            return [crash(exc)] * len(filters)
        return _ask_sql(database, way, tables, filters, batch.now)

    return run


def _condition(database: Any, way: str, tables: SpaceTables, flt: af.Filter, now: datetime) -> Any:
    """The filter as the way writes it: a SQLAlchemy expression, or text with its parameters."""
    names = {name: t.name for name, t in tables.related.items()}
    table = tables.contacts.name
    if way == "sqlalchemy":
        return flt.to_sqlalchemy(tables.contacts, now=now, relations=tables.related)
    if way == "sql":
        return flt.to_sql(database.dialect, now=now, table=table, tables=names), []
    return flt.to_sql_params(database.dialect, now=now, table=table, tables=names)


def _ask_sql(
    database: Any, way: str, tables: SpaceTables, filters: list[af.Filter], now: datetime
) -> list[Outcome]:
    outcomes: list[Outcome] = [None] * len(filters)
    built: dict[int, Any] = {}
    for i, flt in enumerate(filters):
        try:
            built[i] = _condition(database, way, tables, flt, now)
        except af.FilterError as exc:
            outcomes[i] = Refusal(str(exc).replace("\n", " ")[:400])
        except Exception as exc:  # noqa: BLE001
            outcomes[i] = crash(exc)
    answers: dict[int, set[str]] = {}
    keys = list(built)
    for start in range(0, len(keys), STATEMENT_COLUMNS):
        part = {i: built[i] for i in keys[start : start + STATEMENT_COLUMNS]}
        answers.update(_bisected(database, way, tables, part, outcomes))
    for i, ids in answers.items():
        outcomes[i] = Answer(selected=frozenset(ids))
    return outcomes


def _bisected(
    database: Any, way: str, tables: SpaceTables, built: dict[int, Any], outcomes: list[Outcome]
) -> dict[int, set[str]]:
    """The answers of one statement for all of `built`; when it fails, of each half, down to
    the filter that fails (its outcome then the refusal or crash)."""
    try:
        return _sql_columns(database, way, tables, built)
    except Exception as exc:  # noqa: BLE001 - pinned on its filter below
        if len(built) == 1:
            (i,) = built
            if isinstance(exc, af.FilterError):  # SQLAlchemy compiles the expression as it runs
                outcomes[i] = Refusal(str(exc).replace("\n", " ")[:400])
            else:
                outcomes[i] = crash(exc)
            return {}
    keys = list(built)
    half = len(keys) // 2
    answers = {}
    for part in (keys[:half], keys[half:]):
        answers.update(_bisected(database, way, tables, {i: built[i] for i in part}, outcomes))
    return answers


def _sql_columns(
    database: Any, way: str, tables: SpaceTables, built: dict[int, Any]
) -> dict[int, set[str]]:
    """One statement asking every built condition as a column of 1 (TRUE) or 0."""
    if not built:
        return {}
    if way == "sqlalchemy":
        from sqlalchemy import case, select

        columns = [case((c, 1), else_=0).label(f"f{i}") for i, c in built.items()]
        with database.engine.connect() as connection:
            rows = connection.execute(select(tables.contacts.c.id, *columns)).all()
    else:
        preparer = database.engine.dialect.identifier_preparer
        parts, params = [], []
        for i, (text, values) in built.items():
            parts.append(f"CASE WHEN {text} THEN 1 ELSE 0 END AS f{i}")
            params.extend(values)
        sql = (
            f"SELECT {preparer.quote('id')}, {', '.join(parts)} "
            f"FROM {preparer.format_table(tables.contacts)}"
        )
        with database.engine.connect() as connection:
            if way == "sql":
                options = {"no_parameters": True}
                rows = connection.exec_driver_sql(sql, execution_options=options).all()
            else:
                rows = connection.exec_driver_sql(sql, tuple(params)).all()
    keys = list(built)
    return {i: {row[0] for row in rows if row[1 + n] == 1} for n, i in enumerate(keys)}


def _no_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, dict):
        return all(_no_nul(k) and _no_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_no_nul(v) for v in value)
    return True


def _signed_64(record: dict[str, Any]) -> bool:
    return _json_within_64_bits(record, 2**63)


_STORES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "postgresql": lambda record: _no_nul(record) and _signed_64(record),
    "sqlite": _signed_64,
}
"""The records each database is asked about: PostgreSQL holds no NUL, and SQLite and
PostgreSQL read a JSON integer beyond signed 64 bits as a double (the documented limits)."""

DATABASE_FIXTURES = {
    "sqlite": None,
    "duckdb": None,
    "postgresql": "pg_database",
    "mysql": "mysql_url",
}
SQL_SURFACES = [
    Surface(
        f"{way}-{dialect}",
        _sql_surface(dialect, way),
        fixture=f"space_db_{dialect}",
        doubles=dialect in ("mysql", "duckdb"),
        stores=_STORES.get(dialect, lambda record: True),
        marks={"postgresql": ("postgres",), "mysql": ("mysql",)}.get(dialect, ()),
    )
    for dialect in DATABASE_FIXTURES
    for way in ("sqlalchemy", "sql", "params")
]


def _django_surface(
    store: Any, batch: Batch, filters: list[af.Filter], records: Records
) -> list[Outcome]:
    """Each filter through `Filter.to_django` on a model holding the batch (one per batch)."""
    try:
        model = store.model_for(records, batch.schema)
    except Exception as exc:  # noqa: BLE001 - records a database cannot hold
        return [crash(exc)] * len(filters)

    def answer(flt: af.Filter) -> Outcome:
        return attempt(lambda: Answer(selected=frozenset(store.ids(model, flt, batch.now))))

    return [answer(flt) for flt in filters]


DJANGO_SURFACES = [
    Surface(
        f"django-{vendor}",
        _django_surface,
        fixture=f"space_django_{vendor}",
        stores=_STORES[vendor],
        marks=("postgres",) if vendor == "postgresql" else (),
    )
    for vendor in ("sqlite", "postgresql")
]
"""Django's own SQLite and PostgreSQL back-ends (`tests/django_engines.py` builds the models)."""


# ---- ClickHouse (chDB, in process) ---------------------------------------------------------------


def _clickhouse(params: bool) -> Callable[..., list[Outcome]]:
    """Over a table typed as docs/backends-clickhouse.md advises (`tests/clickhouse_engines.py`):
    inlined SQL asks every filter as a column of one statement per `STATEMENT_COLUMNS` (a statement
    that fails is asked again filter by filter, so the failure is pinned on its filter);
    `to_sql_params` asks one statement per filter, each with its own named parameters."""

    def run(
        database: Any, batch: Batch, filters: list[af.Filter], records: Records
    ) -> list[Outcome]:
        try:
            table = database.table_for(records, batch.schema)
        except Exception as exc:  # noqa: BLE001 - records the table cannot hold
            return [crash(exc)] * len(filters)
        if params:
            return [
                attempt(
                    lambda f=f: Answer(
                        selected=frozenset(database.select_params(f, records, batch.now))
                    )
                )
                for f in filters
            ]
        outcomes: list[Outcome] = [None] * len(filters)
        built: dict[int, str] = {}
        for i, flt in enumerate(filters):
            try:
                built[i] = database.condition(flt, table, batch.now)
            except af.FilterError as exc:
                outcomes[i] = Refusal(str(exc).replace("\n", " ")[:400])
            except Exception as exc:  # noqa: BLE001
                outcomes[i] = crash(exc)
        keys = list(built)
        for start in range(0, len(keys), STATEMENT_COLUMNS):
            part = {i: built[i] for i in keys[start : start + STATEMENT_COLUMNS]}
            try:
                answers = database.columns(table, part)
            except Exception:  # noqa: BLE001 - asked again one by one
                answers = {}
                for i, condition in part.items():
                    outcomes[i] = attempt(
                        lambda i=i, c=condition: Answer(
                            selected=frozenset(database.columns(table, {i: c})[i])
                        )
                    )
            for i, ids in answers.items():
                outcomes[i] = Answer(selected=frozenset(ids))
        return outcomes

    return run


def _json_within_64_bits(record: dict[str, Any], top: int = 2**64) -> bool:
    """Whether every integer in the JSON of `record` and of its related rows (`data`, and the
    list columns, JSON text on SQLite and ClickHouse) is within 64 bits (below `top`):
    ClickHouse types a larger one as a String, SQLite and PostgreSQL read one beyond signed 64
    bits as a double (docs/support.md, "Known limits decided by the stored value";
    `tests/test_clickhouse.py` and `tests/test_sql_agreement.py` show them)."""

    def within(value: Any) -> bool:
        if isinstance(value, int) and not isinstance(value, bool):
            return -(2**63) <= value < top
        if isinstance(value, dict):
            return all(within(v) for v in value.values())
        if isinstance(value, list):
            return all(within(v) for v in value)
        return True

    rows = [record, *(r for v in record.values() for r in _related_rows(v))]
    return all(within(row.get("data")) and all(within(v) for v in _lists(row)) for row in rows)


def _lists(row: dict[str, Any]) -> list[list[Any]]:
    """The list columns of a row (a related relation's rows are no list column)."""
    return [
        v for v in row.values() if isinstance(v, list) and not any(isinstance(i, dict) for i in v)
    ]


def _related_rows(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict) and "id" in value:
        return [value]
    if isinstance(value, list) and all(isinstance(r, dict) for r in value):
        return list(value)
    return []


CLICKHOUSE_SURFACES = [
    Surface(
        f"{way}-clickhouse",
        _clickhouse(way == "params"),
        fixture="clickhouse",
        stores=_json_within_64_bits,
        doubles=True,
        stride=2 if way == "params" else 1,  # one statement per filter: every second in CI
    )
    for way in ("sql", "params")
]


SURFACES = [
    *MEMORY_SURFACES,
    *FORMAT_SURFACES,
    *CLI_SURFACES,
    *POLARS_SURFACES,
    *PANDAS_SURFACES,
    *SQL_SURFACES,
    *DJANGO_SURFACES,
    *SPARK_SURFACES,
    *CLICKHOUSE_SURFACES,
]


# ---- judging ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Disagreement:
    """A surface's answer on one filter and one record that is not the oracle's."""

    surface: str
    where: dict[str, Any]
    record: dict[str, Any]
    expected: Any
    got: Any
    now: datetime
    zone: str
    family: str | None = None

    def repro(self) -> dict[str, Any]:
        return {
            "surface": self.surface,
            "family": self.family,
            "filter": self.where,
            "record": json_encoded(self.record),
            "now": self.now.isoformat(),
            "schema_zone": self.zone,
            "expected": self.expected,
            "got": self.got,
        }


def _shown(value: Any) -> Any:
    if isinstance(value, Refusal | Crash):
        return f"{type(value).__name__.lower()}: {value.message}"
    return value


def judge(
    surface: Surface,
    batch: Batch,
    wheres: Sequence[dict[str, Any]],
    records: Records,
    outcomes: Sequence[Outcome],
) -> tuple[int, int, list[Disagreement]]:
    """The checks made (filter x record), the refusals met, and the disagreements."""
    checks = refusals = 0
    found: list[Disagreement] = []
    for where, outcome in zip(wheres, outcomes, strict=True):
        if outcome is None:
            continue
        expected = _expected(surface, batch, where, records)
        if expected is None:
            continue
        checks += len(records)
        if isinstance(outcome, Refusal) and documented_refusal(surface.name, outcome.message):
            refusals += len(records)
            continue
        for record in records:
            wanted: Any = expected[record["id"]]
            got = _got(outcome, record["id"])
            if not surface.three_valued:
                wanted = wanted is True
            if got != wanted:
                found.append(
                    Disagreement(
                        surface.name,
                        where,
                        record,
                        wanted,
                        _shown(got),
                        batch.now,
                        batch.schema.time_zone,
                    )
                )
                if isinstance(outcome, Refusal | Crash):
                    break  # one disagreement per refusal or crash
    return checks, refusals, found


_EXPECTED: dict[tuple[int, str, bool, tuple[str, ...]], dict[str, Truth] | None] = {}


def _expected(
    surface: Surface, batch: Batch, where: dict[str, Any], records: Records
) -> dict[str, Truth] | None:
    """The oracle's truths, worked out once per batch, filter, records and rounding."""
    if len(records) < 2:  # a reduction's own batch, made and dropped: not worth keeping
        return _oracle(surface, batch, where, records)
    key = (id(batch), repr(where), surface.doubles, tuple(r["id"] for r in records))
    if key not in _EXPECTED:
        if len(_EXPECTED) > 200_000:
            _EXPECTED.clear()
        _EXPECTED[key] = _oracle(surface, batch, where, records)
    return _EXPECTED[key]


def _oracle(
    surface: Surface, batch: Batch, where: dict[str, Any], records: Records
) -> dict[str, Truth] | None:
    if not surface.doubles:
        return expected_truths(batch, where, records)
    # The engine stores each JSON number as a double, and compares the literal with it
    # exactly (docs/semantics.md, "Numbers"): the records are rounded, the literals are not.
    try:
        return {
            r["id"]: truth(where, doubled_record(r, batch.schema), batch.schema, batch.now)
            for r in records
        }
    except BeyondDoubles:
        return None


def _got(outcome: Outcome, key: str) -> Any:
    if isinstance(outcome, Answer):
        if outcome.truths is not None:
            return outcome.truths.get(key, "absent")
        assert outcome.selected is not None
        return key in outcome.selected
    return outcome


DOCUMENTED_REFUSALS: list[tuple[str, str, str]] = [
    (
        "-clickhouse",
        "differently from Python's str.lower()",
        "docs/backends-clickhouse.md: a literal lowerUTF8 could fold otherwise, as on Spark",
    ),
    (
        "pyspark",
        "differently from Python's str.lower()",
        "docs/backends-spark.md#case-folding-on-spark: a literal Spark's lower() could fold"
        " otherwise",
    ),
    (
        "spark-sql",
        "differently from Python's str.lower()",
        "docs/backends-spark.md#case-folding-on-spark: a literal Spark's lower() could fold"
        " otherwise",
    ),
    (
        "spark-sql",
        "Spark SQL does not evaluate relation conditions",
        "docs/backends-sql-rules.md#relations",
    ),
    *(
        (
            suffix,
            "folds a final \u03a3",
            "docs/backends-sql-rules.md: MySQL/MariaDB and DuckDB refuse a case-insensitive"
            " literal holding a sigma",
        )
        for suffix in ("-mysql", "-duckdb")
    ),
    (
        "-sqlite",
        "read a string up to its first NUL",
        "docs/backends-sql-rules.md: SQLite refuses a literal holding NUL at a data path",
    ),
    (
        "-mysql",
        "time zone",
        "docs/backends-sql-rules.md#anniversaries: MySQL/MariaDB refuse zoned anniversaries",
    ),
    (
        "-sqlite",
        "cannot evaluate",
        "docs/backends-sql-rules.md#lists: SQLite refuses datetime[] and date[]",
    ),
    (
        "-mysql",
        "cannot evaluate",
        "docs/backends-sql-rules.md#lists: MySQL/MariaDB refuse datetime[], date[]",
    ),
    (
        "-duckdb",
        "cannot evaluate",
        "docs/backends-sql-rules.md#json-arrays-at-a-data-path: a path written as a JSON pointer"
        " is refused",
    ),
    (
        "-sqlite",
        "holds a sum exactly within 64-bit integers only",
        "docs/semantics-relations.md, Relations: SQLite refuses a sum compared with a number past"
        " 64 bits",
    ),
    (
        "",
        "keeps a JSON integer beyond",
        "docs/backends-sql-rules.md: an equality at a data path with an integer the engine keeps"
        " as a double, which no double holds, is refused",
    ),
    *(
        (
            prefix,
            "no polars list type holds both exactly",
            "docs/backends-polars.md: records whose number list holds an integer no double"
            " holds beside fractions are refused as a frame",
        )
        for prefix in ("polars-", "pandas-")
    ),
    (
        "pandas-",
        "which no pandas or Arrow integer type holds",
        "docs/pandas.md: records holding an integer beyond 64 bits are refused as a pandas frame",
    ),
    ("format-", "", "docs/interop.md: a writer refuses what its format cannot say faithfully"),
    ("reference-", "", "the format's writer refused it: nothing to evaluate"),
]
"""(surface prefix or suffix, words of the message, where it is documented): refusals that are
the documented answer, not disagreements."""


def documented_refusal(surface: str, message: str) -> bool:
    return any(
        (surface.startswith(prefix) or surface.endswith(prefix)) and words in message
        for prefix, words, _ in DOCUMENTED_REFUSALS
    )


# ---- reducing a disagreement -----------------------------------------------------------------


def smaller(where: Any) -> list[dict[str, Any]]:
    """Where clauses inside `where` that may still show a disagreement: each key alone, each
    item of a group, a relation's or a negation's inner clause."""
    if not isinstance(where, dict):
        return []
    found: list[dict[str, Any]] = []
    if len(where) > 1:
        found += [{k: v} for k, v in where.items()]
    for key, value in where.items():
        if key in ("AND", "OR", "NOT"):
            items = value if isinstance(value, list) else [value]
            found += [item for item in items if isinstance(item, dict)]
            if key == "NOT" and isinstance(value, list) and len(value) > 1:
                found += [{"NOT": item} for item in value]
        elif isinstance(value, dict) and len(value) > 1 and "path" not in value:
            found += [{key: {k: v}} for k, v in value.items() if k != "mode"]
    return found


def reduce(
    disagreement: Disagreement,
    still: Callable[[dict[str, Any]], Disagreement | None],
    steps: int = 40,
) -> Disagreement:
    """A smaller filter with a disagreement on the same surface and record, greedily."""
    current = disagreement
    for _ in range(steps):
        for candidate in smaller(current.where):
            try:
                again = still(candidate)
            except Exception:  # noqa: BLE001 - a candidate the library refuses to read
                again = None
            if again is not None:
                current = again
                break
        else:
            return current
    return current


def iso(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


__all__ = ["SURFACES", "Surface", "judge", "reduce", "Disagreement", "UTC", "re"]
