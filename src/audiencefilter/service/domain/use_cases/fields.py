"""A list's fields: the catalogue of every field its filters may name, its custom fields
(declared, changed, removed: `custom_fields.py` holds the rules) and the JSON Schema of its
filters. Declarations change under the list's writers' lock, like any write of the list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from .... import Schema
from ...db.engine import Database
from ...db.models import List
from ...db.queries import owned_list
from .. import custom_fields, field_catalogue, list_lock, signup_form
from ..audience_filters import schema_for

Field = dict[str, Any]


def catalogue(database: Database, account_id: str, list_id: str) -> field_catalogue.Catalogue:
    """Every field the list's filters may name, with its type and label."""
    with database.reading() as session:
        return field_catalogue.of_list(owned_list(session, account_id, list_id))


def sign_up_form(database: Database, account_id: str, list_id: str) -> signup_form.SignUpForm:
    """The fields a sign-up form of the list collects: what its `publicFields` opens."""
    with database.reading() as session:
        return signup_form.of_list(owned_list(session, account_id, list_id))


def filter_schema(database: Database, account_id: str, list_id: str) -> Schema:
    """The contact schema the list's filters are read with, its custom fields typed."""
    with database.reading() as session:
        lst = owned_list(session, account_id, list_id)
        return schema_for(custom_fields.filter_fields(lst))


def get(database: Database, account_id: str, list_id: str, key: str) -> Field:
    with database.reading() as session:
        return custom_fields.field_of(owned_list(session, account_id, list_id), key)


def _locked(
    database: Database, account_id: str, list_id: str, work: Callable[[Session, List], Field]
) -> Field:
    """`work` on the list, under its lock, in one transaction."""
    with database.transaction() as session:
        result = work(session, list_lock.locked_list(session, account_id, list_id))
        session.flush()
    return result


def declare(
    database: Database, account_id: str, list_id: str, key: str, kind: str, label: str | None
) -> Field:
    """A new custom field of the list."""
    return _locked(
        database, account_id, list_id, lambda _, lst: custom_fields.add(lst, key, kind, label)
    )


def change(
    database: Database,
    account_id: str,
    list_id: str,
    key: str,
    kind: str | None,
    label: str | None,
) -> Field:
    """The custom field with its type or label changed."""
    return _locked(
        database,
        account_id,
        list_id,
        lambda session, lst: custom_fields.change(session, lst, key, kind, label),
    )


def remove(database: Database, account_id: str, list_id: str, key: str) -> Field:
    """Removes the declaration; contacts keep their values."""
    return _locked(
        database, account_id, list_id, lambda session, lst: custom_fields.remove(session, lst, key)
    )
