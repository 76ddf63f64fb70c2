"""`GET /v4/audiences/{id}/export`: every member of an audience, streamed as CSV or JSON Lines.

The members are those of `GET /audiences/{id}` (`membership.member_condition`), judged at one
instant, the request's, for smart audiences. They are read in batches of `BATCH` ordered by id
(keyset paging: each batch starts after the last id sent), each in its own short read
transaction, and written as they come: memory stays bounded by one batch whatever the audience's
size, and no transaction (nor SQLite's lock) is held while the client reads slowly. The price
is that the export is not one snapshot: a contact changed while the export runs may be read
before or after its change; a contact appears at most once.

Columns are the contact's stored fields (`queries.CONTACT_ROW_FIELDS`), in that order. In CSV,
`null` is an empty cell, booleans are `true`/`false`, times ISO 8601 UTC with `Z`, and `data`
its JSON text. JSON Lines carries the same fields, `data` as an object. The whole export is one
request for the rate limits.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from sqlalchemy import ColumnElement, true
from starlette.responses import StreamingResponse

from ...db.engine import Database
from ...db.models import Contact, Membership
from ...db.queries import CONTACT_ROW_FIELDS, contact_rows, fetch_rows, owned_audience
from ...domain.membership.members import member_condition, stored_members
from ...http.responses import dumps
from ..deps import DatabaseDep, PrivateKey

router = APIRouter(prefix="/audiences", tags=["audiences"])

BATCH = 1000
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
Format = Literal["csv", "jsonl"]


def _batches(
    database: Database, condition: ColumnElement[bool], list_id: str, stored: str | None
) -> Iterator[list[dict[str, Any]]]:
    """Batches of members in id order. `stored`: the audience whose `memberships` rows are its
    members, walked in their own index order (audience, contact) and joined to their contacts,
    rather than every contact of the list tested against them (7x faster over a million)."""
    last: str | None = None
    key = Contact.id if stored is None else Membership.contactId
    while True:
        where = [Contact.listId == list_id, condition]
        if last is not None:
            where.append(key > last)
        statement = contact_rows(where)
        if stored is not None:
            statement = statement.join(Membership, Membership.contactId == Contact.id).where(
                Membership.audienceId == stored
            )
        with database.reading() as session:
            rows = fetch_rows(session, statement.order_by(key).limit(BATCH))
        if not rows:
            return
        yield rows
        if len(rows) < BATCH:
            return
        last = rows[-1]["id"]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return neutralised(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return dumps(value).decode().strip('"')
    return str(value)


def neutralised(text: str) -> str:
    """Text a spreadsheet would run as a formula (`=HYPERLINK(...)`, `+1+cmd|...`, `@SUM`),
    prefixed with an apostrophe so it shows as the text it is (OWASP's "CSV injection").

    Text cells only: a number such as -5 is written as it is. JSON Lines exports are untouched.
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _csv(batches: Iterator[list[dict[str, Any]]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CONTACT_ROW_FIELDS)
    for rows in batches:
        for row in rows:
            writer.writerow([_cell(row[field]) for field in CONTACT_ROW_FIELDS])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def _lines(batches: Iterator[list[dict[str, Any]]]) -> Iterator[bytes]:
    for rows in batches:
        chunk = bytearray()
        for row in rows:
            record = {field: row[field] for field in CONTACT_ROW_FIELDS}
            record["data"] = json.loads(record["data"]) if record["data"] else {}
            chunk += dumps(record) + b"\n"
        yield bytes(chunk)


@router.get(
    "/{id}/export",
    summary="Export an audience's members",
    description="Every member of the audience, streamed as CSV (a header row, then one contact "
    "per row) or JSON Lines (one contact object per line), in id order. Smart audiences are "
    "judged at the moment of the request. One request for the rate limits, whatever the size.",
    response_class=StreamingResponse,
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
    id: str,
    principal: PrivateKey,
    database: DatabaseDep,
    format: Annotated[
        Format,
        Query(description="`csv` or `jsonl` (JSON Lines).", examples=["csv"]),
    ] = "jsonl",
) -> StreamingResponse:
    with database.reading() as session:
        audience, lst = owned_audience(session, principal.account_id, id)
        stored = audience.id if stored_members(audience) else None
        # The instant is fixed here, once; stored members are read through the join instead.
        condition = true() if stored else member_condition(audience)
        list_id, name = lst.id, audience.id
    batches = _batches(database, condition, list_id, stored)
    body = _csv(batches) if format == "csv" else _lines(batches)
    return StreamingResponse(
        body,
        media_type=MEDIA_TYPES[format],
        headers={"Content-Disposition": f'attachment; filename="{name}.{format}"'},
    )
