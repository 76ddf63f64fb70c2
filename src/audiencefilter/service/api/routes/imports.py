"""`POST /v4/contacts/import`: many contacts in one request, with a result for every row.

The body is a JSON array of contacts, or JSON Lines (`Content-Type: application/x-ndjson`, one
contact per line); `listId` is a query parameter, and a row may repeat it but not name another
list. Each row is read as `POST /v4/contacts` reads a body (the same fields, types and bounds)
and gets its own result: `created` with the new id, `exists` with the id of the contact that
already has that email in the list (compared ignoring case, as the unique index does), `duplicate`
when an earlier row of the same import has the email, or `invalid` with its problems in the
words of every validation error. One bad row never stops the others.

Importing is idempotent twice over. Without a key, the same import sent again creates nothing:
every row is then `exists`. With an `Idempotency-Key`, a retry gets the first answer itself,
byte for byte, as for every POST. Existing contacts are never changed: that is what `PATCH` is for.

It is one request for the rate limits, whatever the number of rows; the body limit (1 MiB by
default) and `MAX_IMPORT_ROWS` (1000) bound the work. All rows are written in one transaction:
a contact created meanwhile by another request with one of the emails makes the import a 409
that creates nothing, and sending it again is safe.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, ValidationError
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from ...db.models import Contact
from ...domain import changes
from ...ground.fields import QueryText
from ...http import validation
from ...http.errors import ApiError, ValidationIssue
from ...http.idempotency import RetryDep, once
from ...http.responses import data
from ..deps import DatabaseDep, PrivateKey
from ..schemas.resources import ContactImportRow, ImportResponse

router = APIRouter(prefix="/contacts", tags=["contacts"])

MAX_IMPORT_ROWS = 1000
LINES_TYPES = ("application/x-ndjson", "application/jsonl", "application/jsonlines")
OTHER_LIST = "a row may only name the list of the import (the listId query parameter)"


class _ImportBody(BaseModel):
    """The rows as received: what an Idempotency-Key's fingerprint covers."""

    rows: list[Any]


def _rows(raw: bytes, content_type: str) -> list[tuple[int, Any]]:
    """(row number, value) of each row: the element's 1-based place, or its line number."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _body_error("UTF-8 text", "bytes that are not UTF-8") from None
    if content_type.split(";")[0].strip().lower() in LINES_TYPES:
        # Lines end at \n (\r\n too) only: U+2028, U+2029 or U+0085 may stand raw inside a
        # JSON string, where `str.splitlines` would cut the row in two.
        lines = text.split("\n")
        _check_count(sum(1 for line in lines if line.strip()))
        rows = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                reason = f"invalid JSON ({exc.msg} at column {exc.colno})"
                rows.append((number, _Unreadable(reason)))
        return rows
    try:
        value = json.loads(text)
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
        raise _body_error(f"at most {MAX_IMPORT_ROWS} rows", f"{rows} rows")


class _Unreadable:
    """A JSON Lines row that is not JSON: reported as that row's problem."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _body_error(expected: str, found: str) -> ApiError:
    issue = ValidationIssue(
        pointer="/body",
        detail=f"expected {expected}, found {found}",
        expected=expected,
        found=found,
    )
    return ApiError(400, f"Invalid request: /body: {issue.detail}", errors=[issue])


def _problems(value: Any, list_id: str) -> tuple[ContactImportRow | None, list[dict[str, Any]]]:
    if isinstance(value, _Unreadable):
        return None, [{"pointer": "", "detail": value.reason}]
    if not isinstance(value, dict):
        problem = validation.Problem("a JSON object", validation.found(value))
        return None, [_issue("", problem)]
    try:
        row = ContactImportRow.model_validate(value)
    except ValidationError as exc:
        known = tuple(ContactImportRow.model_fields)
        return None, [
            _issue(_pointer(error["loc"]), validation.describe(dict(error), known))
            for error in exc.errors()
        ]
    if row.listId is not None and row.listId != list_id:
        return None, [
            _issue(
                "/listId",
                validation.Problem(f'"{list_id}"', validation.found(row.listId), OTHER_LIST),
            )
        ]
    return row, []


