"""Lists (projects): create, page through, read, update, delete.

A list's `url` is its public identifier (pages and referral links use it), so it is unique across
all accounts, by a unique index: a taken url fails in the database, even when two requests
race, and is a `Conflict`. When a new list gives none, one is made from the name and a random
suffix. Deleting a list deletes its contacts, audiences and actions (foreign-key cascades).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import List
from ...db.queries import count, owned_list, page_of
from ...ground.errors import Conflict
from .. import list_lock, list_zone, public_fields, write_effects
from .unit import Page, Writes

R = TypeVar("R")
URL_TAKEN = "This list url is already taken"


def slug(name: str) -> str:
    """A url for a new list: the name's ASCII letters and digits, and a random suffix."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40].strip("-")
    return f"{base or 'list'}-{secrets.token_hex(3)}"


@contextmanager
def _unique_url() -> Iterator[None]:
    try:
        yield
    except IntegrityError:
        raise Conflict(URL_TAKEN) from None


def create(account_id: str, values: Mapping[str, Any], writes: Writes[List, R]) -> R:
    """A new list of the account with the fields sent (`name` at least)."""
    fields = {"url": slug(values["name"]), **values}

    def work(session: Session) -> List:
        lst = List(accountId=account_id, **fields)
        session.add(lst)
        session.flush()
        public_fields.check_declared(lst, fields.get("publicFields", ()))
        return lst

    with _unique_url():
        return writes(work)


def page(database: Database, account_id: str, number: int, limit: int) -> Page[List]:
    """The account's lists, newest first."""
    statement = (
        select(List).where(List.accountId == account_id).order_by(List.createdAt.desc(), List.id)
    )
    with database.reading() as session:
        lists = session.scalars(page_of(statement, number, limit)).all()
        return Page(lists, count(session, List, List.accountId == account_id))


def get(database: Database, account_id: str, list_id: str) -> List:
    with database.reading() as session:
        return owned_list(session, account_id, list_id)


def oldest(database: Database, account_id: str) -> List | None:
    """The account's first list, if it has any."""
    statement = select(List).where(List.accountId == account_id).order_by(List.createdAt)
    with database.reading() as session:
        return session.scalars(statement).first()


def update(
    database: Database,
    account_id: str,
    list_id: str,
    values: Mapping[str, Any],
    background_above: int = 0,
) -> List:
    """The list with the fields sent changed, and only those. A new `timeZone` is a change of
    the list's audiences (`list_zone.py`), made under the list's lock; `background_above`:
    the size past which its smart audiences are built again in the background."""
    with _unique_url(), database.transaction() as session:
        if "timeZone" in values:
            lst = list_lock.locked_list(session, account_id, list_id)
        else:
            lst = owned_list(session, account_id, list_id)
        public_fields.check_declared(lst, values.get("publicFields", ()))
        for field, value in values.items():
            if field != "timeZone":
                setattr(lst, field, value)
        if "timeZone" in values:
            list_zone.change(session, lst, values["timeZone"], background_above)
        session.flush()
    return lst


def remove(database: Database, account_id: str, list_id: str) -> List:
    """Deletes the list and all it holds; the list as it was."""
    with database.transaction() as session:
        lst = owned_list(session, account_id, list_id)
        list_lock.take(session, lst.id)  # no writer of the list is under way
        write_effects.list_deleting(session, lst.id)
        session.execute(
            delete(List).where(List.id == list_id).execution_options(synchronize_session=False)
        )
    return lst
