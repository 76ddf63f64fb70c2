"""The planner's picture of a list kept in step with the list as an import grows it.

PostgreSQL plans a statement from statistics that autovacuum refreshes once a table has
changed by a tenth, looking at most once a minute. An import into a new or small list adds
rows far faster: for the whole of an import of 100,000 contacts the planner still believed
the list held a few rows, and looked each turn's emails up by walking all of the list's
contacts through `ix_contacts_list_sample` instead of probing the unique index on
(list_id, email_key). The look-up cost 16 ms at the start and 57 ms at the end: a cost that
grows with the list, and an import that grows with its square.

So a turn that created contacts asks `refresh_if_grown`: once the list holds at least
`REFRESHED_FROM` contacts and twice as many as when this process last refreshed the
statistics for it, the turn runs the dialect's refresh (`dialects.list_statistics`, on
PostgreSQL `ANALYZE contacts (list_id)`: a sample of the table for the one column whose
picture went wrong). An import of a million contacts thus refreshes about seven times, each a
fraction of a second. Smaller lists are left to autovacuum: walking them costs little.
SQLite needs none: without `sqlite_stat1` its planner prefers the index that matches the most
equalities, and `sqlite_stat1` keeps averages per index rather than per list.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import dialects
from .models import ListSize

REFRESHED_FROM = 10_000
"""The list's size from which a growing list gets its statistics refreshed."""
MOST_REMEMBERED = 10_000
"""Lists whose last refresh a process remembers; past this it starts over (a forgotten list
is refreshed once more at worst)."""

_refreshed_at: dict[str, int] = {}
"""Per list, its size when this process last refreshed the statistics for it."""


def refresh_if_grown(session: Session, list_id: str) -> bool:
    """Refreshes the statistics of the contacts table when the list has at least doubled
    since this process last did for it; whether it did."""
    statement = dialects.list_statistics(dialects.dialect_of(session))
    if statement is None:
        return False
    size = session.scalar(select(ListSize.contacts).where(ListSize.listId == list_id)) or 0
    if size < max(REFRESHED_FROM, 2 * _refreshed_at.get(list_id, 0)):
        return False
    if len(_refreshed_at) >= MOST_REMEMBERED:
        _refreshed_at.clear()
    session.execute(statement)
    _refreshed_at[list_id] = size
    return True