def _pointer(location: Any) -> str:
    return "".join(f"/{part}" for part in location)


def _issue(pointer: str, problem: validation.Problem) -> dict[str, Any]:
    issue = ValidationIssue(
        pointer=pointer,
        detail=problem.detail,
        expected=problem.expected,
        found=problem.found,
        suggestion=problem.suggestion,
    )
    return issue.model_dump(exclude_none=True)


def _existing(session: Session, list_id: str, keys: list[str]) -> dict[str, str]:
    """`{email key: contact id}` of the list's contacts with one of these emails."""
    found: dict[str, str] = {}
    for start in range(0, len(keys), 500):
        statement = select(Contact.emailKey, Contact.id).where(
            Contact.listId == list_id, Contact.emailKey.in_(keys[start : start + 500])
        )
        found.update({key: contact_id for key, contact_id in session.execute(statement)})
    return found


def _import(
    session: Session, account_id: str, list_id: str, rows: list[tuple[int, Any]]
) -> Response:
    lst = changes.locked_list(session, account_id, list_id)
    checked = [(number, *_problems(value, lst.id)) for number, value in rows]
    keys = [row.email.lower() for _, row, _ in checked if row is not None]
    existing = _existing(session, lst.id, sorted(set(keys)))
    first_row: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    created: list[tuple[dict[str, Any], Contact]] = []
    for number, row, problems in checked:
        if row is None:
            results.append({"row": number, "status": "invalid", "errors": problems})
            continue
        key = row.email.lower()
        if key in existing:
            results.append({"row": number, "status": "exists", "id": existing[key]})
        elif key in first_row:
            results.append({"row": number, "status": "duplicate", "sameAsRow": first_row[key]})
        else:
            first_row[key] = number
            values = row.model_dump(exclude_unset=True, exclude={"listId"})
            contact = Contact(listId=lst.id, emailKey=key, **values)
            session.add(contact)
            result: dict[str, Any] = {"row": number, "status": "created"}
            results.append(result)
            created.append((result, contact))
    session.flush()
    for result, contact in created:
        result["id"] = contact.id
    changes.contacts_created(session, lst.id, [(c.id, c.email) for _, c in created])
    counts = {status: 0 for status in ("created", "exists", "duplicate", "invalid")}
    for result in results:
        counts[result["status"]] += 1
    return data({"listId": lst.id, "rows": len(results), **counts, "results": results})


@router.post(
    "/import",
    response_model=ImportResponse,
    summary="Import contacts in bulk",
    description="Creates the contacts of a JSON array or of JSON Lines "
    "(`Content-Type: application/x-ndjson`) in the list `listId`, up to "
    f"{MAX_IMPORT_ROWS} rows, and answers a result per row: `created` (with the new `id`), "
    "`exists` (a contact of the list already has that email; it is not changed), `duplicate` "
    "(an earlier row has the email) or `invalid` (with `errors`). Sending the same import again "
    "creates nothing; with an `Idempotency-Key` it answers the first result itself. One "
    "request for the rate limits.",
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
                        {"email": "grace@example.com", "data": {"plan": "pro"}},
                    ],
                },
                "application/x-ndjson": {
                    "schema": {"type": "string"},
                    "example": '{"email": "ada@example.com", "points": 120}\n'
                    '{"email": "grace@example.com"}\n',
                },
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
    database: DatabaseDep,
    retry: RetryDep,
) -> Response:
    # Decoding a body of up to the size limit takes a while: off the event loop, so health
    # checks and other requests go on meanwhile.
    body = await request.body()
    rows = await run_in_threadpool(_rows, body, request.headers.get("content-type", ""))
    claim = retry.claim(principal.account_id, _ImportBody(rows=[_plain(v) for _, v in rows]))

    def run() -> Response:
        try:
            return once(database, claim, lambda s: _import(s, principal.account_id, listId, rows))
        except IntegrityError:
            raise ApiError(
                409, "A contact with one of these emails was created meanwhile; send it again"
            ) from None

    return await run_in_threadpool(run)


def _plain(value: Any) -> Any:
    return value.reason if isinstance(value, _Unreadable) else value
