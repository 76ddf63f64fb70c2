"""`POST /v4/contacts/import`: many contacts in one request, with a result for every row.

The body is a JSON array of contacts, or JSON Lines (`Content-Type: application/x-ndjson`, one
contact per line); `listId` is a query parameter, and a row may repeat it but not name another
list. This module only decodes the body into raw values (a JSON Lines line that is not JSON is
that row's problem) and checks the request (its size, its row count); the domain reads each row
(`domain/import_rows.py`) as `POST /v4/contacts` reads a body (the same fields, types and
bounds), plus the history a migration brings: `createdAt`, the sign-up instant, and `actions`,
each with its own `createdAt` (ISO 8601 with an offset, not in the future:
`ground/fields.past_instant`). Each row gets its own result: `created` with the new id,
`exists` with the id of the contact that already has that email in the list (compared ignoring
case, as the unique index does), `duplicate` when an earlier row of the same import has the
email, or `invalid` with its problems in the words of every validation error. One bad row never
stops the others.

`mode=upsert` updates the contacts found by email instead of answering `exists`: `updated` (with
the fields that changed) or `unchanged` (`domain/contact_import.py`). `events=false` writes no
event for the import (membership still follows): a migration's history is no news to webhooks.

Importing is idempotent twice over. Without a key, the same import sent again creates nothing:
every row is then `exists` (or `unchanged`). With an `Idempotency-Key`, a retry gets the first
answer itself, byte for byte, as for every POST; the mode and the events flag are part of the
request it must repeat. The rows are written in turns (`domain/use_cases/imports.py`), and the
key's record follows them (`http/idempotency_turns.py`): a retry while the import runs is a 409
with `Retry-After`, a retry after it stopped half-way resumes after the last committed turn.

It is one request for the rate limits, whatever the number of rows; the body limit (1 MiB by
default) and `MAX_IMPORT_ROWS` (1000, a 413 naming it past that) bound the work. A contact
created meanwhile by another request with an email of the turn under way makes the import a
409; the turns before it stay, and sending it again is safe.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

import audiencefilter as af

from ...domain import import_rows
from ...domain.use_cases import imports
from ...domain.use_cases.imports import ImportMode
from ...ground import validation
from ...ground.errors import ValidationIssue
from ...ground.fields import QueryBool, QueryText
from ...ground.metrics import Metrics
from ...http import idempotency_turns
from ...http.errors import ApiError, error_body, refusal
from ...http.idempotency import RetryDep
from ...http.json_guard import LINES_TYPES, media_type
from ...http.responses import ErrorJSONResponse, data
from .. import csv_import
from ..deps import DatabaseDep, PrivateKey
from ..heavy import HEAVY
from ..schemas.resources import ImportResponse

router = APIRouter(prefix="/contacts", tags=["contacts"])

MAX_IMPORT_ROWS = 1000
MODE_DESCRIPTION = (
    "`create` (default): existing contacts (same email, ignoring case) are left as they are "
    "(`exists`). `upsert`: they are updated with the fields the row sends (`updated`, or "
    "`unchanged` when they already were so)."
)
EVENTS_DESCRIPTION = (
    "`false`: the import writes no event (no `contact.created`, `contact.updated`, "
    "`audience.entered` or `audience.left`, so no webhook delivery); membership still follows. "
    "For migrating history that consumers must not take for news."
)


class _ImportBody(BaseModel):
    """The rows as received: what an Idempotency-Key's fingerprint covers (with the query)."""

    rows: list[Any]


