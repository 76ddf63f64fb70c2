"""The write's fixed statements run on the driver's cursor, SQLAlchemy's execution passed by.

A single contact update (`PATCH /v4/contacts/{id}`) runs the same handful of statements every
time: its `UPDATE ... RETURNING`, the memberships it moves, its events, its pairs' note, and
before them the key's read and, on SQLite, the transaction's `BEGIN` (`db/engine.py`). Each
is compiled once and found in the statement cache, yet SQLAlchemy's execution still builds an
execution context, a result's metadata and its rows for each run: about 50-60 microseconds a
statement on SQLite beside a few for the driver's own `execute`, a fifth of the update's CPU
(docs/performance-history-rate.md).

`execute` runs such a statement on the connection's driver cursor instead. What the execution
did that matters is kept, each taken from SQLAlchemy rather than derived again:

- the text and the parameters: the statement compiled once per dialect (`Compiled`), its
  parameters built by the compiled form and converted by its bind processors, as the
  execution context does;
- the rows: converted by their columns' result processors, keyed by the compiled result
  columns' names;
- the engine's events: `before_cursor_execute`, the dialect's `do_execute` (how psycopg's
  statements get prepared, `prepared_cache.py`; a statement or a run planned once is told so
  by `prepared_cache.PLANNING_ONCE`, there being no execution context to carry it),
  `after_cursor_execute` (the write meter's counts, the mirror of pysqlite's prepared
  statements) and, on an error, `handle_error`;
- errors: wrapped by the connection as any statement's (an `IntegrityError` stays one, a lost
  connection is invalidated).

Text (`text()`, such as the advisory lock) runs so too, its untyped columns named by the cursor.
A statement it cannot run so (text given typed columns; expanding or literal-execute parameters;
a Python-side default that is a function; a schema translation) goes through the connection's
`execute` every time, decided once when it is compiled. The listeners get `None`
for the execution context (the service's read none of it). The switch is the setting
`driver_statements`; off, every statement goes through `Connection.execute` and its result is
read into the same `Rows`, which `tests/service/test_driver_statements.py` compares.
"""

from __future__ import annotations

import typing
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import Executable, inspect
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.orm import Session, make_transient_to_detached
from sqlalchemy.sql.compiler import SQLCompiler

from .prepared_cache import PLANNED_ONCE, PLANNED_ROWS, PLANNING_ONCE

_Processor = Callable[[Any], Any]
_Description = Sequence[Sequence[Any]]
T = TypeVar("T")

DRIVER_STATEMENTS = "driver_statements"
"""The key of write sessions' `info` holding the setting `driver_statements`."""


@dataclass(frozen=True)
class Rows:
    """What a statement gave: its columns' names, its rows (converted), and for a statement
    that returns no rows the driver's count of rows it changed (-1 for one that returns rows:
    drivers disagree on what they count there, and `rows` holds them)."""

    keys: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    rowcount: int

    def first(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)


@dataclass
class Compiled:
    """One statement compiled for one dialect, with what a run needs of it; `direct` False
    when the driver path cannot run it."""

    text: str
    compiled: SQLCompiler
    direct: bool
    order: tuple[str, ...] | None
    """The parameters' names in the text's order (a positional driver); None: by name."""
    escaped: Mapping[str, str]
    binds: Mapping[str, _Processor]
    """The bind processors of the parameters that have one."""
    defaults: Mapping[str, Any]
    """The columns' scalar defaults an insert or update sets without a value given."""
    keys: tuple[str, ...]
    returns_rows: bool
    textual: bool
    """Text (`text()`): its columns, untyped, are the cursor's, known after the run."""
    planned_once: bool
    """Marked planned once (`prepared_cache.planned_once`): prepared on PostgreSQL."""
    results: list[_Processor | None] | None = field(default=None)
    """The result processors, found at the first run from the cursor's description."""

    def parameters(self, values: Mapping[str, Any], dialect: Dialect) -> Any:
        """The values as the driver takes them: in the text's order or by name, each
        converted by its bind processor, as the execution context builds them."""
        built = self.compiled.construct_params(values, escape_names=False)
        built.update(self.defaults)
        for name, process in self.binds.items():
            if name in built:
                built[name] = process(built[name])
        if self.order is not None:
            return dialect.execute_sequence_format([built[name] for name in self.order])
        if self.escaped:
            return {self.escaped.get(name, name): value for name, value in built.items()}
        return built

    def processors(self, description: _Description | None, dialect: Dialect) -> list[Any]:
        """The rows' converters, by the compiled columns' types and the driver's type codes
        (psycopg's, for a type converted by its code), found at the first run."""
        assert description is not None, self.text
        if self.results is None:
            columns = self.compiled._result_columns  # noqa: SLF001
            self.results = [
                column.type._cached_result_processor(dialect, described[1])  # noqa: SLF001
                for column, described in zip(columns, description, strict=True)
            ]
        return self.results


