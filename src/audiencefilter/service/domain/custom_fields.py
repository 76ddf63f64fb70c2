"""A list's custom fields: typed keys of each contact's `data` that the list's filters name.

A list declares `{"key": "birthday", "type": "date", "label": "Birthday"}`; from then on its
filters may say `birthday anniversary within this week` (the library reads the field from
`data.birthday`, typed by the declaration), and every write of a contact of the list checks the
value it gives `data.birthday` (a 400 naming where, `data.birthday` in the body, the type
expected and what was found). Keys the list does not declare stay free-form, as `data` always was.

Decisions (docs/service-fields.md, "Custom fields"):
- Types are those a value inside JSON can hold on every engine: string, number, boolean, date
  (ISO 8601 text `YYYY-MM-DD`) and lists of strings, numbers or booleans. A date-time is not
  one of them (the library refuses it inside JSON: its text has no order engines share).
- A key is a name the text syntax reads as a field (letters, digits, `_`, starting with a
  letter) that no contact field or relation has.
- Declaring a field does not check the values contacts already hold: a list of a million
  contacts would be rewritten or refused for one stray value. Such a value is read by the
  library's rule for typed fields inside JSON (another string is compared as text, another
  JSON type is FALSE), and the next write of that contact must fix it.
- A field an audience's filter reads cannot change type or be removed (409 naming the
  audiences): the stored filter was checked against the declared type. A label can change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, get_args

from sqlalchemy import select
from sqlalchemy.orm import Session

from ... import FieldType, FilterError, parse_text, value_problem
from ..db.models import Audience, List
from ..ground.errors import Conflict, Invalid, Location, NotFound, RequestProblem
from ..ground.fields import FIELD_KEY_PATTERN, FIELD_KEY_RULE
from . import field_catalogue
from .audience_filters import SCHEMA, decode_fields, decode_zone, encode_fields

CustomFieldType = Literal[
    "string", "number", "boolean", "date", "string[]", "number[]", "boolean[]"
]
"""The types a custom field may take, listed here only: the API's schemas take this type."""
CUSTOM_TYPES: tuple[str, ...] = get_args(CustomFieldType)
MAX_CUSTOM_FIELDS = 100
MAX_LABEL = 120
_KEY = re.compile(FIELD_KEY_PATTERN)
DATE_TIME_NAMES = frozenset({"datetime", "date-time", "date_time", "timestamp", "instant"})
DATE_TIME_REFUSAL = (
    "a custom field lives in the contact's data (JSON), where a date-time is text whose order "
    "the database engines do not share (offsets, fractions of a second), so filters could not "
    'compare it; use "date" when the day is enough (it keeps no time of day), or record the '
    "moment as one of the contact's actions, whose createdAt filters compare to the instant "
    "(actions some createdAt >= ...)"
)
"""Why there is no date-time type: said instead of a misleading "did you mean date?"."""


def type_refusal(kind: str) -> str | None:
    """Why `kind` is not a custom field type, when it is a name of the date-time type."""
    return DATE_TIME_REFUSAL if kind.lower() in DATE_TIME_NAMES else None


def declared(lst: List) -> dict[str, str]:
    """The list's custom fields, key to type."""
    return {field["key"]: field["type"] for field in lst.customFields}


def filter_fields(lst: List) -> str | None:
    """All the list's filters may read (its custom fields and time zone), as stored beside a
    filter (`audience_filters.encode_fields`): the schema a new filter is read with."""
    return encode_fields(declared(lst), lst.timeZone)


def add(lst: List, key: str, kind: str, label: str | None) -> dict[str, str]:
    """Declares a field (400 for a bad key, type or label; 409 when the key is taken)."""
    _check_key(key)
    _check_type(kind)
    if key in declared(lst):
        raise Conflict(f'The list already has a custom field "{key}"')
    if len(lst.customFields) >= MAX_CUSTOM_FIELDS:
        raise Conflict(f"A list holds at most {MAX_CUSTOM_FIELDS} custom fields")
    field = {"key": key, "type": kind, "label": _checked_label(label, key)}
    lst.customFields = [*lst.customFields, field]
    return field


def change(
    session: Session, lst: List, key: str, kind: str | None, label: str | None
) -> dict[str, str]:
    """Changes a field's type or label; a type read by an audience's filter stays (409)."""
    field = _field(lst, key)
    if kind is not None and kind != field["type"]:
        _check_type(kind)
        _refuse_if_read(session, lst.id, key, "change the type of")
        field = {**field, "type": kind}
    if label is not None:
        field = {**field, "label": _checked_label(label, key)}
    lst.customFields = [field if f["key"] == key else f for f in lst.customFields]
    return field


