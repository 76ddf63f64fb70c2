"""Contacts read from CSV, a row at a time, each cell converted by its field's type.

One set of cell rules for every reader of CSV contacts (the command line's `eval` and `bench`,
the service's import), so that a file one of them takes, the others take alike:

- an empty cell is null (CSV cannot tell "" from missing);
- a number stays exact (an integer stays an int; with `written=True` a decimal is a
  `WrittenNumber`, the float that keeps its text, so `1000.00` can be written back as given);
  booleans are true/false/1/0;
- dates are ISO 8601 (`YYYY-MM-DD`), date-times ISO 8601 (an offset, or UTC), unless the
  file's `CsvFormat` states a day-first or month-first order; decimals take a comma and the
  cells another separator the same way (`csv_format.py` has those rules);
- a JSON field's cell (`data`) holds a JSON document, a list field's a JSON array, nested at
  most `MAX_JSON_DEPTH` levels (deeper is the cell's error, found before it is decoded: a
  decoder recursing that deep would stop the whole file with a `RecursionError`);
- a relation's cell holds its rows as JSON text: an array of objects (`actions`), or one object
  for a to-one relation;
- a column outside the schema stays text.

`columns` renames the file's headers to fields (`{"E-mail address": "email"}`) and leaves out
the columns it maps to None, so a file exported by another product is read without editing.
A row reports every bad cell it has (`CellError`: the column as the file names it, and why),
not only the first: whoever fixes the file fixes it once.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from functools import partial
from typing import IO, Any

from .csv_format import (
    CsvFormat,
    DateOrder,
    FormatEvidence,
    calendar_date,
    comma_decimal,
    local_date,
    local_datetime,
    unread_date,
)
from .language.fields import FieldType, Schema
from .language.values import is_number, parse_date, parse_datetime

_INTEGER = re.compile(r"[+-]?\d+\Z")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
MAX_JSON_DEPTH = 200
"""The deepest nesting of a JSON cell, as of a JSON body the service takes."""
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')
"""A JSON string (an unclosed one to the end) or a bracket: what nesting is counted over."""

Converter = Callable[[str], Any]


class CsvError(ValueError):
    """The CSV cannot be read at all: its header is broken, or it is JSON, not CSV."""


@dataclass(frozen=True, slots=True)
class CellError:
    """A cell that is not a value of its field: the column as the file's header names it (""
    for a problem of the whole row) and why."""

    column: str
    reason: str


@dataclass(frozen=True, slots=True)
class CsvRow:
    """One row as read: `number` counts data rows from 1 (the header is none), `line` is the
    file's line where the row ends; `record` holds the cells that read, by field name, and
    `errors` every cell that did not."""

    number: int
    line: int
    record: dict[str, Any]
    errors: tuple[CellError, ...] = ()


class WrittenNumber(float):
    """A number read from its decimal text (`1000.00`): the float it is, for every filter and
    comparison, and `text`, the way it was written, for a writer that gives numbers back as
    they were given (`WrittenNumber("1000.00") == 1000`, its `text` "1000.00")."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> WrittenNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number

    def __reduce__(self) -> tuple[type[WrittenNumber], tuple[str]]:
        return (WrittenNumber, (self.text,))


def _number_text(text: str, written: bool = False) -> int | float | None:
    if _INTEGER.match(text):
        return int(text)
    if _DECIMAL.match(text):
        value = WrittenNumber(text) if written else float(text)
        if is_number(value):
            return value
    return None


def _to_number(cell: str, written: bool = False) -> int | float:
    value = _number_text(cell.strip(), written)
    if value is not None:
        return value
    point = comma_decimal(cell.strip())
    hint = f'; with decimal="," it reads {point}' if point and "," in cell else ""
    raise ValueError(f'expected a number, found "{_shown(cell)}"{hint}')


def _to_comma_number(cell: str, written: bool = False) -> int | float:
    point = comma_decimal(cell.strip())
    value = None if point is None else _number_text(point, written)
    if value is None:
        raise ValueError(
            f'expected a number written with a decimal comma (1234,56), found "{_shown(cell)}"'
        )
    return value


def _to_boolean(cell: str) -> bool:
    lowered = cell.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise ValueError(f'expected true, false, 1 or 0, found "{_shown(cell)}"')


def _to_datetime(cell: str) -> datetime:
    try:
        return parse_datetime(cell.strip())
    except ValueError as exc:
        _check_calendar(cell.strip())
        if " " in cell.strip() or "/" in cell or "." in cell:
            raise ValueError(
                unread_date(_shown(cell.strip())).replace("(YYYY-MM-DD)", "date-time")
            ) from None
        raise ValueError(f'expected an ISO 8601 date-time, found "{_shown(cell)}"') from exc


def _to_date(cell: str) -> date:
    text = cell.strip()
    try:
        return parse_date(text)
    except ValueError:
        _check_calendar(text)
        raise ValueError(unread_date(_shown(text))) from None