_COMPILED: weakref.WeakKeyDictionary[Executable, dict[tuple[Dialect, tuple[str, ...]], Compiled]]
_COMPILED = weakref.WeakKeyDictionary()


def compiled_for(statement: Executable, dialect: Dialect, names: Sequence[str]) -> Compiled:
    """`statement` compiled for `dialect` with these parameters' names, once."""
    by_dialect = _COMPILED.get(statement)
    if by_dialect is None:
        by_dialect = _COMPILED[statement] = {}
    key = (dialect, tuple(names))
    found = by_dialect.get(key)
    if found is None:
        found = by_dialect[key] = _compile(statement, dialect, key[1])
    return found


def _compile(statement: Executable, dialect: Dialect, names: tuple[str, ...]) -> Compiled:
    compiled = statement.compile(dialect=dialect, column_keys=list(names))  # type: ignore[attr-defined]
    assert isinstance(compiled, SQLCompiler)
    binds = dict(compiled._bind_processors)  # noqa: SLF001
    defaults = _scalar_defaults(compiled)
    direct = all(callable(process) for process in binds.values()) and not (
        defaults is None
        or compiled.literal_execute_params
        or compiled.post_compile_params
        or compiled.schema_translate_map
        or compiled._ad_hoc_textual  # noqa: SLF001
        or compiled._textual_ordered_columns  # noqa: SLF001
    )
    return Compiled(
        text=compiled.string,
        compiled=compiled,
        direct=direct,
        order=tuple(compiled.positiontup or ()) if compiled.positional else None,
        escaped=dict(compiled.escaped_bind_names or {}),
        binds={name: process for name, process in binds.items() if callable(process)},
        defaults=defaults or {},
        keys=tuple(column.keyname for column in compiled._result_columns),  # noqa: SLF001
        returns_rows=bool(compiled._result_columns),  # noqa: SLF001
        textual=compiled.isplaintext,
        planned_once=bool(statement.get_execution_options().get(PLANNED_ONCE, False)),
    )


def run(
    session: Session,
    statement: Executable,
    parameters: Mapping[str, Any],
    *,
    unpacked_rows: int | None = None,
) -> Rows:
    """`execute` on the session's connection, on the driver's cursor when the session's
    setting (`DRIVER_STATEMENTS` in its `info`) says so."""
    connection = session.connection()
    return execute(
        connection, statement, parameters, direct=direct(session), unpacked_rows=unpacked_rows
    )


def direct(session: Session) -> bool:
    """Whether the session's statements run on the driver's cursor (its `DRIVER_STATEMENTS`)."""
    return bool(session.info.get(DRIVER_STATEMENTS, False))


def loaded(session: Session, cls: type[T], values: Mapping[str, Any]) -> T:
    """The ORM object of `cls` a driver-path read gave (`values`, by attribute key, its
    primary key among them), as the ORM's loading of those attributes alone leaves it:
    persistent, those loaded and unchanged, the others expired (read by one statement when
    used, as after `load_only`); or the session's own object where it holds one already."""
    mapper = inspect(cls)
    keys = [mapper.get_property_by_column(column).key for column in mapper.primary_key]
    identity = mapper.identity_key_from_primary_key([values[key] for key in keys])
    held = session.identity_map.get(identity)
    if held is not None:
        return typing.cast(T, held)
    made = cls(**values)
    make_transient_to_detached(made)  # loaded as given; what was not given, expired
    session.add(made)
    return made


