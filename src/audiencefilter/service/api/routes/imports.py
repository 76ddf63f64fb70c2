"""`POST /v4/contacts/import`: many contacts in one request, with a result for every row.

The body is a JSON array of contacts, or JSON Lines (`Content-Type: application/x-ndjson`, one
contact per line); `listId` is a query parameter, and a row may repeat it but not name another
list. Each row is read as `POST /v4/contacts` reads a body (the same fields, types and bounds),
plus the history a migration brings: `createdAt`, the sign-up instant, and `actions`, each with
its own `createdAt` (ISO 8601 with an offset, not in the future: `ground/fields.past_instant`).
Each row gets its own result: `created` with the new id, `exists` with the id of the contact
that already has that email in the list (compared ignoring case, as the unique index does),
`duplicate` when an earlier row of the same import has the email, or `invalid` with its problems
in the words of every validation error. One bad row never stops the others.

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
import re
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

import audiencefilter as af

from ...db.models import List
from ...domain import contact_import, custom_fields
from ...domain.contact_import import InvalidRow
from ...domain.use_cases import imports
from ...domain.use_cases.imports import ImportMode
from ...ground.errors import ValidationIssue
from ...ground.fields import (
    NO_NUL,
    ONE_LINE,
    QueryBool,
    QueryText,
    check_data,
    check_text,
    normalise_email,
    past_instant,
)
from ...ground.metrics import Metrics
from ...http import idempotency_turns, validation
from ...http.errors import ApiError, error_body, issue_of, refusal
from ...http.idempotency import RetryDep
from ...http.json_guard import LINES_TYPES, media_type
from ...http.responses import ErrorJSONResponse, data
from .. import csv_import
from ..deps import DatabaseDep, PrivateKey
from ..heavy import HEAVY
from ..schemas.resources import ContactImportRow, ImportResponse

router = APIRouter(prefix="/contacts", tags=["contacts"])

MAX_IMPORT_ROWS = 1000
OTHER_LIST = "a row may only name the list of the import (the listId query parameter)"
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
                rows.append((number, _Unreadable(reason)))
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


ASSIGNED = ("id", "referralCode")
"""Fields an export writes that the service assigns to every new contact itself: a row read
back from an export is taken whole, these left out (the import gives its own)."""
_ASSIGNED = frozenset(ASSIGNED)


def _without_assigned(value: Any) -> Any:
    if not isinstance(value, dict) or value.keys().isdisjoint(_ASSIGNED):
        return value
    return {key: item for key, item in value.items() if key not in ASSIGNED}


def _with_custom_fields(value: Any, declared: dict[str, str]) -> Any:
    """A row whose list's custom fields are given beside the profile fields (`"birthday":
    "1990-11-23"`, as a CRM export has them) with those keys moved into its `data`."""
    if not isinstance(value, dict) or not declared.keys() & value.keys():
        return value
    data = value.get("data") or {}
    if not isinstance(data, dict):
        return value  # the row's validation says what `data` must be
    moved = {key: value[key] for key in declared if key in value}
    rest = {key: item for key, item in value.items() if key not in moved}
    return {**rest, "data": {**data, **moved}}


FAST_ROWS = True
"""Whether rows of the ordinary shapes are read by `_fast_fields` rather than by pydantic: at
100,000 rows pydantic's reading took an eighth of the import. False reads every row with
pydantic alone (what the differential test in tests/service/test_import_fast_rows.py compares)."""


class _NotFast(Exception):
    """A value the fast reader leaves to pydantic."""


Reader = Callable[[Any], Any]


_SCHEMA = ContactImportRow.model_json_schema()["properties"]
"""The row's fields as pydantic checks them: the fast readers take their bounds and patterns
from here, so a bound changed in `ground/fields.py` changes both readers."""


def _string(key: str) -> dict[str, Any]:
    """The string schema of field `key` (of its `anyOf` when it may be null)."""
    schema: dict[str, Any] = _SCHEMA[key]
    return next((s for s in schema.get("anyOf", [schema]) if s.get("type") == "string"), schema)


FAST_READERS = True
"""Whether ASCII text is judged by `_ASCII_RULES` and taken as it is, rather than by the
pattern and `check_text` (whose NUL and surrogate checks ASCII text passes by construction), and
a row's readers are found by its keys' order (`_readers_of`). False reads every row the plain
way (what tests/service/test_import_fast_readers.py compares)."""


def _no_nul(text: str) -> bool:
    return "\x00" not in text


_ASCII_RULES: dict[str, Callable[[str], bool]] = {ONE_LINE: str.isprintable, NO_NUL: _no_nul}
"""For ASCII text, a test that holds exactly when the pattern matches the whole text: ASCII's
printable characters are U+0020 to U+007E, what `ONE_LINE` leaves of it. Both patterns refuse
NUL, and ASCII holds no surrogate, so such text needs no `check_text` either."""


def _text(key: str) -> Reader:
    """A nullable text field, pydantic's bound and pattern matched whole (not `$`: a line feed)."""
    string = _string(key)
    most, compiled = string["maxLength"], re.compile(string["pattern"])
    rule = _ASCII_RULES.get(string["pattern"])

    def read(item: Any) -> Any:
        if item is None:
            return None
        if type(item) is str and len(item) <= most:
            if FAST_READERS and rule is not None and item.isascii():
                if rule(item):
                    return item
            elif compiled.fullmatch(item):
                return check_text(item)
        raise _NotFast

    return read


def _email() -> Reader:
    """The email, NFC (`normalise_email`). An ASCII address the pattern takes is returned as it
    is: the pattern refuses NUL, and ASCII holds no surrogate and is its own NFC."""
    string = _string("email")
    least, most = string["minLength"], string["maxLength"]
    compiled = re.compile(string["pattern"])

    def read(item: Any) -> str:
        if type(item) is str and least <= len(item) <= most and compiled.fullmatch(item):
            if FAST_READERS and item.isascii():
                return item
            return normalise_email(check_text(item))
        raise _NotFast

    return read


def _integer(key: str) -> Reader:
    """Points or referrals: an exact `int` within pydantic's bounds (a float or a bool is
    pydantic's to judge)."""
    least, most = _SCHEMA[key]["minimum"], _SCHEMA[key]["maximum"]

    def read(item: Any) -> int:
        if type(item) is int and least <= item <= most:
            return item
        raise _NotFast

    return read


def _flag(item: Any) -> bool:
    if type(item) is bool:
        return item
    raise _NotFast


def _data(item: Any) -> dict[str, Any]:
    if type(item) is dict and all(type(name) is str for name in item):
        return check_data(dict(item))
    raise _NotFast


def _list_id(item: Any) -> Any:
    """Compared with the import's list by `_fast_fields`; left out of the fields."""
    if type(item) is str:
        return item
    raise _NotFast


_TEXTS = ("firstName", "lastName", "name", "company", "country", "city", "socialOne",
          "socialTwo", "phoneNumber", "address", "website")  # fmt: skip
_READERS: dict[str, Reader] = {
    **{key: _text(key) for key in _TEXTS},
    "data": _data,
    "points": _integer("points"),
    "referrals": _integer("referrals"),
    **dict.fromkeys(("isVerified", "unsubscribed", "isGDPR"), _flag),
    "email": _email(),
    "listId": _list_id,
    "createdAt": past_instant,
}
"""`ContactImportRow`'s fields but `actions`, in its order, each read as pydantic reads it."""
_ORDER = tuple(key for key in ContactImportRow.model_fields if key in _READERS)
_READ_IN_ORDER = tuple((key, _READERS[key]) for key in _ORDER)
"""(field, reader) in the model's order, the readers found once rather than once a row."""


_SHAPES: dict[tuple[Any, ...], tuple[tuple[str, Reader], ...]] = {}
"""`_READ_IN_ORDER` cut to the keys of a row, by the row's keys in their order: the rows of an
export share one or a few orders, and each then costs no look-up of the keys it lacks."""
MOST_SHAPES = 256


def _readers_of(value: dict[Any, Any]) -> tuple[tuple[str, Reader], ...]:
    """The (field, reader) pairs of `_READ_IN_ORDER` whose field the row has, in that order."""
    shape = tuple(value)
    readers = _SHAPES.get(shape)
    if readers is None:
        if len(_SHAPES) >= MOST_SHAPES:  # many orders (a client's own doing): start again
            _SHAPES.clear()
        readers = _SHAPES[shape] = _present(value)
    return readers


def _present(value: dict[Any, Any]) -> tuple[tuple[str, Reader], ...]:
    return tuple((key, reader) for key, reader in _READ_IN_ORDER if key in value)


def _fast_fields(value: Any, list_id: str) -> dict[str, Any] | None:
    """The fields pydantic's `ContactImportRow` gives a row of the common shapes, or None.

    Anything unsure (a float, a missing email, an unknown key, `actions`, a bad value) is None,
    and pydantic reads the row and words its errors. Fields come in the model's order, as
    `model_dump` gives them.
    """
    if type(value) is not dict or "email" not in value or value.get("listId", list_id) != list_id:
        return None
    readers = _readers_of(value) if FAST_READERS else _present(value)
    try:
        read = {key: reader(value[key]) for key, reader in readers}
    except (ValueError, _NotFast):
        return None
    if len(read) != len(value):
        return None  # an unknown key or `actions`
    read.pop("listId", None)
    return read


def _row(number: int, value: Any, lst: List) -> contact_import.ImportRow | InvalidRow:
    """A row as the domain takes it: its fields and actions, or its problems."""
    value = _without_assigned(value)
    if lst.customFields:  # a list without custom fields moves nothing (most lists)
        value = _with_custom_fields(value, custom_fields.declared(lst))
    fast = _fast_fields(value, lst.id) if FAST_ROWS else None
    if fast is not None:
        return _typed(number, fast, lst, ())
    row, problems = _problems(value, lst.id)
    if row is None:
        return InvalidRow(number, problems)
    fields = row.model_dump(exclude_unset=True, exclude={"listId", "actions"})
    actions = tuple(
        contact_import.ImportedAction(action.name, action.increase, action.createdAt)
        for action in row.actions or ()
    )
    return _typed(number, fields, lst, actions)


def _typed(
    number: int,
    fields: dict[str, Any],
    lst: List,
    actions: tuple[contact_import.ImportedAction, ...],
) -> contact_import.ImportRow | InvalidRow:
    """The row, or its problems with the types of the list's custom fields in `data`."""
    # Without custom fields there is nothing to type (most lists): no call a row.
    typed = custom_fields.data_problems(lst, fields.get("data")) if lst.customFields else []
    if typed:  # pointers into the row, not the request's body
        issues = [issue_of(problem, within=()) for problem in typed]
        return InvalidRow(number, [issue.model_dump(exclude_none=True) for issue in issues])
    return contact_import.ImportRow(number, fields, actions)


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
            principal.account_id, listId, mode, events, mapping, dryRun, _row, counted,
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
        return await run_in_threadpool(imports.run, job, _row, writes)
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
    return value.reason if isinstance(value, _Unreadable) else value
