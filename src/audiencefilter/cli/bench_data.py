"""The contacts of `audiencefilter bench`: read once, checked and put in one form for every engine.

Every engine loads the same normalized records, so a difference between their answers is a
difference between engines, never between readers: date-times are aware `datetime`s in UTC,
numbers are `int` or `float`, `data` is a decoded document, and `actions` a list of rows of
the relation's fields. A record whose value cannot be put in its field's type is a bad row:
reported, counted and left out, as `eval` does.

Sources: `synthetic:N`, a file read by the `eval` readers (JSON Lines, JSON array, CSV), a
Parquet file (polars), or a database URL (`sqlite:///x.db`, `postgresql://...`) whose
`contacts` table is read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import audiencefilter as af

from .contacts import InputError, format_of, read_rows
from .inputs import UsageError
from .synthetic import is_synthetic, synthetic_contacts, synthetic_size

Record = dict[str, Any]
ACTIONS = "actions"


@dataclass
class Contacts:
    """The records every engine loads, where they came from, and the rows left out."""

    source: str
    records: list[Record] = field(default_factory=list)
    bad_rows: list[str] = field(default_factory=list)

    def label(self, position: int) -> str:
        """How a contact is named in a report: its `id`, else its place."""
        ident = self.records[position].get("id")
        return f"#{position}" if ident is None else str(ident)


def read_contacts(
    source: str, fmt: str | None, limit: int | None, seed: int, now: datetime
) -> Contacts:
    """The contacts named by `--contacts`, at most `limit` of them (`synthetic:N` dated back
    from `now`); UsageError for a source that cannot be opened, InputError for one that is
    not in its format."""
    contacts = Contacts(source)
    for where, raw in _raw_records(source, fmt, limit, seed, now):
        if isinstance(raw, str):
            contacts.bad_rows.append(f"{where}: {raw}")
            continue
        try:
            contacts.records.append(normalize(raw))
        except ValueError as exc:
            contacts.bad_rows.append(f"{where}: {exc}")
        if limit is not None and len(contacts.records) >= limit:
            break
    return contacts


def _raw_records(
    source: str, fmt: str | None, limit: int | None, seed: int, now: datetime
) -> Iterator[tuple[str, Record | str]]:
    """(where, record or the reason there is none) from any kind of source."""
    if is_synthetic(source):
        try:
            size = synthetic_size(source)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        count = size if limit is None else min(size, limit)
        return ((f"contact {i}", r) for i, r in enumerate(synthetic_contacts(count, seed, now)))
    if "://" in source:
        return _numbered(_database_records(source))
    if (fmt or "").lower() == "parquet" or (fmt is None and source.lower().endswith(".parquet")):
        return _numbered(_parquet_records(source))
    return _file_records(source, fmt)


def _numbered(records: Iterator[Record]) -> Iterator[tuple[str, Record | str]]:
    return ((f"row {n}", record) for n, record in enumerate(records, 1))


def _file_records(path: str, fmt: str | None) -> Iterator[tuple[str, Record | str]]:
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed when the generator ends
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    return _rows_of(stream, format_of(path, fmt))


def _rows_of(stream: Any, fmt: str) -> Iterator[tuple[str, Record | str]]:
    with stream:
        for row in read_rows(stream, fmt, af.CONTACT):
            if row.record is None:
                yield row.where, row.error or "unreadable"
            else:  # a CSV cell holds the actions as JSON text
                yield row.where, _decoded_actions(row.record) if fmt == "csv" else row.record


def _parquet_records(path: str) -> Iterator[Record]:
    try:
        import polars as pl
    except ImportError:
        raise UsageError("reading Parquet needs polars (pip install polars)") from None
    try:
        frame = pl.read_parquet(path)
    except FileNotFoundError:
        raise UsageError(f"cannot read {path}: no such file") from None
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise InputError(f"{path} is not a Parquet file ({str(exc).splitlines()[0]})") from None
    return (_decoded_json(record) for record in frame.iter_rows(named=True))


def _database_records(url: str) -> Iterator[Record]:
    """The rows of the database's `contacts` table (its columns named as the fields)."""
    import sqlalchemy

    address = url.replace("postgresql://", "postgresql+psycopg://", 1)
    try:
        engine = sqlalchemy.create_engine(address)
        with engine.connect() as connection:
            rows = connection.execute(sqlalchemy.text("SELECT * FROM contacts"))
            records = [dict(row._mapping) for row in rows]
    except (sqlalchemy.exc.SQLAlchemyError, ImportError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"cannot read the contacts table of {url}: {first}") from None
    finally:
        if "engine" in locals():
            engine.dispose()
    return (_decoded_json(record) for record in records)


def _decoded_json(record: Record) -> Record:
    """A JSON column read as text (SQLite, a Parquet string column) holds the document it
    spells, as a polars String column of `data` does for `select_frame`."""
    if isinstance(record.get("data"), str):
        try:
            record["data"] = json.loads(record["data"])
        except ValueError:
            pass  # not JSON text: the string itself is the document
    return _decoded_actions(record)


def _decoded_actions(record: Record) -> Record:
    if isinstance(record.get(ACTIONS), str):
        try:
            record[ACTIONS] = json.loads(record[ACTIONS])
        except ValueError:
            pass  # `normalize` names the field and what it holds
    return record


def normalize(raw: Mapping[str, Any], schema: af.Schema = af.CONTACT) -> Record:
    """The record with each field's value in its one form; ValueError names a value that cannot
    be read as its field's type. Keys outside the schema (`id`...) are kept as they are."""
    record = dict(raw)
    for item in schema:
        record[item.name] = _value(item.name, item.type, raw.get(item.name))
    relation = schema.relation(ACTIONS)
    if relation is not None:
        record[ACTIONS] = _rows(raw.get(ACTIONS), relation.schema)
    return record


def _rows(rows: Any, schema: af.Schema) -> list[Record]:
    if rows is None:
        return []
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise ValueError('field "actions": expected a list of objects')
    return [normalize(row, schema) for row in rows]


def _value(name: str, kind: af.FieldType, value: Any) -> Any:
    if value is None or kind is af.FieldType.JSON:
        return value
    reader = _READERS.get(kind)
    converted = None if reader is None else reader(value)
    if converted is None:
        shown = json.dumps(value, default=str, ensure_ascii=False)[:40]
        raise ValueError(f'field "{name}": expected {kind.value}, found {shown}')
    return converted


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> int | float | None:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return value
    return None


def _boolean(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return bool(value) if isinstance(value, int) and value in (0, 1) else None


def _instant(value: Any) -> datetime | None:
    """An aware UTC `datetime`; naive values and text without an offset are UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


_READERS = {
    af.FieldType.STRING: _string,
    af.FieldType.NUMBER: _number,
    af.FieldType.BOOLEAN: _boolean,
    af.FieldType.DATETIME: _instant,
}
"""The field types the bench loads into every engine (the contact schema's)."""