def _check_calendar(text: str) -> None:
    """A ValueError naming the day when `text` is an ISO date the calendar lacks (2026-02-31)."""
    found = _ISO_DATE.match(text)
    if found is None:
        return
    try:
        calendar_date(*(int(part) for part in found.groups()))
    except ValueError as exc:
        raise ValueError(
            f'expected an ISO 8601 date (YYYY-MM-DD), found "{_shown(text)}": {exc}'
        ) from None


def _local(order: DateOrder) -> tuple[Converter, Converter]:
    """The date and date-time readers of a day-first or month-first file (ISO read too)."""
    shape = "DD/MM/YYYY" if order == "DMY" else "MM/DD/YYYY"

    def to_date(cell: str) -> date:
        text = cell.strip()
        if _ISO_DATE.match(text):
            return _to_date(text)
        found = local_date(text, order)
        if found is None:
            raise ValueError(
                f'expected a date written {shape} (or YYYY-MM-DD), found "{_shown(cell)}"'
            )
        return found

    def to_datetime(cell: str) -> datetime:
        text = cell.strip()
        found = None if text[4:5] == "-" else local_datetime(text, order)
        return found if found is not None else _to_datetime(text)

    return to_date, to_datetime


def _shown(cell: str) -> str:
    return cell if len(cell) <= 40 else cell[:37] + "..."


def _to_json(cell: str) -> Any:
    if _nesting(cell) > MAX_JSON_DEPTH:
        expected = f"a JSON document nested at most {MAX_JSON_DEPTH} levels deep"
        raise ValueError(f'expected {expected}, found one nested deeper: "{_shown(cell)}"')
    try:
        return json.loads(cell)
    except ValueError:
        raise ValueError(f'expected a JSON document, found "{_shown(cell)}"') from None


def _nesting(cell: str) -> int:
    """How deep the arrays and objects of JSON text nest (brackets inside strings are text),
    in one pass that never recurses; a cell with fewer opening brackets than the bound is not
    scanned."""
    if cell.count("[") + cell.count("{") <= MAX_JSON_DEPTH:
        return 0
    depth = deepest = 0
    for token in _JSON_TOKENS.finditer(cell):
        mark = token.group()[0]
        if mark in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif mark in "]}":
            depth -= 1
    return deepest


def _list_of(element: FieldType) -> Converter:
    """A list field's cell holds a JSON array, e.g. `["vip","fr"]`; its items are checked
    against the item type wherever the values are used, like any other value."""

    def convert(cell: str) -> list[Any]:
        value = _to_json(cell)
        if not isinstance(value, list):
            raise ValueError(
                f'expected a JSON array of {element.value} values, found "{_shown(cell)}"'
            )
        return value

    return convert


def _related_rows(many: bool) -> Converter:
    """A relation's cell holds its rows as JSON text, like `data`: an array of objects
    (`actions`), or one object for a to-one relation."""
    expected = "a JSON array of objects" if many else "a JSON object"

    def convert(cell: str) -> Any:
        value = _to_json(cell)
        fits = (
            isinstance(value, list) and all(isinstance(v, dict) for v in value)
            if many
            else isinstance(value, dict)
        )
        if not fits:
            raise ValueError(f'expected {expected}, found "{_shown(cell)}"')
        return value

    return convert


_CONVERTERS: dict[FieldType, Converter] = {
    FieldType.STRING: str,
    FieldType.NUMBER: _to_number,
    FieldType.BOOLEAN: _to_boolean,
    FieldType.DATETIME: _to_datetime,
    FieldType.DATE: _to_date,
    FieldType.JSON: _to_json,  # the `data` column: a cell holding a JSON document
}
_CONVERTERS.update({kind: _list_of(kind.element) for kind in FieldType if kind.element is not None})


def converters(fmt: CsvFormat, written: bool = False) -> dict[FieldType, Converter]:
    """How the cells of each field type read in a file of format `fmt`; `written`: decimals
    as `WrittenNumber`s."""
    table = dict(_CONVERTERS)
    number = _to_comma_number if fmt.decimal == "," else _to_number
    table[FieldType.NUMBER] = partial(number, written=True) if written else number
    if fmt.date_order != "ISO":
        table[FieldType.DATE], table[FieldType.DATETIME] = _local(fmt.date_order)
    return table


def csv_cell(cell: str, kind: FieldType, fmt: CsvFormat | None = None) -> Any:
    """The value of a non-empty CSV cell of a field of type `kind` in a file of format `fmt`
    (a ValueError saying what was expected and found otherwise), e.g.
    `csv_cell("12", FieldType.NUMBER) == 12`."""
    return (_CONVERTERS if fmt is None else converters(fmt))[kind](cell)


def _converter(
    schema: Schema, field: str, table: Mapping[FieldType, Converter]
) -> Converter | None:
    """How a field's cells are read: by its type, as JSON rows for a relation (`actions`), as
    text (None) for a column outside the schema (`id`)."""
    if field in schema:
        return table[schema[field].type]
    relation = schema.relation(field)
    return None if relation is None else _related_rows(relation.many)


