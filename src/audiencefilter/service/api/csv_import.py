"""`POST /v4/contacts/import` with `Content-Type: text/csv`: a CRM export, read as it streams.

This module decodes the body and answers: it spools the bytes, checks they are UTF-8 text and
hands the text to the domain, which reads the cells (`domain/csv_rows.py`: the library's CSV
rules, the list's custom fields as columns, `id` and `referralCode` left out) and each row as a
JSON import's (`domain/import_rows.py`). The file has a header row.

`mapping` (a JSON object in the query) names, for a column whose header is no field, the field
it fills, or null to leave it out: `{"E-mail address": "email", "Land": "country",
"Geburtstag": "birthday", "Notes": null}`. A column neither a field nor mapped is a 400 naming
it, before any row is read, as is a mapping naming a column the file lacks or a field twice.

`dryRun=true` reads the whole file and writes nothing (`use_cases/csv_dry_runs.py`): it answers
the first `PREVIEW` rows as they would be stored, and every bad cell (row, column, why), up to
`MAX_PROBLEMS` listed, all counted. Otherwise the rows are written a batch at a time
(`use_cases/csv_imports.py`); with `Accept: application/x-ndjson` the answer streams a progress
line after each batch, then the result. An error once rows are committed is answered with them:
its envelope carries `progress`, the result so far (`csv_imports.PartlyWritten`), never an error
alone. The body is spooled to a temporary file as it arrives (a memory buffer, then disk), so
neither its bytes nor its parsed rows are held in memory whole; `MAX_CSV_BYTES` bounds it, and
it is checked to be UTF-8 on the way, so bad bytes are a 400 before any row is written.
"""

from __future__ import annotations

import codecs
import io
import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Literal

from fastapi import Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

import audiencefilter as af

from ..db.engine import Database
from ..db.models import List
from ..domain import csv_rows
from ..domain.use_cases import csv_dry_runs, csv_imports, imports
from ..ground.errors import DomainError, ValidationIssue
from ..http.errors import (
    REASONS,
    ApiError,
    error_body,
    is_outage,
    issue_of,
    logger,
    refusal,
    status_of,
)
from ..http.json_guard import media_type
from ..http.responses import ErrorJSONResponse, data

CSV_TYPE = "text/csv"
LINES_TYPE = "application/x-ndjson"
SPOOL_IN_MEMORY = 1 << 20
MAPPING_DESCRIPTION = (
    "For `text/csv` only: a JSON object naming, for a column whose header is no field, the "
    "field it fills (a contact field or a declared custom field), or null to leave it out: "
    '`{"E-mail address": "email", "Land": "country", "Notes": null}`. Other columns are read '
    "by their header."
)
DRY_RUN_DESCRIPTION = (
    "For `text/csv` only: `true` writes nothing and answers the first "
    f"{csv_dry_runs.PREVIEW} rows as they would be stored and every bad cell (row, column, why)."
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
    """A CSV import as asked: whose, into which list, how, and the file's mapping and format."""

    account_id: str
    list_id: str
    mode: imports.ImportMode
    events: bool
    mapping: str | None
    dry_run: bool
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
        text = io.TextIOWrapper(body, encoding="utf-8-sig", newline="")
        file = await run_in_threadpool(_open, text, lst, columns, job.format)
        if job.dry_run:
            return data(await run_in_threadpool(csv_dry_runs.dry_run, file, lst))
    except BaseException:
        body.close()
        raise
    writing = csv_imports.write(database, _job(job), file)
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


def _open(
    text: IO[str], lst: List, columns: dict[str, str | None], fmt: af.CsvFormat
) -> csv_rows.CsvFile:
    """The file as the domain reads it; a header it refuses is a 400 citing its first problem
    (and listing them all)."""
    try:
        return csv_rows.CsvFile.open(text, lst, columns, fmt)
    except csv_rows.BadHeader as refused:
        issues = [issue_of(problem) for problem in refused.errors]
        message = f"Invalid request: {issues[0].pointer}: {issues[0].detail}"
        raise ApiError(400, message, errors=issues) from None


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
