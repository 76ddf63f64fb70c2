"""The size of a filter on a list, estimated from a sample kept with the list, and exactly when
asked.

The sample is the list's contacts with the smallest ids (`estimate_sample_size` of them, 5,000
by default). A contact's id is 80 random bits drawn at its creation, independent of everything
a filter reads, so those contacts are a uniform random sample of the list, drawn without
replacement; it follows the list as contacts come and go, and it is the same from one
request to the next, so an estimate shown while a filter is typed does not flicker.
`ix_contacts_list_sample` reads it as one range. The filter is judged on it in SQL (the
library's `to_sqlalchemy`, the service's relations included), and `domain/sample_interval.py`
turns the count into an estimate and its 95 % interval, scaled to the list's kept size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import Session

from .... import Filter
from ...db.engine import Database
from ...db.models import Contact, ListSize
from ...db.queries import count, owned_list
from ...ground import clock
from ...ground.errors import AudienceRuleError
from ...settings import Settings
from .. import relations
from ..audience_filters import LIST_REQUIRED
from ..list_filters import read_of_list
from ..sample_interval import SizeEstimate, estimate_size


@dataclass(frozen=True)
class EstimateRequest:
    """A filter of a list in either form, and whether to count it exactly too."""

    list_id: str | None
    filters: Any
    filters_text: str | None
    filters_format: str | None
    exact: bool = False


@dataclass(frozen=True)
class Estimated:
    """The filter read, its estimated size, and its exact size when asked."""

    filter: Filter
    size: SizeEstimate
    exact: int | None


def estimate(
    database: Database, settings: Settings, account_id: str, request: EstimateRequest
) -> Estimated:
    """The filter's estimated size on the list (and its count, with `exact`)."""
    if not request.list_id:
        raise AudienceRuleError(LIST_REQUIRED)
    with database.reading() as session:
        lst = owned_list(session, account_id, request.list_id)
        flt = read_of_list(
            session, lst, request.filters, request.filters_text, request.filters_format
        )
        condition = relations.condition(flt, clock.now())
        matches, sampled = sample_counts(session, lst.id, condition, settings.estimate_sample_size)
        size = estimate_size(matches, sampled, list_size(session, lst.id))
        exact = None
        if request.exact:
            exact = matches if size.exact else count(session, Contact, _of(lst.id), condition)
    return Estimated(flt, size, exact)


def _of(list_id: str) -> ColumnElement[bool]:
    return Contact.listId == list_id


def sample_counts(
    session: Session, list_id: str, condition: ColumnElement[bool], size: int
) -> tuple[int, int]:
    """(matches, sampled): the contacts of the sample the condition selects, and its size."""
    edge = session.scalar(
        select(Contact.id).where(_of(list_id)).order_by(Contact.id).offset(size - 1).limit(1)
    )
    where = [_of(list_id)] if edge is None else [_of(list_id), Contact.id <= edge]
    matched = func.coalesce(func.sum(case((condition, 1), else_=0)), 0)
    row = session.execute(select(matched, func.count()).select_from(Contact).where(*where)).one()
    return int(row[0]), int(row[1])


def list_size(session: Session, list_id: str) -> int:
    """The list's kept number of contacts (a count where none is kept)."""
    kept = session.scalar(select(ListSize.contacts).where(ListSize.listId == list_id))
    return int(kept) if kept is not None else count(session, Contact, _of(list_id))
