"""`GET /v4/audiences/{id}/export`: every member of an audience, streamed as CSV or JSON Lines.

The members are read in batches, each in its own short read transaction
(`domain/use_cases/exports.py`), and written as they come: memory stays bounded by one batch
whatever the audience's size, and no transaction is held while the client reads slowly.

Columns are the contact's stored fields (`exports.FIELDS`), in that order. In CSV,
`null` is an empty cell, booleans are `true`/`false`, times ISO 8601 UTC with `Z`. Each custom
field the list declares is a column of its own, named by its key, where `data` stood (a list
value as its JSON array), so a spreadsheet shows `birthday` rather than a JSON cell; `data`
follows them, holding the keys no custom field declares as JSON text (empty when there are
none), so nothing is lost and the CSV import reads the file back as it was. JSON Lines carries
the stored fields, `data` as an object. The whole export is one request for the rate limits.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from datetime import datetime
from operator import itemgetter
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.responses import StreamingResponse

import audiencefilter as af

from ...domain import csv_guard
from ...domain.use_cases import exports
from ...domain.use_cases.exports import Rows
from ...ground.errors import Invalid, RequestProblem
from ...ground.fields import QueryBool
from ...ground.json import dumps
from ..deps import DatabaseDep, PrivateKey
from ..heavy import HEAVY

router = APIRouter(prefix="/audiences", tags=["audiences"])

MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
Format = Literal["csv", "jsonl"]


def _no_at(request: Request, principal: PrivateKey) -> None:
    """`at` belongs to the members listing: an export of the members then would need each
    contact's fields then, which the service does not keep, so it is refused, not ignored.
    A dependency, run before the query is read (after the key is checked), so the refusal
    says where to ask instead."""
    if "at" not in request.query_params:
        return
    issue = RequestProblem(
        ("at",),
        "the export takes no `at`: it is of the members now",
        expected="no `at`",
        found=repr(request.query_params["at"][:80]),
        suggestion="for the members at an instant, page through "
        "GET /v4/audiences/{id}/members?at=2026-05-01T09:30:00Z; leave `at` out to export the "
        "members now",
        part="query",
    )
    raise Invalid("The export takes no query parameter `at`", errors=[issue])


class ExportQuery(BaseModel):
    """The export's query: its format, and nothing else (a parameter it does not take, `at`
    included, is a 400 naming it rather than an export that ignored it)."""

    model_config = ConfigDict(extra="forbid")

    format: Format = Field(
        default="jsonl", description="`csv` or `jsonl` (JSON Lines).", examples=["csv"]
    )
    bom: QueryBool = Field(
        default=False,
        description="For `csv` only: `true` starts the file with a UTF-8 byte order mark, "
        "which some spreadsheets need to read its text as UTF-8 (the import takes it too).",
        examples=[True],
    )

    @model_validator(mode="after")
    def _bom_for_csv(self) -> ExportQuery:
        if self.bom and self.format != "csv":
            raise ValueError("bom is for format=csv (JSON Lines has no byte order mark)")
        return self


EMPTY_DATA = frozenset({"", "{}"})
"""Stored `data` texts with no key: an empty `data` cell, without parsing them."""


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return csv_guard.guarded(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return dumps(value).decode().strip('"')
    return value.text if isinstance(value, af.WrittenNumber) else str(value)


def csv_columns(export: exports.Export) -> tuple[str, ...]:
    """The CSV header: the stored fields, with the list's custom fields before `data`."""
    at = export.fields.index("data")
    return (*export.fields[:at], *export.custom, *export.fields[at:])


def csv_cells(row: dict[str, Any], custom: tuple[str, ...]) -> dict[str, str]:
    """A contact's CSV cells by column: each custom field out of `data`, the rest in `data`."""
    cells = {field: _cell(value) for field, value in row.items() if field != "data"}
    stored = row["data"]
    if not custom and stored in EMPTY_DATA:  # most contacts: nothing to parse
        cells["data"] = ""
        return cells
    data = _parsed(stored) if stored else {}
    if not isinstance(data, dict):  # no keys to take out: written whole, as stored
        return cells | dict.fromkeys(custom, "") | {"data": _cell(row["data"])}
    cells |= {key: _custom_cell(data.get(key)) for key in custom}
    rest = {key: value for key, value in data.items() if key not in custom}
    cells["data"] = dumps(rest).decode() if rest else ""
    return cells


_DECIMALS = re.compile(r"\d[.eE]|\d{19}")
"""A digit before a decimal point or an exponent, or 19 digits in a row: stored `data` that may
hold a decimal, or an integer beyond 64 bits, which orjson would read as a rounded float."""