def _scalar_defaults(compiled: SQLCompiler) -> dict[str, Any] | None:
    """The values the execution would compute before the run (`prefetch`) when each is a
    column's scalar default, by parameter name; None when one is computed otherwise (a
    function's, which the execution calls with its context)."""
    found: dict[str, Any] = {}
    names = set(compiled.bind_names.values())
    prefetched = [(c, c.default) for c in compiled.insert_prefetch]
    prefetched += [(c, c.onupdate) for c in compiled.update_prefetch]
    for column, default in prefetched:
        if default is None or not default.is_scalar or column.key not in names:
            return None
        found[column.key] = default.arg  # type: ignore[attr-defined]
    return found


def execute(
    connection: Connection,
    statement: Executable,
    parameters: Mapping[str, Any],
    *,
    direct: bool = True,
    unpacked_rows: int | None = None,
) -> Rows:
    """Runs `statement` with `parameters` on `connection` (`_run`). `unpacked_rows`: the rows
    this run unpacks from a parameter; at most `PLANNED_ROWS`, the run is planned once
    (`prepared_cache.py`), as a statement marked so is."""
    compiled = compiled_for(statement, connection.dialect, list(parameters)) if direct else None
    few = unpacked_rows is not None and unpacked_rows <= PLANNED_ROWS
    if few or (compiled is not None and compiled.planned_once):
        token = PLANNING_ONCE.set(True)
        try:
            return _run(connection, statement, compiled, parameters)
        finally:
            PLANNING_ONCE.reset(token)
    return _run(connection, statement, compiled, parameters)


def _run(
    connection: Connection,
    statement: Executable,
    compiled: Compiled | None,
    parameters: Mapping[str, Any],
) -> Rows:
    """On the driver's cursor when the statement was compiled for it and allows it, else
    through `Connection.execute`; every row read."""
    if compiled is not None and compiled.direct:
        return _on_cursor(connection, compiled, parameters)
    result = connection.execute(statement, dict(parameters))
    if not result.returns_rows:
        return Rows((), [], result.rowcount)
    keys = tuple(result.keys())
    rows = [tuple(row) for row in result]
    return Rows(keys, rows, -1)


def _on_cursor(connection: Connection, compiled: Compiled, values: Mapping[str, Any]) -> Rows:
    dialect = connection.dialect
    text = compiled.text
    parameters = compiled.parameters(values, dialect)
    cursor = connection.connection.cursor()
    try:
        dispatch = connection.dispatch
        for before in dispatch.before_cursor_execute:
            text, parameters = before(connection, cursor, text, parameters, None, False)
        for run in dialect.dispatch.do_execute:
            if run(cursor, text, parameters, None):
                break
        else:
            cursor.execute(text, parameters)
        dispatch.after_cursor_execute(connection, cursor, text, parameters, None, False)
        rows: list[tuple[Any, ...]] = []
        rowcount = -1
        keys = compiled.keys
        if compiled.textual:
            description = cursor.description
            if description is None:
                rowcount = cursor.rowcount
            else:  # text's rows are not converted: its columns have no types
                keys = tuple(column[0] for column in description)
                rows = [tuple(row) for row in cursor.fetchall()]
        elif compiled.returns_rows:
            # psycopg builds its description anew at each reading: read once a statement.
            processors = compiled.results or compiled.processors(cursor.description, dialect)
            fetched = cursor.fetchall()
            if any(processors):
                rows = [
                    tuple(v if p is None else p(v) for p, v in zip(processors, row, strict=True))
                    for row in fetched
                ]
            else:
                rows = [tuple(row) for row in fetched]
        else:
            rowcount = cursor.rowcount
    except BaseException as error:
        connection._handle_dbapi_exception(error, text, parameters, cursor, None)  # noqa: SLF001
    cursor.close()
    return Rows(keys, rows, rowcount)