def _evidence_kind(schema: Schema, field: str | None) -> str | None:
    """Which cells tell a file's format: those of date, date-time and number fields."""
    if field is None or field not in schema:
        return None
    kind = schema[field].type
    if kind in (FieldType.DATE, FieldType.DATETIME):
        return "date"
    return "number" if kind is FieldType.NUMBER else None


class CsvRows:
    """The rows of a CSV text stream, the header read at once (`header`, `fields`): iterate
    for `CsvRow`s, read as the stream is, never the whole file at once."""

    def __init__(
        self,
        stream: IO[str],
        schema: Schema,
        columns: Mapping[str, str | None] | None = None,
        fmt: CsvFormat | None = None,
        written: bool = False,
    ) -> None:
        self.format = fmt or CsvFormat()
        first = stream.readline()
        self.delimiter = self.format.delimiter_of(first)
        """The cells' separator: the stated one, or the header line's."""
        self._reader = csv.reader(itertools.chain([first], stream), delimiter=self.delimiter)
        self.header = _header(self._reader)
        renamed = columns or {}
        self.fields: list[str | None] = [renamed.get(name, name) for name in self.header]
        """The field each column is read into, None for a column left out."""
        self._converters = self._read_by(schema, converters(self.format, written))
        self.evidence = FormatEvidence()
        """What the cells read so far say of the file's format (`csv_format.py`)."""
        self._witnesses = [
            (index, column, kind)
            for index, (column, field) in enumerate(zip(self.header, self.fields, strict=True))
            if (kind := _evidence_kind(schema, field)) is not None
        ]

    def _read_by(
        self, schema: Schema, table: Mapping[FieldType, Converter]
    ) -> list[tuple[str, str | None, Converter | None]]:
        """Each column, its field and how its cells read."""
        return [
            (column, field, None if field is None else _converter(schema, field, table))
            for column, field in zip(self.header, self.fields, strict=True)
        ]

    def __iter__(self) -> Iterator[CsvRow]:
        number = 0
        while True:
            try:
                cells = next(self._reader)
            except StopIteration:
                return
            except csv.Error as exc:
                number += 1
                problem = CellError("", f"invalid CSV: {exc}")
                yield CsvRow(number, self._reader.line_num, {}, (problem,))
                continue
            if cells:
                number += 1
                yield self._row(number, cells)

    def _row(self, number: int, cells: list[str]) -> CsvRow:
        line = self._reader.line_num
        if len(cells) != len(self._converters):
            found = f"expected {len(self._converters)} cells as in the header, found {len(cells)}"
            return CsvRow(number, line, {}, (CellError("", found),))
        record: dict[str, Any] = {}
        errors: list[CellError] = []
        for index, column, kind in self._witnesses:
            if cells[index]:
                getattr(self.evidence, kind)(column, cells[index])
        for (column, field, convert), cell in zip(self._converters, cells, strict=True):
            if field is None:
                continue
            try:
                record[field] = _cell(cell, convert)
            except ValueError as exc:
                errors.append(CellError(column, str(exc)))
        return CsvRow(number, line, record, tuple(errors))


def _cell(cell: str, convert: Converter | None) -> Any:
    if convert is None:
        return cell
    return None if cell == "" else convert(cell)


def _header(reader: Any) -> list[str]:
    try:
        header: list[str] = next(reader)
    except StopIteration:
        return []
    except csv.Error as exc:
        raise CsvError(f"the CSV header cannot be read: {exc}") from None
    start = header[0].lstrip()[:1] if header else ""
    if start in ("[", "{"):
        # A JSON file read as CSV would be one odd header and no rows: "0 of 0", wrongly.
        raise CsvError(f"this is JSON, not CSV (the first line starts with {start})")
    return header


def read_csv(
    stream: IO[str],
    schema: Schema,
    *,
    columns: Mapping[str, str | None] | None = None,
    format: CsvFormat | None = None,
    written: bool = False,
) -> CsvRows:
    """The rows of CSV contacts with a header row, each cell read by its field's type in
    `schema` (see the module's rules); `columns` maps a header to the field it fills, or to
    None to leave the column out; `format` states how the file writes dates, decimals and
    separators (`CsvFormat`: ISO dates, a decimal point and the header's separator by
    default); `written=True` reads a decimal as a `WrittenNumber`, which keeps its text
    (`1000.00`) for a writer that gives numbers back as given. Raises `CsvError` when the
    header cannot be read.

    >>> import io, audiencefilter as af
    >>> rows = af.read_csv(io.StringIO("email,points\\nada@example.com,12\\n"), af.CONTACT)
    >>> list((row.number, row.record) for row in rows)
    [(1, {'email': 'ada@example.com', 'points': 12})]
    """
    return CsvRows(stream, schema, columns, format, written)