def remove(session: Session, lst: List, key: str) -> dict[str, str]:
    """Removes a declaration (409 while a filter reads it); contacts keep their `data`."""
    field = _field(lst, key)
    _refuse_if_read(session, lst.id, key, "remove")
    lst.customFields = [f for f in lst.customFields if f["key"] != key]
    return field


def field_of(lst: List, key: str) -> dict[str, str]:
    """One declaration, or a 404."""
    return _field(lst, key)


def _field(lst: List, key: str) -> dict[str, str]:
    for field in lst.customFields:
        if field["key"] == key:
            return dict(field)
    raise NotFound(f'Custom field "{key}" not found in this list')


def readers(session: Session, list_id: str, key: str) -> list[tuple[str, str]]:
    """The (id, name) of the list's audiences whose stored filter reads the custom field."""
    statement = select(Audience.id, Audience.name, Audience.fields).where(
        Audience.listId == list_id, Audience.fields.is_not(None)
    )
    return [
        (id_, name)
        for id_, name, fields in session.execute(statement)
        if key in decode_fields(fields)
    ]


def _refuse_if_read(session: Session, list_id: str, key: str, verb: str) -> None:
    found = readers(session, list_id, key)
    if found:
        named = ", ".join(f"{name} ({id_})" for id_, name in found)
        raise Conflict(
            f'Cannot {verb} custom field "{key}": the filters of {named} read it; change '
            "those filters first",
        )


def check_unchanged(lst: List, fields: str | None, has_filter: bool = True) -> None:
    """Refuse (409) a filter read with declarations the list no longer has: it was read before
    the list's lock, and a field it names changed type, or the list its zone, meanwhile."""
    now = declared(lst)
    changed = [key for key, kind in decode_fields(fields).items() if now.get(key) != kind]
    if has_filter and decode_zone(fields) != lst.timeZone:
        changed.append("timeZone")
    if changed:
        raise Conflict(
            f"The list's custom fields changed while the filter was read ({', '.join(changed)}); "
            "send it again",
        )


def data_problems(
    lst: List, data: Mapping[str, Any] | None, at: Location = ("data",)
) -> list[RequestProblem]:
    """The problems of the declared fields' values in a contact's `data` (at `at`)."""
    if not data or not lst.customFields:
        return []
    problems = []
    for key, kind in declared(lst).items():
        problem = value_problem(FieldType(kind), data.get(key))
        if problem is not None:
            problems.append(_issue((*at, key), key, kind, problem))
    return problems


def check_data(lst: List, data: Mapping[str, Any] | None) -> None:
    """A 400 naming every declared field of `data` that holds a value of another type."""
    problems = data_problems(lst, data)
    if problems:
        raise Invalid("Invalid request", errors=problems, cited=True)


def _issue(at: Location, key: str, kind: str, problem: str) -> RequestProblem:
    expected, _, found = problem.removeprefix("expected ").partition(", found ")
    return RequestProblem(
        at,
        f'custom field "{key}" ({kind}): {problem}',
        expected=expected,
        found=found,
        suggestion=f"send {expected}, or null to clear it",
    )


def _check_key(key: str) -> None:
    if not _KEY.fullmatch(key):
        raise _bad("key", FIELD_KEY_RULE, key)
    if SCHEMA.get(key) is not None or key in SCHEMA.relation_names or not _readable(key):
        raise Conflict(
            f'"{key}" is a contact field, a relation or a word of the filter syntax: choose '
            "another key",
        )


def _readable(key: str) -> bool:
    """Whether the text syntax reads the key as a field name (`and`, `has` are its words):
    asked of the library, which owns the syntax. A schema refuses the names of its logical
    groups (`AND`, `OR`, `NOT`) as fields with a ValueError; the syntax's words parse wrong."""
    try:
        schema = SCHEMA.with_fields(**{key: ("string", ("data", key))})
        parse_text(f'{key} is null or {key} = "x"', schema=schema)
    except (FilterError, ValueError):
        return False
    return True


def _check_type(kind: str) -> None:
    if kind not in CUSTOM_TYPES:
        raise _bad("type", f"one of {', '.join(CUSTOM_TYPES)}", kind, type_refusal(kind))


def _checked_label(label: str | None, key: str) -> str:
    if label is None:
        return field_catalogue.label(key, {})
    if not label.strip() or len(label) > MAX_LABEL:
        raise _bad("label", f"1 to {MAX_LABEL} characters", label)
    return label


def _bad(name: str, expected: str, found: str, suggestion: str | None = None) -> Invalid:
    shown = found if len(found) <= 40 else found[:37] + "..."
    detail = f"expected {expected}, found {shown!r}"
    issue = RequestProblem(
        (name,),
        f"{detail}; {suggestion}" if suggestion else detail,
        expected=expected,
        found=repr(shown),
        suggestion=suggestion,
    )
    return Invalid("Invalid request", errors=[issue], cited=True)
