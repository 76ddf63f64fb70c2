"""`POST /v4/contacts/import` with `Content-Type: text/csv`: a CRM export, read as it streams.

The file has a header row; each cell is read by the library's CSV rules (`af.read_csv`, those of
the command line): the contact's fields by their types, each custom field the list declares as
its own column (`birthday`, read as its declared type and stored in `data`), `data` and
`actions` as JSON text, dates and date-times in ISO 8601. An empty cell leaves its field out
(CSV cannot tell "" from missing; an upsert keeps the stored value). `id` and `referralCode`,
which an export writes, are left out as in a JSON import.

`mapping` (a JSON object in the query) names, for a column whose header is no field, the field
it fills, or null to leave it out: `{"E-mail address": "email", "Land": "country",
"Geburtstag": "birthday", "Notes": null}`. A column neither a field nor mapped is a 400 naming
it, before any row is read, as is a mapping naming a column the file lacks or a field twice.

`dryRun=true` reads the whole file and writes nothing: it answers the first `PREVIEW` rows as
they would be stored, and every bad cell (row, column, why), up to `MAX_PROBLEMS` listed, all
counted. Otherwise the rows are written a batch at a time (`use_cases/csv_imports.py`); with
`Accept: application/x-ndjson` the answer streams a progress line after each batch, then the
result. An error once rows are committed is answered with them: its envelope carries
`progress`, the result so far (`csv_imports.PartlyWritten`), never an error alone. The body is
spooled to a temporary file as it arrives (a memory buffer, then disk), so neither its bytes nor
its parsed rows are held in memory whole; `MAX_CSV_BYTES` bounds it, and it is checked to be
UTF-8 on the way, so bad bytes are a 400 before any row is written.
"""

from __future__ import annotations

import codecs
import io
import json
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import IO, Any, Literal

from fastapi import Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

import audiencefilter as af

from ..db.engine import Database
from ..db.models import List
from ..domain import custom_fields
from ..domain.audience_filters import SCHEMA
from ..domain.contact_import import ImportRow, InvalidRow
from ..domain.use_cases import csv_imports, imports
from ..ground.errors import DomainError, ValidationIssue
from ..http.errors import REASONS, ApiError, error_body, is_outage, logger, refusal, status_of
from ..http.json_guard import media_type
from ..http.responses import ErrorJSONResponse, data
from . import csv_guard
from .schemas.resources import ContactImportRow

CSV_TYPE = "text/csv"
LINES_TYPE = "application/x-ndjson"
PREVIEW = 20
MAX_PROBLEMS = 10_000
MAX_TRACKED = 100_000
"""E-mails a dry run remembers to name the file's repeated ones (a few MB at most)."""
SPOOL_IN_MEMORY = 1 << 20
ASSIGNED = ("id", "referralCode")
MAPPING_DESCRIPTION = (
    "For `text/csv` only: a JSON object naming, for a column whose header is no field, the "
    "field it fills (a contact field or a declared custom field), or null to leave it out: "
    '`{"E-mail address": "email", "Land": "country", "Notes": null}`. Other columns are read '
    "by their header."
)
DRY_RUN_DESCRIPTION = (
    f"For `text/csv` only: `true` writes nothing and answers the first {PREVIEW} rows as they "
    "would be stored and every bad cell (row, column, why)."
)

DATE_ORDER_DESCRIPTION = (
    "For `text/csv` only: how the file writes dates that are not ISO 8601: `DMY` "
    "(`26/11/2026`, `26.11.2026`) or `MDY` (`11/26/2026`); `ISO` (the default) reads "
    "`2026-11-26` alone. ISO dates read under every order. A dry run proposes it."
)
DECIMAL_DESCRIPTION = (
    "For `text/csv` only: the decimal mark, `.` (the default) or `,` (`1234,56`, `1 234,56`, "
    "`1.234,56`). A dry run proposes it."
)
DELIMITER_DESCRIPTION = (
    "For `text/csv` only: the cells' separator, `,`, `;`, `tab` or `|`; left out, the header "
    "line's (a header without a comma split by the `;`, tab or `|` it holds)."
)
DateOrderParam = Literal["ISO", "DMY", "MDY"]
DecimalParam = Literal[".", ","]
DelimiterParam = Literal[",", ";", "tab", "|"]
CSV_ONLY = (
    "mapping, dryRun, dateOrder, decimal and delimiter are for a CSV import "
    "(Content-Type: text/csv)"
)
UNAVAILABLE = "The database became unavailable; retry later (sending the file again is safe)"
NO_KEY = (
    "A CSV import takes no Idempotency-Key: send it again instead (rows already imported "
    "are then `exists`, or `unchanged` with mode=upsert)"
)
OPENAPI_BODY = {
    "schema": {"type": "string", "description": "CSV with a header row (RFC 4180), UTF-8."},
    "example": "email,firstName,country,createdAt,birthday,plan\n"
    "ada@example.com,Ada,FR,2019-05-01T09:30:00+02:00,1990-11-23,pro\n",
}

