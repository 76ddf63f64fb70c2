"""What a sign-up form of a list collects: the fields its `publicFields` opens, described.

A sign-up form holds a public key, and the key may set only `email` and what the list's
`publicFields` names (`public_fields.py`). A form that asks for more is refused by the service;
a form that asks for less loses what the list wanted. So the form asks the service, with the
public key itself, which fields to show: this module answers from the list alone (no contact,
no audience, nothing a visitor of the page should not see), each field with a label and the type
its input takes (a custom field's declared type, `string` for an undeclared key of `data`): the
type, within bounds, the service takes from a public key for that key (`public_fields.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..db.models import List
from .audience_filters import SCHEMA
from .field_catalogue import label
from .public_fields import DATA, DATA_PREFIX, Allowance, announced_type

EMAIL = "email"


@dataclass(frozen=True)
class SignUpField:
    """One input of a sign-up form: the name it is sent under (`firstName`, `data.birthday`)."""

    key: str
    label: str
    type: str
    required: bool


@dataclass(frozen=True)
class SignUpForm:
    """The inputs of a list's sign-up form; `allData` when the list opens every key of `data`
    (which no form can list: it collects the keys it names)."""

    listId: str  # noqa: N815 - the JSON key, as the API spells it
    fields: tuple[SignUpField, ...]
    allData: bool  # noqa: N815


def _profile_field(key: str) -> SignUpField:
    declared = SCHEMA.get(key)
    kind = declared.type.value if declared is not None else "string"
    return SignUpField(key, label(key), kind, False)


def _data_field(key: str, lst: List) -> SignUpField:
    labels = {field["key"]: field["label"] for field in lst.customFields}
    shown = labels.get(key) or label(key)
    return SignUpField(DATA_PREFIX + key, shown, announced_type(lst, key), False)


def of_list(lst: List) -> SignUpForm:
    """The form of `lst`: `email` first, then its open profile fields in the order the list
    names them in `publicFields`, then its open keys of `data` in that order."""
    allowance = Allowance.of(lst.publicFields)
    email = SignUpField(EMAIL, "Email", "string", True)

    def named(keys: frozenset[str]) -> list[str]:
        return sorted(keys, key=lambda key: _position(lst.publicFields, key))

    profile = [_profile_field(key) for key in named(allowance.fields)]
    data = [_data_field(key, lst) for key in named(allowance.data_keys)]
    return SignUpForm(lst.id, (email, *profile, *data), DATA in lst.publicFields)


def _position(entries: list[str], key: str) -> int:
    for index, entry in enumerate(entries):
        if entry in (key, DATA_PREFIX + key):
            return index
    return len(entries)


__all__ = ["SignUpField", "SignUpForm", "of_list"]
