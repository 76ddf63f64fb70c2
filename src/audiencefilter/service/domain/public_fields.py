"""What a public sign-up may write: a list's `publicFields`, down to single keys of `data`.

A public key sits in a page anyone can read, so whoever copies it would otherwise choose the
`data` and profile fields that put a contact into the list's private smart audiences. A list
names what its sign-up form collects, each entry one of:

- a profile field (`firstName`, `company`, ...);
- `data`: every key of `data` (what lists could only say before keys could be named);
- `data.<key>`: that one key of `data` (`data.birthday`, `data.utm-campaign`), declared as a
  custom field or not;
- a custom field of the list by its key (`birthday`): the same as `data.birthday`, checked
  against the list's declarations when the list is written.

Anything else a sign-up sends is refused (403) naming it (`data.tags`, and where it is in the
body) and the setting to change, or left out when the list's `publicFieldsPolicy`
is `ignore`: an explicit choice of the list, never a silent one. Only top-level keys of `data`
can be named: a form collects fields, not documents.

A key that is open takes what the sign-up form announces for it (`announced_type`: a custom
field's type, `string` for an undeclared key), bounded (`MAX_PUBLIC_TEXT` characters a string,
`MAX_PUBLIC_ITEMS` items a list), else a 400 naming it: an open `data.nick` that took
`{"tier": "vip"}` would put its sender into a private audience on `data.nick.tier`, and one
that took 900 KB would let anyone fill the database from a page. A list that opens all of
`data` announces no type; its `data` is bounded as a whole (`MAX_PUBLIC_DATA`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ... import FieldType, value_problem
from ..db.models import List
from ..ground.errors import Conflict, Forbidden, Invalid, RequestProblem
from ..ground.fields import FIELD_KEY_PATTERN
from . import custom_fields
from .audience_filters import SCHEMA

PROFILE_FIELDS = (
    "firstName",
    "lastName",
    "name",
    "phoneNumber",
    "company",
    "country",
    "city",
    "address",
    "website",
    "socialOne",
    "socialTwo",
)
"""The contact fields a list may open to public sign-ups (never points, referrals, flags)."""
DATA = "data"
DATA_PREFIX = "data."
MAX_DATA_KEY = 64
MAX_ENTRIES = len(PROFILE_FIELDS) + 1 + custom_fields.MAX_CUSTOM_FIELDS
NEVER_PUBLIC = tuple(
    sorted(
        {field.name for field in SCHEMA.fields} - {*PROFILE_FIELDS, DATA}
        | set(SCHEMA.relation_names)
    )
)
"""Contact fields and relations a public key can never set (points, the flags, ...)."""
UNDECLARED_TYPE = "string"
"""What a form announces, and a public sign-up may send, for an open key no field declares."""
MAX_PUBLIC_TEXT = 1000
"""Characters of a string a public sign-up may send in an open key (or in a list item)."""
MAX_PUBLIC_ITEMS = 100
"""Items of a list a public sign-up may send in an open key of a list type."""
MAX_PUBLIC_DATA = 16_384
"""Characters of the JSON text of `data` a public sign-up may send to a list opening all of it."""
DATA_KEY_PATTERN = r"^data\.[^\x00-\x1f\x7f-\x9f]{1,64}$"
_DATA_KEY = re.compile(DATA_KEY_PATTERN)
_KEY = re.compile(FIELD_KEY_PATTERN)
ENTRY_RULE = (
    "a profile field (" + ", ".join(PROFILE_FIELDS) + "), data (every key), data.<key> (one key "
    "of data) or the key of a custom field of the list"
)


def json_schema() -> dict[str, object]:
    """The entries `entry_problem` accepts, for the OpenAPI document (what is left to the list's
    declarations is a 409)."""
    return {
        "type": "string",
        "anyOf": [
            {"enum": [*PROFILE_FIELDS, DATA]},
            {"pattern": DATA_KEY_PATTERN},
            {"pattern": FIELD_KEY_PATTERN},
        ],
        "not": {"enum": list(NEVER_PUBLIC)},
    }


def entry_problem(entry: str) -> str | None:
    """Why `entry` cannot be an entry of `publicFields` whatever the list declares; None if
    it can."""
    if entry in PROFILE_FIELDS or entry == DATA:
        return None
    if entry in NEVER_PUBLIC:
        return f"a field a public key may set, not {entry!r}, which it never may"
    if entry.startswith(DATA_PREFIX):
        if not _DATA_KEY.fullmatch(entry):
            return f"data.<key> with a key of 1 to {MAX_DATA_KEY} characters, no control ones"
        return None
    if not _KEY.fullmatch(entry):
        return ENTRY_RULE
    return None


def check_declared(lst: List, entries: Sequence[str]) -> None:
    """A 409 for each bare key in `entries` that is no custom field of the list (a typo would
    otherwise open nothing, silently): the request is well formed, the list lacks the field."""
    declared = custom_fields.declared(lst)
    issues = [
        RequestProblem(
            ("publicFields", position),
            f'"{entry}" is no custom field of this list: declare it first '
            f'(POST /v4/lists/{{id}}/fields), or name the key of data as "data.{entry}"',
            expected=ENTRY_RULE,
            found=f'"{entry}"',
        )
        for position, entry in enumerate(entries)
        if _bare_key(entry) and entry not in declared
    ]
    if issues:
        raise Conflict("Not a custom field of this list", errors=issues, cited=True)


def _bare_key(entry: str) -> bool:
    return entry not in PROFILE_FIELDS and entry != DATA and not entry.startswith(DATA_PREFIX)


@dataclass(frozen=True)
class Allowance:
    """What a list's `publicFields` opens: profile fields, and all of `data` or some keys."""

    fields: frozenset[str]
    all_data: bool
    data_keys: frozenset[str]

    @classmethod
    def of(cls, entries: Sequence[str]) -> Allowance:
        fields = frozenset(entry for entry in entries if entry in PROFILE_FIELDS)
        keys = frozenset(
            entry.removeprefix(DATA_PREFIX) if entry.startswith(DATA_PREFIX) else entry
            for entry in entries
            if entry.startswith(DATA_PREFIX) or _bare_key(entry)
        )
        return cls(fields, DATA in entries, keys)

    def refused(self, values: Mapping[str, Any]) -> list[str]:
        """The fields and `data.<key>`s of a sign-up this allowance does not open."""
        refused = [f for f in values if f not in ("email", DATA) and f not in self.fields]
        data = values.get(DATA)
        if DATA in values and not self.all_data:
            if not self.data_keys or not isinstance(data, Mapping):
                refused.append(DATA)
            else:
                refused.extend(DATA_PREFIX + key for key in data if key not in self.data_keys)
        return refused

    def kept(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The values this allowance opens, `data` cut down to its open keys."""
        kept = {f: v for f, v in values.items() if f == "email" or f in self.fields}
        data = values.get(DATA)
        if self.all_data and DATA in values:
            kept[DATA] = data
        elif self.data_keys and isinstance(data, Mapping):
            kept[DATA] = {key: value for key, value in data.items() if key in self.data_keys}
        return kept


def announced_type(lst: List, key: str) -> str:
    """The type the list's sign-up form announces for its open key `key` of `data`: the
    custom field's, or `string` for a key no field declares."""
    return custom_fields.declared(lst).get(key, UNDECLARED_TYPE)


def public_values(lst: List, values: Mapping[str, Any]) -> dict[str, Any]:
    """What a public sign-up may write in this list: `email` and what `publicFields` opens,
    each open key of `data` holding its announced type within bounds (a 400 naming it);
    anything else refused naming it, or left out when the list's policy says so."""
    allowance = Allowance.of(lst.publicFields)
    refused = allowance.refused(values)
    if refused and lst.publicFieldsPolicy != "ignore":
        raise _not_public(refused)
    kept = allowance.kept(values)
    issues = _value_issues(lst, allowance, kept.get(DATA))
    if issues:
        raise Invalid("Invalid request", errors=issues, cited=True)
    return kept


def _value_issues(lst: List, allowance: Allowance, data: Any) -> list[RequestProblem]:
    if not isinstance(data, Mapping):
        return []
    issues = []
    for key in sorted(allowance.data_keys & data.keys()):
        kind = announced_type(lst, key)
        problem = value_problem(FieldType(kind), data[key]) or _bound_problem(data[key])
        if problem is not None:
            issues.append(_value_issue(key, kind, problem))
    if allowance.all_data and (issue := _size_issue(data)) is not None:
        issues.append(issue)
    return issues


def _size_issue(data: Mapping[str, Any]) -> RequestProblem | None:
    """Past `MAX_PUBLIC_DATA`, the problem of a `data` a list opens whole."""
    text = json.dumps(data, ensure_ascii=False)
    if len(text) <= MAX_PUBLIC_DATA:
        return None
    expected = f"data of at most {MAX_PUBLIC_DATA} characters of JSON"
    return RequestProblem(
        ("data",),
        f"data from a public key: expected {expected}, found {len(text)} characters",
        expected=expected,
        found=f"{len(text)} characters",
        suggestion="send less, or write large data with a private key",
    )


def _bound_problem(value: Any) -> str | None:
    """Why a value of its announced type is still too big for a public sign-up."""
    if isinstance(value, str) and len(value) > MAX_PUBLIC_TEXT:
        return f"expected at most {MAX_PUBLIC_TEXT} characters, found {len(value)} characters"
    if isinstance(value, list):
        if len(value) > MAX_PUBLIC_ITEMS:
            return f"expected at most {MAX_PUBLIC_ITEMS} items, found {len(value)} items"
        for item in value:
            if (problem := _bound_problem(item)) is not None:
                return problem
    return None


def _value_issue(key: str, kind: str, problem: str) -> RequestProblem:
    expected, _, found = problem.removeprefix("expected ").partition(", found ")
    bounds = f"at most {MAX_PUBLIC_TEXT} characters a string"
    if kind.endswith("[]"):
        bounds = f"at most {MAX_PUBLIC_ITEMS} items, {bounds}"
    return RequestProblem(
        _place(DATA_PREFIX + key),
        f"{DATA_PREFIX}{key} ({kind}, as the sign-up form announces it): {problem}",
        expected=f"{expected} ({bounds})",
        found=found,
        suggestion=f"send {kind} within those bounds, or leave {DATA_PREFIX}{key} out",
    )


def _place(name: str) -> tuple[str, ...]:
    """Where an entry (`firstName`, `data.tags`) is in the body: `("data", "tags")`."""
    return tuple(name.split(".", 1)) if name.startswith(DATA_PREFIX) else (name,)


def _not_public(refused: list[str]) -> Forbidden:
    return Forbidden(
        f"A public key may not set {', '.join(refused)} in this list: add it to the list's "
        'publicFields, or set its publicFieldsPolicy to "ignore"',
        errors=[RequestProblem(_place(name), "not in the list's publicFields") for name in refused],
    )