OPENAPI_PROGRESS: dict[str, Any] = {
    "description": "The result; a CSV import asked with `Accept: application/x-ndjson` streams "
    "a progress line after each thousand rows, then the result (or an error line).",
    "content": {
        LINES_TYPE: {
            "schema": {"type": "string"},
            "example": '{"progress": {"read": 1000, "written": 998, "rejected": 2}}\n'
            '{"data": {"read": 1500, "written": 1497, "rejected": 3, "results": []}}\n',
        }
    },
}


@dataclass(frozen=True)
class CsvImport:
    """A CSV import as asked: whose, into which list, how, and how the rows are read."""

    account_id: str
    list_id: str
    mode: imports.ImportMode
    events: bool
    mapping: str | None
    dry_run: bool
    read_row: imports.RowReader
    counted: Callable[[dict[str, int]], None] = lambda _statuses: None
    """Told the rows counted by status once the import ends (the service's metrics)."""
    format: af.CsvFormat = af.CsvFormat()
    """How the file writes dates, decimals and separators, as the request states them."""


def file_format(
    date_order: DateOrderParam | None,
    decimal: DecimalParam | None,
    delimiter: DelimiterParam | None,
) -> af.CsvFormat:
    """The file's format from the request's parameters (each left out: the default)."""
    return af.CsvFormat(
        date_order or "ISO", decimal or ".", "\t" if delimiter == "tab" else delimiter
    )


def is_csv(content_type: str) -> bool:
    return media_type(content_type) == CSV_TYPE


async def answer(request: Request, job: CsvImport, database: Database) -> Response:
    """The import's answer: a dry run's, the result, or progress lines then the result."""
    lst = await run_in_threadpool(csv_imports.target_list, database, job.account_id, job.list_id)
    columns = _mapping(job.mapping)
    body = await _spool(request)
    try:
        reader = await run_in_threadpool(_Reader.open, body, lst, columns, job.format)
        if job.dry_run:
            return data(await run_in_threadpool(_dry_run, reader, lst, job.read_row))
    except BaseException:
        body.close()
        raise
    writing = csv_imports.write(database, _job(job), reader.values(), reader.checked(job.read_row))
    if media_type(request.headers.get("accept", "")) == LINES_TYPE:
        return StreamingResponse(_lines(writing, body, job.counted), media_type=LINES_TYPE)
    try:
        progress = await run_in_threadpool(_last, writing, job.list_id, job.mode)
    except csv_imports.PartlyWritten as stopped:
        job.counted(dict(stopped.progress.counts))
        status, refused = _stopped(request, stopped)
        return ErrorJSONResponse(refused, status_code=status)
    finally:
        body.close()
    job.counted(dict(progress.counts))
    return data(progress.answer())


def _job(job: CsvImport) -> imports.Job:
    return imports.Job(job.account_id, job.list_id, (), job.mode, job.events)


def _last(writing: Iterator[csv_imports.Progress], list_id: str, mode: str) -> csv_imports.Progress:
    last = csv_imports.Progress(list_id, mode)
    for progress in writing:
        last = progress
    return last


def _lines(
    writing: Iterator[csv_imports.Progress],
    body: IO[bytes],
    counted: Callable[[dict[str, int]], None],
) -> Iterator[bytes]:
    """A progress line after each batch, then `{"data": result}`, or the error envelope when a
    batch is refused (the batches before it stay written, and the envelope's `progress` says
    what they hold: sending the file again is safe)."""
    progress = None
    try:
        for progress in writing:
            yield _line({"progress": progress.summary()})
        counted(dict(progress.counts) if progress else {})
        yield _line({"data": progress.answer() if progress else _empty()})
    except csv_imports.PartlyWritten as stopped:
        counted(dict(stopped.progress.counts))
        yield _line(_stopped(None, stopped)[1])
    except Exception as exc:  # nothing written: the error alone
        yield _line(_refused(None, exc)[1])
    finally:
        body.close()