def _parsed(stored: str) -> Any:
    """Stored `data` as Python: by orjson (a fifth of the standard library's time, the most of
    an export's per-row work), else by the standard library, which also takes what orjson
    refuses (NaN) as it always did. Data that may hold a decimal or a long integer is read by
    the standard library, each decimal an `af.WrittenNumber`, so that its cell is the number
    as stored (`1000.00`, as imported), not its float (`1000.0`), and each integer exact."""
    if _DECIMALS.search(stored):
        return json.loads(stored, parse_float=af.WrittenNumber)
    try:
        return orjson.loads(stored)
    except orjson.JSONDecodeError:
        return json.loads(stored)


def _custom_cell(value: Any) -> str:
    """A custom field's cell: a list (or any other JSON structure) as its JSON text, the way
    the CSV import reads a list field's cell."""
    return dumps(value).decode() if isinstance(value, list | dict) else _cell(value)


FLAGS = frozenset({"isVerified", "unsubscribed", "isGDPR", "holdout"})
NUMBERS = frozenset({"points", "referrals"})


def csv_batch(rows: Rows, fields: tuple[str, ...]) -> list[list[Any]]:
    """The batch's cells, `fields` in order with `data` (no custom field) last of its place,
    as `_cell` and `csv_cells` write them, converted column by column: the writer itself
    writes None as an empty cell and an integer as its digits, so only flags, times, `data`
    and text that opens like a formula or an apostrophe (`csv_guard`) are touched. A cell at a
    time through `_cell` cost the export more than the writer and the database together (22
    calls a row)."""
    take = itemgetter(*fields)
    lines = [list(take(row)) for row in rows]
    for index, field in enumerate(fields):
        if field in NUMBERS or field == "data":
            continue
        if field in FLAGS:
            for line in lines:
                flag = line[index]
                if flag is not None:
                    line[index] = "true" if flag else "false"
        elif field == "createdAt":
            for line in lines:
                line[index] = _cell(line[index])
        else:
            for line in lines:
                text = line[index]
                if type(text) is not str or text[:1] in csv_guard.ESCAPED:
                    line[index] = _cell(text)
    at = fields.index("data")
    for line in lines:
        stored = line[at]
        line[at] = "" if stored in EMPTY_DATA else csv_cells({"data": stored}, ())["data"]
    return lines


def _csv(export: exports.Export, bom: bool = False) -> Iterator[str]:
    buffer = io.StringIO("\ufeff" if bom else "")
    buffer.seek(0, io.SEEK_END)
    # Rows end with CRLF (RFC 4180): the writer quotes a cell holding a character of its line
    # end, so a text with a lone carriage return is quoted, not read back as two rows.
    writer = csv.writer(buffer, lineterminator="\r\n")
    columns = csv_columns(export)
    writer.writerow(columns)
    for rows in export.batches:
        if export.custom:
            for row in rows:
                cells = csv_cells(row, export.custom)
                writer.writerow([cells[column] for column in columns])
        else:
            writer.writerows(csv_batch(rows, export.fields))
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def _lines(export: exports.Export) -> Iterator[bytes]:
    for rows in export.batches:
        chunk = bytearray()
        for row in rows:
            record = {field: row[field] for field in export.fields}
            # the stored JSON text as it is: decimals as stored (`1000.00`)
            record["data"] = orjson.Fragment(record["data"] or "{}")
            chunk += dumps(record) + b"\n"
        yield bytes(chunk)


@router.get(
    "/{id}/export",
    summary="Export an audience's members",
    description="Every member of the audience, streamed as CSV (a header row, then one contact "
    "per row) or JSON Lines (one contact object per line), in id order. Smart audiences are "
    "judged at the moment of the request. In CSV, each custom field the list declares is a "
    "column named by its key, and `data` holds the keys no custom field declares. Unsubscribed "
    "contacts stay members: add `unsubscribed = false` to the filter to leave them out. "
    "An audience running an experiment adds the columns "
    "`group` (empty in the holdout) and `holdout`, so a sender can skip the holdout. "
    "One request for the rate limits, whatever the size.",
    response_class=StreamingResponse,
    dependencies=[Depends(_no_at), HEAVY],
    responses={
        200: {
            "description": "The members, one per line.",
            "content": {
                "text/csv": {
                    "schema": {"type": "string"},
                    "example": "id,email,firstName,...\ncon_a1f5b38be8774dbc97af,"
                    "ada@example.com,Ada,...\n",
                },
                "application/x-ndjson": {
                    "schema": {"type": "string"},
                    "example": '{"id":"con_a1f5b38be8774dbc97af","email":"ada@example.com",'
                    '"points":120}\n',
                },
            },
        }
    },
)
def export_members(
    id: str, query: Annotated[ExportQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> StreamingResponse:
    format = query.format
    export = exports.members(database, principal.account_id, id)
    body = _csv(export, query.bom) if format == "csv" else _lines(export)
    return StreamingResponse(
        body,
        media_type=MEDIA_TYPES[format],
        headers={"Content-Disposition": f'attachment; filename="{export.audience_id}.{format}"'},
    )
