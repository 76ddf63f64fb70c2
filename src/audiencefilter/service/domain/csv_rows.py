"""A CSV import's rows: the file's cells read as a JSON import's values, each named by its column.

The API decodes the file's bytes to text and hands it over; its cells are read here by the
library's CSV rules (`af.read_csv`, those of the command line): the contact's fields by their
types, each custom field the list declares as its own column (`birthday`, read as its declared
type), `data` and `actions` as JSON text, dates and date-times in ISO 8601. An empty cell
leaves its field out (CSV cannot tell "" from missing). `id` and `referralCode`, which an export
writes, are left out as in a JSON import, and a text cell loses the export's guard
(`csv_guard.py`). The header is checked before any row is read: a column no field takes, a
mapped column the file lacks and a field two columns fill are refused together (`BadHeader`).

Each row is then read as a JSON import's row (`import_rows.read`), and each of its problems
names the column it comes from; a cell that is no value of its field is a problem of its own,
with its column.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import IO, Any, Literal

import audiencefilter as af

from ..db.models import List
from ..ground.bodies import ContactImportRow
from ..ground.errors import Invalid, Location, RequestProblem
from . import csv_guard, custom_fields, import_rows
from .audience_filters import SCHEMA
from .contact_import import ImportRow, InvalidRow

NOT_UTF8 = ("UTF-8 text", "bytes that are not UTF-8")
HEADER_COLUMN = "a column of the file's header"


def refused(
    at: Location, expected: str, found: str, part: Literal["body", "query"] = "body"
) -> RequestProblem:
    """A problem of the request at `at` in its body (or its query)."""
    detail = f"expected {expected}, found {found}"
    return RequestProblem(at, detail, expected=expected, found=found, part=part)


def invalid(expected: str, found: str) -> Invalid:
    """The file itself refused: `Invalid request: <the body's pointer>: expected ..., found ...`."""
    return Invalid("Invalid request", errors=[refused((), expected, found)], cited=True)


class BadHeader(Invalid):
    """The header's problems, each column's (a 400 citing the first)."""


class CsvFile:
    """The file's rows, its header checked against the list's fields and the mapping."""

    def __init__(self, rows: af.CsvRows, declared: Mapping[str, str], schema: af.Schema) -> None:
        self.rows = rows
        self.declared = declared
        self.column_of = {f: c for c, f in zip(rows.header, rows.fields, strict=True) if f}
        self.texts = frozenset(
            field for field in rows.fields if field is not None and _is_text(schema, field)
        )
        """The text columns' fields, whose cells lose the export's guard (`csv_guard`)."""

    @classmethod
    def open(
        cls, text: IO[str], lst: List, columns: dict[str, str | None], fmt: af.CsvFormat
    ) -> CsvFile:
        """The file of `text`, its header read with `columns` (the request's mapping)."""
        declared = custom_fields.declared(lst)
        schema = SCHEMA.with_fields(**declared)
        mapped = {**dict.fromkeys(import_rows.ASSIGNED), **columns}
        try:
            rows = af.read_csv(text, schema, columns=mapped, format=fmt, written=True)
        except af.CsvError as exc:
            raise invalid("CSV with a header row", str(exc)) from None
        except UnicodeDecodeError:
            raise invalid(*NOT_UTF8) from None
        check_header(rows, columns, declared)
        return cls(rows, declared, schema)

    def values(self) -> Iterator[tuple[int, Any]]:
        """(row number, the row as a JSON import's: its fields' JSON values, or its bad cells)."""
        try:
            for row in self.rows:
                yield row.number, BadCells(row) if row.errors else self._json_values(row.record)
        except UnicodeDecodeError:
            raise invalid(*NOT_UTF8) from None

    def _json_values(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """`_json_values`, each text cell the export guarded read as the text it was, and an
        empty cell of a field the filters do not know (`website`: read as text) left out as
        any empty cell is."""
        values = _json_values(record)
        for field in self.texts.intersection(values):
            text = csv_guard.unguarded(values[field])
            if text:
                values[field] = text
            else:
                del values[field]
        return values

    def read(self, number: int, value: Any, lst: List) -> ImportRow | InvalidRow:
        """A row of this file as `import_rows.read` reads it: bad cells named with their
        columns, and each problem of a row that reads named with the column it comes from."""
        if isinstance(value, BadCells):
            return self._bad_cells(number, value, lst)
        return self._named(import_rows.read(number, value, lst))

    def _bad_cells(self, number: int, value: BadCells, lst: List) -> InvalidRow:
        """Every bad cell, then the problems of the rest of the row (those of its bad cells'
        fields, left out, excepted)."""
        cells = [self._cell_issue(error) for error in value.row.errors]
        if not value.row.record:  # the row could not be read (its cells do not fit the header)
            return InvalidRow(number, cells)
        rest = self._named(import_rows.read(number, self._json_values(value.row.record), lst))
        bad = {issue.get("column") for issue in cells}
        more = rest.errors if isinstance(rest, InvalidRow) else []
        return InvalidRow(number, cells + [i for i in more if i.get("column") not in bad])

    def _cell_issue(self, error: af.CellError) -> dict[str, Any]:
        if not error.column:
            return {"pointer": "", "detail": error.reason}
        field = self.rows.fields[self.rows.header.index(error.column)] or error.column
        pointer = f"/data/{field}" if field in self.declared else f"/{field}"
        return {"pointer": pointer, "column": error.column, "detail": error.reason}

    def _named(self, row: ImportRow | InvalidRow) -> ImportRow | InvalidRow:
        if isinstance(row, ImportRow):
            return row
        return InvalidRow(row.number, [self._with_column(issue) for issue in row.errors])

    def _with_column(self, issue: dict[str, Any]) -> dict[str, Any]:
        parts = str(issue.get("pointer", "")).split("/")[1:]
        if parts[:1] == ["data"] and len(parts) > 1 and parts[1] in self.declared:
            parts = parts[1:]
        column = self.column_of.get(parts[0]) if parts else None
        return issue if column is None else {**issue, "column": column}


def _is_text(schema: af.Schema, field: str) -> bool:
    """Whether a column's cells are text: a text field of the filters, or a field they do not
    know (`website`), whose cells the CSV rules read as text as they are."""
    if field in schema:
        return schema[field].type is af.FieldType.STRING
    return schema.relation(field) is None


@dataclass(frozen=True)
class BadCells:
    """A row with cells that are not values of their fields."""

    row: af.CsvRow


def _json_values(record: Mapping[str, Any]) -> dict[str, Any]:
    """A row's cells as a JSON import's values: dates in ISO 8601, empty cells left out."""
    return {
        name: value.isoformat() if isinstance(value, date | datetime) else value
        for name, value in record.items()
        if value is not None
    }


def check_header(
    rows: af.CsvRows, columns: Mapping[str, str | None], declared: Mapping[str, str]
) -> None:
    """`BadHeader` naming each column no field takes, each mapped column the file lacks and
    each field two columns fill."""
    known = {*ContactImportRow.model_fields, *declared}
    problems = [
        refused(("mapping", column), HEADER_COLUMN, f'"{column}" is not one', "query")
        for column in columns
        if column not in rows.header
    ]
    fields = [field for field in rows.fields if field is not None]
    for column, field in zip(rows.header, rows.fields, strict=True):
        if field is not None and field not in known:
            what = "a contact field or a custom field of the list, or a mapping for it"
            problems.append(refused(("header", column), what, f'the column "{column}"'))
        elif field is not None and fields.count(field) > 1:
            problems.append(refused(("header", column), f'one column for "{field}"', "several"))
    if problems:
        raise BadHeader("Invalid request", errors=problems)