def _stopped(request: Request | None, stopped: csv_imports.PartlyWritten) -> tuple[int, Any]:
    """The status and envelope of an import stopped half-way, with `progress`: the rows it
    wrote before (the answer a finished import gives, its counts and results so far)."""
    cause = stopped.__cause__
    status, refused = _refused(request, cause if isinstance(cause, Exception) else stopped)
    return status, {**refused, "progress": stopped.progress.answer()}


def _refused(request: Request | None, exc: Exception) -> tuple[int, dict[str, Any]]:
    """The status and envelope the service's handlers give `exc` (`http/errors.py`): a
    refusal's own, 503 for a database outage, else a 500, the exception logged."""
    if isinstance(exc, ApiError):
        return exc.status, error_body(exc.status, exc.message, exc.errors)
    if isinstance(exc, DomainError):
        return status_of(exc), error_body(status_of(exc), *refusal(exc))
    where = "a CSV import" if request is None else f"{request.method} {request.url.path}"
    if is_outage(exc):
        logger.error("database unavailable during %s: %s", where, str(exc).splitlines()[0])
        return 503, error_body(503, UNAVAILABLE)
    logger.error("unhandled error during %s", where, exc_info=exc)
    return 500, error_body(500, REASONS[500])


def _empty() -> dict[str, Any]:
    return csv_imports.Progress("", "create").answer()


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def _mapping(text: str | None) -> dict[str, str | None]:
    """The `mapping` parameter: `{column: field or null}`."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(
        isinstance(v, str) or v is None for v in value.values()
    ):
        raise _invalid("/query/mapping", "a JSON object of column: field name or null", text)
    return value


async def _spool(request: Request) -> IO[bytes]:
    """The body as it streams in, in memory up to `SPOOL_IN_MEMORY` bytes, then on disk,
    checked to be UTF-8 on the way: bytes that are not are a 400 before any row is read, never
    found half-way through a file whose first thousands are written."""
    body = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 - closed by the caller
    utf8 = codecs.getincrementaldecoder("utf-8")()
    size = 0
    try:
        async for chunk in request.stream():
            body.write(chunk)
            utf8.decode(chunk)
            size += len(chunk)
        utf8.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        body.close()
        raise _invalid(
            "/body", "UTF-8 text", f"bytes that are not UTF-8 (near byte {size + exc.start})"
        ) from None
    except BaseException:
        body.close()
        raise
    body.seek(0)
    return body


def _invalid(pointer: str, expected: str, found: str) -> ApiError:
    issue = ValidationIssue(
        pointer=pointer,
        detail=f"expected {expected}, found {found}",
        expected=expected,
        found=found,
    )
    return ApiError(400, f"Invalid request: {pointer}: {issue.detail}", errors=[issue])


class _Reader:
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
        cls, body: IO[bytes], lst: List, columns: dict[str, str | None], fmt: af.CsvFormat
    ) -> _Reader:
        declared = custom_fields.declared(lst)
        text = io.TextIOWrapper(body, encoding="utf-8-sig", newline="")
        schema = SCHEMA.with_fields(**declared)
        mapped = {**dict.fromkeys(ASSIGNED), **columns}
        try:
            rows = af.read_csv(text, schema, columns=mapped, format=fmt, written=True)
        except af.CsvError as exc:
            raise _invalid("/body", "CSV with a header row", str(exc)) from None
        except UnicodeDecodeError:
            raise _invalid("/body", "UTF-8 text", "bytes that are not UTF-8") from None
        _check_header(rows, columns, declared)
        return cls(rows, declared, schema)

    def values(self) -> Iterator[tuple[int, Any]]:
        """(row number, the row as a JSON import's: its fields' JSON values, or its bad cells)."""
        try:
            for row in self.rows:
                yield row.number, _BadCells(row) if row.errors else self._json_values(row.record)
        except UnicodeDecodeError:
            raise _invalid("/body", "UTF-8 text", "bytes that are not UTF-8") from None

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

    def checked(self, read_row: imports.RowReader) -> imports.RowReader:
        """`read_row` for these rows: bad cells named with their columns, and each problem of
        a row that reads named with the column it comes from."""

        def read(number: int, value: Any, lst: List) -> ImportRow | InvalidRow:
            if isinstance(value, _BadCells):
                return self._bad_cells(number, value, lst, read_row)
            return self._named(read_row(number, value, lst))

        return read

    def _bad_cells(
        self, number: int, value: _BadCells, lst: List, read_row: imports.RowReader
    ) -> InvalidRow:
        """Every bad cell, then the problems of the rest of the row (those of its bad cells'
        fields, left out, excepted)."""
        cells = [self._cell_issue(error) for error in value.row.errors]
        if not value.row.record:  # the row could not be read (its cells do not fit the header)
            return InvalidRow(number, cells)
        rest = self._named(read_row(number, self._json_values(value.row.record), lst))
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
class _BadCells:
    """A row with cells that are not values of their fields."""

    row: af.CsvRow


def _json_values(record: Mapping[str, Any]) -> dict[str, Any]:
    """A row's cells as a JSON import's values: dates in ISO 8601, empty cells left out."""
    return {
        name: value.isoformat() if isinstance(value, date | datetime) else value
        for name, value in record.items()
        if value is not None
    }


def _check_header(
    rows: af.CsvRows, columns: Mapping[str, str | None], declared: Mapping[str, str]
) -> None:
    """A 400 naming each column no field takes, each mapped column the file lacks and each
    field two columns fill."""
    known = {*ContactImportRow.model_fields, *declared}
    problems = [
        (f"/query/mapping/{column}", "a column of the file's header", f'"{column}" is not one')
        for column in columns
        if column not in rows.header
    ]
    fields = [field for field in rows.fields if field is not None]
    for column, field in zip(rows.header, rows.fields, strict=True):
        if field is not None and field not in known:
            what = "a contact field or a custom field of the list, or a mapping for it"
            problems.append((f"/body/header/{column}", what, f'the column "{column}"'))
        elif field is not None and fields.count(field) > 1:
            problems.append((f"/body/header/{column}", f'one column for "{field}"', "several"))
    if problems:
        issues = [_invalid(*problem).errors[0] for problem in problems]
        raise ApiError(
            400, f"Invalid request: {issues[0].pointer}: {issues[0].detail}", errors=issues
        )


def _dry_run(reader: _Reader, lst: List, read_row: imports.RowReader) -> dict[str, Any]:
    """Every row read and checked, none written: the first rows as stored, every bad cell."""
    check = reader.checked(read_row)
    preview: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    repeats = _Repeats()
    rows = invalid = found = 0
    for number, value in reader.values():
        rows += 1
        row = check(number, value, lst)
        if isinstance(row, InvalidRow):
            invalid += 1
            found += len(row.errors)
            room = MAX_PROBLEMS - len(problems)
            problems += [{"row": number, **issue} for issue in row.errors[:room]]
            continue
        repeats.see(row)
        if len(preview) < PREVIEW:
            preview.append(_stored(row))
    proposed, reasons = reader.rows.evidence.proposal()
    return {
        "dryRun": True,
        "format": _format_view(reader.rows),
        "proposed": proposed,
        "proposedBecause": reasons,
        "columns": [
            {"column": c, "field": f}
            for c, f in zip(reader.rows.header, reader.rows.fields, strict=True)
        ],
        "rows": rows,
        "valid": rows - invalid,
        "invalid": invalid,
        "preview": preview,
        "duplicates": repeats.count,
        "duplicateRows": repeats.listed,
        "duplicatesCheckedRows": min(rows, MAX_TRACKED),
        "problems": problems,
        "problemsNotListed": found - len(problems),
    }


class _Repeats:
    """The valid rows whose e-mail an earlier valid row of the file has (the import answers
    them `duplicate`), among the first `MAX_TRACKED` rows: a dry run's memory stays bounded
    however long the file."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}
        self.count = 0
        self.listed: list[dict[str, Any]] = []

    def see(self, row: ImportRow) -> None:
        earlier = self.first.get(row.key)
        if earlier is None:
            if len(self.first) < MAX_TRACKED:
                self.first[row.key] = row.number
            return
        self.count += 1
        if len(self.listed) < MAX_PROBLEMS:
            self.listed.append(
                {"row": row.number, "sameAsRow": earlier, "email": row.fields["email"]}
            )


def _format_view(rows: af.CsvRows) -> dict[str, str]:
    """The format the file was read with, as the request's parameters spell it."""
    delimiter = "tab" if rows.delimiter == "\t" else rows.delimiter
    return {
        "dateOrder": rows.format.date_order,
        "decimal": rows.format.decimal,
        "delimiter": delimiter,
    }


def _stored(row: ImportRow) -> dict[str, Any]:
    """A valid row as it would be stored: its fields (custom fields in `data`) and actions."""
    fields = {name: _plain(value) for name, value in row.fields.items()}
    actions = [
        {"name": a.name, "increase": a.increase, "createdAt": _plain(a.createdAt)}
        for a in row.actions
    ]
    return {"row": row.number, "contact": fields | ({"actions": actions} if actions else {})}


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date | datetime) else value
