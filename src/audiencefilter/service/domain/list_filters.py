"""A filter sent for a list and judged without being saved, read one way: the preview, the
estimate and the comparison all read it here, so the three answer for one and the same filter.

The reading is the one creating the audience would store: the list's custom fields and its time
zone (calendar rules naming no zone are read in it), audiences named by name resolved to their
ids (`audience_names.py`), and a reference to an audience that is not one of the list refused
(`references.check_known`), as a missing or empty filter is. Before, the estimate and the
comparison read the text over the custom fields only: a calendar rule on a list in another zone
was judged in UTC, and a reference by an unknown name counted 0 where the preview refused it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from ... import Filter
from ..db.models import List
from ..ground.errors import FILTERS_EMPTY, FILTERS_REQUIRED, AudienceRuleError
from . import audience_names, custom_fields, references
from .audience_filters import read_filters


def read_of_list(
    session: Session, lst: List, filters: Any, text: str | None, written_in: str | None
) -> Filter:
    """The filter sent for `lst` (`filters` in the format `written_in`, or `text`), read as
    creating an audience of it would read it.

    Raises:
        AudienceRuleError: the filter is invalid, empty or missing, names an audience by a name
            no audience (or several) of the list has, or by an id of no audience of the list.
    """
    reading = custom_fields.declared(lst), lst.timeZone
    given = read_filters(filters, text, reading[0], written_in, zone=reading[1])
    resolved = audience_names.by_id(session, lst.id, given, reading)
    if resolved.empty:
        raise AudienceRuleError(FILTERS_EMPTY)
    if resolved.filter is None:
        raise AudienceRuleError(FILTERS_REQUIRED)
    references.check_known(session, lst.id, resolved.filter)
    return resolved.filter
