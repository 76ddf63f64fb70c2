"""An import's row as the domain takes it: its fields and actions, or its problems.

The API only decodes an import's bytes (a JSON array, JSON Lines, CSV text) into raw values and
hands them over; each row is read here, under the list's lock (`use_cases/imports.py`), since
the list's custom fields decide where a row's fields go and what their values must be. A row
is read as `POST /v4/contacts` reads a body (`ContactImportRow`, `ground/bodies.py`: the same
fields, types and bounds), plus its history (`createdAt`, `actions`). A row may repeat the
import's list but not name another. `id` and `referralCode`, which an export writes, are left
out (the service assigns them). A custom field given beside the profile fields (`"birthday":
"1990-11-23"`, as a CRM export has it) moves into `data`, whose values are then typed.

A bad row gets its problems in the words of every validation error (`ground/validation.py`),
each with where in the row (a pointer into the row's own document, as its result shows it:
`/data/birthday`); the request's pointers are `http/errors.py`'s. Rows of the ordinary shapes
are read without pydantic (`fast_rows.py`), which `FAST_ROWS` switches off.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..db.models import List
from ..ground import validation
from ..ground.bodies import ContactImportRow
from ..ground.errors import Location, RequestProblem, ValidationIssue, pointer
from . import custom_fields, fast_rows
from .contact_import import ImportedAction, ImportRow, InvalidRow

OTHER_LIST = "a row may only name the list of the import (the listId query parameter)"
ASSIGNED = ("id", "referralCode")
"""Fields an export writes that the service assigns to every new contact itself: a row read
back from an export is taken whole, these left out (the import gives its own)."""
_ASSIGNED = frozenset(ASSIGNED)

FAST_ROWS = True
"""Whether rows of the ordinary shapes are read by `fast_rows.fast_fields` rather than by
pydantic: at 100,000 rows pydantic's reading took an eighth of the import. False reads every row
with pydantic alone (what the differential test in tests/service/test_import_fast_rows.py
compares)."""


class Unreadable:
    """A JSON Lines row that is not JSON: reported as that row's problem."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def read(number: int, value: Any, lst: List) -> ImportRow | InvalidRow:
    """A row as the domain takes it: its fields and actions, or its problems."""
    value = _without_assigned(value)
    if lst.customFields:  # a list without custom fields moves nothing (most lists)
        value = _with_custom_fields(value, custom_fields.declared(lst))
    fast = fast_rows.fast_fields(value, lst.id) if FAST_ROWS else None
    if fast is not None:
        return _typed(number, fast, lst, ())
    row, problems = _problems(value, lst.id)
    if row is None:
        return InvalidRow(number, problems)
    fields = row.model_dump(exclude_unset=True, exclude={"listId", "actions"})
    actions = tuple(
        ImportedAction(action.name, action.increase, action.createdAt)
        for action in row.actions or ()
    )
    return _typed(number, fields, lst, actions)


def _problems(value: Any, list_id: str) -> tuple[ContactImportRow | None, list[dict[str, Any]]]:
    if isinstance(value, Unreadable):
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
        found = validation.found(row.listId)
        return None, [_issue("/listId", validation.Problem(f'"{list_id}"', found, OTHER_LIST))]
    return row, []


def _pointer(location: Location) -> str:
    """Where in the row, as the row's results have always written it (keys unescaped)."""
    return "".join(f"/{part}" for part in location)


def _issue(at: str, problem: validation.Problem) -> dict[str, Any]:
    issue = ValidationIssue(
        pointer=at,
        detail=problem.detail,
        expected=problem.expected,
        found=problem.found,
        suggestion=problem.suggestion,
    )
    return issue.model_dump(exclude_none=True)


def _typed_issue(problem: RequestProblem) -> dict[str, Any]:
    """A problem of a custom field's value, at its path in the row (`/data/birthday`)."""
    issue = ValidationIssue(
        pointer=pointer(problem.at),
        detail=problem.detail,
        expected=problem.expected,
        found=problem.found,
        suggestion=problem.suggestion,
    )
    return issue.model_dump(exclude_none=True)


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


def _typed(
    number: int, fields: dict[str, Any], lst: List, actions: tuple[ImportedAction, ...]
) -> ImportRow | InvalidRow:
    """The row, or its problems with the types of the list's custom fields in `data`."""
    # Without custom fields there is nothing to type (most lists): no call a row.
    typed = custom_fields.data_problems(lst, fields.get("data")) if lst.customFields else []
    if typed:  # pointers into the row, not the request's body
        return InvalidRow(number, [_typed_issue(problem) for problem in typed])
    return ImportRow(number, fields, actions)