def _rows(raw: bytes, content_type: str) -> list[tuple[int, Any]]:
    """(row number, value) of each row: the element's 1-based place, or its line number. A
    decimal is read as it is written (`af.WrittenNumber`: `1000.00` is stored so, and an
    export writes it back so)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _body_error("UTF-8 text", "bytes that are not UTF-8") from None
    if media_type(content_type) in LINES_TYPES:
        # Lines end at \n (\r\n too) only: U+2028, U+2029 or U+0085 may stand raw inside a
        # JSON string, where `str.splitlines` would cut the row in two.
        lines = text.split("\n")
        _check_count(sum(1 for line in lines if line.strip()))
        rows = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line, parse_float=af.WrittenNumber)))
            except json.JSONDecodeError as exc:
                reason = f"invalid JSON ({exc.msg} at column {exc.colno})"
                rows.append((number, import_rows.Unreadable(reason)))
        return rows
    try:
        value = json.loads(text, parse_float=af.WrittenNumber)
    except json.JSONDecodeError as exc:
        raise _body_error(
            "a JSON array of contacts, or JSON Lines with Content-Type: application/x-ndjson",
            f"text that is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
        ) from None
    if not isinstance(value, list):
        raise _body_error("a JSON array of contacts", validation.found(value))
    _check_count(len(value))
    return list(enumerate(value, 1))


def _check_count(rows: int) -> None:
    """Refuse an import over the row limit before its rows are decoded one by one."""
    if rows > MAX_IMPORT_ROWS:
        expected, found = f"at most {MAX_IMPORT_ROWS} rows", f"{rows} rows"
        issue = ValidationIssue(
            pointer="/body",
            detail=f"expected {expected}, found {found}",
            expected=expected,
            found=found,
        )
        message = (
            f"An import holds at most {MAX_IMPORT_ROWS} rows (MAX_IMPORT_ROWS); this one has "
            f"{rows}: send it in parts"
        )
        raise ApiError(413, message, errors=[issue])


def _body_error(expected: str, found: str) -> ApiError:
    issue = ValidationIssue(
        pointer="/body",
        detail=f"expected {expected}, found {found}",
        expected=expected,
        found=found,
    )
    return ApiError(400, f"Invalid request: /body: {issue.detail}", errors=[issue])


@router.post(
    "/import",
    dependencies=[HEAVY],
    response_model=ImportResponse,
    responses={200: csv_import.OPENAPI_PROGRESS},
    summary="Import contacts in bulk",
    description="Creates the contacts of a JSON array or of JSON Lines "
    "(`Content-Type: application/x-ndjson`) in the list `listId`, up to "
    f"{MAX_IMPORT_ROWS} rows (a 413 past that), and answers a result per row: `created` (with "
    "the new `id`), `exists` (a contact of the list already has that email; it is not changed), "
    "`updated` or `unchanged` instead with `mode=upsert`, `duplicate` (an earlier row has the "
    "email) or `invalid` (with `errors`). A row may carry its history: `createdAt` and past "
    "`actions`, each with its `createdAt`. Its events carry the cause `contact.imported`; "
    "`events=false` writes none (membership still follows). Sending the same import again "
    "creates nothing; with an `Idempotency-Key` it answers the first result itself. One "
    "request for the rate limits. With `Content-Type: text/csv` the body is a CSV file with a "
    "header row, of any number of rows: `mapping` names the field of a column, `dryRun=true` "
    "checks it without writing, and `Accept: application/x-ndjson` streams its progress.",
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "The contacts: a JSON array, or one JSON object per line.",
            "content": {
                "application/json": {
                    "schema": {
                        "type": "array",
                        "maxItems": MAX_IMPORT_ROWS,
                        # Any value is a row: one that is no valid contact gets its own
                        # `invalid` result (with `errors`) and the others are still imported.
                        "items": {
                            "anyOf": [{"$ref": "#/components/schemas/ContactImportRow"}, {}],
                            "description": "A contact; any other value is answered as an "
                            "`invalid` row, and the rest of the import goes on.",
                        },
                    },
                    "example": [
                        {"email": "ada@example.com", "firstName": "Ada", "points": 120},
                        {
                            "email": "grace@example.com",
                            "data": {"plan": "pro"},
                            "createdAt": "2019-05-01T09:30:00+02:00",
                            "actions": [
                                {
                                    "name": "share",
                                    "increase": 5,
                                    "createdAt": "2020-02-03T10:00:00Z",
                                }
                            ],
                        },
                    ],
                },
                "application/x-ndjson": {
                    "schema": {"type": "string"},
                    "example": '{"email": "ada@example.com", "points": 120}\n'
                    '{"email": "grace@example.com"}\n',
                },
                csv_import.CSV_TYPE: csv_import.OPENAPI_BODY,
            },
        }
    },
)
async def import_contacts(
    request: Request,
    listId: Annotated[
        QueryText,
        Query(description="The list the contacts join.", examples=["lst_12c7592f788f34d9ddb1"]),
    ],
    principal: PrivateKey,
    retry: RetryDep,
    database: DatabaseDep,
    mode: Annotated[ImportMode, Query(description=MODE_DESCRIPTION)] = "create",
    events: Annotated[QueryBool, Query(description=EVENTS_DESCRIPTION)] = True,
    mapping: Annotated[
        str | None,
        Query(
            description=csv_import.MAPPING_DESCRIPTION,
            max_length=20_000,
            examples=['{"E-mail address": "email", "Land": "country", "Notes": null}'],
        ),
    ] = None,
    dryRun: Annotated[
        QueryBool, Query(description=csv_import.DRY_RUN_DESCRIPTION, examples=[True])
    ] = False,
    dateOrder: Annotated[
        csv_import.DateOrderParam | None,
        Query(description=csv_import.DATE_ORDER_DESCRIPTION, examples=["DMY"]),
    ] = None,
    decimal: Annotated[
        csv_import.DecimalParam | None,
        Query(description=csv_import.DECIMAL_DESCRIPTION, examples=[","]),
    ] = None,
    delimiter: Annotated[
        csv_import.DelimiterParam | None,
        Query(description=csv_import.DELIMITER_DESCRIPTION, examples=[";"]),
    ] = None,
) -> Response:
    metrics: Metrics = request.app.state.metrics
    if csv_import.is_csv(request.headers.get("content-type", "")):
        if retry.key is not None:
            raise ApiError(400, csv_import.NO_KEY)
        counted = partial(metrics.imported, principal.account_id)
        asked = csv_import.CsvImport(
            principal.account_id, listId, mode, events, mapping, dryRun, counted,
            csv_import.file_format(dateOrder, decimal, delimiter),
        )  # fmt: skip
        return await csv_import.answer(request, asked, database)
    if mapping is not None or dryRun or (dateOrder, decimal, delimiter) != (None, None, None):
        raise ApiError(400, csv_import.CSV_ONLY)
    # Decoding a body of up to the size limit takes a while: off the event loop, so health
    # checks and other requests go on meanwhile.
    body = await request.body()
    rows = await run_in_threadpool(_rows, body, request.headers.get("content-type", ""))
    sent = _ImportBody(rows=[_plain(v) for _, v in rows])

    def answer(result: dict[str, Any]) -> Response:
        """The answer, the rows counted by status as it is made (a replay is not counted)."""
        statuses = Counter(str(row["status"]) for row in result["results"])
        metrics.imported(principal.account_id, dict(statuses))
        return data(result)

    writes = idempotency_turns.once_in_turns(retry, principal.account_id, sent, answer)
    job = imports.Job(principal.account_id, listId, rows, mode, events)
    try:
        return await run_in_threadpool(imports.run, job, writes)
    except imports.PartlyImported as stopped:
        answer(stopped.written)  # the rows written are counted as those of an answer
        return _partly(stopped)


def _partly(stopped: imports.PartlyImported) -> Response:
    """The 409 of an import stopped by a conflict after some turns committed, with `progress`:
    what those turns wrote, as the answer lists it (its counts and a result per row), as a CSV
    import's error after written rows says them. Sending the import again is safe."""
    body = error_body(409, *refusal(stopped))
    return ErrorJSONResponse({**body, "progress": stopped.written}, status_code=409)


def _plain(value: Any) -> Any:
    return value.reason if isinstance(value, import_rows.Unreadable) else value
